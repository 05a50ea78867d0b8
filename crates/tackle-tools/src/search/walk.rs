//! The directory walk shared by `glob`, `grep` and `view` of a directory: ripgrep's default
//! filters — `.gitignore` (inside a git repository), `.ignore`, `.rgignore`, the global git
//! excludes and `.git/info/exclude` honoured, hidden entries skipped, symlinks not followed —
//! and nothing else skipped, so the tools see exactly the files `rg` would search; on a
//! walker of Tackle's own that holds each directory open (docs/file-tools.md, "Opening
//! beneath the root").
//!
//! The walk opens its start beneath the root, lists each directory through its descriptor,
//! reads the directory's ignore files through it ([`IgnoreRules`], never blocking) and opens
//! each subdirectory relative to it without following a link. A directory swapped for a
//! symlink during the walk is never entered, and a name is listed only from the directory
//! it is in; the tools then open or examine each entry through its directory too
//! ([`Entry`]). A walk can be narrowed to a chain of leading directory names (`glob`'s
//! literal prefix): it still starts at the root, so those directories pass the same filters
//! as any other and a symlink among them is not followed.
//!
//! Directories are processed on several threads ([`pool`]), and a directory's files are
//! handed out in batches, so one large directory is searched by every thread.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::os::fd::{AsFd as _, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::overrides::Override;
use ignore::types::Types;
use rustix::fs::{AtFlags, FileType, Mode, OFlags, RawDir};
use tackle_core::ToolError;
use tackle_policy::permission::rules::ReadRules;
use tokio_util::sync::CancellationToken;

use crate::fs::Target;
use crate::fs::beneath::{Beneath, DIR_READ, Links, OpenError, READ};
use crate::search::ignore_files::{IgnoreRules, Level, Present};
use crate::search::pool::{self, Queue};

/// The buffer a directory is listed into (entries of a few dozen bytes each; a larger
/// directory takes several reads).
const LISTING_BUFFER: usize = 16 * 1024;
/// Files handed out together (a directory's files are searched by several threads in
/// batches of this many).
const FILE_BATCH: usize = 64;

/// How to walk.
#[derive(Debug, Default)]
pub struct WalkOptions {
    /// Walk hidden entries too (`.git` is still skipped).
    pub hidden: bool,
    /// ripgrep `-g` globs.
    pub overrides: Option<Override>,
    /// ripgrep `-t` types.
    pub types: Option<Types>,
    /// Depth limit below the root.
    pub max_depth: Option<usize>,
    /// Directory names the walk must go through first: the entry at depth `d` (1-based) must
    /// be named `within[d - 1]`; deeper entries are not constrained.
    pub within: Vec<String>,
    /// Paths `Read(...)` deny rules hide: skipped silently, as if they did not exist.
    pub hidden_by_rules: ReadRules,
}

/// What a walked entry is, as its directory's listing says (a symlink is never followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    /// A symlink, FIFO, socket or device.
    Other,
}

impl Kind {
    fn of(kind: FileType) -> Kind {
        match kind {
            FileType::RegularFile => Kind::File,
            FileType::Directory => Kind::Dir,
            _ => Kind::Other,
        }
    }
}

/// One entry of a walk, with the directory it was listed in, held open.
#[derive(Debug)]
pub struct Entry<'a> {
    /// The directory holding the entry: open or examine the entry through it, by `name`.
    pub dir: BorrowedFd<'a>,
    pub name: &'a OsStr,
    /// The path to show (the walk's start joined with the names below it).
    pub path: &'a Path,
    /// 0 for the walk's start, 1 for what it holds, and so on.
    pub depth: usize,
    pub kind: Kind,
}

impl Entry<'_> {
    /// Opens the entry for reading ([`READ`], not following a link), with its status.
    pub fn open(&self) -> Option<(File, rustix::fs::Stat)> {
        let fd = rustix::fs::openat(self.dir, self.name, READ | OFlags::NOFOLLOW, Mode::empty()).ok()?;
        let stat = rustix::fs::fstat(&fd).ok()?;
        Some((File::from(fd), stat))
    }

    /// The entry's own status (a link is not followed).
    pub fn stat(&self) -> Option<rustix::fs::Stat> {
        rustix::fs::statat(self.dir, self.name, AtFlags::SYMLINK_NOFOLLOW).ok()
    }
}

/// Walks `target` (beneath `beneath`'s root) with ripgrep's filters and `options`, and
/// returns what `visit` makes of each entry that passes them, in no particular order. A
/// directory's own entry is not visited; a start that is not a directory is visited alone.
/// Each thread has its own `state` (made by `new_state`). Stops early when `cancel` fires.
/// The global git excludes are anchored at `workspace`.
pub fn walk<S, T>(
    target: &Target,
    beneath: &Beneath,
    workspace: &Path,
    options: WalkOptions,
    cancel: &CancellationToken,
    new_state: impl Fn() -> S + Sync,
    visit: impl Fn(&mut S, &Entry<'_>) -> Option<T> + Sync,
) -> Result<Vec<T>, ToolError>
where
    T: Send,
{
    let failed = |err: std::io::Error| ToolError::Failed(format!("Ran into {err} while trying to read {}", target.raw));
    let root = &target.path;
    let start = match beneath.open_at(root, DIR_READ, Links::None) {
        Ok(fd) => fd,
        Err(OpenError::Io(err)) if err.raw_os_error() == Some(rustix::io::Errno::NOTDIR.raw_os_error()) => {
            let mut state = new_state();
            return Ok(visit_alone(beneath, root, |entry| visit(&mut state, entry)).into_iter().collect());
        }
        Err(OpenError::Escaped) => return Err(target.escaped()),
        Err(OpenError::Io(err)) => return Err(failed(err)),
    };
    if options.max_depth == Some(0) {
        return Ok(Vec::new());
    }
    let rules = IgnoreRules::new(beneath.try_clone().map_err(failed)?, workspace);
    let level = rules.above(root);
    let walk = Walk { rules, options };
    let first = Work::Dir { path: root.clone(), at: DirAt::Open(start), depth: 0, level };
    Ok(pool::run(first, cancel, new_state, |state, work, queue, found| match work {
        Work::Dir { path, at, depth, level } => {
            let fd = match at {
                DirAt::Open(fd) => fd,
                DirAt::In(parent, name) => match open_dir(parent.as_fd(), &name) {
                    Some(fd) => fd,
                    None => return,
                },
            };
            walk.list(&path, fd, depth, level, queue, |entry| found.extend(visit(state, entry)));
        }
        Work::Files { dir, depth, files } => {
            for (name, path) in &files {
                let entry = Entry { dir: dir.as_fd(), name, path, depth, kind: Kind::File };
                found.extend(visit(state, &entry));
            }
        }
    }))
}

/// Visits a start that is not a directory, through its parent: the walk's only entry.
fn visit_alone<T>(beneath: &Beneath, root: &Path, visit: impl FnOnce(&Entry<'_>) -> Option<T>) -> Option<T> {
    let (parent, name) = (root.parent()?, root.file_name()?);
    let dir = beneath.open_at(parent, crate::fs::beneath::DIR_HANDLE, Links::None).ok()?;
    let kind = rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
    let kind = Kind::of(FileType::from_raw_mode(kind.st_mode));
    visit(&Entry { dir: dir.as_fd(), name, path: root, depth: 0, kind })
}

/// An item of the walk's work.
enum Work {
    /// A directory to list; `level` holds the rules of the directories above it.
    Dir { path: PathBuf, at: DirAt, depth: usize, level: Option<Arc<Level>> },
    /// Files of one directory, to visit.
    Files { dir: Arc<OwnedFd>, depth: usize, files: Vec<(OsString, PathBuf)> },
}

/// Where a directory to list is.
enum DirAt {
    /// Already open (the walk's start).
    Open(OwnedFd),
    /// This name in this listed directory.
    In(Arc<OwnedFd>, OsString),
}

/// Opens the subdirectory `name` of `parent` to list it; `None` if it is not a directory
/// any more (a symlink swapped in is not followed) or cannot be opened.
fn open_dir(parent: BorrowedFd<'_>, name: &OsStr) -> Option<OwnedFd> {
    rustix::fs::openat(parent, name, DIR_READ | OFlags::NOFOLLOW, Mode::empty()).ok()
}

/// The filters of one walk.
struct Walk {
    rules: IgnoreRules,
    options: WalkOptions,
}

impl Walk {
    /// Lists the directory `path` (open as `fd`, at `depth`, below the rules `above`): visits
    /// what passes the filters (files in batches of [`FILE_BATCH`], the last one here) and
    /// queues the subdirectories to list.
    fn list(
        &self,
        path: &Path,
        fd: OwnedFd,
        depth: usize,
        above: Option<Arc<Level>>,
        queue: &Queue<Work>,
        mut visit: impl FnMut(&Entry<'_>),
    ) {
        let mut present = Present::default();
        let mut entries: Vec<(OsString, FileType)> = Vec::new();
        let mut buffer = Vec::with_capacity(LISTING_BUFFER);
        let mut listing = RawDir::new(&fd, buffer.spare_capacity_mut());
        while let Some(entry) = listing.next() {
            // A listing that fails partway keeps what it read (as `rg` does).
            let Ok(entry) = entry else { break };
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let name = OsStr::from_bytes(name).to_owned();
            present.note(&name, entry.file_type());
            entries.push((name, entry.file_type()));
        }
        let dir = Arc::new(fd);
        let fd = dir.as_fd();
        let level = self.rules.listed(path, fd, &present, above);
        let depth = depth + 1;
        let descend = self.options.max_depth.is_none_or(|max| depth < max);
        let mut files = Vec::new();
        for (name, kind) in entries {
            let kind = match kind {
                FileType::Unknown => rustix::fs::statat(fd, &name, AtFlags::SYMLINK_NOFOLLOW)
                    .map_or(FileType::Unknown, |stat| FileType::from_raw_mode(stat.st_mode)),
                known => known,
            };
            let kind = Kind::of(kind);
            let child = path.join(&name);
            if !self.keeps(&level, &child, &name, depth, kind == Kind::Dir) {
                continue;
            }
            match kind {
                Kind::File => {
                    files.push((name, child));
                    if files.len() == FILE_BATCH {
                        queue.push(Work::Files { dir: Arc::clone(&dir), depth, files: std::mem::take(&mut files) });
                    }
                }
                Kind::Dir | Kind::Other => {
                    visit(&Entry { dir: fd, name: &name, path: &child, depth, kind });
                    if kind == Kind::Dir && descend {
                        let at = DirAt::In(Arc::clone(&dir), name);
                        queue.push(Work::Dir { path: child, at, depth, level: Some(Arc::clone(&level)) });
                    }
                }
            }
        }
        for (name, path) in &files {
            visit(&Entry { dir: fd, name, path, depth, kind: Kind::File });
        }
    }

    /// Whether the entry `path` (named `name`, at `depth`, in the directory whose rules are
    /// `level`) passes the filters, in ripgrep's order: a `-g` glob that matches decides
    /// alone; then the ignore files; a `-t` type leaves out what it does not select; a hidden
    /// entry is left out unless an ignore file's `!` line or the type keeps it. `.git` and the
    /// leading names of `within`, and the paths `Read(...)` deny rules hide, come first.
    fn keeps(&self, level: &Level, path: &Path, name: &OsStr, depth: usize, is_dir: bool) -> bool {
        let options = &self.options;
        if options.hidden && name == ".git" {
            return false;
        }
        if depth.checked_sub(1).and_then(|i| options.within.get(i)).is_some_and(|wanted| name != wanted.as_str()) {
            return false;
        }
        if options.hidden_by_rules.hides(path) {
            return false;
        }
        if let Some(overrides) = &options.overrides {
            let matched = overrides.matched(path, is_dir);
            if !matched.is_none() {
                return !matched.is_ignore();
            }
        }
        let matched = self.rules.matched(level, path, is_dir);
        if matched.is_ignore() {
            return false;
        }
        let mut kept = matched.is_whitelist();
        if let Some(types) = &options.types {
            let matched = types.matched(path, is_dir);
            if matched.is_ignore() {
                return false;
            }
            kept |= matched.is_whitelist();
        }
        options.hidden || kept || !name.as_bytes().starts_with(b".")
    }
}

/// A path for the model: relative to the workspace when inside it, else absolute.
pub fn display_path(path: &Path, workspace: &Path) -> String {
    match path.strip_prefix(workspace) {
        Ok(relative) if relative.as_os_str().is_empty() => ".".to_owned(),
        Ok(relative) => relative.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

/// Resolves an optional directory argument (default: the workspace) for reading, and opens
/// the root it lies in: the walk ([`walk`]) starts beneath it.
pub fn search_root(ctx: &tackle_core::ToolContext, path: Option<&str>) -> Result<(Target, Beneath), ToolError> {
    // The first file tool of a session completes an interrupted multi-file write first.
    crate::fs::files::file_state(ctx);
    let target = crate::fs::target(ctx, path.unwrap_or("."), tackle_core::Access::Read)?;
    let beneath = target
        .beneath()
        .map_err(|err| ToolError::Failed(format!("Ran into {err} while trying to read {}", target.raw)))?;
    Ok((target, beneath))
}
