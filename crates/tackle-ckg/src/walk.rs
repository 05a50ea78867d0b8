//! Which files an index holds, and how they are read.
//!
//! The walk is the one the grep and glob tools use (the `ignore` crate with ripgrep's
//! filters): `.gitignore`, `.ignore`, the global git excludes and `.git/info/exclude` are
//! honoured, hidden entries **below** the root are skipped (the root itself may sit under a
//! hidden folder), and symlinks are never followed: a symlink is counted and skipped (so a
//! loop cannot trap the walk, and a link cannot lead outside the root); what it points at is
//! indexed where it lives, if that is inside the root.
//!
//! File contents are untrusted. A file is opened without following a symlink, must still be
//! the regular file the walk saw (same inode; a path swapped under the index
//! cannot make it read elsewhere), is read only up to the size limit, and is binary when its
//! first 8 KiB hold a NUL byte.

use std::fs::Metadata;
use std::io::Read as _;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Component, Path, PathBuf};

use crate::language::Language;

/// Files larger than this are skipped (and counted).
pub const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024;
/// How much of a file's head the binary check reads.
const BINARY_CHECK_BYTES: usize = 8 * 1024;

/// What a stat tells about a file, enough to notice a change without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub size: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub inode: u64,
}

impl Stamp {
    /// The stamp of a file's (symlink-not-followed) metadata.
    pub fn of(meta: &Metadata) -> Self {
        Stamp {
            size: meta.len(),
            mtime_ns: meta.mtime().saturating_mul(1_000_000_000).saturating_add(meta.mtime_nsec()),
            ctime_ns: meta.ctime().saturating_mul(1_000_000_000).saturating_add(meta.ctime_nsec()),
            inode: meta.ino(),
        }
    }
}

/// A file the walk found.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The path relative to the root, `/`-separated, as raw bytes (names need not be UTF-8).
    pub rel: Vec<u8>,
    pub language: Language,
    pub stamp: Stamp,
}

/// What a walk found.
#[derive(Debug, Default)]
pub struct Walked {
    /// Files of a supported language, in walk order.
    pub entries: Vec<Entry>,
    /// Symlinks skipped (never followed).
    pub symlinks: u64,
    /// Entries the walk could not read (permissions, vanished).
    pub errors: u64,
}

/// Walks `root` (canonical) for files of a supported language.
pub fn walk(root: &Path) -> Walked {
    let mut walked = Walked::default();
    let mut builder = ignore::WalkBuilder::new(root);
    builder.standard_filters(true).hidden(true).follow_links(false);
    for entry in builder.build() {
        let Ok(entry) = entry else {
            walked.errors += 1;
            continue;
        };
        let Some(kind) = entry.file_type() else { continue };
        if kind.is_symlink() {
            walked.symlinks += 1;
            continue;
        }
        if !kind.is_file() {
            continue;
        }
        let Some(language) = Language::of_path(entry.path()) else { continue };
        let Ok(meta) = entry.metadata() else {
            walked.errors += 1;
            continue;
        };
        let Some(rel) = relative(root, entry.path()) else { continue };
        walked.entries.push(Entry { rel, language, stamp: Stamp::of(&meta) });
    }
    walked
}

/// `path` relative to `root` as `/`-separated bytes; `None` when it is not below the root or
/// passes through a hidden component, a `..` or the root itself.
pub fn relative(root: &Path, path: &Path) -> Option<Vec<u8>> {
    let rest = path.strip_prefix(root).ok()?;
    let mut out = Vec::new();
    for component in rest.components() {
        let Component::Normal(name) = component else { return None };
        let name = name.as_bytes();
        if name.starts_with(b".") {
            return None;
        }
        if !out.is_empty() {
            out.push(b'/');
        }
        out.extend_from_slice(name);
    }
    (!out.is_empty()).then_some(out)
}

/// The absolute path of an index path.
pub fn absolute(root: &Path, rel: &[u8]) -> PathBuf {
    root.join(std::ffi::OsStr::from_bytes(rel))
}

/// Why a file's content was not indexed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    /// Over [`MAX_FILE_BYTES`].
    TooLarge,
    /// A NUL byte in the first 8 KiB.
    Binary,
    /// Gone, replaced by something else, or unreadable.
    Unreadable,
}

/// Reads the file at `path` if it is still the regular file with `inode` the walk saw, within
/// the size limit and not binary. Opening never follows a symlink and never blocks on a FIFO.
pub fn read(path: &Path, inode: u64, max_bytes: u64) -> Result<Vec<u8>, Skip> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc_flags::NOFOLLOW | libc_flags::NONBLOCK)
        .open(path)
        .map_err(|_| Skip::Unreadable)?;
    let meta = file.metadata().map_err(|_| Skip::Unreadable)?;
    if !meta.is_file() || meta.ino() != inode {
        return Err(Skip::Unreadable);
    }
    if meta.len() > max_bytes {
        return Err(Skip::TooLarge);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max_bytes + 1).read_to_end(&mut bytes).map_err(|_| Skip::Unreadable)?;
    if bytes.len() as u64 > max_bytes {
        return Err(Skip::TooLarge);
    }
    if memchr::memchr(0, &bytes[..bytes.len().min(BINARY_CHECK_BYTES)]).is_some() {
        return Err(Skip::Binary);
    }
    Ok(bytes)
}

/// The open flags `read` needs, from rustix (which knows them per platform).
mod libc_flags {
    pub const NOFOLLOW: i32 = rustix::fs::OFlags::NOFOLLOW.bits() as i32;
    pub const NONBLOCK: i32 = rustix::fs::OFlags::NONBLOCK.bits() as i32;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_refuse_hidden_components_below_the_root() {
        let root = Path::new("/w/.hidden/root");
        assert_eq!(relative(root, Path::new("/w/.hidden/root/a/b.py")).as_deref(), Some(&b"a/b.py"[..]));
        assert_eq!(relative(root, Path::new("/w/.hidden/root/.git/x.py")), None);
        assert_eq!(relative(root, Path::new("/w/.hidden/root/a/.b.py")), None);
        assert_eq!(relative(root, Path::new("/w/other/b.py")), None);
        assert_eq!(relative(root, root), None);
    }
}
