//! Tackle's own directories in the workspace (`.tackle/`, `.tackle/teams/{session}/`),
//! opened so that a link planted there is refused, never followed.
//!
//! The workspace may be hostile: `.tackle` or a file in it may be a symlink planted to make
//! Tackle write elsewhere. A directory is opened beneath the workspace root without following
//! any link ([`crate::fs::beneath`]), and every file in it is opened relative to that
//! directory with `O_NOFOLLOW` and must be a regular file. The task board (`tackle-tools`'
//! `planning/tasks/board.rs`), the team mailboxes (`tackle-agent`'s `team`) and the state
//! paths ([`crate::fs::state`]) use it.

use std::os::fd::OwnedFd;
use std::path::Path;

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

use crate::fs::beneath::{Beneath, DIR_READ, Links, OpenError};

/// Why a directory or a file of Tackle's could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OwnDirError {
    /// A symlink, something that is not a directory (or not a regular file), or a path that
    /// leads outside the workspace.
    #[error("a symlink or not a plain directory or file")]
    Escaped,
    /// The file system refused; `what` says which step.
    #[error("cannot {what}: {source}")]
    Io {
        /// The step: `open`, `create the directory of`, ...
        what: &'static str,
        /// The error.
        source: std::io::Error,
    },
}

impl OwnDirError {
    /// Whether the directory or file does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, OwnDirError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

/// Opens the directory `relative` (such as `.tackle`) beneath the workspace `root` (its
/// canonical path) without following any link. Missing, it is created when `create` (each
/// component beneath the root, never through a link), else `None` is answered.
pub fn open_dir(root: &Path, relative: &Path, create: bool) -> Result<Option<OwnedFd>, OwnDirError> {
    let beneath = Beneath::open(root).map_err(|source| OwnDirError::Io { what: "open the workspace of", source })?;
    let path = root.join(relative);
    let open = |what| match beneath.open_at(&path, DIR_READ, Links::None) {
        Ok(fd) => Ok(Some(fd)),
        Err(OpenError::Escaped) => Err(OwnDirError::Escaped),
        Err(OpenError::Io(err)) if err.raw_os_error() == Some(Errno::NOTDIR.raw_os_error()) => {
            Err(OwnDirError::Escaped)
        }
        Err(OpenError::Io(source)) => Err(OwnDirError::Io { what, source }),
    };
    match open("open") {
        Err(err) if err.is_not_found() && create => {
            beneath.create_dirs(&path, 0o755).map_err(|err| match err {
                OpenError::Escaped => OwnDirError::Escaped,
                OpenError::Io(source) => OwnDirError::Io { what: "create the directory of", source },
            })?;
            open("open")
        }
        Err(err) if err.is_not_found() => Ok(None),
        other => other,
    }
}

/// Opens the file `name` in `dir` with `flags` (plus `O_NOFOLLOW`, close-on-exec, no
/// controlling terminal, not blocking), created with mode 0644 when `flags` say so. A link or
/// anything but a regular file is [`OwnDirError::Escaped`].
pub fn open_file(dir: &OwnedFd, name: &str, flags: OFlags, what: &'static str) -> Result<OwnedFd, OwnDirError> {
    let flags = flags | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK;
    match rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(0o644)) {
        Ok(fd) => {
            let stat = rustix::fs::fstat(&fd).map_err(|errno| OwnDirError::Io { what, source: errno.into() })?;
            if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::RegularFile {
                return Err(OwnDirError::Escaped);
            }
            Ok(fd)
        }
        Err(Errno::LOOP) => Err(OwnDirError::Escaped),
        Err(errno) => Err(OwnDirError::Io { what, source: errno.into() }),
    }
}
