//! The writing commands of `str_replace_based_edit_tool` (docs/reference/tools.md#str_replace_based_edit_tool): `create`,
//! `str_replace`, `insert` and `undo_edit`. Every byte outside the edited span stays as it
//! was (tabs, CRLF, a missing final newline, a BOM).

use std::fs::Metadata;

use tackle_core::ToolError;

use crate::fs::closest::closest;
use crate::fs::files::mode_of;
use crate::fs::ledger::content_hash;
use crate::fs::text::{
    LineEnding, binary_message, dominant_ending, edit_snippet, has_nul_head, line_list, locate, snippet, with_ending,
};
use crate::fs::{Before, Files, Freshness, LoadError, Target, read_existing, write_failure};

/// Lines of context around an edit in its snippet.
pub const SNIPPET_LINES: usize = 4;

/// Loads a file for an edit; [`edit_text`] then sees it as text.
pub fn load_file(target: &Target) -> Result<(Metadata, Vec<u8>), ToolError> {
    let shown = &target.raw;
    let existing = read_existing(target).map_err(|err| match err {
        LoadError::NotFound => {
            ToolError::NotFound(format!("The path {shown} does not exist. Please provide a valid path."))
        }
        LoadError::Directory => ToolError::InvalidInput(format!(
            "The path {shown} is a directory and only the `view` command can be used on directories"
        )),
        LoadError::TooLarge { size } => ToolError::Failed(format!(
            "{shown} is {size} bytes; the file edit tools handle files up to 64 MiB. Use bash (sed, or a script) to \
             edit it."
        )),
        LoadError::Refused(err) => err,
        LoadError::Io(err) => ToolError::Failed(format!("Ran into {err} while trying to read {shown}")),
    })?;
    Ok((existing.meta, existing.bytes))
}

/// A loaded file as text, or the binary-file error: binary as `as_text` judges it, the UTF-8
/// checked once, by `simdutf8` (three times as fast as the standard library's check on this
/// machine's 325 KiB test file, a few per cent of a `str_replace`), borrowing the bytes.
pub fn edit_text<'a>(bytes: &'a [u8], shown: &str) -> Result<&'a str, ToolError> {
    if has_nul_head(bytes) {
        return Err(ToolError::Failed(binary_message(shown)));
    }
    simdutf8::basic::from_utf8(bytes).map_err(|_| ToolError::Failed(binary_message(shown)))
}

/// The stale check of `str_replace` and `insert`: a file never viewed may be edited.
fn check_not_stale(files: &Files<'_>, target: &Target, meta: &Metadata, text: &str) -> Result<(), ToolError> {
    if files.freshness(target, meta, text.as_bytes()) == Freshness::Changed {
        return Err(ToolError::Failed(format!(
            "The file {} has been modified since you last viewed it. View it again before editing.",
            target.raw
        )));
    }
    Ok(())
}

/// `create`.
pub fn create(files: &Files<'_>, target: &Target, file_text: Option<&str>) -> Result<String, ToolError> {
    let Some(file_text) = file_text else {
        return Err(ToolError::InvalidInput(
            "Parameter `file_text` is required and must be a string for command: create".into(),
        ));
    };
    files.write(target, file_text.as_bytes(), Before::Absent).map_err(|err| write_failure(&target.raw, err))?;
    Ok(format!("File created successfully at: {}", target.raw))
}

/// `str_replace`.
pub fn str_replace(
    files: &Files<'_>,
    target: &Target,
    old_str: Option<&str>,
    new_str: Option<&str>,
) -> Result<String, ToolError> {
    let shown = &target.raw;
    let (meta, bytes) = load_file(target)?;
    let text = edit_text(&bytes, shown)?;
    let old_str = required_old_str(old_str)?;
    check_not_stale(files, target, &meta, text)?;
    let replacement = replacement(text, shown, old_str, new_str)?;
    let Replacement { at, old_len, new } = replacement;
    let line = start_lines(text, &[at])[0] - 1;
    let shown_snippet = edit_snippet(text, at, old_len, &new, line, SNIPPET_LINES, SNIPPET_LINES);
    files
        .write_splice(target, text.as_bytes(), at..at + old_len, new.as_bytes(), mode_of(&meta))
        .map_err(|err| write_failure(shown, err))?;
    Ok(format!(
        "The file {shown} has been edited. Here's the result of running `cat -n` on a snippet of {shown}:\n{shown_snippet}\n\
         Review the changes and make sure they are as expected. Edit the file again if necessary."
    ))
}

/// What a `str_replace` changes: the `old_len` bytes at `at` become `new`.
pub struct Replacement {
    pub at: usize,
    pub old_len: usize,
    pub new: String,
}

impl Replacement {
    /// `text` after the replacement.
    pub fn apply(&self, text: &str) -> String {
        format!("{}{}{}", &text[..self.at], self.new, &text[self.at + self.old_len..])
    }
}

/// `str_replace`'s `old_str`, which must be given and not empty.
pub fn required_old_str(old_str: Option<&str>) -> Result<&str, ToolError> {
    old_str.filter(|s| !s.is_empty()).ok_or_else(|| {
        ToolError::InvalidInput(
            "Parameter `old_str` is required and should be a non-empty string for command: str_replace".into(),
        )
    })
}

/// The replacement `str_replace` makes in `text` (of the file shown as `shown`), or why it
/// makes none.
pub fn replacement(text: &str, shown: &str, old_str: &str, new_str: Option<&str>) -> Result<Replacement, ToolError> {
    let new_str = new_str.unwrap_or_default();
    let (found, old, new) = locate(text, old_str, new_str);
    match found.len() {
        0 => {
            let mut message =
                format!("No replacement was performed, old_str `{old_str}` did not appear verbatim in {shown}.");
            if let Some(candidate) = closest(text, old_str) {
                message.push_str(&candidate.describe(""));
            }
            return Err(ToolError::Failed(message));
        }
        1 => {}
        _ => {
            let lines = start_lines(text, &found);
            return Err(ToolError::Failed(format!(
                "No replacement was performed. Multiple occurrences of old_str `{old_str}` in lines {}. Please ensure \
                 it is unique",
                line_list(lines)
            )));
        }
    }
    if old == new {
        return Err(ToolError::Failed("No replacement was performed: old_str and new_str are identical.".into()));
    }
    Ok(Replacement { at: found[0], old_len: old.len(), new: new.into_owned() })
}

/// The 1-based start line of each occurrence (offsets ascending), in one pass.
pub fn start_lines(text: &str, offsets: &[usize]) -> Vec<usize> {
    let mut lines = Vec::with_capacity(offsets.len());
    let (mut line, mut from) = (1, 0);
    for &offset in offsets {
        line += memchr::memchr_iter(b'\n', &text.as_bytes()[from..offset]).count();
        from = offset;
        lines.push(line);
    }
    lines
}

/// `insert`.
pub fn insert(
    files: &Files<'_>,
    target: &Target,
    insert_line: Option<i64>,
    new_str: Option<&str>,
) -> Result<String, ToolError> {
    let shown = &target.raw;
    let (meta, bytes) = load_file(target)?;
    let text = edit_text(&bytes, shown)?;
    let Insertion { offset, inserted, after_line: k, lines: new_lines } = insertion_of(text, insert_line, new_str)?;
    check_not_stale(files, target, &meta, text)?;

    let mut edited = String::with_capacity(text.len() + inserted.len());
    edited.push_str(&text[..offset]);
    edited.push_str(&inserted);
    edited.push_str(&text[offset..]);
    let before = Before::Splice { at: offset, removed: Vec::new(), inserted: inserted.len(), mode: mode_of(&meta) };
    files.write(target, edited.as_bytes(), before).map_err(|err| write_failure(shown, err))?;

    Ok(format!(
        "The file {shown} has been edited. Here's the result of running `cat -n` on a snippet of the edited \
         file:\n{}\nReview the changes and make sure they are as expected (correct indentation, no duplicate lines, \
         etc). Edit the file again if necessary.",
        snippet(&edited, k.saturating_sub(SNIPPET_LINES), k + new_lines - 1 + SNIPPET_LINES)
    ))
}

/// What an `insert` adds: `inserted` at byte `offset`, after line `after_line`, `lines` lines.
pub struct Insertion {
    pub offset: usize,
    pub inserted: String,
    pub after_line: usize,
    pub lines: usize,
}

impl Insertion {
    /// `text` after the insertion.
    pub fn apply(&self, text: &str) -> String {
        format!("{}{}{}", &text[..self.offset], self.inserted, &text[self.offset..])
    }
}

/// The insertion `insert` makes in `text`, or why it makes none.
pub fn insertion_of(text: &str, insert_line: Option<i64>, new_str: Option<&str>) -> Result<Insertion, ToolError> {
    let Some(insert_line) = insert_line else {
        return Err(ToolError::InvalidInput(
            "Parameter `insert_line` is required and should be integer for command: insert".into(),
        ));
    };
    let Some(new_str) = new_str else {
        return Err(ToolError::InvalidInput("Parameter `new_str` is required for command: insert".into()));
    };
    let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    let n = newlines + 1;
    let k = usize::try_from(insert_line).ok().filter(|k| *k <= n).ok_or_else(|| {
        ToolError::InvalidInput(format!(
            "Invalid `insert_line` parameter: {insert_line}. It should be within the range of lines of the file: \
             [0, {n}]"
        ))
    })?;
    let ending = dominant_ending(text);
    let body = with_ending(new_str, ending);
    let body = body.strip_suffix(ending.as_str()).or_else(|| body.strip_suffix('\n')).unwrap_or(&body);
    let (offset, inserted) = insertion(text, k, newlines, body, ending);
    Ok(Insertion { offset, inserted, after_line: k, lines: body.matches('\n').count() + 1 })
}

/// Where `body` (its line breaks already the file's, without a final one) goes to come
/// after line `k`, and the text to insert there.
fn insertion(text: &str, k: usize, newlines: usize, body: &str, ending: LineEnding) -> (usize, String) {
    if text.is_empty() || k == 0 {
        return (0, format!("{body}{}", ending.as_str()));
    }
    // After the phantom empty line of a file that ends with a line break: append.
    if k > newlines && text.ends_with('\n') {
        return (text.len(), format!("{body}{}", ending.as_str()));
    }
    if k <= newlines {
        let offset = memchr::memchr_iter(b'\n', text.as_bytes()).nth(k - 1).map_or(text.len(), |at| at + 1);
        return (offset, format!("{body}{}", ending.as_str()));
    }
    // After a last line that has no line break: the file keeps having none.
    (text.len(), format!("{}{body}", ending.as_str()))
}

fn changed_since(shown: &str) -> ToolError {
    ToolError::Failed(format!(
        "The file {shown} was changed after the last edit; undo would lose those changes. View it and edit it instead."
    ))
}

/// `undo_edit`: puts back what the last edit of `target` by any file tool replaced. Returns
/// whether the file exists afterwards (an undone creation removes it).
pub fn undo(files: &Files<'_>, target: &Target) -> Result<bool, ToolError> {
    let shown = &target.raw;
    let history = &files.state().history;
    let Some(entry) = history.last(&target.path) else {
        return Err(ToolError::Failed(format!("No edit history found for {shown}.")));
    };
    let now = read_existing(target);
    let changed = match (entry.after, &now) {
        // A span put back needs the very bytes the edit left, not only the same size and time.
        (Some(stamp), Ok(now)) if matches!(entry.before, Before::Splice { .. }) => {
            content_hash(&now.bytes) != stamp.hash
        }
        (Some(stamp), Ok(now)) => stamp.changed(&now.meta, || Some(content_hash(&now.bytes))),
        (Some(_), Err(_)) => true,
        (None, now) => !matches!(now, Err(LoadError::NotFound)),
    };
    if changed {
        return Err(changed_since(shown));
    }
    let exists = match &entry.before {
        Before::Absent => {
            files.delete(target).map_err(|err| write_failure(shown, err))?;
            files.state().ledger.forget(&target.path);
            false
        }
        Before::Content { bytes, mode } => {
            let stamp = files.put(target, bytes, Some(*mode)).map_err(|err| write_failure(shown, err))?;
            files.state().ledger.record(&target.path, stamp);
            true
        }
        Before::Splice { at, removed, inserted, mode } => {
            let bytes = now.as_ref().map_or(&[][..], |now| now.bytes.as_slice());
            let tail = at.checked_add(*inserted).and_then(|end| bytes.get(end..));
            let (Some(head), Some(tail)) = (bytes.get(..*at), tail) else {
                return Err(changed_since(shown));
            };
            let parts = [head, removed.as_slice(), tail];
            let stamp = files.put_parts(target, &parts, Some(*mode)).map_err(|err| write_failure(shown, err))?;
            files.state().ledger.record(&target.path, stamp);
            true
        }
    };
    history.pop(&target.path);
    Ok(exists)
}
