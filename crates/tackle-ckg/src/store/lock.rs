//! The indexer lock: one process at a time changes an index.
//!
//! An exclusive `flock` on `index.lock` next to the database is held while the schema is
//! created or rebuilt and while a refresh writes. A second indexer waits for it (polling, up
//! to its wait limit) and then sees the first one's work; readers never take it (SQLite's WAL
//! gives them a consistent snapshot). The lock dies with its process, so a killed indexer
//! never leaves the index locked.

use std::fs::File;
use std::path::Path;
use std::time::{Duration, Instant};

use rustix::fs::FlockOperation;

/// How often a waiting indexer tries again.
const POLL: Duration = Duration::from_millis(25);

/// A held lock; dropping it releases it.
#[derive(Debug)]
pub struct IndexLock {
    _file: File,
}

/// Why the lock was not taken.
#[derive(Debug)]
pub enum LockError {
    /// Another process held it for the whole wait.
    Busy,
    /// The lock file could not be opened.
    Io(std::io::Error),
}

impl IndexLock {
    /// Takes the lock at `path`, waiting up to `wait` for another holder to finish.
    pub fn acquire(path: &Path, wait: Duration) -> Result<IndexLock, LockError> {
        use std::os::unix::fs::OpenOptionsExt as _;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o644)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(path)
            .map_err(LockError::Io)?;
        let deadline = Instant::now() + wait;
        loop {
            match rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return Ok(IndexLock { _file: file }),
                Err(rustix::io::Errno::WOULDBLOCK | rustix::io::Errno::INTR) if Instant::now() < deadline => {
                    std::thread::sleep(POLL.min(deadline.saturating_duration_since(Instant::now())));
                }
                Err(rustix::io::Errno::WOULDBLOCK | rustix::io::Errno::INTR) => return Err(LockError::Busy),
                Err(errno) => return Err(LockError::Io(errno.into())),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_waits_then_gives_up() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.lock");
        let first = IndexLock::acquire(&path, Duration::ZERO).unwrap();
        // flock locks belong to the open file description, so a second open conflicts even
        // in the same process.
        assert!(matches!(IndexLock::acquire(&path, Duration::from_millis(60)), Err(LockError::Busy)));
        drop(first);
        IndexLock::acquire(&path, Duration::ZERO).unwrap();
    }
}
