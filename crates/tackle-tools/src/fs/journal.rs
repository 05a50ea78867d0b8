//! The roll-forward journal of a multi-file write (`apply_patch`), so that a Tackle killed
//! between two renames leaves every file patched or none (docs/file-tools.md, "apply_patch
//! and crashes").
//!
//! Before it stages anything, a write of several files records in
//! `.tackle/journal/apply_patch-{pid}-{n}.json` each file's path (as the model wrote it),
//! the temporary file its new content goes to, and the content hashes before and after.
//! The journal is written to a temporary name, fsynced, renamed into place and its
//! directory fsynced; the writer holds an exclusive `flock` on it until it removes it after
//! the last rename. Whoever finds a journal nobody holds (the writer died) completes it
//! ([`recover`], run when a session's file tools start):
//! - every file already holds its new content, or still holds its old content with its
//!   complete staged file beside it (or is to be removed): the remaining renames and removals
//!   are done (roll forward);
//! - no file holds its new content yet and some staged file is missing or incomplete (the
//!   writer died while staging): the staged files are removed and nothing changes;
//! - anything else (a file changed since, a path the policy now refuses): nothing is touched,
//!   and the files are named in a warning.
//!
//! The journal lives in the workspace, which a command may write, so nothing in it is
//! trusted: each path passes the path policy for writing again, each file is opened beneath
//! its root, a staged name must be one of the atomic writer's temporary names, and a file is
//! renamed over or removed only when its content hash is the journal's.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{Read as _, Write as _};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, FlockOperation, Mode, OFlags};
use serde::{Deserialize, Serialize};
use tackle_core::{Access, ToolContext};

use crate::fs::atomic::is_temp_name;
use crate::fs::beneath::{Beneath, DIR_READ, Links, OpenError, READ};
use crate::fs::files::MAX_EDIT_BYTES;
use crate::fs::ledger::StreamHasher;

/// The journal directory, relative to the workspace.
pub const DIR: &str = tackle_core::fs::state::JOURNAL.rel;
/// The largest journal read back (a patch of many files is far below it).
const MAX_JOURNAL_BYTES: u64 = 16 * 1024 * 1024;

/// One file of a multi-file write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The path as the model wrote it (resolved again through the policy on recovery).
    pub path: String,
    /// The staged file's name in the target's directory, for a write; `None` for a removal.
    pub temp: Option<String>,
    /// The content hash before ([`crate::fs::ledger::content_hash`]); `None`: absent.
    pub before: Option<u64>,
    /// The content hash after; `None`: removed.
    pub after: Option<u64>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Record {
    version: u32,
    entries: Vec<Entry>,
}

/// A journal being written to: held locked until [`Journal::finish`]. Dropped without it (a
/// panic), the journal stays for the next session to complete.
#[derive(Debug)]
pub struct Journal {
    dir: OwnedFd,
    name: OsString,
    /// Holds the `flock` that tells other sessions the writer is alive.
    _lock: File,
}

impl Journal {
    /// Writes the journal of `entries` under `workspace` (created if missing), durably.
    pub fn begin(workspace: &Path, entries: &[Entry]) -> std::io::Result<Journal> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let beneath = Beneath::open(workspace)?;
        let dir_path = workspace.join(DIR);
        beneath.create_dirs(&dir_path, 0o755).map_err(io_error)?;
        let dir = beneath.open_at(&dir_path, DIR_READ, Links::None).map_err(io_error)?;
        let name = format!("apply_patch-{}-{}.json", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
        let temp = format!(".{name}.tmp");
        let fd = rustix::fs::openat(
            &dir,
            temp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC | OFlags::NOFOLLOW,
            Mode::from_raw_mode(0o600),
        )?;
        rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive)?;
        let mut file = File::from(fd);
        let written = serde_json::to_vec(&Record { version: 1, entries: entries.to_vec() })
            .map_err(std::io::Error::other)
            .and_then(|bytes| file.write_all(&bytes))
            .and_then(|()| file.sync_all())
            .and_then(|()| Ok(rustix::fs::renameat(&dir, temp.as_str(), &dir, name.as_str())?))
            .and_then(|()| Ok(rustix::fs::fsync(&dir)?));
        if let Err(err) = written {
            let _ = rustix::fs::unlinkat(&dir, temp.as_str(), AtFlags::empty());
            return Err(err);
        }
        Ok(Journal { dir, name: OsString::from(name), _lock: file })
    }

    /// Removes the journal: every rename is done (or undone).
    pub fn finish(self) -> std::io::Result<()> {
        Ok(rustix::fs::unlinkat(&self.dir, self.name.as_os_str(), AtFlags::empty())?)
    }
}

fn io_error(err: OpenError) -> std::io::Error {
    match err {
        OpenError::Escaped => {
            std::io::Error::new(std::io::ErrorKind::PermissionDenied, format!("{DIR} leads outside the workspace"))
        }
        OpenError::Io(err) => err,
    }
}

/// Completes (or cleans up) every journal in `ctx`'s workspace whose writer is gone; returns
/// one line per journal for the person (what was done, or why it could not be).
pub fn recover(ctx: &ToolContext) -> Vec<String> {
    // A session without a path policy can resolve nothing: it leaves journals to one that can.
    if ctx.resolve_path(".", Access::Read).is_err() {
        return Vec::new();
    }
    // The policy's workspace is canonical, as opening beneath it needs.
    let workspace = ctx.paths().workspace();
    let Ok(beneath) = Beneath::open(workspace) else { return Vec::new() };
    let Ok(dir) = beneath.open_at(&workspace.join(DIR), DIR_READ, Links::None) else { return Vec::new() };
    let Ok(listing) = rustix::fs::Dir::read_from(&dir) else { return Vec::new() };
    let names: Vec<OsString> = listing
        .flatten()
        .map(|entry| OsStr::from_bytes(entry.file_name().to_bytes()).to_owned())
        .filter(|name| name.as_bytes().ends_with(b".json") || name.as_bytes().ends_with(b".json.tmp"))
        .collect();
    let mut notes = Vec::new();
    for name in names {
        let Some((_lock, record)) = claim(&dir, &name) else { continue };
        if let Some(record) = record {
            notes.push(complete(ctx, &record));
        }
        // Claimed: completed, cleaned up, unpublished or unreadable; done with either way.
        let _ = rustix::fs::unlinkat(&dir, name.as_os_str(), AtFlags::empty());
    }
    notes
}

/// Opens and locks the journal `name` when its writer is gone; returns the lock and the
/// record (`None`: a journal that never got published, or that cannot be read).
fn claim(dir: &OwnedFd, name: &OsStr) -> Option<(File, Option<Record>)> {
    let fd = rustix::fs::openat(dir, name, READ | OFlags::NOFOLLOW, Mode::empty()).ok()?;
    // Held: its writer is alive (in this process or another).
    rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive).ok()?;
    let stat = rustix::fs::fstat(&fd).ok()?;
    // Removed between the listing and the lock: its writer finished.
    if stat.st_nlink == 0 || FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return None;
    }
    let mut file = File::from(fd);
    if name.as_bytes().starts_with(b".") {
        return Some((file, None));
    }
    let mut bytes = Vec::new();
    let read = (&mut file).take(MAX_JOURNAL_BYTES).read_to_end(&mut bytes);
    let record = read.ok().and_then(|_| serde_json::from_slice::<Record>(&bytes).ok()).filter(|r| r.version == 1);
    Some((file, record))
}

/// Where one file of a journal stands.
#[derive(Debug)]
enum State {
    /// It holds its new content (or is gone, for a removal).
    Done,
    /// It holds its old content, and its staged content is complete (or it is to be removed).
    Ready,
    /// It holds its old content, and its staged file is missing or incomplete.
    Unstaged,
    /// Anything else, with the reason.
    Conflict(String),
}

/// One journal file, found beneath its root: its directory, its name, its staged name.
struct Found {
    at: Option<(OwnedFd, OsString)>,
    temp: Option<OsString>,
    state: State,
}

impl Found {
    fn only(state: State) -> Found {
        Found { at: None, temp: None, state }
    }
}

/// Completes one journal; returns the line for the person.
fn complete(ctx: &ToolContext, record: &Record) -> String {
    let files: Vec<Found> = record.entries.iter().map(|entry| find(ctx, entry)).collect();
    let paths = record.entries.iter().map(|e| e.path.as_str()).collect::<Vec<_>>().join(", ");
    let conflicts: Vec<String> = files
        .iter()
        .zip(&record.entries)
        .filter_map(|(found, entry)| match &found.state {
            State::Conflict(reason) => Some(format!("{}: {reason}", entry.path)),
            _ => None,
        })
        .collect();
    let any_done = files.iter().any(|f| matches!(f.state, State::Done));
    let any_unstaged = files.iter().any(|f| matches!(f.state, State::Unstaged));
    if conflicts.is_empty() && !any_unstaged {
        let failed: Vec<String> = files
            .iter()
            .zip(&record.entries)
            .filter_map(|(found, entry)| roll_forward(found).err().map(|errno| format!("{}: {errno}", entry.path)))
            .collect();
        return if failed.is_empty() {
            format!("completed an apply_patch that was interrupted ({paths})")
        } else {
            format!("could not complete an interrupted apply_patch; check {}", failed.join("; "))
        };
    }
    if conflicts.is_empty() && !any_done {
        for found in &files {
            if let (Some((dir, _)), Some(temp)) = (&found.at, &found.temp) {
                let _ = rustix::fs::unlinkat(dir, temp, AtFlags::empty());
            }
        }
        return format!("an apply_patch was interrupted before it changed any file; nothing was changed ({paths})");
    }
    let reasons = if conflicts.is_empty() {
        "some files are patched and others have no complete staged content".to_owned()
    } else {
        conflicts.join("; ")
    };
    format!("an interrupted apply_patch ({paths}) cannot be completed, nothing was touched; check: {reasons}")
}

/// The remaining step of one file: its rename or removal, or the clean-up of a staged name
/// an exchange left holding the old content.
fn roll_forward(found: &Found) -> Result<(), rustix::io::Errno> {
    let Some((dir, name)) = &found.at else { return Ok(()) };
    match (&found.state, &found.temp) {
        (State::Ready, Some(temp)) => rustix::fs::renameat(dir, temp, dir, name),
        (State::Ready, None) => rustix::fs::unlinkat(dir, name, AtFlags::empty()),
        (_, Some(temp)) => match rustix::fs::unlinkat(dir, temp, AtFlags::empty()) {
            Err(rustix::io::Errno::NOENT) => Ok(()),
            other => other,
        },
        _ => Ok(()),
    }
}

/// Finds one entry's file beneath its root and says where it stands.
fn find(ctx: &ToolContext, entry: &Entry) -> Found {
    let conflict = |reason: String| Found::only(State::Conflict(reason));
    let target = match crate::fs::target(ctx, &entry.path, Access::Write) {
        Ok(target) => target,
        Err(err) => return conflict(err.message().to_owned()),
    };
    let temp = entry.temp.as_deref().map(OsString::from);
    if temp.as_deref().is_some_and(|t| !is_temp_name(t) || t.as_bytes().contains(&b'/')) {
        return conflict("the journal names a staged file that is not one".to_owned());
    }
    let (Some(parent), Some(name)) = (target.path.parent(), target.path.file_name()) else {
        return conflict("not a file path".to_owned());
    };
    let opened =
        Beneath::open(&target.root).map_err(OpenError::Io).and_then(|b| b.open_at(parent, DIR_READ, Links::None));
    let dir = match opened {
        Ok(dir) => dir,
        // A new file whose directory does not exist: nothing was staged or renamed there.
        Err(OpenError::Io(err)) if err.kind() == std::io::ErrorKind::NotFound && entry.before.is_none() => {
            return Found::only(if entry.after.is_none() { State::Done } else { State::Unstaged });
        }
        Err(err) => return conflict(err.to_string()),
    };
    let state = match hash_of(&dir, name) {
        Err(err) => State::Conflict(err.to_string()),
        Ok(current) if current == entry.after => State::Done,
        Ok(current) if current != entry.before => State::Conflict("changed since".to_owned()),
        Ok(_) => match &temp {
            None => State::Ready,
            Some(temp) => match hash_of(&dir, temp) {
                Ok(Some(staged)) if Some(staged) == entry.after => State::Ready,
                _ => State::Unstaged,
            },
        },
    };
    Found { at: Some((dir, name.to_owned())), temp, state }
}

/// Why a journaled file's content cannot be hashed; the text is the conflict's reason.
#[derive(Debug, thiserror::Error)]
enum HashError {
    #[error("{0}")]
    Open(#[source] rustix::io::Errno),
    #[error("{0}")]
    Read(#[source] std::io::Error),
    #[error("not a regular file")]
    NotAFile,
    #[error("larger than any file apply_patch writes")]
    TooLarge,
}

/// The content hash of the regular file `name` in `dir` (`None`: absent), never following a
/// link and never blocking.
fn hash_of(dir: &OwnedFd, name: &OsStr) -> Result<Option<u64>, HashError> {
    let fd = match rustix::fs::openat(dir, name, READ | OFlags::NOFOLLOW, Mode::empty()) {
        Ok(fd) => fd,
        Err(rustix::io::Errno::NOENT) => return Ok(None),
        Err(errno) => return Err(HashError::Open(errno)),
    };
    let mut file = File::from(fd);
    let meta = file.metadata().map_err(HashError::Read)?;
    if !meta.is_file() {
        return Err(HashError::NotAFile);
    }
    if meta.len() > MAX_EDIT_BYTES {
        return Err(HashError::TooLarge);
    }
    let mut hasher = StreamHasher::default();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match file.read(&mut buf) {
            Ok(0) => return Ok(Some(hasher.finish())),
            Ok(n) => hasher.update(&buf[..n]),
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(HashError::Read(err)),
        }
    }
}
