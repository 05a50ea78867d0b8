//! What a file edit changed, shown to the person after the call (never to the model): the
//! text files a call of a file-editing tool writes, read before it runs and after, as one
//! unified diff in the output's `meta.diff` (docs/reference/tools.md#outputs).

use std::fs::OpenOptions;
use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::diff::unified_diff;
use crate::paths::Access;
use crate::session::ToolSession;
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
pub(super) fn before(session: &ToolSession, spec: &ToolSpec, args: &Value, written: &[String]) -> Option<Before> {
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
        let text = read_text(&path)?;
        files.push((raw.to_owned(), path, text));
    }
    (!files.is_empty()).then_some(Before { files })
}

/// The diff of the files since [`before`]; `None` when nothing readable changed.
pub(super) fn after(before: &Before) -> Option<String> {
    let mut diff = String::new();
    for (shown, path, old) in &before.files {
        // Removed: everything went.
        let new = read_text(path)?.unwrap_or_default();
        if old.as_deref() == Some(new.as_str()) {
            continue;
        }
        let shown = shown.trim_start_matches("./");
        diff.push_str(&unified_diff(shown, old.as_deref(), &new));
    }
    (!diff.is_empty()).then_some(diff)
}

/// The text of the regular file at `path`: `Some(None)` when there is none, `None` when it
/// cannot be diffed (not a regular file, too large, not UTF-8, unreadable). Opened without
/// blocking and checked on the open file, so a FIFO swapped in never hangs the call.
fn read_text(path: &Path) -> Option<Option<String>> {
    let nonblocking = i32::try_from(rustix::fs::OFlags::NONBLOCK.bits()).ok()?;
    let file = match OpenOptions::new().read(true).custom_flags(nonblocking).open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Some(None),
        Err(_) => return None,
    };
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    // The file may grow after the stat: read one byte past the limit to notice.
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).ok()?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return None;
    }
    Some(Some(String::from_utf8(bytes).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_or_a_large_or_binary_file_is_not_read_and_a_missing_one_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, rustix::fs::Mode::from_raw_mode(0o600)).unwrap();
        // No writer: a blocking open would hang here.
        assert_eq!(read_text(&fifo), None);
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; usize::try_from(MAX_FILE_BYTES).unwrap() + 1]).unwrap();
        assert_eq!(read_text(&big), None);
        let binary = dir.path().join("bin");
        std::fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
        assert_eq!(read_text(&binary), None);
        assert_eq!(read_text(&dir.path().join("absent")), Some(None));
        std::fs::write(dir.path().join("t"), "text\n").unwrap();
        assert_eq!(read_text(&dir.path().join("t")), Some(Some("text\n".to_owned())));
    }
}
