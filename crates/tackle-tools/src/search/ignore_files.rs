//! The ignore files of a walk, read by Tackle instead of by ripgrep's walker, so that a
//! hostile workspace cannot hang or redirect a search through them (docs/file-tools.md,
//! "Opening beneath the root").
//!
//! ripgrep's walker opens `.gitignore`, `.ignore`, `.rgignore`, `.git/info/exclude` and a
//! worktree's `.git` file by name and blocking: a FIFO planted (or swapped in) under one of
//! those names stops the walk until something writes to it, and a directory swapped for a
//! symlink makes it read rules from outside the workspace. So the walk is built with those
//! readers off ([`crate::search::walk::walker`]) and asks [`IgnoreRules::matched`] instead.
//! Each directory's files are opened beneath the root (symlinks that stay inside followed,
//! as `rg` follows them), without blocking, and read only when `fstat` says a regular file
//! of at most [`MAX_IGNORE_FILE_BYTES`]; anything else counts as absent. Directories above
//! the root (ripgrep reads the ignore files of the searched directory's parents too) and a
//! worktree's common git directory lie outside it and are opened by path, the same way.
//!
//! The rules and their precedence are ripgrep's (its `ignore` crate's `Ignore::matched`):
//! for each kind, the deepest directory with a matching line decides; `.rgignore` beats
//! `.ignore`, which beats `.gitignore`, which beats the repository's `info/exclude`, which
//! beats the global excludes file; `.gitignore`, `info/exclude` and the global file apply
//! only inside a git (or jj) repository, and `.gitignore` files above the repository's root
//! are not read. The line syntax is the crate's own ([`GitignoreBuilder::add_line`]).

use std::collections::HashMap;
use std::fs::File;
use std::io::Read as _;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder, gitconfig_excludes_path};
use rustix::fs::{FileType, Mode, OFlags};

use crate::fs::beneath::{Beneath, Links, READ};

/// The largest ignore file read; a larger one is treated as absent (real ones are a few KiB).
pub const MAX_IGNORE_FILE_BYTES: u64 = 1024 * 1024;

/// The rules one directory adds, with those of its parent.
#[derive(Debug)]
struct Level {
    rgignore: Gitignore,
    ignore: Gitignore,
    gitignore: Gitignore,
    exclude: Gitignore,
    /// The directory holds `.git` or `.jj`: a repository's root.
    is_repository: bool,
    parent: Option<Arc<Level>>,
}

impl Level {
    fn chain(&self) -> impl Iterator<Item = &Level> {
        std::iter::successors(Some(self), |level| level.parent.as_deref())
    }
}

/// The ignore rules of one walk: each directory's files read once, when the walk first
/// needs them.
#[derive(Debug)]
pub struct IgnoreRules {
    beneath: Beneath,
    global: Gitignore,
    levels: RwLock<HashMap<PathBuf, Arc<Level>>>,
}

impl IgnoreRules {
    /// The rules of a walk beneath `beneath`'s root; the global excludes file (git's
    /// `core.excludesFile`) is anchored at `workspace`.
    pub fn new(beneath: Beneath, workspace: &Path) -> IgnoreRules {
        let global = gitconfig_excludes_path()
            .and_then(|path| Some(parse(workspace, &path, &read_regular(&beneath, &path)?)))
            .unwrap_or_else(Gitignore::empty);
        IgnoreRules { beneath, global, levels: RwLock::new(HashMap::new()) }
    }

    /// Whether the ignore files say to skip `path` (absolute; a directory when `is_dir`),
    /// to keep it (a `!` line: a hidden entry is then kept too), or nothing.
    pub fn matched(&self, path: &Path, is_dir: bool) -> Match<()> {
        let Some(parent) = path.parent() else { return Match::None };
        let level = self.level(parent);
        let in_repository = level.chain().any(|level| level.is_repository);
        let (mut rgignore, mut ignore, mut gitignore, mut exclude) =
            (Match::None, Match::None, Match::None, Match::None);
        let mut above_repository = false;
        for level in level.chain() {
            if rgignore.is_none() {
                rgignore = level.rgignore.matched(path, is_dir).map(drop);
            }
            if ignore.is_none() {
                ignore = level.ignore.matched(path, is_dir).map(drop);
            }
            if in_repository && !above_repository {
                if gitignore.is_none() {
                    gitignore = level.gitignore.matched(path, is_dir).map(drop);
                }
                if exclude.is_none() {
                    exclude = level.exclude.matched(path, is_dir).map(drop);
                }
            }
            above_repository |= level.is_repository;
        }
        let global = if in_repository { self.global.matched(path, is_dir).map(drop) } else { Match::None };
        rgignore.or(ignore).or(gitignore).or(exclude).or(global)
    }

    /// The level of `dir`, read (with its parents') on first use.
    fn level(&self, dir: &Path) -> Arc<Level> {
        let cached = self.levels.read().unwrap_or_else(PoisonError::into_inner).get(dir).cloned();
        if let Some(level) = cached {
            return level;
        }
        let parent = dir.parent().map(|parent| self.level(parent));
        let level = Arc::new(self.read_level(dir, parent));
        let mut levels = self.levels.write().unwrap_or_else(PoisonError::into_inner);
        // Another thread may have read it meanwhile: both read the same files.
        Arc::clone(levels.entry(dir.to_owned()).or_insert(level))
    }

    fn read_level(&self, dir: &Path, parent: Option<Arc<Level>>) -> Level {
        let file = |name: &str| {
            let path = dir.join(name);
            read_regular(&self.beneath, &path).map_or_else(Gitignore::empty, |bytes| parse(dir, &path, &bytes))
        };
        let git = dir.join(".git");
        let git_kind = kind(&self.beneath, &git);
        let is_repository = git_kind.is_some() || kind(&self.beneath, &dir.join(".jj")).is_some();
        let exclude = match git_kind {
            Some(FileType::RegularFile) => common_git_dir(&self.beneath, dir, &git),
            Some(_) => Some(git),
            None => None,
        }
        .map(|git_dir| git_dir.join("info/exclude"))
        .and_then(|path| Some(parse(dir, &path, &read_regular(&self.beneath, &path)?)))
        .unwrap_or_else(Gitignore::empty);
        Level {
            rgignore: file(".rgignore"),
            ignore: file(".ignore"),
            gitignore: file(".gitignore"),
            exclude,
            is_repository,
            parent,
        }
    }
}

/// The common git directory of the worktree whose `.git` file is `git_file` (in `dir`): the
/// `commondir` named in the directory its `gitdir:` line names. Without one (a submodule's
/// `.git` file), `rg` reads no `info/exclude`, and neither does this.
fn common_git_dir(beneath: &Beneath, dir: &Path, git_file: &Path) -> Option<PathBuf> {
    let first_line = |path: &Path| -> Option<String> {
        let bytes = read_regular(beneath, path)?;
        let line = bytes.split(|&b| b == b'\n').next()?;
        Some(String::from_utf8_lossy(line).trim_end_matches('\r').to_owned())
    };
    let git_dir = dir.join(first_line(git_file)?.strip_prefix("gitdir: ")?);
    Some(git_dir.join(first_line(&git_dir.join("commondir"))?))
}

/// The rules of one ignore file (`bytes`, read from `from`) for paths under `dir`, read as
/// the `ignore` crate reads a file: line by line, a BOM dropped, lines that are not UTF-8
/// or not valid globs skipped.
fn parse(dir: &Path, from: &Path, bytes: &[u8]) -> Gitignore {
    let mut builder = GitignoreBuilder::new(dir);
    for (index, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Ok(line) = std::str::from_utf8(line) else { continue };
        let line = if index == 0 { line.trim_start_matches('\u{feff}') } else { line };
        // A line that is not a valid glob is skipped, as `rg` skips it.
        let _ = builder.add_line(Some(from.to_owned()), line);
    }
    builder.build().unwrap_or_else(|_| Gitignore::empty())
}

/// Opens `path` for reading without blocking: beneath the root when it lies there (links
/// that stay inside followed), else by path.
fn open(beneath: &Beneath, path: &Path, flags: OFlags) -> Option<OwnedFd> {
    if path.starts_with(beneath.root()) {
        beneath.open_at(path, flags, Links::InRoot).ok()
    } else {
        rustix::fs::open(path, flags | OFlags::CLOEXEC, Mode::empty()).ok()
    }
}

/// What kind of entry `path` is (links followed as [`open`] follows them); `None`: nothing.
fn kind(beneath: &Beneath, path: &Path) -> Option<FileType> {
    let fd = open(beneath, path, OFlags::PATH)?;
    Some(FileType::from_raw_mode(rustix::fs::fstat(&fd).ok()?.st_mode))
}

/// The content of the regular file at `path`, if it is one of at most
/// [`MAX_IGNORE_FILE_BYTES`]; a FIFO, socket, device or directory is never read.
fn read_regular(beneath: &Beneath, path: &Path) -> Option<Vec<u8>> {
    let fd = open(beneath, path, READ)?;
    let stat = rustix::fs::fstat(&fd).ok()?;
    let size = u64::try_from(stat.st_size).ok()?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile || size > MAX_IGNORE_FILE_BYTES {
        return None;
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).ok()?);
    File::from(fd).take(MAX_IGNORE_FILE_BYTES).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(root: &Path) -> IgnoreRules {
        IgnoreRules::new(Beneath::open(root).unwrap(), root)
    }

    #[test]
    fn precedence_is_ripgreps() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git/info")).unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join(".gitignore"), "*.log\n*.tmp\n").unwrap();
        std::fs::write(root.join(".git/info/exclude"), "*.out\n").unwrap();
        std::fs::write(root.join(".ignore"), "!keep.log\n").unwrap();
        std::fs::write(root.join("sub/.gitignore"), "!*.tmp\n").unwrap();
        std::fs::write(root.join("sub/.rgignore"), "x.md\n").unwrap();
        let rules = rules(&root);
        let m = |rel: &str| rules.matched(&root.join(rel), false);
        assert!(m("a.log").is_ignore());
        assert!(m("keep.log").is_whitelist());
        assert!(m("a.out").is_ignore());
        assert!(m("a.tmp").is_ignore());
        assert!(m("sub/a.tmp").is_whitelist());
        assert!(m("sub/x.md").is_ignore());
        assert!(m("x.md").is_none());
        assert!(m("a.rs").is_none());
    }

    #[test]
    fn gitignore_needs_a_repository_and_stops_at_its_root() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("repo/.git")).unwrap();
        std::fs::write(base.join(".gitignore"), "*.a\n").unwrap();
        std::fs::write(base.join(".ignore"), "*.b\n").unwrap();
        std::fs::write(base.join("repo/.gitignore"), "*.c\n").unwrap();
        let rules = rules(&base.join("repo"));
        assert!(rules.matched(&base.join("repo/x.a"), false).is_none(), "a .gitignore above the repository");
        assert!(rules.matched(&base.join("repo/x.b"), false).is_ignore(), "an .ignore above applies");
        assert!(rules.matched(&base.join("repo/x.c"), false).is_ignore());
        std::fs::remove_dir(base.join("repo/.git")).unwrap();
        let rules = super::IgnoreRules::new(Beneath::open(&base.join("repo")).unwrap(), &base);
        assert!(rules.matched(&base.join("repo/x.c"), false).is_none(), "no repository, no .gitignore");
    }

    #[test]
    fn a_fifo_or_an_oversized_file_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir(root.join(".git")).unwrap();
        rustix::fs::mknodat(rustix::fs::CWD, root.join(".gitignore"), FileType::Fifo, Mode::from_raw_mode(0o644), 0)
            .unwrap();
        let mut big = "x\n".repeat(usize::try_from(MAX_IGNORE_FILE_BYTES).unwrap());
        big.push_str("y\n");
        std::fs::write(root.join(".ignore"), big).unwrap();
        let rules = rules(&root);
        assert!(rules.matched(&root.join("x"), false).is_none());
        assert!(rules.matched(&root.join("y"), false).is_none());
    }
}
