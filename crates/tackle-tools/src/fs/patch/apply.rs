//! Applying a parsed patch, all or nothing (docs/reference/tools.md#apply_patch): every new file content is computed
//! in memory against a virtual view of the files the patch touches; only when every
//! operation succeeded are the files written ([`super::commit`]).

use std::collections::HashMap;
use std::path::PathBuf;

use tackle_core::{Access, ToolError};

use crate::fs::diff::file_diff;
use crate::fs::patch::commit::commit;
use crate::fs::patch::parse::{FileOp, Hunk, HunkLine, ParsedPatch};
use crate::fs::text::{as_text, dominant_ending};
use crate::fs::{Existing, Files, LoadError, Target, read_existing};

/// The message prefix of every failure.
pub const FAILED: &str = "apply_patch failed; no files were changed.";

/// A file as the patch sees it.
pub(super) struct Slot {
    pub(super) target: Target,
    pub(super) original: Option<Existing>,
    /// The original as text (`None` when absent or binary).
    pub(super) text: Option<String>,
    pub(super) binary: bool,
    /// The content the patch gives it so far (`None`: absent). A binary file is present with
    /// an empty stand-in; every operation on it fails, so it is never written.
    pub(super) current: Option<String>,
    /// The permission bits to give it when it is created (a moved file keeps its source's).
    pub(super) mode_from: Option<u32>,
    /// The file this one was moved from (its key in the patch's files).
    moved_from: Option<PathBuf>,
}

impl Slot {
    pub(super) fn mode(&self) -> Option<u32> {
        use std::os::unix::fs::PermissionsExt as _;
        self.original.as_ref().map(|o| o.meta.permissions().mode() & 0o7777)
    }
}

/// The files a patch touches, in the order it first touches them.
struct Vfs<'p> {
    /// Every path the patch names, as written, resolved once by [`resolve_paths`].
    targets: HashMap<&'p str, Target>,
    order: Vec<PathBuf>,
    slots: HashMap<PathBuf, Slot>,
}

impl Vfs<'_> {
    // A string: part of the model-facing failure message `apply_op` composes.
    fn slot(&mut self, raw: &str) -> Result<&mut Slot, String> {
        let target = self.targets.get(raw).ok_or_else(|| format!("{raw}: internal error (path not resolved)"))?;
        let key = target.path.clone();
        if !self.slots.contains_key(&key) {
            let target = target.clone();
            let original = match read_existing(&target) {
                Ok(existing) => Some(existing),
                Err(LoadError::NotFound) => None,
                Err(LoadError::Directory) => return Err(format!("{raw}: the path is a directory")),
                Err(LoadError::TooLarge { size }) => {
                    return Err(format!("{raw}: the file is {size} bytes; apply_patch handles files up to 64 MiB"));
                }
                Err(LoadError::Refused(err)) => return Err(format!("{raw}: {}", err.message())),
                Err(LoadError::Io(err)) => return Err(format!("{raw}: {err}")),
            };
            let text = original.as_ref().and_then(|o| as_text(&o.bytes)).map(str::to_owned);
            let binary = original.is_some() && text.is_none();
            let current = text.clone().or_else(|| binary.then(String::new));
            self.order.push(key.clone());
            self.slots.insert(
                key.clone(),
                Slot { target, original, text, binary, current, mode_from: None, moved_from: None },
            );
        }
        self.slots.get_mut(&key).ok_or_else(|| format!("{raw}: internal error"))
    }
}

/// One line of the file summary: `A path`, `M path`, `D path`, `M new (moved from old)`.
type Summary = Vec<String>;

/// Applies `patch` (already parsed) against the session; returns the summary lines.
pub fn apply(files: &Files<'_>, patch: &ParsedPatch) -> Result<Summary, ToolError> {
    let planned = plan(files, patch)?;
    commit(files, &planned.changed())?;
    Ok(planned.summary)
}

/// A patch applied in memory, nothing written: every file it touches, as it is and as it
/// will be, and the summary lines.
pub struct Planned<'p> {
    vfs: Vfs<'p>,
    summary: Summary,
}

impl Planned<'_> {
    /// The files the patch changes, in the order it first touches them.
    fn changed(&self) -> Vec<&Slot> {
        self.vfs
            .order
            .iter()
            .filter_map(|key| self.vfs.slots.get(key))
            .filter(|slot| !slot.binary && slot.current.as_deref() != slot.text.as_deref())
            .collect()
    }

    /// What the patch does to each file as one unified diff: an added file from `/dev/null`,
    /// a deleted one to it, a moved one from its old name to its new one.
    pub fn diff(&self) -> String {
        let changed = self.changed();
        // A move shows once, as the diff from its source, which is then not shown as removed.
        let moved: Vec<&PathBuf> = changed
            .iter()
            .filter(|slot| slot.text.is_none())
            .filter_map(|slot| slot.moved_from.as_ref())
            .filter(|from| self.vfs.slots.get(*from).is_some_and(|source| source.current.is_none()))
            .collect();
        let mut diff = String::new();
        for slot in changed {
            if moved.contains(&&slot.target.path) {
                continue;
            }
            let source = slot.moved_from.as_ref().filter(|from| moved.contains(from));
            let from = match source.and_then(|key| self.vfs.slots.get(key)) {
                Some(source) => source.text.as_deref().map(|text| (source.target.raw.as_str(), text)),
                None => slot.text.as_deref().map(|text| (slot.target.raw.as_str(), text)),
            };
            let to = slot.current.as_deref().map(|text| (slot.target.raw.as_str(), text));
            diff.push_str(&file_diff(from, to));
        }
        diff
    }
}

/// Applies `patch` in memory against the session's files (read, never written): what
/// [`apply`] writes and the approval's preview shows.
pub fn plan<'p>(files: &Files<'_>, patch: &'p ParsedPatch) -> Result<Planned<'p>, ToolError> {
    let targets = resolve_paths(files, patch)?;
    let mut vfs = Vfs { targets, order: Vec::new(), slots: HashMap::new() };
    let mut summary = Vec::new();
    for op in &patch.ops {
        apply_op(&mut vfs, op, &mut summary).map_err(|reason| ToolError::Failed(format!("{FAILED}\n{reason}")))?;
    }
    Ok(Planned { vfs, summary })
}

/// Passes every path the patch names through the path policy before anything is read or
/// applied; a refusal keeps its kind (`Denied` for the policy) and names the path.
fn resolve_paths<'p>(files: &Files<'_>, patch: &'p ParsedPatch) -> Result<HashMap<&'p str, Target>, ToolError> {
    let paths = patch.ops.iter().flat_map(|op| match op {
        FileOp::Add { path, .. } | FileOp::Delete { path } => [Some(path), None],
        FileOp::Update { path, move_to, .. } => [Some(path), move_to.as_ref()],
    });
    let mut targets = HashMap::new();
    for raw in paths.flatten() {
        match files.target(raw, Access::Write) {
            Ok(target) => targets.insert(raw.as_str(), target),
            Err(err) => {
                let message = format!("{FAILED}\n{raw}: {}", err.message());
                return Err(match err {
                    ToolError::Denied(_) => ToolError::Denied(message),
                    ToolError::InvalidInput(_) => ToolError::InvalidInput(message),
                    _ => ToolError::Failed(message),
                });
            }
        };
    }
    Ok(targets)
}

// A string: the reason is the model's feedback as is, after "apply_patch failed" (ToolError::Failed);
// no caller branches on it.
fn apply_op(vfs: &mut Vfs<'_>, op: &FileOp, summary: &mut Summary) -> Result<(), String> {
    match op {
        FileOp::Add { path, lines } => {
            let slot = vfs.slot(path)?;
            if slot.current.is_some() {
                return Err(format!("{path}: the file already exists; use '*** Update File: {path}' to change it"));
            }
            let mut text = lines.join("\n");
            if !lines.is_empty() {
                text.push('\n');
            }
            slot.current = Some(text);
            summary.push(format!("A {path}"));
        }
        FileOp::Delete { path } => {
            let slot = vfs.slot(path)?;
            if slot.current.is_none() {
                return Err(format!("{path}: the file does not exist"));
            }
            if slot.binary {
                return Err(format!("{path}: the file is binary; apply_patch only handles UTF-8 text"));
            }
            slot.current = None;
            summary.push(format!("D {path}"));
        }
        FileOp::Update { path, move_to, hunks } => {
            let slot = vfs.slot(path)?;
            let Some(current) = slot.current.as_deref() else {
                return Err(format!("{path}: the file does not exist"));
            };
            if slot.binary {
                return Err(format!("{path}: the file is binary; apply_patch only handles UTF-8 text"));
            }
            let updated = update(current, hunks).map_err(|reason| format!("{path}: {reason}"))?;
            match move_to {
                None => {
                    slot.current = Some(updated);
                    summary.push(format!("M {path}"));
                }
                Some(new_path) => {
                    slot.current = None;
                    let mode = slot.mode();
                    let source = slot.target.path.clone();
                    let destination = vfs.slot(new_path)?;
                    if destination.current.is_some() {
                        return Err(format!("{new_path}: cannot move {path} there: the file already exists"));
                    }
                    destination.current = Some(updated);
                    destination.mode_from = mode;
                    destination.moved_from = Some(source);
                    summary.push(format!("M {new_path} (moved from {path})"));
                }
            }
        }
    }
    Ok(())
}

/// A line of a file: its text and its own line ending (`""` for a last line without one).
struct Line<'a> {
    text: &'a str,
    ending: &'a str,
}

fn split(text: &str) -> Vec<Line<'_>> {
    let mut lines = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        match rest.find('\n') {
            Some(at) => {
                let (line, ending) = match rest[..at].strip_suffix('\r') {
                    Some(line) => (line, &rest[at - 1..=at]),
                    None => (&rest[..at], &rest[at..=at]),
                };
                lines.push(Line { text: line, ending });
                rest = &rest[at + 1..];
            }
            None => {
                lines.push(Line { text: rest, ending: "" });
                rest = "";
            }
        }
    }
    lines
}

/// The new content of a file after its hunks. Lines the patch does not change keep their
/// exact text and ending (a context line matched loosely stays as the file has it); added
/// lines take the file's dominant ending; the file ends with a line break.
// A string: part of the model-facing failure message `apply_op` composes.
fn update(text: &str, hunks: &[Hunk]) -> Result<String, String> {
    let ending = dominant_ending(text).as_str();
    let lines = split(text);
    let mut replacements: Vec<(usize, &[HunkLine])> = Vec::new();
    let mut cursor = 0;
    for (index, hunk) in hunks.iter().enumerate() {
        let number = index + 1;
        if let Some(header) = &hunk.header {
            let at = seek(&lines, &[header.as_str()], cursor, false)
                .ok_or_else(|| format!("could not find the line '{header}' of hunk {number}"))?;
            cursor = at + 1;
        }
        let mut body: &[HunkLine] = &hunk.lines;
        let old = hunk.old();
        if old.is_empty() {
            replacements.push((lines.len(), body));
            continue;
        }
        let mut found = seek(&lines, &old, cursor, hunk.end_of_file);
        // A blank last context line (the blank line before the next `@@`) may be absent.
        if found.is_none() && matches!(body.last(), Some(HunkLine::Context(text)) if text.is_empty()) && old.len() > 1 {
            body = &body[..body.len() - 1];
            found = seek(&lines, &old[..old.len() - 1], cursor, hunk.end_of_file);
        }
        let Some(at) = found else {
            return Err(format!("could not find the expected lines (hunk {number}):\n{}", old.join("\n")));
        };
        replacements.push((at, body));
        cursor = at + body.iter().filter(|l| !matches!(l, HunkLine::Added(_))).count();
    }

    let mut out = String::with_capacity(text.len() + 256);
    let push = |out: &mut String, line: &str, own_ending: &str| {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push_str(ending);
        }
        out.push_str(line);
        out.push_str(own_ending);
    };
    let mut next = 0;
    for (at, body) in replacements {
        for line in &lines[next..at] {
            push(&mut out, line.text, line.ending);
        }
        let mut in_file = at;
        for line in body {
            match line {
                HunkLine::Context(_) => {
                    push(&mut out, lines[in_file].text, lines[in_file].ending);
                    in_file += 1;
                }
                HunkLine::Removed(_) => in_file += 1,
                HunkLine::Added(text) => push(&mut out, text, ending),
            }
        }
        next = in_file;
    }
    for line in &lines[next..] {
        push(&mut out, line.text, line.ending);
    }
    if !out.is_empty() && !out.ends_with('\n') {
        out.push_str(ending);
    }
    Ok(out)
}

/// The first index at or after `from` where `pattern` matches, trying four passes: exact,
/// trailing whitespace ignored, surrounding whitespace ignored, typographic punctuation
/// folded. With `end_of_file`, only a match ending at the last line counts.
fn seek(lines: &[Line<'_>], pattern: &[&str], from: usize, end_of_file: bool) -> Option<usize> {
    if pattern.len() > lines.len() {
        return None;
    }
    let last_start = lines.len() - pattern.len();
    let starts: Vec<usize> = if end_of_file {
        (last_start >= from).then_some(last_start).into_iter().collect()
    } else {
        (from..=last_start).collect()
    };
    let passes: [LineMatch; 4] = [
        |a, b| a == b,
        |a, b| a.trim_end() == b.trim_end(),
        |a, b| a.trim() == b.trim(),
        |a, b| fold(a.trim()) == fold(b.trim()),
    ];
    passes.iter().find_map(|same| {
        starts.iter().copied().find(|&start| pattern.iter().zip(&lines[start..]).all(|(p, l)| same(l.text, p)))
    })
}

/// Whether a file line matches a patch line, in one of the passes of [`seek`].
type LineMatch = fn(&str, &str) -> bool;

/// Typographic punctuation folded to ASCII (quotes, dashes, non-breaking and odd spaces).
fn fold(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => '"',
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}' | '\u{2212}' => '-',
            '\u{00A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            other => other,
        })
        .collect()
}
