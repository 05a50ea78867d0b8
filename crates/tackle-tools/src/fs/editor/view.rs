//! `view` of `str_replace_based_edit_tool` (docs/reference/tools.md#str_replace_based_edit_tool): a file as `cat -n` shows it, capped
//! and streamed so a huge file is never loaded whole, or a directory two levels deep.

use std::path::{Path, PathBuf};

use tackle_core::{ToolContext, ToolError};
use tackle_policy::permission::rules::ReadRules;

use crate::fs::reader::{Line, scan};
use crate::fs::text::{binary_message, numbered};
use crate::fs::{FileStamp, Files, LoadError, Target, ledger, open_read};
use crate::search::walk::{Kind, WalkOptions, walk};

/// Characters of file content shown by a `view` without `view_range`.
pub const VIEW_CAP_CHARS: usize = 16_000;
/// Characters of file content shown by a `view` with `view_range` (the executor's output
/// budget then cuts and spills what does not fit).
const RANGE_CAP_CHARS: usize = 1_000_000;
/// Entries shown for a directory.
const DIR_CAP_ENTRIES: usize = 1_000;

/// `view` of a file, with the `view_range` checks of Trae.
pub fn view_file(files: &Files<'_>, target: &Target, view_range: Option<&[i64]>) -> Result<String, ToolError> {
    let shown = &target.raw;
    let range = match view_range {
        None => None,
        Some([start, end]) => Some((*start, *end)),
        Some(_) => {
            return Err(ToolError::InvalidInput("Invalid `view_range`. It should be a list of two integers.".into()));
        }
    };
    let first = range.map_or(1, |(start, _)| start.max(1));
    let last = match range {
        Some((_, end)) if end >= 1 => u64::try_from(end).unwrap_or(u64::MAX),
        _ => u64::MAX,
    };
    let cap = if range.is_some() { RANGE_CAP_CHARS } else { VIEW_CAP_CHARS };
    let read_error = |err: std::io::Error| ToolError::Failed(format!("Ran into {err} while trying to read {shown}"));

    let (mut file, meta) = match open_read(target) {
        Ok(opened) => opened,
        Err(LoadError::Refused(err)) => return Err(err),
        Err(LoadError::Io(err)) => return Err(read_error(err)),
        Err(LoadError::NotFound) => {
            return Err(ToolError::NotFound(format!("The path {shown} does not exist. Please provide a valid path.")));
        }
        Err(err) => return Err(ToolError::Failed(format!("Ran into {err} while trying to read {shown}"))),
    };
    let mut lines: Vec<String> = Vec::new();
    let mut used = 0usize;
    let mut clipped = false;
    let window = u64::try_from(first - 1).unwrap_or(0)..last;
    let scanned = scan(&mut file, window, cap * 4, true, |line: Line<'_>| {
        if used + line.chars + 1 > cap {
            clipped = true;
            if lines.is_empty() {
                lines.push(line.text.chars().take(cap).collect());
            }
            return false;
        }
        used += line.chars + 1;
        lines.push(line.text.to_owned());
        true
    })
    .map_err(read_error)?;
    if scanned.binary {
        return Err(ToolError::Failed(binary_message(shown)));
    }
    let n = scanned.view_lines();
    if let Some((start, end)) = range {
        check_range(start, end, n)?;
    }
    if let Some(hash) = scanned.hash {
        files.record_stamp(target, FileStamp { size: scanned.size, mtime_ns: ledger::mtime_ns(&meta), hash });
    }

    let first_shown = usize::try_from(first).unwrap_or(1);
    let mut out = format!("Here's the result of running `cat -n` on {shown}:\n");
    out.push_str(&numbered(lines.iter().map(String::as_str), first_shown));
    out.push('\n');
    if clipped {
        let last_shown = first_shown + lines.len().saturating_sub(1);
        out.push_str(&format!(
            "<response clipped><NOTE>Showing lines {first_shown}-{last_shown} of {n}. Use view_range, or grep -n, to \
             reach the rest.</NOTE>"
        ));
    }
    Ok(out)
}

/// Trae's `view_range` checks, against `n` lines.
fn check_range(start: i64, end: i64, n: u64) -> Result<(), ToolError> {
    let shown = format!("[{start}, {end}]");
    let n_signed = i64::try_from(n).unwrap_or(i64::MAX);
    if start < 1 || start > n_signed {
        return Err(ToolError::InvalidInput(format!(
            "Invalid `view_range`: {shown}. Its first element `{start}` should be within the range of lines of the \
             file: [1, {n}]"
        )));
    }
    if end > n_signed {
        return Err(ToolError::InvalidInput(format!(
            "Invalid `view_range`: {shown}. Its second element `{end}` should be smaller than the number of lines in \
             the file: `{n}`"
        )));
    }
    if end != -1 && end < start {
        return Err(ToolError::InvalidInput(format!(
            "Invalid `view_range`: {shown}. Its second element `{end}` should be larger or equal than its first \
             `{start}`"
        )));
    }
    Ok(())
}

/// `view` of a directory: paths relative to it, two levels deep, sorted, directories ending
/// in `/`, dot-entries and ignored entries left out (a native walk, so names with spaces are
/// fine; Trae's `find` broke on them).
///
/// The walk is `grep`'s and `glob`'s: it lists each directory through its descriptor, so a
/// directory swapped for a link out during the walk is never entered.
pub fn view_dir(target: &Target, ctx: &ToolContext) -> Result<String, ToolError> {
    let beneath = target
        .beneath()
        .map_err(|err| ToolError::Failed(format!("Ran into {err} while trying to read {}", target.raw)))?;
    // Paths `Read(...)` deny rules hide are left out, as `glob` and `grep` leave them out.
    let hidden_by_rules = (*ctx.state().get::<ReadRules>()).clone();
    let options = WalkOptions { max_depth: Some(2), hidden_by_rules, ..WalkOptions::default() };
    let mut entries: Vec<(PathBuf, bool)> = walk(
        target,
        &beneath,
        ctx.workspace(),
        options,
        ctx.cancel_token(),
        || (),
        |(), entry| {
            let relative = entry.path.strip_prefix(&target.path).ok()?;
            Some((relative.to_owned(), entry.kind == Kind::Dir))
        },
    )?;
    entries.sort();
    let total = entries.len();
    let mut out =
        format!("Here's the files and directories up to 2 levels deep in {}, excluding hidden items:\n", target.raw);
    for (path, is_dir) in entries.iter().take(DIR_CAP_ENTRIES) {
        out.push_str(&display(path));
        if *is_dir {
            out.push('/');
        }
        out.push('\n');
    }
    if total > DIR_CAP_ENTRIES {
        out.push_str(&format!("[... {} more entries not shown]\n", total - DIR_CAP_ENTRIES));
    }
    Ok(out)
}

fn display(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}
