//! Where a cut output's full text goes: the session's spill directory,
//! `.tackle/outputs/{session}/`, workspace-relative so the model can read it back with
//! `read_file` or `grep`. The executor's budget and the tools that keep their own output
//! within it (the shell) use the same directory, file naming and clean-up. Directories older
//! than 7 days are removed when a session starts.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How long spill directories are kept.
const SPILL_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

/// A session's spill directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpillDir {
    /// The directory (absolute).
    pub path: PathBuf,
    /// The same, relative to the workspace (what the model is told).
    pub rel: String,
}

impl SpillDir {
    /// The spill directory of session `session_id` in `workspace`.
    pub fn of(workspace: &Path, session_id: &str) -> SpillDir {
        let rel = format!(".tackle/outputs/{}", safe_file_stem(session_id));
        SpillDir { path: workspace.join(&rel), rel }
    }

    /// A subdirectory (the shell's job logs).
    pub fn child(&self, name: &str) -> SpillDir {
        SpillDir { path: self.path.join(name), rel: self.rel_of(name) }
    }

    /// The workspace-relative name of `file_name` in this directory.
    pub fn rel_of(&self, file_name: &str) -> String {
        format!("{}/{file_name}", self.rel)
    }
}

/// Creates a new spill file named `file_name` in `dir` (made if missing) and returns it with
/// the name it got: when the name is taken (two calls with one id, or ids that become the
/// same file name) `-2`, `-3`, … goes before the first `.`, so no output overwrites another's.
pub fn create_spill_file(dir: &Path, file_name: &str) -> std::io::Result<(std::fs::File, String)> {
    std::fs::create_dir_all(dir)?;
    let (stem, extension) = file_name.split_at(file_name.find('.').unwrap_or(file_name.len()));
    let mut name = file_name.to_owned();
    for n in 2u32.. {
        match std::fs::OpenOptions::new().write(true).create_new(true).open(dir.join(&name)) {
            Ok(file) => return Ok((file, name)),
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists && n < 10_000 => {
                name = format!("{stem}-{n}{extension}");
            }
            Err(err) => return Err(err),
        }
    }
    Err(std::io::Error::other("no free spill file name"))
}

/// A call id made safe as a file name (model-chosen ids may hold anything).
pub fn safe_file_stem(id: &str) -> String {
    let stem: String = id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' { c } else { '_' })
        .take(100)
        .collect();
    if stem.is_empty() || stem.starts_with('.') { format!("call{stem}") } else { stem }
}

/// Removes session spill directories older than the retention period.
pub fn remove_old_spills(workspace: &Path) {
    let root = workspace.join(".tackle/outputs");
    let Ok(entries) = std::fs::read_dir(&root) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|modified| now.duration_since(modified).is_ok_and(|age| age > SPILL_RETENTION));
        if old {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
