//! Turning captured streams into the model's text within the output budget (docs/reference/tools.md#outputs,
//! docs/reference/tools.md#bash): each stream is decoded (lossy UTF-8), loses its final newline and its terminal escapes,
//! and, when too long, keeps its head and tail around the budget marker naming its spill file.
//! When both streams overflow, stderr gets up to a third of the budget.
//!
//! The cutting rules are core's ([`cut_middle`], [`budget_marker`]), so a shell output is cut
//! exactly like any other tool's.

use std::io::Write as _;

use std::borrow::Cow;

use tackle_core::text::{Cut, budget_marker, cut_middle, strip_ansi};

use super::capture::{Captured, SpillState};

/// One stream as the model sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamText {
    pub text: String,
    /// Whether it was cut.
    pub truncated: bool,
    /// The workspace-relative spill file named in the marker, when it was cut.
    pub spill: Option<String>,
}

/// The budgets of stdout and stderr when together they hold `out` and `err` characters: each
/// keeps everything when both fit; otherwise stderr gets what it needs up to a third of `max`
/// (more when stdout leaves room), and stdout the rest.
pub fn split_budget(max: usize, out: u64, err: u64) -> (usize, usize) {
    let (out, err) = (usize::try_from(out).unwrap_or(usize::MAX), usize::try_from(err).unwrap_or(usize::MAX));
    if out.saturating_add(err) <= max {
        return (max, max);
    }
    let err_budget = if err <= max / 3 { err } else { (max / 3).max(max.saturating_sub(out)) };
    (max - err_budget, err_budget)
}

/// Fits one captured stream into `budget` characters (a third for the head, the rest for the
/// tail), writing its spill file now if memory held it whole but it must be cut.
pub fn fit(captured: Captured, budget: usize) -> StreamText {
    let head_chars = budget / 3;
    let tail_chars = budget - head_chars;
    if let Some(whole) = captured.whole() {
        let text = clean(whole);
        let Some(cut) = cut_middle(&text, head_chars, tail_chars) else {
            return StreamText { text: text.into_owned(), truncated: false, spill: None };
        };
        let spill = match &captured.spill {
            Some(SpillState::Saved { rel, .. }) => Some(rel.clone()),
            Some(SpillState::NotWritten(target)) => {
                let mut target = target.clone();
                let written = target.create().and_then(|mut file| file.write_all(whole));
                match written {
                    Ok(()) => Some(target.rel()),
                    Err(err) => {
                        tracing::warn!(path = %target.path().display(), error = %err, "cannot write a spill file");
                        None
                    }
                }
            }
            None => None,
        };
        return join(&cut, spill, false);
    }
    let head_text = clean_head(&captured.head);
    let tail_text = clean(captured.tail.as_deref().unwrap_or_default());
    let head = cut_middle(&head_text, head_chars, 0).map_or(head_text.as_ref(), |cut| cut.head);
    let tail = cut_middle(&tail_text, 0, tail_chars).map_or(tail_text.as_ref(), |cut| cut.tail);
    // The final newline, removed from the text, counts as shown.
    let final_newline = u64::from(captured.tail.as_deref().is_some_and(|t| t.ends_with(b"\n")));
    let shown_chars = (head.chars().count() + tail.chars().count()) as u64 + final_newline;
    let shown_lines = (memchr::memchr_iter(b'\n', head.as_bytes()).count()
        + memchr::memchr_iter(b'\n', tail.as_bytes()).count()) as u64
        + final_newline;
    let cut = Cut {
        head,
        tail,
        omitted_chars: usize::try_from(captured.chars.saturating_sub(shown_chars)).unwrap_or(usize::MAX),
        omitted_lines: usize::try_from(captured.newlines.saturating_sub(shown_lines)).unwrap_or(usize::MAX),
    };
    let (spill, capped) = match captured.spill {
        Some(SpillState::Saved { rel, capped }) => (Some(rel), capped),
        _ => (None, false),
    };
    join(&cut, spill, capped)
}

fn join(cut: &Cut<'_>, spill: Option<String>, capped: bool) -> StreamText {
    let mut marker = budget_marker(cut.omitted_chars, cut.omitted_lines, spill.as_deref());
    if capped {
        marker.push_str("\n[the saved file holds only the first 64 MiB of this stream]");
    }
    StreamText { text: cut.join(&marker), truncated: true, spill }
}

/// Decoded text without its final newline and without terminal escapes.
fn clean(bytes: &[u8]) -> Cow<'_, str> {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    match String::from_utf8_lossy(bytes) {
        Cow::Borrowed(text) => strip_ansi(text),
        Cow::Owned(text) => Cow::Owned(strip_ansi(&text).into_owned()),
    }
}

/// Decoded head bytes (their end may split a character or an escape; both are harmless).
fn clean_head(bytes: &[u8]) -> Cow<'_, str> {
    match String::from_utf8_lossy(bytes) {
        Cow::Borrowed(text) => strip_ansi(text),
        Cow::Owned(text) => Cow::Owned(strip_ansi(&text).into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shell::capture::{Capture, SpillTarget};
    use pretty_assertions::assert_eq;

    #[test]
    fn budgets_favour_stdout_but_keep_a_third_for_stderr() {
        assert_eq!(split_budget(30_000, 100, 100), (30_000, 30_000));
        assert_eq!(split_budget(30_000, 100_000, 500), (29_500, 500));
        assert_eq!(split_budget(30_000, 100_000, 100_000), (20_000, 10_000));
        assert_eq!(split_budget(30_000, 5_000, 100_000), (5_000, 25_000));
    }

    #[test]
    fn a_short_stream_is_shown_whole_without_its_final_newline_or_escapes() {
        let mut capture = Capture::new(100, 100, None);
        capture.push(b"\x1b[31mred\x1b[0m\n\xffend\n");
        let fitted = fit(capture.finish(), 1000);
        assert_eq!(fitted, StreamText { text: "red\n\u{fffd}end".into(), truncated: false, spill: None });
    }

    /// `x/` in the temporary workspace `dir`.
    fn spill_dir(dir: &tempfile::TempDir) -> tackle_core::spill::SpillDir {
        let workspace = dir.path().canonicalize().unwrap();
        tackle_core::spill::SpillDir { path: workspace.join("x"), workspace, rel: "x".into() }
    }

    #[test]
    fn a_long_stream_kept_whole_is_cut_and_spilled_now() {
        let dir = tempfile::tempdir().unwrap();
        let target = SpillTarget::new(&spill_dir(&dir), "c.stdout.txt");
        let mut capture = Capture::new(10_000, 10_000, Some(target.clone()));
        let text: String = (0..100).map(|i| format!("line {i:02}\n")).collect();
        capture.push(text.as_bytes());
        let fitted = fit(capture.finish(), 60);
        assert_eq!(
            fitted.text,
            "line 00\nline 01\n[... 744 characters (93 lines) omitted; full output saved to x/c.stdout.txt ...]\n\
             line 95\nline 96\nline 97\nline 98\nline 99"
        );
        assert_eq!(std::fs::read_to_string(target.path()).unwrap(), text);
    }

    #[test]
    fn a_stream_larger_than_memory_counts_what_it_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let target = SpillTarget::new(&spill_dir(&dir), "c.stdout.txt");
        let mut capture = Capture::new(40, 40, Some(target));
        let text: String = (0..1000).map(|i| format!("line {i:03}\n")).collect();
        capture.push(text.as_bytes());
        let fitted = fit(capture.finish(), 30);
        assert_eq!(
            fitted.text,
            "line 000\n[... 8973 characters (997 lines) omitted; full output saved to x/c.stdout.txt ...]\n\
             line 998\nline 999"
        );
        assert!(fitted.truncated);
    }
}
