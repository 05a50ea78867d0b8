//! Where a cut output's full text goes: the session's spill directory,
//! `.tackle/outputs/{session}/`, workspace-relative so the model can read it back with
//! `read_file` or `grep`. The executor's budget and the tools that keep their own output
//! within it (the shell) use the same directory, file naming and clean-up. Directories older
//! than 7 days are removed when a session starts.
//!
//! `.tackle/outputs` is one of Tackle's state paths ([`crate::fs::state::OUTPUTS`]): every
//! directory and file is made beneath the workspace without following a link, and the
//! clean-up walks by descriptors, so a committed `.tackle/outputs -> ../..` is refused with
//! a notice instead of being written through or emptied.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rustix::fs::OFlags;

use crate::fs::state::{self, OUTPUTS};

/// How long spill directories are kept.
const SPILL_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);

/// A session's spill directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpillDir {
    /// The workspace it lies in.
    pub workspace: PathBuf,
    /// The directory (absolute).
    pub path: PathBuf,
    /// The same, relative to the workspace (what the model is told).
    pub rel: String,
}

impl SpillDir {
    /// The spill directory of session `session_id` in `workspace`.
    pub fn of(workspace: &Path, session_id: &str) -> SpillDir {
        let rel = format!("{}/{}", OUTPUTS.rel, safe_file_stem(session_id));
        SpillDir { workspace: workspace.to_owned(), path: workspace.join(&rel), rel }
    }

    /// A subdirectory (the shell's job logs).
    pub fn child(&self, name: &str) -> SpillDir {
        SpillDir { workspace: self.workspace.clone(), path: self.path.join(name), rel: self.rel_of(name) }
    }

    /// Opens the directory (made if missing) beneath the workspace, never through a link (a
    /// link is refused with a notice).
    pub fn open(&self) -> std::io::Result<std::os::fd::OwnedFd> {
        let refused = |err: state::StateError| {
            err.notice();
            std::io::Error::other(err.to_string())
        };
        state::open_dir(&self.workspace, &self.rel, true)
            .map_err(refused)?
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))
    }

    /// The workspace-relative name of `file_name` in this directory.
    pub fn rel_of(&self, file_name: &str) -> String {
        format!("{}/{file_name}", self.rel)
    }
}

/// Creates a new spill file named `file_name` in `dir` (made if missing, never through a
/// link) and returns it with the name it got: when the name is taken (two calls with one id,
/// or ids that become the same file name) `-2`, `-3`, … goes before the first `.`, so no
/// output overwrites another's.
pub fn create_spill_file(dir: &SpillDir, file_name: &str) -> std::io::Result<(std::fs::File, String)> {
    let fd = dir.open()?;
    let (stem, extension) = file_name.split_at(file_name.find('.').unwrap_or(file_name.len()));
    let mut name = file_name.to_owned();
    for n in 2u32.. {
        match state::open_in(&fd, &dir.rel, &name, OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL) {
            Ok(file) => return Ok((file, name)),
            Err(state::StateError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::AlreadyExists && n < 10_000 =>
            {
                name = format!("{stem}-{n}{extension}");
            }
            Err(state::StateError::Io { source, .. }) => return Err(source),
            Err(err) => {
                err.notice();
                return Err(std::io::Error::other(err.to_string()));
            }
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

/// Removes session spill directories older than the retention period, never through a link
/// (a linked `.tackle/outputs` is refused with a notice; a link in it is removed itself).
pub fn remove_old_spills(workspace: &Path) {
    match OUTPUTS.open_dir(workspace, "", false) {
        Ok(Some(dir)) => state::remove_older_than(&dir, SPILL_RETENTION),
        Ok(None) => {}
        Err(err) => err.notice(),
    }
}
