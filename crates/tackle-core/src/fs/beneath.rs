//! Opening a path the policy resolved so that nothing swapped in after the check can lead
//! outside its root (docs/file-tools.md, "Opening beneath the root").
//!
//! The path policy resolves a path and checks it; a tool then opens it. In between, a hostile
//! process in the workspace can swap a directory or the file itself for a symlink
//! (atomically, with `renameat2(RENAME_EXCHANGE)`), and an open by path would follow it out.
//! So the file tools open through [`Beneath`]: the root directory is opened first, and the
//! path is opened relative to it with `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`,
//! which the kernel refuses (`EXDEV`) when any step, a symlink included, would leave the
//! root, and with [`Links::None`] (every path the policy resolved) `RESOLVE_NO_SYMLINKS`,
//! which refuses any link (`ELOOP`). Where `openat2` is
//! missing (Linux before 5.6, or a seccomp filter that refuses it) the path is opened one
//! component at a time with `O_NOFOLLOW`, which refuses every symlink on the way: a resolved
//! path holds none, so only a link swapped in after the check is refused.
//!
//! A walk (`glob`, `grep`, `view` of a directory) starts with an open beneath the root and
//! goes on through directory descriptors (`tackle-tools`' `search::walk`).
//!
//! A file tool's call opens its file's directory once ([`Parent`]) and does everything else
//! relative to that descriptor: the stat, the read, the temporary file, the rename. Before a
//! write is put in place, [`Parent::still_in_place`] opens the directory's path again beneath
//! the root, no symlink allowed, and checks that it is still the directory the call holds.

use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd as _, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{AtFlags, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// The flags of every open for reading: read-only, not blocking (a FIFO opens at once
/// instead of waiting for a writer), not inherited, never a controlling terminal.
pub const READ: OFlags = OFlags::RDONLY.union(OFlags::NONBLOCK).union(OFlags::CLOEXEC).union(OFlags::NOCTTY);
/// A directory handle for `*at` calls and `fstat` only.
pub const DIR_HANDLE: OFlags = OFlags::PATH.union(OFlags::DIRECTORY).union(OFlags::CLOEXEC);
/// A directory opened to list it, or to `fsync` it.
pub const DIR_READ: OFlags = OFlags::RDONLY.union(OFlags::DIRECTORY).union(OFlags::CLOEXEC);

/// Whether `openat2` is worth trying (cleared when the kernel says it does not exist).
static OPENAT2: AtomicBool = AtomicBool::new(true);

/// Which symlinks an open may follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Links that stay inside the root (an ignore file that is a link, which `rg` follows:
    /// its path was never resolved by the policy).
    InRoot,
    /// None: every path the policy resolved (reads and writes), which holds no link, so a
    /// link met on the way was swapped in after the check. Even one that stays inside the
    /// root is refused: it could lead to a path a `Read(...)` deny rule hides.
    None,
}

/// An open could not stay beneath the root, or failed.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The path leads outside the root (a symlink swapped in, or a path not under it).
    #[error("the path leads outside its root")]
    Escaped,
    /// The file system refused.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl From<Errno> for OpenError {
    fn from(errno: Errno) -> Self {
        OpenError::Io(errno.into())
    }
}

/// An opened root directory; paths under it are opened relative to it.
#[derive(Debug)]
pub struct Beneath {
    root: PathBuf,
    fd: OwnedFd,
}

impl Beneath {
    /// Opens the root directory `root` (canonical, as the policy's roots are).
    pub fn open(root: &Path) -> std::io::Result<Beneath> {
        let fd = rustix::fs::open(root, DIR_HANDLE | OFlags::NOFOLLOW, Mode::empty())?;
        Ok(Beneath { root: root.to_owned(), fd })
    }

    /// Another handle on the same opened root (the same directory, whatever happens to its
    /// path since).
    pub fn try_clone(&self) -> std::io::Result<Beneath> {
        Ok(Beneath { root: self.root.clone(), fd: self.fd.try_clone()? })
    }

    /// The root's path.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Opens `path` (absolute, under the root) with `flags`, never leaving the root.
    pub fn open_at(&self, path: &Path, flags: OFlags, links: Links) -> Result<OwnedFd, OpenError> {
        let relative = path.strip_prefix(&self.root).map_err(|_| OpenError::Escaped)?;
        open_beneath(self.fd.as_fd(), relative, flags | OFlags::CLOEXEC, links)
    }

    /// Creates the missing directories of `path` (absolute, under the root), one component
    /// at a time relative to the root, never through a symlink.
    pub fn create_dirs(&self, path: &Path, mode: u32) -> Result<(), OpenError> {
        let relative = path.strip_prefix(&self.root).map_err(|_| OpenError::Escaped)?;
        let mut dir: Option<OwnedFd> = None;
        for name in names(relative)? {
            let at = dir.as_ref().map_or(self.fd.as_fd(), OwnedFd::as_fd);
            match rustix::fs::mkdirat(at, name, Mode::from_raw_mode(mode)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(errno) => return Err(errno.into()),
            }
            dir = Some(step(at, name, DIR_HANDLE | OFlags::NOFOLLOW)?);
        }
        Ok(())
    }
}

/// A file's directory, opened beneath the root without following any symlink, with the
/// file's name: a call opens, stats, writes and renames the file relative to it, without
/// resolving the path again.
#[derive(Debug)]
pub struct Parent {
    beneath: Beneath,
    fd: OwnedFd,
    path: PathBuf,
    name: OsString,
    /// The directory's status when it was opened (its identity: `st_dev`, `st_ino`).
    opened: rustix::fs::Stat,
    /// Held only as a path (`O_PATH`): it may be searched but not listed, so it cannot be
    /// fsynced.
    path_only: bool,
}

impl Parent {
    /// Opens the directory of `path` (absolute, under `beneath`'s root, not the root
    /// itself) beneath the root, for `*at` calls and `fsync`.
    pub fn open(beneath: Beneath, path: &Path) -> Result<Parent, OpenError> {
        let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
            return Err(OpenError::Escaped);
        };
        let (fd, path_only) = match beneath.open_at(parent, DIR_READ, Links::None) {
            // A directory that may be searched but not listed still serves the `*at` calls
            // (not `durable_writes`, which fsyncs it: see [`Parent::check_syncable`]).
            Err(OpenError::Io(err)) if err.kind() == std::io::ErrorKind::PermissionDenied => {
                (beneath.open_at(parent, DIR_HANDLE, Links::None)?, true)
            }
            other => (other?, false),
        };
        let opened = rustix::fs::fstat(&fd)?;
        Ok(Parent { beneath, fd, path: parent.to_owned(), name: name.to_owned(), opened, path_only })
    }

    /// Refuses, before anything is written, a durable write in a directory that cannot be
    /// fsynced (one that may be searched but not listed): its fsync would fail after the
    /// rename, reporting a failure for a file already replaced.
    pub fn check_syncable(&self) -> std::io::Result<()> {
        if self.path_only {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!(
                    "{} may be searched but not read, so a durable write (`[tools] durable_writes`) cannot fsync it; \
                     make it readable, or turn durable_writes off",
                    self.path.display()
                ),
            ));
        }
        Ok(())
    }

    /// The directory's descriptor.
    pub fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's name in the directory.
    pub fn name(&self) -> &OsStr {
        &self.name
    }

    /// Opens the file with `flags`; a symlink in its place is [`OpenError::Escaped`], never
    /// followed (nor opened, with `O_PATH`).
    pub fn open_file(&self, flags: OFlags) -> Result<OwnedFd, OpenError> {
        let fd = step(self.fd.as_fd(), &self.name, flags | OFlags::NOFOLLOW | OFlags::CLOEXEC)?;
        if flags.contains(OFlags::PATH) && is_symlink(rustix::fs::fstat(&fd)?.st_mode) {
            return Err(OpenError::Escaped);
        }
        Ok(fd)
    }

    /// Whether the directory's path, opened again beneath the root without any symlink,
    /// still leads to the directory this handle holds (not moved, nor replaced by a link).
    pub fn still_in_place(&self) -> Result<bool, OpenError> {
        let now = match self.beneath.open_at(&self.path, DIR_HANDLE, Links::None) {
            Ok(now) => now,
            Err(OpenError::Escaped) => return Ok(false),
            Err(OpenError::Io(err)) if err.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(err) => return Err(err),
        };
        let stat = rustix::fs::fstat(&now)?;
        Ok((stat.st_dev, stat.st_ino) == (self.opened.st_dev, self.opened.st_ino))
    }
}

/// Opens `relative` below `root`: `openat2` where the kernel has it, else one component at
/// a time.
fn open_beneath(root: BorrowedFd<'_>, relative: &Path, flags: OFlags, links: Links) -> Result<OwnedFd, OpenError> {
    if OPENAT2.load(Ordering::Relaxed) {
        let mut resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
        if links == Links::None {
            resolve |= ResolveFlags::NO_SYMLINKS;
        }
        let path = if relative.as_os_str().is_empty() { Path::new(".") } else { relative };
        // `EAGAIN`: a rename elsewhere raced the lookup; the kernel asks for a retry.
        for _ in 0..3 {
            match rustix::fs::openat2(root, path, flags, Mode::empty(), resolve) {
                Ok(fd) => return Ok(fd),
                Err(Errno::XDEV | Errno::LOOP) => return Err(OpenError::Escaped),
                Err(Errno::AGAIN) => continue,
                Err(Errno::NOSYS) => {
                    OPENAT2.store(false, Ordering::Relaxed);
                    break;
                }
                // A seccomp filter that does not know the call.
                Err(Errno::PERM) => break,
                Err(errno) => return Err(errno.into()),
            }
        }
    }
    open_by_components(root, relative, flags)
}

/// The fallback of [`open_beneath`]: each directory opened with `O_NOFOLLOW` relative to the
/// one before, so no symlink is followed anywhere.
fn open_by_components(root: BorrowedFd<'_>, relative: &Path, flags: OFlags) -> Result<OwnedFd, OpenError> {
    let names = names(relative)?;
    let Some((last, parents)) = names.split_last() else {
        return Ok(rustix::fs::openat(root, ".", flags, Mode::empty())?);
    };
    let mut dir: Option<OwnedFd> = None;
    for name in parents {
        let at = dir.as_ref().map_or(root, OwnedFd::as_fd);
        dir = Some(step(at, name, DIR_HANDLE | OFlags::NOFOLLOW)?);
    }
    let at = dir.as_ref().map_or(root, OwnedFd::as_fd);
    let fd = step(at, last, flags | OFlags::NOFOLLOW)?;
    // `O_PATH | O_NOFOLLOW` opens a symlink itself instead of failing.
    if flags.contains(OFlags::PATH) && is_symlink(rustix::fs::fstat(&fd)?.st_mode) {
        return Err(OpenError::Escaped);
    }
    Ok(fd)
}

/// One `openat` of a single name; a symlink where none may be is [`OpenError::Escaped`].
fn step(at: BorrowedFd<'_>, name: &OsStr, flags: OFlags) -> Result<OwnedFd, OpenError> {
    match rustix::fs::openat(at, name, flags, Mode::empty()) {
        Ok(fd) => Ok(fd),
        Err(errno @ (Errno::LOOP | Errno::NOTDIR)) => {
            let link = rustix::fs::statat(at, name, AtFlags::SYMLINK_NOFOLLOW).is_ok_and(|s| is_symlink(s.st_mode));
            Err(if link { OpenError::Escaped } else { errno.into() })
        }
        Err(errno) => Err(errno.into()),
    }
}

/// The names of a relative path; a `..` (which a resolved path never holds) is refused.
fn names(relative: &Path) -> Result<Vec<&OsStr>, OpenError> {
    relative
        .components()
        .filter_map(|component| match component {
            Component::Normal(name) => Some(Ok(name)),
            Component::CurDir => None,
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => Some(Err(OpenError::Escaped)),
        })
        .collect()
}

fn is_symlink(mode: u32) -> bool {
    mode & 0o170_000 == 0o120_000
}

/// The modification time of a regular file; `None` for anything else (a FIFO, socket,
/// device or directory swapped in after the walk listed a file).
pub fn regular_mtime(stat: &rustix::fs::Stat) -> Option<std::time::SystemTime> {
    if rustix::fs::FileType::from_raw_mode(stat.st_mode) != rustix::fs::FileType::RegularFile {
        return None;
    }
    let since_epoch =
        std::time::Duration::new(u64::try_from(stat.st_mtime).ok()?, u32::try_from(stat.st_mtime_nsec).ok()?);
    std::time::SystemTime::UNIX_EPOCH.checked_add(since_epoch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read as _;
    use std::os::unix::fs::symlink;

    struct Tree {
        _dir: tempfile::TempDir,
        root: PathBuf,
    }

    /// `root/{a/f.txt, link_in -> a, link_out -> ../outside}` and `outside/secret`.
    fn tree() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("root");
        std::fs::create_dir_all(root.join("a")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::fs::write(root.join("a/f.txt"), "inside").unwrap();
        std::fs::write(base.join("outside/secret"), "secret").unwrap();
        symlink("a", root.join("link_in")).unwrap();
        symlink("../outside", root.join("link_out")).unwrap();
        Tree { _dir: dir, root }
    }

    fn read(fd: OwnedFd) -> String {
        let mut text = String::new();
        std::fs::File::from(fd).read_to_string(&mut text).unwrap();
        text
    }

    #[test]
    fn in_root_links_are_followed_for_reads_and_escaping_ones_never() {
        let t = tree();
        let beneath = Beneath::open(&t.root).unwrap();
        assert_eq!(read(beneath.open_at(&t.root.join("a/f.txt"), READ, Links::InRoot).unwrap()), "inside");
        assert_eq!(read(beneath.open_at(&t.root.join("link_in/f.txt"), READ, Links::InRoot).unwrap()), "inside");
        for links in [Links::InRoot, Links::None] {
            let err = beneath.open_at(&t.root.join("link_out/secret"), READ, links).unwrap_err();
            assert!(matches!(err, OpenError::Escaped), "{err:?}");
        }
        let err = beneath.open_at(&t.root.join("link_in/f.txt"), READ, Links::None).unwrap_err();
        assert!(matches!(err, OpenError::Escaped), "{err:?}");
        let err = beneath.open_at(Path::new("/etc/passwd"), READ, Links::InRoot).unwrap_err();
        assert!(matches!(err, OpenError::Escaped), "{err:?}");
        let err = beneath.open_at(&t.root.join("missing"), READ, Links::InRoot).unwrap_err();
        assert!(matches!(err, OpenError::Io(ref e) if e.kind() == std::io::ErrorKind::NotFound), "{err:?}");
    }

    #[test]
    fn the_component_fallback_refuses_every_link() {
        let t = tree();
        let beneath = Beneath::open(&t.root).unwrap();
        let root = beneath.fd.as_fd();
        assert_eq!(read(open_by_components(root, Path::new("a/f.txt"), READ).unwrap()), "inside");
        for path in ["link_in/f.txt", "link_out/secret", "link_out", "../outside/secret"] {
            let err = open_by_components(root, Path::new(path), READ).unwrap_err();
            assert!(matches!(err, OpenError::Escaped), "{path}: {err:?}");
        }
        let err = open_by_components(root, Path::new("link_in"), DIR_HANDLE).unwrap_err();
        assert!(matches!(err, OpenError::Escaped), "{err:?}");
        let err = open_by_components(root, Path::new("link_in"), OFlags::PATH).unwrap_err();
        assert!(matches!(err, OpenError::Escaped), "{err:?}");
        let err = open_by_components(root, Path::new("a/missing"), READ).unwrap_err();
        assert!(matches!(err, OpenError::Io(ref e) if e.kind() == std::io::ErrorKind::NotFound), "{err:?}");
        assert!(open_by_components(root, Path::new(""), DIR_HANDLE).is_ok());
    }

    #[test]
    fn directories_are_created_beneath_the_root_only() {
        let t = tree();
        let beneath = Beneath::open(&t.root).unwrap();
        beneath.create_dirs(&t.root.join("new/deeper"), 0o755).unwrap();
        assert!(t.root.join("new/deeper").is_dir());
        let err = beneath.create_dirs(&t.root.join("link_out/made"), 0o755).unwrap_err();
        assert!(matches!(err, OpenError::Escaped), "{err:?}");
        assert!(!t.root.join("../outside/made").exists());
    }
}
