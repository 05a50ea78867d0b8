//! gptme's ORIGINAL/UPDATED patch blocks (docs/reference/formats.md#block-tools): reading the hunks and applying them,
//! all or nothing, to a file's text.
//!
//! ```text
//! <<<<<<< ORIGINAL
//! {original lines}
//! =======
//! {updated lines}
//! >>>>>>> UPDATED
//! ```
//!
//! Each hunk replaces one unique occurrence of its ORIGINAL text: an exact substring first
//! (retried with CRLF line breaks in a CRLF file), then a window of whole lines in which
//! whitespace-only lines count as equal. Placeholder lines (`# ...`, `// ...`, `" ...`) split
//! a hunk into parts around them, so unchanged stretches need not be quoted.

use crate::fs::closest::closest;
use crate::fs::text::{LineEnding, dominant_ending, lf_to_crlf, locate};

const ORIGINAL: &str = "<<<<<<< ORIGINAL";
const SEPARATOR: &str = "=======";
const UPDATED: &str = ">>>>>>> UPDATED";

/// One hunk as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hunk {
    pub original: String,
    pub updated: String,
}

/// The hunks of a patch block, or the message for a malformed one.
// A string: the message is the model's feedback as is (ToolError::InvalidInput); no caller
// branches on it.
pub(crate) fn parse(patch: &str) -> Result<Vec<Hunk>, String> {
    let text = patch.replace("\r\n", "\n");
    let lines: Vec<&str> = text.split('\n').collect();
    let is = |line: &str, marker: &str| line.trim_end() == marker;
    let starts: Vec<usize> = lines.iter().enumerate().filter(|(_, l)| is(l, ORIGINAL)).map(|(i, _)| i).collect();
    let Some(&first) = starts.first() else {
        return Err(format!(
            "The patch has no hunks. Write each change as {ORIGINAL}, the original lines, {SEPARATOR}, the updated \
             lines, and {UPDATED}, each marker on its own line."
        ));
    };
    if let Some(stray) = lines[..first].iter().find(|l| !l.trim().is_empty()) {
        return Err(format!("The patch must start with a {ORIGINAL} line (found \"{}\").", stray.trim()));
    }
    let n = starts.len();
    let mut hunks = Vec::with_capacity(n);
    for (i, &start) in starts.iter().enumerate() {
        let label = format!("Hunk {}/{n}", i + 1);
        let end = starts.get(i + 1).copied().unwrap_or(lines.len());
        let body = &lines[start + 1..end];
        let separator = body
            .iter()
            .position(|l| is(l, SEPARATOR))
            .ok_or_else(|| format!("{label}: missing {SEPARATOR} separator"))?;
        let after = &body[separator + 1..];
        let updated_end =
            after.iter().position(|l| is(l, UPDATED)).ok_or_else(|| format!("{label}: missing {UPDATED} marker"))?;
        let updated = &after[..updated_end];
        if updated.iter().any(|l| is(l, SEPARATOR)) {
            return Err(format!("{label}: more than one {SEPARATOR} separator"));
        }
        hunks.push(Hunk { original: body[..separator].join("\n"), updated: updated.join("\n") });
    }
    Ok(hunks)
}

/// `text` with every hunk applied in order, or the message for the first that fails.
/// `shown` is the path as the model wrote it.
// A string: the message is the model's feedback as is (ToolError::Failed), composed with the
// hunk's label and the closest text found; no caller branches on it.
pub(crate) fn apply(text: &str, hunks: &[Hunk], shown: &str) -> Result<String, String> {
    let n = hunks.len();
    let mut content = text.to_owned();
    for (i, hunk) in hunks.iter().enumerate() {
        let label = format!("Hunk {}/{n}", i + 1);
        let identical = || format!("{label}: ORIGINAL and UPDATED are identical");
        if hunk.original == hunk.updated {
            return Err(identical());
        }
        let originals = split_placeholders(&hunk.original);
        let updateds = split_placeholders(&hunk.updated);
        if originals.len() != updateds.len() {
            return Err(format!(
                "{label}: ORIGINAL has {} placeholders but UPDATED has {}",
                originals.len() - 1,
                updateds.len() - 1
            ));
        }
        let mut changed = false;
        for (original, updated) in originals.iter().zip(&updateds) {
            if original != updated {
                content = replace_one(&content, original, updated, &label, shown)?;
                changed = true;
            }
        }
        if !changed {
            return Err(identical());
        }
    }
    Ok(content)
}

/// Whether a line stands for omitted lines in a hunk: `# ...`, `// ...`, `" ...`.
fn is_placeholder(line: &str) -> bool {
    let rest = line.trim_start_matches([' ', '\t']);
    ["#", "//", "\""].iter().any(|marker| rest.strip_prefix(marker).is_some_and(|r| r.starts_with(" ...")))
}

/// The parts of a hunk side between its placeholder lines.
fn split_placeholders(side: &str) -> Vec<String> {
    let mut parts = vec![Vec::new()];
    for line in side.split('\n') {
        if is_placeholder(line) {
            parts.push(Vec::new());
        } else if let Some(part) = parts.last_mut() {
            part.push(line);
        }
    }
    parts.into_iter().map(|lines| lines.join("\n")).collect()
}

/// `content` with the one occurrence of `original` replaced by `updated`.
// A string: part of `apply`'s model-facing message.
fn replace_one(content: &str, original: &str, updated: &str, label: &str, shown: &str) -> Result<String, String> {
    let crlf = dominant_ending(content) == LineEnding::CrLf;
    let in_ending = |text: &str| if crlf { lf_to_crlf(text).into_owned() } else { text.to_owned() };
    if original.is_empty() {
        return if content.is_empty() {
            Ok(in_ending(updated))
        } else {
            Err(format!("{label}: ORIGINAL is empty; quote the lines this hunk replaces"))
        };
    }
    let (found, old, _) = locate(content, original, updated);
    let (start, end) = match found.len() {
        1 => (found[0], found[0] + old.len()),
        0 => match relaxed(content, original) {
            Relaxed::One(start, end) => (start, end),
            Relaxed::Many(k) => return Err(format!("{label}: ORIGINAL is not unique ({k} matches)")),
            Relaxed::None => {
                let mut message = format!("{label}: ORIGINAL not found in {shown}");
                if let Some(candidate) = closest(content, original) {
                    message.push_str(&candidate.describe(&format!(" of {shown}")));
                }
                return Err(message);
            }
        },
        k => return Err(format!("{label}: ORIGINAL is not unique ({k} matches)")),
    };
    let mut out = String::with_capacity(content.len() + updated.len());
    out.push_str(&content[..start]);
    out.push_str(&in_ending(updated));
    out.push_str(&content[end..]);
    if out == content {
        return Err(format!("{label}: ORIGINAL and UPDATED are identical"));
    }
    Ok(out)
}

enum Relaxed {
    None,
    One(usize, usize),
    Many(usize),
}

/// The windows of whole lines of `content` equal to `original`'s lines, where lines holding
/// only whitespace are equal to each other; the byte range of the single match.
fn relaxed(content: &str, original: &str) -> Relaxed {
    let wanted: Vec<&str> = original.split('\n').map(|l| l.trim_end_matches('\r')).collect();
    let mut lines = Vec::new();
    let mut start = 0;
    for (i, _) in content.match_indices('\n') {
        lines.push((start, i));
        start = i + 1;
    }
    if start < content.len() {
        lines.push((start, content.len()));
    }
    let same = |(from, to): (usize, usize), want: &str| {
        let have = content[from..to].trim_end_matches('\r');
        have == want || (have.trim().is_empty() && want.trim().is_empty())
    };
    let k = wanted.len();
    let matches: Vec<usize> = (0..(lines.len() + 1).saturating_sub(k))
        .filter(|&s| lines[s..s + k].iter().zip(&wanted).all(|(line, want)| same(*line, want)))
        .collect();
    match matches.as_slice() {
        [] => Relaxed::None,
        [s] => Relaxed::One(lines[*s].0, lines[s + k - 1].1),
        many => Relaxed::Many(many.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn hunk(original: &str, updated: &str) -> Hunk {
        Hunk { original: original.into(), updated: updated.into() }
    }

    #[test]
    fn parses_hunks_and_empty_updates() {
        let patch =
            "<<<<<<< ORIGINAL\na\nb\n=======\nc\n>>>>>>> UPDATED\n\n<<<<<<< ORIGINAL\nd\n=======\n>>>>>>> UPDATED\n";
        assert_eq!(parse(patch), Ok(vec![hunk("a\nb", "c"), hunk("d", "")]));
        assert_eq!(parse(&patch.replace('\n', "\r\n")), Ok(vec![hunk("a\nb", "c"), hunk("d", "")]));
    }

    #[test]
    fn reports_malformed_hunks() {
        assert_eq!(
            parse("<<<<<<< ORIGINAL\na\n=======\nb\n=======\nc\n>>>>>>> UPDATED"),
            Err("Hunk 1/1: more than one ======= separator".into())
        );
        assert_eq!(parse("<<<<<<< ORIGINAL\na\n>>>>>>> UPDATED"), Err("Hunk 1/1: missing ======= separator".into()));
        assert_eq!(
            parse("<<<<<<< ORIGINAL\na\n=======\nb\n>>>>>>> UPDATED\n<<<<<<< ORIGINAL\nx\n=======\ny"),
            Err("Hunk 2/2: missing >>>>>>> UPDATED marker".into())
        );
        assert!(parse("just text").unwrap_err().starts_with("The patch has no hunks."));
        assert_eq!(
            parse("hello\n<<<<<<< ORIGINAL\na\n=======\nb\n>>>>>>> UPDATED"),
            Err("The patch must start with a <<<<<<< ORIGINAL line (found \"hello\").".into())
        );
        // A longer line of `=` is content (an RST underline).
        assert_eq!(
            parse("<<<<<<< ORIGINAL\na\n=======\nb\n==========\n>>>>>>> UPDATED"),
            Ok(vec![hunk("a", "b\n==========")])
        );
    }

    #[test]
    fn applies_exact_then_relaxed_matches() {
        assert_eq!(apply("x\na\ny\n", &[hunk("a", "b")], "f"), Ok("x\nb\ny\n".into()));
        // Whitespace-only lines are equal in the relaxed match.
        assert_eq!(apply("x\n  \ny\nz\n", &[hunk("x\n\ny", "X\n\nY")], "f"), Ok("X\n\nY\nz\n".into()));
        assert_eq!(apply("aaa\n", &[hunk("aa", "b")], "f"), Err("Hunk 1/1: ORIGINAL is not unique (2 matches)".into()));
    }

    #[test]
    fn placeholders_split_a_hunk() {
        let text = "def f():\n    a = 1\n    b = 2\n    c = 3\n    return a\n";
        let patch = hunk("    a = 1\n    # ...\n    return a", "    a = 10\n    # ...\n    return a + c");
        assert_eq!(
            apply(text, &[patch], "f"),
            Ok("def f():\n    a = 10\n    b = 2\n    c = 3\n    return a + c\n".into())
        );
        let unequal = hunk("a\n# ...\nb", "a\nb");
        assert_eq!(
            apply("a\nb\n", &[unequal], "f"),
            Err("Hunk 1/1: ORIGINAL has 1 placeholders but UPDATED has 0".into())
        );
    }

    proptest::proptest! {
        /// Fuzzing: any patch text against any file text reads and applies without panicking,
        /// and a successful patch of a hunk that quotes the file exactly changes it.
        #[test]
        fn any_patch_on_any_text_is_an_answer(
            patch in "(<<<<<<< ORIGINAL\n|=======\n|>>>>>>> UPDATED\n|# \\.\\.\\.\n|[ab \r\n]|[a-z]{1,3}\n)*",
            text in "([ab \r\n]|[a-z]{1,3}\n)*",
        ) {
            if let Ok(hunks) = parse(&patch) {
                let _ = apply(&text, &hunks, "f");
            }
        }

        #[test]
        fn quoting_the_whole_text_replaces_it(text in "[a-z]{1,8}(\n[a-z ]{0,8}){0,5}", new in "[A-Z]{1,8}") {
            let patched = apply(&text, &[hunk(&text, &new)], "f");
            proptest::prop_assert_eq!(patched, Ok(new));
        }
    }

    #[test]
    fn keeps_a_crlf_file_crlf() {
        assert_eq!(apply("a\r\nb\r\nc\r\n", &[hunk("b\nc", "B\nC")], "f"), Ok("a\r\nB\r\nC\r\n".into()));
        assert_eq!(apply("a\r\nb\r\n", &[hunk("b", "B\nB2")], "f"), Ok("a\r\nB\r\nB2\r\n".into()));
    }
}
