//! Atomic writes and removals (docs/reference/tools.md#session-state, docs/reference/safety.md#path-policy): no reader and no crash ever sees
//! a half-written file, and a path swapped under the tool cannot redirect the write.
//!
//! A write is two steps, so that a multi-file operation can stage every file before it puts
//! any in place. [`stage`] opens the target's directory beneath its root without following
//! any symlink ([`crate::fs::beneath`]; missing directories are created the same way),
//! creates a temporary file there (in the same directory, so the rename is atomic), gives it
//! the target's permission bits or the ones asked for (and the owner, where allowed), writes
//! and optionally fsyncs it. [`Staged::commit`] then **re-checks** the path through the
//! policy and verifies that the
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
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, Mode, OFlags};
use tackle_core::ToolError;

use crate::fs::beneath::{Beneath, DIR_READ, Links, OpenError};

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

/// A new content written to a temporary file next to its target, not yet in place: a
/// multi-file operation stages every file first, then [`Staged::commit`]s them one by one.
/// Dropped without a commit, the temporary file is removed.
#[derive(Debug)]
pub struct Staged {
    dir: OwnedFd,
    temp_name: OsString,
    name: OsString,
    parent: PathBuf,
    target: PathBuf,
    existing: Option<rustix::fs::Stat>,
    /// The temporary file's metadata once written (a rename keeps size and mtime).
    written: std::fs::Metadata,
    committed: bool,
}

/// Writes `contents` to the temporary file `temp_name` (from [`temp_name_for`]) in
/// `target`'s directory (opened beneath `root`, created if missing), with `mode` as its
/// permission bits (default: the target's, or 0666 minus the umask for a new file); with
/// `options.durable` the file is fsynced.
pub fn stage(
    root: &Path,
    target: &Path,
    temp_name: &OsStr,
    contents: &[&[u8]],
    options: WriteOptions,
    mode: Option<u32>,
) -> Result<Staged, WriteError> {
    let (parent, name) = split(target)?;
    let beneath = Beneath::open(root)?;
    let dir = match open_dir(&beneath, parent) {
        Err(WriteError::Io(err)) if err.kind() == std::io::ErrorKind::NotFound => {
            beneath.create_dirs(parent, NEW_DIR_MODE).map_err(|err| opened(err, target))?;
            open_dir(&beneath, parent)?
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
    let regular = existing.filter(|s| file_kind(s.st_mode) == libc_kind::REG);
    let mode = mode.or(regular.map(|s| s.st_mode & 0o7777));
    let temp_name = temp_name.to_owned();
    let temp = rustix::fs::openat(
        &dir,
        temp_name.as_os_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC | OFlags::NOFOLLOW,
        Mode::from_raw_mode(mode.unwrap_or(NEW_FILE_MODE)),
    )?;
    match fill(temp, contents, mode, regular.as_ref(), options) {
        Ok(written) => Ok(Staged {
            dir,
            temp_name,
            name: name.to_owned(),
            parent: parent.to_owned(),
            target: target.to_owned(),
            existing,
            written,
            committed: false,
        }),
        Err(err) => {
            let _ = rustix::fs::unlinkat(&dir, temp_name.as_os_str(), AtFlags::empty());
            Err(err)
        }
    }
}

/// Sets the temporary file's bits (and owner, where allowed) and writes the content;
/// returns the written file's metadata.
fn fill(
    temp: OwnedFd,
    contents: &[&[u8]],
    mode: Option<u32>,
    existing: Option<&rustix::fs::Stat>,
    options: WriteOptions,
) -> Result<std::fs::Metadata, WriteError> {
    if let Some(mode) = mode {
        // The umask may have narrowed the bits at creation; set them exactly.
        rustix::fs::fchmod(&temp, Mode::from_raw_mode(mode))?;
    }
    if let Some(stat) = existing {
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
    Ok(file.metadata()?)
}

impl Staged {
    /// The temporary file's name, in the target's directory.
    pub fn temp_name(&self) -> &OsStr {
        &self.temp_name
    }

    /// Re-checks the path, then puts the temporary file in place of the target (see the
    /// module header). Returns the new file's metadata.
    pub fn commit(mut self, options: WriteOptions, recheck: Recheck<'_>) -> Result<std::fs::Metadata, WriteError> {
        verify(&self.dir, &self.parent, &self.target, recheck)?;
        let existed = self.existing.is_some();
        if options.durable || !existed || !exchange(&self.dir, &self.temp_name, &self.name)? {
            rustix::fs::renameat(&self.dir, &self.temp_name, &self.dir, &self.name)?;
        }
        self.committed = true;
        if options.durable {
            rustix::fs::fsync(&self.dir)?;
        }
        Ok(self.written.clone())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = rustix::fs::unlinkat(&self.dir, self.temp_name.as_os_str(), AtFlags::empty());
        }
    }
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

/// Removes the resolved path `target` (a file or symlink) in `root`, relative to its opened
/// parent, after the same re-check as a write.
pub fn remove_atomic(
    root: &Path,
    target: &Path,
    options: WriteOptions,
    recheck: Recheck<'_>,
) -> Result<(), WriteError> {
    let (parent, name) = split(target)?;
    let dir = open_dir(&Beneath::open(root)?, parent)?;
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
        return Err(swapped(target));
    }
    Ok(())
}

/// The refusal of a write whose path changed under it.
fn swapped(target: &Path) -> WriteError {
    WriteError::Refused(ToolError::Denied(format!(
        "{} changed while it was being written (a directory or symlink was swapped); nothing was written. Check \
         the path and try again.",
        target.display()
    )))
}

/// An open beneath the root that failed; leaving the root means a link was swapped in.
fn opened(err: OpenError, target: &Path) -> WriteError {
    match err {
        OpenError::Escaped => swapped(target),
        OpenError::Io(err) => WriteError::Io(err),
    }
}

fn split(target: &Path) -> Result<(&Path, &OsStr), WriteError> {
    match (target.parent(), target.file_name()) {
        (Some(parent), Some(name)) => Ok((parent, name)),
        _ => Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file path").into()),
    }
}

/// The target's directory, opened beneath the root without following any symlink (the
/// resolved path holds none, so one there was swapped in after the check).
fn open_dir(beneath: &Beneath, parent: &Path) -> Result<OwnedFd, WriteError> {
    beneath.open_at(parent, DIR_READ, Links::None).map_err(|err| opened(err, parent))
}

/// A fresh temporary-file name for `target`: `.{name}.tackle-{pid}-{n}.tmp`, with `name`
/// shortened (at a character boundary, so a UTF-8 name gives a UTF-8 temporary name) so
/// the whole fits `NAME_MAX`.
pub fn temp_name_for(target: &Path) -> OsString {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let suffix = format!(".tackle-{}-{}.tmp", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
    let room = MAX_TEMP_NAME_BYTES - 1 - suffix.len();
    let bytes = target.file_name().map_or(&b"file"[..], OsStr::as_bytes);
    let mut cut = bytes.len().min(room);
    if let Ok(text) = std::str::from_utf8(bytes) {
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
    }
    let mut out = Vec::with_capacity(MAX_TEMP_NAME_BYTES);
    out.push(b'.');
    out.extend_from_slice(&bytes[..cut]);
    out.extend_from_slice(suffix.as_bytes());
    OsString::from_vec(out)
}

/// Whether `name` is one of [`temp_name_for`]'s names.
pub fn is_temp_name(name: &OsStr) -> bool {
    let name = name.as_bytes();
    name.starts_with(b".") && name.ends_with(b".tmp") && memchr::memmem::find(name, b".tackle-").is_some()
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

    /// A whole write: stage, then commit.
    fn write_atomic(
        root: &Path,
        target: &Path,
        contents: &[&[u8]],
        options: WriteOptions,
        recheck: Recheck<'_>,
    ) -> Result<std::fs::Metadata, WriteError> {
        stage(root, target, &temp_name_for(target), contents, options, None)?.commit(options, recheck)
    }

    fn same(target: &Path) -> impl Fn() -> Result<PathBuf, ToolError> + '_ {
        move || Ok(target.to_owned())
    }

    #[test]
    fn writes_replace_content_and_keep_permission_bits() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let path = root.join("script.sh");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).unwrap();
        let written = write_atomic(&root, &path, &[b"new"], WriteOptions::default(), &same(&path)).unwrap();
        assert_eq!(written.len(), 3);
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777, 0o751);
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn new_files_get_parents_created_and_durable_writes_work() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let path = root.join("a/b/c.txt");
        write_atomic(&root, &path, &[b"x"], WriteOptions { durable: true }, &same(&path)).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"x");
        let mode = std::fs::metadata(path.parent().unwrap()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & !0o755, 0, "directories are created 0755 minus the umask, got {mode:o}");
    }

    #[test]
    fn a_failed_recheck_writes_nothing_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let path = root.join("f.txt");
        std::fs::write(&path, "keep").unwrap();
        let refuse = || Err(ToolError::Denied("moved".into()));
        let err = write_atomic(&root, &path, &[b"lost"], WriteOptions::default(), &refuse).unwrap_err();
        assert!(matches!(err, WriteError::Refused(ToolError::Denied(ref m)) if m == "moved"), "{err}");
        let elsewhere = |_: ()| Ok(dir.path().join("other"));
        let err = write_atomic(&root, &path, &[b"lost"], WriteOptions::default(), &|| elsewhere(())).unwrap_err();
        assert!(err.to_string().contains("changed while it was being written"), "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), b"keep");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_directory_target_or_a_swapped_parent_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir(base.join("d")).unwrap();
        let err =
            write_atomic(&base, &base.join("d"), &[b"x"], WriteOptions::default(), &same(&base.join("d"))).unwrap_err();
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
        let err = write_atomic(&base, &target, &[b"x"], WriteOptions::default(), &swap).unwrap_err();
        assert!(err.to_string().contains("changed while it was being written"), "{err}");
        assert_eq!(std::fs::read_dir(base.join("elsewhere")).unwrap().count(), 0);
    }

    #[test]
    fn a_link_swapped_in_above_the_parent_is_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("root");
        std::fs::create_dir_all(base.join("elsewhere/sub")).unwrap();
        std::fs::create_dir_all(root.join("real/sub")).unwrap();
        // `real` was a directory when the policy resolved the path; now it is a link out, and
        // the re-check (here: none) would see the directory again.
        std::fs::rename(root.join("real"), root.join("moved")).unwrap();
        std::os::unix::fs::symlink(base.join("elsewhere"), root.join("real")).unwrap();
        for target in [root.join("real/sub/f.txt"), root.join("real/new/deeper/f.txt")] {
            let err = write_atomic(&root, &target, &[b"x"], WriteOptions::default(), &same(&target)).unwrap_err();
            assert!(err.to_string().contains("changed while it was being written"), "{err}");
        }
        assert_eq!(std::fs::read_dir(base.join("elsewhere")).unwrap().count(), 1);
        assert_eq!(std::fs::read_dir(base.join("elsewhere/sub")).unwrap().count(), 0);
    }

    #[test]
    fn an_explicit_mode_is_set_exactly_and_an_uncommitted_stage_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let path = root.join("f.sh");
        std::fs::write(&path, "old").unwrap();
        let staged =
            stage(&root, &path, &temp_name_for(&path), &[b"new"], WriteOptions::default(), Some(0o700)).unwrap();
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 2);
        assert!(is_temp_name(staged.temp_name()), "{:?}", staged.temp_name());
        drop(staged);
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 1);
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        let staged =
            stage(&root, &path, &temp_name_for(&path), &[b"new"], WriteOptions::default(), Some(0o700)).unwrap();
        staged.commit(WriteOptions::default(), &same(&path)).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777, 0o700);
        assert!(!is_temp_name(OsStr::new("f.sh")) && !is_temp_name(OsStr::new(".f.tmp")));
    }

    #[test]
    fn long_names_still_get_a_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for name in ["n".repeat(255), "é".repeat(127)] {
            let path = root.join(&name);
            write_atomic(&root, &path, &[b"x"], WriteOptions::default(), &same(&path)).unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), b"x");
            let temp = temp_name_for(&path);
            assert!(temp.len() <= 255 && temp.to_str().is_some() && is_temp_name(&temp), "{temp:?}");
        }
    }

    #[test]
    fn removal_rechecks_too() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let path = root.join("f.txt");
        std::fs::write(&path, "x").unwrap();
        let refuse = || Err(ToolError::Denied("no".into()));
        assert!(remove_atomic(&root, &path, WriteOptions::default(), &refuse).is_err());
        assert!(path.exists());
        remove_atomic(&root, &path, WriteOptions::default(), &same(&path)).unwrap();
        assert!(!path.exists());
    }
}
