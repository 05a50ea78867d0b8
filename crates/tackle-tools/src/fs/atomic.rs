//! Atomic writes and removals (docs/reference/tools.md#session-state, docs/reference/safety.md#path-policy): no reader and no crash ever sees
//! a half-written file, and a path swapped under the tool cannot redirect the write.
//!
//! A write is two steps, so that a multi-file operation can stage every file before it puts
//! any in place. [`stage`] works in the target's directory, which the call opened once
//! beneath its root without following any symlink ([`Parent`]; [`open_parent`] creates
//! missing directories the same way): it creates a temporary file there (in the same
//! directory, so the rename is atomic), gives it the target's permission bits or the ones
//! asked for (and the owner, where allowed), writes and optionally fsyncs it.
//! [`Staged::commit`] then **verifies** that the directory's path, opened again beneath the
//! root with no symlink allowed, still leads to the directory it holds
//! ([`Parent::still_in_place`]), and finally renames the temporary file over the target
//! *relative to that directory* (`renameat`). The path policy is not asked again: it judged
//! the resolved path, and the directory is still at that path, reached without a link. A
//! symlink planted in place of the target after the check is replaced, never followed; a
//! directory moved away, or swapped for a symlink, fails the check. Hard links to the target
//! keep the old content, as with every editor that saves atomically. An existing target is
//! replaced by swapping it with the temporary file (`RENAME_EXCHANGE`) and removing the old
//! content under the temporary name (see `exchange` for why).

use std::ffi::{OsStr, OsString};
use std::io::{IoSlice, Write as _};
use std::os::fd::{BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt as _, OsStringExt as _};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, Mode, OFlags};
use tackle_core::ToolError;

use crate::fs::beneath::{Beneath, OpenError, Parent};

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
    parent: Arc<Parent>,
    temp_name: OsString,
    existing: Option<rustix::fs::Stat>,
    /// The temporary file's metadata once written (a rename keeps size and mtime).
    written: std::fs::Metadata,
    committed: bool,
}

/// Opens the directory of `target` (a resolved path under `root`) beneath `root`, creating
/// the missing directories one at a time beneath the root, never through a symlink.
pub fn open_parent(root: &Path, target: &Path) -> Result<Parent, WriteError> {
    let (parent, _) = split(target)?;
    match Parent::open(Beneath::open(root)?, target) {
        Err(OpenError::Io(err)) if err.kind() == std::io::ErrorKind::NotFound => {
            let beneath = Beneath::open(root)?;
            beneath.create_dirs(parent, NEW_DIR_MODE).map_err(|err| opened(err, target))?;
            Parent::open(beneath, target).map_err(|err| opened(err, target))
        }
        other => other.map_err(|err| opened(err, target)),
    }
}

/// Writes `contents` to the temporary file `temp_name` (from [`temp_name_for`]) in the
/// target's directory `parent`, with `mode` as its permission bits (default: the target's,
/// or 0666 minus the umask for a new file); with `options.durable` the file is fsynced.
pub fn stage(
    parent: Arc<Parent>,
    temp_name: &OsStr,
    contents: &[&[u8]],
    options: WriteOptions,
    mode: Option<u32>,
) -> Result<Staged, WriteError> {
    if options.durable {
        parent.check_syncable()?;
    }
    let dir = parent.fd();
    let existing = match rustix::fs::statat(dir, parent.name(), AtFlags::SYMLINK_NOFOLLOW) {
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
        dir,
        temp_name.as_os_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC | OFlags::NOFOLLOW,
        Mode::from_raw_mode(mode.unwrap_or(NEW_FILE_MODE)),
    )?;
    match fill(temp, contents, mode, regular.as_ref(), options) {
        Ok(written) => Ok(Staged { parent, temp_name, existing, written, committed: false }),
        Err(err) => {
            let _ = rustix::fs::unlinkat(dir, temp_name.as_os_str(), AtFlags::empty());
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
    let mine = if mode.is_some() || existing.is_some() { Some(rustix::fs::fstat(&temp)?) } else { None };
    // The owner first: a change of owner clears the setuid and setgid bits, which the mode
    // then sets again.
    let mut owner_changed = false;
    if let (Some(stat), Some(mine)) = (existing, &mine)
        && (mine.st_uid, mine.st_gid) != (stat.st_uid, stat.st_gid)
    {
        // Keeping the owner needs privileges; without them the file becomes ours.
        owner_changed = rustix::fs::fchown(
            &temp,
            Some(rustix::fs::Uid::from_raw(stat.st_uid)),
            Some(rustix::fs::Gid::from_raw(stat.st_gid)),
        )
        .is_ok();
    }
    if let (Some(mode), Some(mine)) = (mode, &mine)
        && (owner_changed || mine.st_mode & 0o7777 != mode)
    {
        // The umask narrowed the bits at creation (or the owner's change cleared some); set
        // them exactly.
        rustix::fs::fchmod(&temp, Mode::from_raw_mode(mode))?;
    }
    let mut file = std::fs::File::from(temp);
    write_all(&mut file, contents)?;
    if options.durable {
        file.sync_data()?;
    }
    Ok(file.metadata()?)
}

/// Writes the pieces in one `writev` where the kernel takes them all at once.
fn write_all(file: &mut std::fs::File, contents: &[&[u8]]) -> std::io::Result<()> {
    let mut slices: Vec<IoSlice<'_>> = contents.iter().filter(|c| !c.is_empty()).map(|c| IoSlice::new(c)).collect();
    let mut rest = &mut slices[..];
    while !rest.is_empty() {
        match file.write_vectored(rest) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(written) => IoSlice::advance_slices(&mut rest, written),
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(())
}

impl Staged {
    /// The temporary file's name, in the target's directory.
    pub fn temp_name(&self) -> &OsStr {
        &self.temp_name
    }

    /// Verifies that the directory is still in place, then puts the temporary file in
    /// place of the target (see the module header). Returns the new file's metadata.
    pub fn commit(mut self, options: WriteOptions) -> Result<std::fs::Metadata, WriteError> {
        verify(&self.parent)?;
        let (dir, name) = (self.parent.fd(), self.parent.name());
        let existed = self.existing.is_some();
        if options.durable || !existed || !exchange(dir, &self.temp_name, name)? {
            rustix::fs::renameat(dir, &self.temp_name, dir, name)?;
        }
        self.committed = true;
        if options.durable {
            rustix::fs::fsync(dir)?;
        }
        Ok(self.written.clone())
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = rustix::fs::unlinkat(self.parent.fd(), self.temp_name.as_os_str(), AtFlags::empty());
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
fn exchange(dir: BorrowedFd<'_>, temp_name: &OsStr, name: &OsStr) -> Result<bool, WriteError> {
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

/// Removes the file (or symlink) `parent` names, after the same check as a write.
pub fn remove_atomic(parent: &Parent, options: WriteOptions) -> Result<(), WriteError> {
    if options.durable {
        parent.check_syncable()?;
    }
    verify(parent)?;
    rustix::fs::unlinkat(parent.fd(), parent.name(), AtFlags::empty())?;
    if options.durable {
        rustix::fs::fsync(parent.fd())?;
    }
    Ok(())
}

/// The directory is still the one at its path, reached beneath the root without a link.
fn verify(parent: &Parent) -> Result<(), WriteError> {
    let target = parent.path().join(parent.name());
    match parent.still_in_place() {
        Ok(true) => Ok(()),
        Ok(false) => Err(swapped(&target)),
        Err(err) => Err(opened(err, &target)),
    }
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
pub fn opened(err: OpenError, target: &Path) -> WriteError {
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

    /// A whole write: stage, run `between` (a swap under the tool), then commit.
    fn write_atomic(
        root: &Path,
        target: &Path,
        contents: &[&[u8]],
        options: WriteOptions,
        between: impl FnOnce(),
    ) -> Result<std::fs::Metadata, WriteError> {
        let parent = Arc::new(open_parent(root, target)?);
        let staged = stage(parent, &temp_name_for(target), contents, options, None)?;
        between();
        staged.commit(options)
    }

    fn staged_at(root: &Path, path: &Path, mode: Option<u32>) -> Staged {
        let parent = Arc::new(open_parent(root, path).unwrap());
        stage(parent, &temp_name_for(path), &[b"new"], WriteOptions::default(), mode).unwrap()
    }

    #[test]
    fn writes_replace_content_and_keep_permission_bits() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let path = root.join("script.sh");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).unwrap();
        let written = write_atomic(&root, &path, &[b"n", b"", b"ew"], WriteOptions::default(), || ()).unwrap();
        assert_eq!(written.len(), 3);
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777, 0o751);
        // No temporary file is left behind.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn another_owners_setuid_file_keeps_its_owner_and_every_mode_bit() {
        // Only a privileged process can give the new file the old one's owner.
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let path = root.join("tool");
        std::fs::write(&path, "old").unwrap();
        std::os::unix::fs::chown(&path, Some(1000), Some(1000)).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o6755)).unwrap();
        write_atomic(&root, &path, &[b"new"], WriteOptions::default(), || ()).unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        use std::os::unix::fs::MetadataExt as _;
        assert_eq!((meta.uid(), meta.gid()), (1000, 1000));
        assert_eq!(meta.permissions().mode() & 0o7777, 0o6755, "{:o}", meta.permissions().mode());
    }

    #[test]
    fn new_files_get_parents_created_and_durable_writes_work() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let path = root.join("a/b/c.txt");
        write_atomic(&root, &path, &[b"x"], WriteOptions { durable: true }, || ()).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"x");
        let mode = std::fs::metadata(path.parent().unwrap()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode & !0o755, 0, "directories are created 0755 minus the umask, got {mode:o}");
    }

    #[test]
    fn a_directory_moved_after_staging_writes_nothing_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(root.join("protected")).unwrap();
        let path = root.join("sub/f.txt");
        std::fs::write(&path, "keep").unwrap();
        // Moved elsewhere under the root (into a directory the policy would refuse): the
        // handle still holds it, but its path no longer leads to it.
        let moved = || std::fs::rename(root.join("sub"), root.join("protected/sub")).unwrap();
        let err = write_atomic(&root, &path, &[b"lost"], WriteOptions::default(), moved).unwrap_err();
        assert!(err.to_string().contains("changed while it was being written"), "{err}");
        assert_eq!(std::fs::read(root.join("protected/sub/f.txt")).unwrap(), b"keep");
        assert_eq!(std::fs::read_dir(root.join("protected/sub")).unwrap().count(), 1);
        // Moved, and a symlink to it put at its path: the directory is the same, but it is no
        // longer reached without a link.
        std::fs::rename(root.join("protected/sub"), root.join("sub")).unwrap();
        let linked = || {
            std::fs::rename(root.join("sub"), root.join("protected/sub")).unwrap();
            std::os::unix::fs::symlink(root.join("protected/sub"), root.join("sub")).unwrap();
        };
        let err = write_atomic(&root, &path, &[b"lost"], WriteOptions::default(), linked).unwrap_err();
        assert!(err.to_string().contains("changed while it was being written"), "{err}");
        assert_eq!(std::fs::read(root.join("protected/sub/f.txt")).unwrap(), b"keep");
        assert_eq!(std::fs::read_dir(root.join("protected/sub")).unwrap().count(), 1);
    }

    #[test]
    fn a_directory_target_or_a_swapped_parent_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir(base.join("d")).unwrap();
        let err = write_atomic(&base, &base.join("d"), &[b"x"], WriteOptions::default(), || ()).unwrap_err();
        assert!(matches!(err, WriteError::Io(ref e) if e.kind() == std::io::ErrorKind::IsADirectory), "{err}");
        // The parent directory is swapped for a symlink between the staging and the rename.
        std::fs::create_dir(base.join("real")).unwrap();
        std::fs::create_dir(base.join("elsewhere")).unwrap();
        let target = base.join("real/f.txt");
        let swap = || {
            std::fs::rename(base.join("real"), base.join("moved")).unwrap();
            std::os::unix::fs::symlink(base.join("elsewhere"), base.join("real")).unwrap();
        };
        let err = write_atomic(&base, &target, &[b"x"], WriteOptions::default(), swap).unwrap_err();
        assert!(err.to_string().contains("changed while it was being written"), "{err}");
        assert_eq!(std::fs::read_dir(base.join("elsewhere")).unwrap().count(), 0);
        assert_eq!(std::fs::read_dir(base.join("moved")).unwrap().count(), 0);
    }

    #[test]
    fn a_link_swapped_in_above_the_parent_is_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("root");
        std::fs::create_dir_all(base.join("elsewhere/sub")).unwrap();
        std::fs::create_dir_all(root.join("real/sub")).unwrap();
        // `real` was a directory when the policy resolved the path; now it is a link out.
        std::fs::rename(root.join("real"), root.join("moved")).unwrap();
        std::os::unix::fs::symlink(base.join("elsewhere"), root.join("real")).unwrap();
        for target in [root.join("real/sub/f.txt"), root.join("real/new/deeper/f.txt")] {
            let err = write_atomic(&root, &target, &[b"x"], WriteOptions::default(), || ()).unwrap_err();
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
        let staged = staged_at(&root, &path, Some(0o700));
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 2);
        assert!(is_temp_name(staged.temp_name()), "{:?}", staged.temp_name());
        drop(staged);
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 1);
        assert_eq!(std::fs::read(&path).unwrap(), b"old");
        staged_at(&root, &path, Some(0o700)).commit(WriteOptions::default()).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o7777, 0o700);
        // Bits the umask takes away at creation are set back exactly.
        staged_at(&root, &root.join("g.sh"), Some(0o777)).commit(WriteOptions::default()).unwrap();
        assert_eq!(std::fs::metadata(root.join("g.sh")).unwrap().permissions().mode() & 0o7777, 0o777);
        assert!(!is_temp_name(OsStr::new("f.sh")) && !is_temp_name(OsStr::new(".f.tmp")));
    }

    #[test]
    fn long_names_still_get_a_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for name in ["n".repeat(255), "é".repeat(127)] {
            let path = root.join(&name);
            write_atomic(&root, &path, &[b"x"], WriteOptions::default(), || ()).unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), b"x");
            let temp = temp_name_for(&path);
            assert!(temp.len() <= 255 && temp.to_str().is_some() && is_temp_name(&temp), "{temp:?}");
        }
    }

    #[test]
    fn removal_checks_the_directory_too() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        let path = root.join("sub/f.txt");
        std::fs::write(&path, "x").unwrap();
        let parent = open_parent(&root, &path).unwrap();
        std::fs::rename(root.join("sub"), root.join("moved")).unwrap();
        assert!(remove_atomic(&parent, WriteOptions::default()).is_err());
        assert!(root.join("moved/f.txt").exists());
        std::fs::rename(root.join("moved"), root.join("sub")).unwrap();
        remove_atomic(&parent, WriteOptions::default()).unwrap();
        assert!(!path.exists());
    }
}
