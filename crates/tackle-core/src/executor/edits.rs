//! What a file edit changed, shown to the person after the call (never to the model): the
//! text files a call of a file-editing tool writes, read before it runs and after, as one
//! unified diff in the output's `meta.diff` (docs/reference/tools.md#outputs).

use std::path::PathBuf;

use serde_json::Value;

use crate::diff::unified_diff;
use crate::paths::Access;
use crate::session::Session;
use crate::spec::{PathAccess, ToolSpec};

/// Files larger than this are not diffed (reading them twice would cost more than the diff
/// is worth to a person).
const MAX_FILE_BYTES: u64 = 1 << 20;

/// The files an edit writes, and their text before it (`None`: the file did not exist).
pub(super) struct Before {
    files: Vec<(String, PathBuf, Option<String>)>,
}

/// Reads the files that `args` of `spec` write (its write path parameters and the paths the
/// tool names for the input, e.g. a patch's files), as the session's path policy resolves
/// them. `None` for a tool that edits no files, or a file that is not text or too large.
pub(super) fn before(session: &Session, spec: &ToolSpec, args: &Value, written: &[String]) -> Option<Before> {
    if !spec.edits_files {
        return None;
    }
    let named = spec
        .path_params
        .iter()
        .filter(|param| param.access == PathAccess::Write)
        .filter_map(|param| args.get(&param.name).and_then(Value::as_str));
    let mut files = Vec::new();
    for raw in named.chain(written.iter().map(String::as_str)) {
        let Ok(path) = session.path_policy().resolve(raw, Access::Write) else { continue };
        if files.iter().any(|(_, known, _)| *known == path) {
            continue;
        }
        let text = match std::fs::metadata(&path) {
            Ok(meta) if !meta.is_file() || meta.len() > MAX_FILE_BYTES => return None,
            Ok(_) => Some(String::from_utf8(std::fs::read(&path).ok()?).ok()?),
            Err(_) => None,
        };
        files.push((raw.to_owned(), path, text));
    }
    (!files.is_empty()).then_some(Before { files })
}

/// The diff of the files since [`before`]; `None` when nothing readable changed.
pub(super) fn after(before: &Before) -> Option<String> {
    let mut diff = String::new();
    for (shown, path, old) in &before.files {
        let new = match std::fs::metadata(path) {
            Ok(meta) if meta.is_file() && meta.len() <= MAX_FILE_BYTES => {
                String::from_utf8(std::fs::read(path).ok()?).ok()?
            }
            // Removed (or replaced by something that is not a small file).
            _ => String::new(),
        };
        if old.as_deref() == Some(new.as_str()) {
            continue;
        }
        let shown = shown.trim_start_matches("./");
        diff.push_str(&unified_diff(shown, old.as_deref(), &new));
    }
    (!diff.is_empty()).then_some(diff)
}
