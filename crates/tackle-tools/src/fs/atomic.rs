//! Atomic writes and removals (docs/reference/tools.md#session-state, docs/reference/safety.md#path-policy): no reader and no crash ever sees
//! a half-written file, and a path swapped under the tool cannot redirect the write.
//!
//! A write creates a temporary file next to the target (in the same directory, so the rename
//! is atomic), gives it the target's permission bits (and owner, where allowed), writes and
//! optionally fsyncs it, then **re-checks** the path through the policy and verifies that the
//! directory it opened is still the directory at that path, and finally renames the
//! temporary file over the target *relative to the opened directory* (`renameat`). A symlink
//! planted in place of the target after the check is replaced, never followed; a directory
//! swapped for a symlink fails the identity check. Hard links to the target keep the old
//! content, as with every editor that saves atomically. An existing target is replaced by
//! swapping it with the temporary file (`RENAME_EXCHANGE`) and removing the old content
//! under the temporary name (see `exchange` for why).

use std::ffi::{OsStr, OsString};
use std::io::Write as _;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
use std::os::unix::fs::DirBuilderExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, Mode, OFlags};
use tackle_core::ToolError;

/// Longest temporary-file name; the target's name is shortened to fit `NAME_MAX`.
const MAX_TEMP_NAME_BYTES: usize = 255;

/// A write or removal that did not happen. Nothing was changed in either case.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The file system refused.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The path no longer passes the policy, or now names another place.
    #[error("{0}")]
    Refused(ToolError),
}

impl From<rustix::io::Errno> for WriteError {
    fn from(errno: rustix::io::Errno) -> Self {
        WriteError::Io(errno.into())
    }
}

/// Resolves the target path again, through the path policy, just before the rename.
pub type Recheck<'a> = &'a dyn Fn() -> Result<PathBuf, ToolError>;

/// How a write is made.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteOptions {
    /// fsync the file before the rename and the directory after (`[tools] durable_writes`).
    pub durable: bool,
}

/// The permission bits a new file gets, before the umask.
const NEW_FILE_MODE: u32 = 0o666;
/// The mode of created parent directories, before the umask.
const NEW_DIR_MODE: u32 = 0o755;

/// Writes `contents` (pieces written one after the other, so an edit never has to build the
/// whole new file in memory) to the resolved path `target` atomically; missing parent
/// directories are created. Returns the permission bits the file had before, if it existed.
pub fn write_atomic(
    target: &Path,
    contents: &[&[u8]],
    options: WriteOptions,
    recheck: Recheck<'_>,
) -> Result<Option<u32>, WriteError> {
    let (parent, name) = split(target)?;
    let dir = match open_dir(parent) {
        Err(WriteError::Io(err)) if err.kind() == std::io::ErrorKind::NotFound => {
            std::fs::DirBuilder::new().recursive(true).mode(NEW_DIR_MODE).create(parent)?;
            open_dir(parent)?
        }
        other => other?,
    };
    let existing = match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => Some(stat),
        Err(rustix::io::Errno::NOENT) => None,
        Err(errno) => return Err(errno.into()),
    };
    if let Some(stat) = &existing
        && file_kind(stat.st_mode) == libc_kind::DIR
    {
        return Err(std::io::Error::new(std::io::ErrorKind::IsADirectory, "Is a directory").into());
    }
    let old_mode = existing.as_ref().filter(|s| file_kind(s.st_mode) == libc_kind::REG).map(|s| s.st_mode & 0o7777);

    let temp_name = temp_name(name);
    let temp = rustix::fs::openat(
        &dir,
        temp_name.as_os_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC | OFlags::NOFOLLOW,
        Mode::from_raw_mode(old_mode.unwrap_or(NEW_FILE_MODE)),
    )?;
    let result =
        fill_and_rename(&dir, temp, &temp_name, name, parent, target, contents, existing.as_ref(), options, recheck);
    if result.is_err() {
        let _ = rustix::fs::unlinkat(&dir, temp_name.as_os_str(), AtFlags::empty());
    }
    result.map(|()| old_mode)
}

#[allow(clippy::too_many_arguments)] // the steps of one write, kept in one place
fn fill_and_rename(
    dir: &OwnedFd,
    temp: OwnedFd,
    temp_name: &OsStr,
    name: &OsStr,
    parent: &Path,
    target: &Path,
    contents: &[&[u8]],
    existing: Option<&rustix::fs::Stat>,
    options: WriteOptions,
    recheck: Recheck<'_>,
) -> Result<(), WriteError> {
    if let Some(stat) = existing.filter(|s| file_kind(s.st_mode) == libc_kind::REG) {
        // The umask may have narrowed the bits at creation; set them exactly.
        rustix::fs::fchmod(&temp, Mode::from_raw_mode(stat.st_mode & 0o7777))?;
        let mine = rustix::fs::fstat(&temp)?;
        if (mine.st_uid, mine.st_gid) != (stat.st_uid, stat.st_gid) {
            // Keeping the owner needs privileges; without them the file becomes ours.
            let _ = rustix::fs::fchown(
                &temp,
                Some(rustix::fs::Uid::from_raw(stat.st_uid)),
                Some(rustix::fs::Gid::from_raw(stat.st_gid)),
            );
        }
    }
    let mut file = std::fs::File::from(temp);
    for piece in contents {
        file.write_all(piece)?;
    }
    if options.durable {
        file.sync_data()?;
    }
    drop(file);
    verify(dir, parent, target, recheck)?;
    if options.durable || existing.is_none() || !exchange(dir, temp_name, name)? {
        rustix::fs::renameat(dir, temp_name, dir, name)?;
    }
    if options.durable {
        rustix::fs::fsync(dir)?;
    }
    Ok(())
}

/// Replaces `name` by swapping it with the temporary file and removing the temporary name,
/// which now holds the old content; `false` when the file system cannot swap (or `name` is
/// gone), so the caller renames instead.
///
/// Why not a plain rename: renaming over an existing file makes ext4 allocate and start
/// writing the new file's blocks inside the `rename` call (its `auto_da_alloc` guard for
/// programs that never fsync), which more than doubles the cost of an edit. The swap is just
/// as atomic for every reader and for a crash of Tackle; surviving an operating-system crash
/// is what `durable_writes` (fsync, then a plain rename) is for.
fn exchange(dir: &OwnedFd, temp_name: &OsStr, name: &OsStr) -> Result<bool, WriteError> {
    match rustix::fs::renameat_with(dir, temp_name, dir, name, rustix::fs::RenameFlags::EXCHANGE) {
        Ok(()) => {}
        Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS | rustix::io::Errno::NOENT) => return Ok(false),
        Err(errno) => return Err(errno.into()),
    }
    if let Err(errno) = rustix::fs::unlinkat(dir, temp_name, AtFlags::empty()) {
        // Something other than a file was swapped in (a directory planted after the check):
        // swap back, so nothing changed, and let the caller remove its temporary file.
        let _ = rustix::fs::renameat_with(dir, temp_name, dir, name, rustix::fs::RenameFlags::EXCHANGE);
        return Err(errno.into());
    }
    Ok(true)
}

/// Removes the resolved path `target` (a file or symlink), relative to its opened parent,
/// after the same re-check as a write.
pub fn remove_atomic(target: &Path, options: WriteOptions, recheck: Recheck<'_>) -> Result<(), WriteError> {
    let (parent, name) = split(target)?;
    let dir = open_dir(parent)?;
    verify(&dir, parent, target, recheck)?;
    rustix::fs::unlinkat(&dir, name, AtFlags::empty())?;
    if options.durable {
        rustix::fs::fsync(&dir)?;
    }
    Ok(())
}

/// The path still resolves to `target`, and `parent` is still the directory we opened.
fn verify(dir: &OwnedFd, parent: &Path, target: &Path, recheck: Recheck<'_>) -> Result<(), WriteError> {
    let now = recheck().map_err(WriteError::Refused)?;
    let opened = rustix::fs::fstat(dir)?;
    let current = rustix::fs::stat(parent)?;
    if now != target || (opened.st_dev, opened.st_ino) != (current.st_dev, current.st_ino) {
        return Err(WriteError::Refused(ToolError::Denied(format!(
            "{} changed while it was being written (a directory or symlink was swapped); nothing was written. \
             Check the path and try again.",
            target.display()
        ))));
    }
    Ok(())
}

fn split(target: &Path) -> Result<(&Path, &OsStr), WriteError> {
    match (target.parent(), target.file_name()) {
        (Some(parent), Some(name)) => Ok((parent, name)),
        _ => Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file path").into()),
    }
}

fn open_dir(parent: &Path) -> Result<OwnedFd, WriteError> {
    // The parent is already resolved, so it must not be a symlink now.
    Ok(rustix::fs::open(
        parent,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOFOLLOW,
        Mode::empty(),
    )?)
}

/// `.{name}.tackle-{pid}-{n}.tmp`, with `name` shortened so the whole fits `NAME_MAX`.
fn temp_name(name: &OsStr) -> OsString {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let suffix = format!(".tackle-{}-{}.tmp", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
    let room = MAX_TEMP_NAME_BYTES - 1 - suffix.len();
    let bytes = name.as_bytes();
    let mut out = Vec::with_capacity(MAX_TEMP_NAME_BYTES);
    out.push(b'.');
    out.extend_from_slice(&bytes[..bytes.len().min(room)]);
    out.extend_from_slice(suffix.as_bytes());
    OsString::from_vec(out)
}

/// File-type bits of `st_mode`.
mod libc_kind {
    pub const MASK: u32 = 0o170_000;
    pub const REG: u32 = 0o100_000;
    pub const DIR: u32 = 0o040_000;
}

fn file_kind(mode: u32) -> u32 {
    mode & libc_kind::MASK
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    fn same(target: &Path) -> impl Fn() -> Result<PathBuf, ToolError> + '_ {
        move || Ok(target.to_owned())
    }

    #[test]
    fn writes_replace_content_and_keep_permission_bits() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().canonicalize().unwrap().join("script.sh");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).unwrap();
        let before = write_atomic(&path, &[b"new"], WriteOptions::default(), &same(&path)).unwrap();
        assert_eq!(before, Some(0o751));
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777, 0o751);
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn new_files_get_parents_created_and_durable_writes_work() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().canonicalize().unwrap().join("a/b/c.txt");
        let before = write_atomic(&path, &[b"x"], WriteOptions { durable: true }, &same(&path)).unwrap();
        assert_eq!(before, None);
        assert_eq!(std::fs::read(&path).unwrap(), b"x");
        let mode = std::fs::metadata(path.parent().unwrap()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & !0o755, 0, "directories are created 0755 minus the umask, got {mode:o}");
    }

    #[test]
    fn a_failed_recheck_writes_nothing_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().canonicalize().unwrap().join("f.txt");
        std::fs::write(&path, "keep").unwrap();
        let refuse = || Err(ToolError::Denied("moved".into()));
        let err = write_atomic(&path, &[b"lost"], WriteOptions::default(), &refuse).unwrap_err();
        assert!(matches!(err, WriteError::Refused(ToolError::Denied(ref m)) if m == "moved"), "{err}");
        let elsewhere = |_: ()| Ok(dir.path().join("other"));
        let err = write_atomic(&path, &[b"lost"], WriteOptions::default(), &|| elsewhere(())).unwrap_err();
        assert!(err.to_string().contains("changed while it was being written"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"keep");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_directory_target_or_a_swapped_parent_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir(base.join("d")).unwrap();
        let err = write_atomic(&base.join("d"), &[b"x"], WriteOptions::default(), &same(&base.join("d"))).unwrap_err();
        assert!(matches!(err, WriteError::Io(ref e) if e.kind() == std::io::ErrorKind::IsADirectory), "{err}");
        // The parent directory is swapped for a symlink between the check and the rename.
        std::fs::create_dir(base.join("real")).unwrap();
        std::fs::create_dir(base.join("elsewhere")).unwrap();
        let target = base.join("real/f.txt");
        let swap = || {
            std::fs::rename(base.join("real"), base.join("moved")).unwrap();
            std::os::unix::fs::symlink(base.join("elsewhere"), base.join("real")).unwrap();
            Ok(target.clone())
        };
        let err = write_atomic(&target, &[b"x"], WriteOptions::default(), &swap).unwrap_err();
        assert!(err.to_string().contains("changed while it was being written"), "{err}");
        assert_eq!(std::fs::read_dir(base.join("elsewhere")).unwrap().count(), 0);
    }

    #[test]
    fn long_names_still_get_a_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().canonicalize().unwrap().join("n".repeat(255));
        write_atomic(&path, &[b"x"], WriteOptions::default(), &same(&path)).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"x");
    }

    #[test]
    fn removal_rechecks_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().canonicalize().unwrap().join("f.txt");
        std::fs::write(&path, "x").unwrap();
        let refuse = || Err(ToolError::Denied("no".into()));
        assert!(remove_atomic(&path, WriteOptions::default(), &refuse).is_err());
        assert!(path.exists());
        remove_atomic(&path, WriteOptions::default(), &same(&path)).unwrap();
        assert!(!path.exists());
    }
}
