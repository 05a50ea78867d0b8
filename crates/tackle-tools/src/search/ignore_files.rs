//! The ignore files of a walk, read by Tackle beneath the root and never blocking, so that a
//! hostile workspace cannot hang or redirect a search through them (docs/file-tools.md,
//! "Opening beneath the root").
//!
//! ripgrep's walker opens `.gitignore`, `.ignore`, `.rgignore`, `.git/info/exclude` and a
//! worktree's `.git` file by name and blocking: a FIFO planted (or swapped in) under one of
//! those names would stop the walk until something wrote to it. Here each directory's files
//! are found in the listing the walk made ([`IgnoreRules::listed`]) and opened through the
//! directory's descriptor (a symlink among them is followed only if it stays inside the
//! root, as `rg` follows links), without blocking, and read only when `fstat` says a regular
//! file of at most [`MAX_IGNORE_FILE_BYTES`]; anything else counts as absent. The
//! directories above the walk's start (ripgrep reads the ignore files of its parents too) are
//! looked up by name ([`IgnoreRules::above`]): beneath the root where they lie in it, by path
//! outside it (as is a worktree's common git directory), the same way.
//!
//! The rules and their precedence are ripgrep's (its `ignore` crate's `Ignore::matched`):
//! for each kind, the deepest directory with a matching line decides; `.rgignore` beats
//! `.ignore`, which beats `.gitignore`, which beats the repository's `info/exclude`, which
//! beats the global excludes file; `.gitignore`, `info/exclude` and the global file apply
//! only inside a git (or jj) repository, and `.gitignore` files above the repository's root
//! are not read. The line syntax is the crate's own ([`GitignoreBuilder::add_line`]).

use std::ffi::OsStr;
use std::fs::File;
use std::io::Read as _;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::Match;
use ignore::gitignore::{Gitignore, GitignoreBuilder, gitconfig_excludes_path};
use rustix::fs::{FileType, Mode, OFlags};

use crate::fs::beneath::{Beneath, Links, READ};

/// The largest ignore file read; a larger one is treated as absent (real ones are a few KiB).
pub const MAX_IGNORE_FILE_BYTES: u64 = 1024 * 1024;

/// The rules one directory adds, with those of its parent.
#[derive(Debug)]
pub struct Level {
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

/// The ignore rules of one walk: the global excludes file, and how to read a directory's.
#[derive(Debug)]
pub struct IgnoreRules {
    beneath: Beneath,
    global: Gitignore,
}

/// The names in a directory that bear on its rules, as its listing shows them.
#[derive(Debug, Default, Clone, Copy)]
pub struct Present {
    rgignore: bool,
    ignore: bool,
    gitignore: bool,
    /// The type of `.git` (`Symlink` or `Unknown`: looked up, following the link).
    git: Option<FileType>,
    jj: bool,
}

impl Present {
    /// Notes one entry of a listing.
    pub fn note(&mut self, name: &OsStr, kind: FileType) {
        match name.as_encoded_bytes() {
            b".rgignore" => self.rgignore = true,
            b".ignore" => self.ignore = true,
            b".gitignore" => self.gitignore = true,
            b".git" => self.git = Some(kind),
            b".jj" => self.jj = true,
            _ => {}
        }
    }
}

impl IgnoreRules {
    /// The rules of a walk beneath `beneath`'s root; the global excludes file (git's
    /// `core.excludesFile`) is anchored at `workspace`.
    pub fn new(beneath: Beneath, workspace: &Path) -> IgnoreRules {
        let global = gitconfig_excludes_path()
            .and_then(|path| Some(parse(workspace, &path, &read_regular(&beneath, &path)?)))
            .unwrap_or_else(Gitignore::empty);
        IgnoreRules { beneath, global }
    }

    /// Whether the ignore files of `level` (the directory holding `path`) and its parents
    /// say to skip `path` (a directory when `is_dir`), to keep it (a `!` line: a hidden
    /// entry is then kept too), or nothing.
    pub fn matched(&self, level: &Level, path: &Path, is_dir: bool) -> Match<()> {
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

    /// The rules of the directories above `dir` (`None` above `/`), each looked up by name.
    pub fn above(&self, dir: &Path) -> Option<Arc<Level>> {
        let parent = dir.parent()?;
        let present = Present {
            rgignore: true,
            ignore: true,
            gitignore: true,
            git: kind(&self.beneath, &parent.join(".git")),
            jj: kind(&self.beneath, &parent.join(".jj")).is_some(),
        };
        let read = |name: &str| read_regular(&self.beneath, &parent.join(name));
        Some(Arc::new(self.level(parent, &present, read, self.above(parent))))
    }

    /// The rules of the directory `dir`, open as `fd`, whose listing showed `present`.
    pub fn listed(&self, dir: &Path, fd: BorrowedFd<'_>, present: &Present, parent: Option<Arc<Level>>) -> Arc<Level> {
        let read = |name: &str| match rustix::fs::openat(fd, name, READ | OFlags::NOFOLLOW, Mode::empty()) {
            Ok(opened) => read_opened(opened),
            // A symlink: followed if it stays inside the root (or, outside it, as `rg` does).
            Err(rustix::io::Errno::LOOP) => read_regular(&self.beneath, &dir.join(name)),
            Err(_) => None,
        };
        let mut present = *present;
        if let Some(FileType::Symlink | FileType::Unknown) = present.git {
            present.git = kind(&self.beneath, &dir.join(".git"));
        }
        Arc::new(self.level(dir, &present, read, parent))
    }

    fn level(
        &self,
        dir: &Path,
        present: &Present,
        read: impl Fn(&str) -> Option<Vec<u8>>,
        parent: Option<Arc<Level>>,
    ) -> Level {
        let file = |wanted: bool, name: &str| {
            let bytes = if wanted { read(name) } else { None };
            bytes.map_or_else(Gitignore::empty, |bytes| parse(dir, &dir.join(name), &bytes))
        };
        let git = dir.join(".git");
        let exclude = match present.git {
            Some(FileType::RegularFile) => common_git_dir(&self.beneath, dir, &git),
            Some(_) => Some(git),
            None => None,
        }
        .map(|git_dir| git_dir.join("info/exclude"))
        .and_then(|path| Some(parse(dir, &path, &read_regular(&self.beneath, &path)?)))
        .unwrap_or_else(Gitignore::empty);
        Level {
            rgignore: file(present.rgignore, ".rgignore"),
            ignore: file(present.ignore, ".ignore"),
            gitignore: file(present.gitignore, ".gitignore"),
            exclude,
            is_repository: present.git.is_some() || present.jj,
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

/// The content of the regular file at `path` (see [`read_opened`]).
fn read_regular(beneath: &Beneath, path: &Path) -> Option<Vec<u8>> {
    read_opened(open(beneath, path, READ)?)
}

/// The content of the file opened as `fd`, if it is a regular file of at most
/// [`MAX_IGNORE_FILE_BYTES`]; a FIFO, socket, device or directory is never read.
fn read_opened(fd: OwnedFd) -> Option<Vec<u8>> {
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

    /// The rules of `dir` as a walk from `root` sees them: its listing, below its parents'.
    fn level(rules: &IgnoreRules, root: &Path, dir: &Path) -> Arc<Level> {
        let parent = if dir == root { rules.above(dir) } else { Some(level(rules, root, dir.parent().unwrap())) };
        let fd = rustix::fs::open(dir, crate::fs::beneath::DIR_READ, Mode::empty()).unwrap();
        let mut present = Present::default();
        for entry in rustix::fs::Dir::read_from(&fd).unwrap().flatten() {
            present.note(OsStr::from_bytes(entry.file_name().to_bytes()), entry.file_type());
        }
        rules.listed(dir, fd.as_fd(), &present, parent)
    }

    fn rules(root: &Path) -> IgnoreRules {
        IgnoreRules::new(Beneath::open(root).unwrap(), root)
    }

    use std::os::fd::AsFd as _;
    use std::os::unix::ffi::OsStrExt as _;

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
        let (top, sub) = (level(&rules, &root, &root), level(&rules, &root, &root.join("sub")));
        let m = |level: &Level, rel: &str| rules.matched(level, &root.join(rel), false);
        assert!(m(&top, "a.log").is_ignore());
        assert!(m(&top, "keep.log").is_whitelist());
        assert!(m(&top, "a.out").is_ignore());
        assert!(m(&top, "a.tmp").is_ignore());
        assert!(m(&sub, "sub/a.tmp").is_whitelist());
        assert!(m(&sub, "sub/x.md").is_ignore());
        assert!(m(&top, "x.md").is_none());
        assert!(m(&top, "a.rs").is_none());
    }

    #[test]
    fn gitignore_needs_a_repository_and_stops_at_its_root() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let repo = base.join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::write(base.join(".gitignore"), "*.a\n").unwrap();
        std::fs::write(base.join(".ignore"), "*.b\n").unwrap();
        std::fs::write(repo.join(".gitignore"), "*.c\n").unwrap();
        let rules = rules(&repo);
        let top = level(&rules, &repo, &repo);
        assert!(rules.matched(&top, &repo.join("x.a"), false).is_none(), "a .gitignore above the repository");
        assert!(rules.matched(&top, &repo.join("x.b"), false).is_ignore(), "an .ignore above applies");
        assert!(rules.matched(&top, &repo.join("x.c"), false).is_ignore());
        std::fs::remove_dir(repo.join(".git")).unwrap();
        let top = level(&rules, &repo, &repo);
        assert!(rules.matched(&top, &repo.join("x.c"), false).is_none(), "no repository, no .gitignore");
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
        let top = level(&rules, &root, &root);
        assert!(rules.matched(&top, &root.join("x"), false).is_none());
        assert!(rules.matched(&top, &root.join("y"), false).is_none());
    }

    #[test]
    fn an_ignore_file_linked_out_of_the_root_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(base.join("outside-rules"), "*.x\n").unwrap();
        std::fs::write(root.join("inside-rules"), "*.y\n").unwrap();
        std::os::unix::fs::symlink(base.join("outside-rules"), root.join(".ignore")).unwrap();
        std::os::unix::fs::symlink("../inside-rules", root.join("sub/.ignore")).unwrap();
        let rules = rules(&root);
        let sub = level(&rules, &root, &root.join("sub"));
        assert!(rules.matched(&sub, &root.join("sub/a.x"), false).is_none());
        assert!(rules.matched(&sub, &root.join("sub/a.y"), false).is_ignore());
    }
}
