//! Noticing a change to a protected path that the sandbox could not stop (docs/shell.md,
//! "Protected paths").
//!
//! Landlock cannot deny a write inside a writable root, and bubblewrap can make read-only only
//! what exists when it starts (a new `tackle.toml` has no mount point to cover). So the shell
//! tools take a [`Snapshot`] of a fixed list of paths before each command and background job
//! and compare after it: one `lstat` per path, comparing type, identity (device and inode),
//! size, modification and change time. The change time cannot be set back by a command, so
//! `touch -r` does not hide a write. `.git` itself is compared by type and identity only while
//! it is a directory (a commit changes its listing; renaming it away and making a new one
//! changes its inode); a worktree's `.git` file is compared whole.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use super::policy::SandboxPolicy;

/// The watched entries of every writable root: the settings Tackle, Claude Code and other
/// agents load from a workspace.
pub const WATCHED_IN_ROOT: &[&str] =
    &["tackle.toml", ".mcp.json", ".claude", ".claude/settings.json", ".claude/settings.local.json"];

/// The watched entries of `.git` (with `protect_git`): what makes a host `git` run code.
pub const WATCHED_GIT: &[&str] = &[".git", ".git/config", ".git/commondir", ".git/hooks"];

/// What `lstat` said about a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathStat {
    /// The type bits of the mode (`S_IFMT`).
    kind: u32,
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl PathStat {
    fn of(path: &Path) -> Option<PathStat> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        Some(PathStat {
            kind: meta.mode() & libc::S_IFMT,
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        })
    }

    fn is_dir(&self) -> bool {
        self.kind == libc::S_IFDIR
    }
}

/// How a watched path changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Created,
    Removed,
    /// Something else is there now (renamed away, replaced, a symlink put in its place).
    Replaced,
    /// Written to (or, for a directory, entries added or removed).
    Modified,
}

impl ChangeKind {
    /// The word used in notices.
    pub fn name(self) -> &'static str {
        match self {
            ChangeKind::Created => "created",
            ChangeKind::Removed => "removed",
            ChangeKind::Replaced => "replaced",
            ChangeKind::Modified => "modified",
        }
    }
}

/// One change to a watched path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: PathBuf,
    pub kind: ChangeKind,
    /// The path's state afterwards (`None`: it is gone), to tell one change from the next.
    pub after: Option<PathStat>,
}

/// The watched entries of a real git directory a `.git` leads to (crate::gitdir), as
/// [`WATCHED_GIT`] without the leading `.git`.
pub const WATCHED_IN_GIT_DIR: &[&str] = &["config", "commondir", "hooks"];

/// The watched paths of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedWatch {
    paths: Vec<PathBuf>,
    /// For each path, the earlier paths it lies under (worked out once: a snapshot is taken
    /// before and after every command).
    under: Vec<Vec<usize>>,
    /// The real git directories among `paths`: like `.git`, compared by type and identity only.
    git_dirs: Vec<PathBuf>,
}

/// The states of the watched paths at one moment, in the order of the watch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot(Vec<Option<PathStat>>);

impl ProtectedWatch {
    /// The watch for `policy`: [`WATCHED_IN_ROOT`] and (with `protect_git`) [`WATCHED_GIT`] in
    /// every writable root, leaving out what an `extra_writable` entry opens; the real git
    /// directories a `.git` leads to are watched as `.git` is.
    pub fn new(policy: &SandboxPolicy) -> ProtectedWatch {
        let mut paths = policy.in_roots(WATCHED_IN_ROOT, WATCHED_GIT);
        let git_dirs = policy.real_git_dirs();
        for git_dir in &git_dirs {
            paths.push(git_dir.clone());
            paths.extend(WATCHED_IN_GIT_DIR.iter().map(|entry| git_dir.join(entry)));
        }
        let under = paths
            .iter()
            .enumerate()
            .map(|(at, path)| (0..at).filter(|&earlier| path.starts_with(&paths[earlier])).collect())
            .collect();
        ProtectedWatch { paths, under, git_dirs }
    }

    /// The watched paths.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// The state of every watched path now. A path below a watched directory that is missing
    /// is missing too, without an `lstat` (most workspaces have no `.claude`).
    pub fn snapshot(&self) -> Snapshot {
        let mut states: Vec<Option<PathStat>> = Vec::with_capacity(self.paths.len());
        for (path, under) in self.paths.iter().zip(&self.under) {
            let parent_missing = under.iter().any(|&earlier| !states[earlier].is_some_and(|s| s.is_dir()));
            states.push(if parent_missing { None } else { PathStat::of(path) });
        }
        Snapshot(states)
    }

    /// What changed between two snapshots of this watch, in watch order.
    pub fn changes(&self, before: &Snapshot, after: &Snapshot) -> Vec<Change> {
        self.paths
            .iter()
            .zip(before.0.iter().zip(&after.0))
            .filter_map(|(path, (old, new))| {
                let kind = match (old, new) {
                    (None, None) => return None,
                    (None, Some(_)) => ChangeKind::Created,
                    (Some(_), None) => ChangeKind::Removed,
                    (Some(old), Some(new)) => {
                        if (old.kind, old.dev, old.ino) != (new.kind, new.dev, new.ino) {
                            ChangeKind::Replaced
                        } else if old == new
                            || (old.is_dir() && (path.ends_with(".git") || self.git_dirs.contains(path)))
                        {
                            return None;
                        } else {
                            ChangeKind::Modified
                        }
                    }
                };
                Some(Change { path: path.clone(), kind, after: *new })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn writes_renames_and_new_files_are_seen_and_a_commit_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path();
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
        let watch = ProtectedWatch::new(&SandboxPolicy::new(ws));
        assert_eq!(watch.paths().len(), WATCHED_IN_ROOT.len() + WATCHED_GIT.len());
        let kinds = |before: &Snapshot| {
            watch
                .changes(before, &watch.snapshot())
                .into_iter()
                .map(|c| (c.path.strip_prefix(ws).unwrap().display().to_string(), c.kind))
                .collect::<Vec<_>>()
        };

        let before = watch.snapshot();
        std::fs::write(ws.join(".git/index"), "x").unwrap();
        assert_eq!(kinds(&before), [], "a commit's writes inside .git are not a change of .git");

        let before = watch.snapshot();
        std::fs::write(ws.join("tackle.toml"), "[sandbox]\nmode = \"none\"\n").unwrap();
        std::fs::write(ws.join(".git/hooks/pre-commit"), "#!/bin/sh\n").unwrap();
        std::fs::write(ws.join(".git/config"), "[core]\n\tfsmonitor = evil\n").unwrap();
        assert_eq!(
            kinds(&before),
            [
                ("tackle.toml".to_owned(), ChangeKind::Created),
                (".git/config".to_owned(), ChangeKind::Modified),
                (".git/hooks".to_owned(), ChangeKind::Modified)
            ]
        );

        let before = watch.snapshot();
        std::fs::rename(ws.join(".git"), ws.join(".git_old")).unwrap();
        std::fs::create_dir(ws.join(".git")).unwrap();
        std::fs::write(ws.join(".git/commondir"), "../.cache/g\n").unwrap();
        let seen = kinds(&before);
        assert_eq!(
            seen,
            [
                (".git".to_owned(), ChangeKind::Replaced),
                (".git/config".to_owned(), ChangeKind::Removed),
                (".git/commondir".to_owned(), ChangeKind::Created),
                (".git/hooks".to_owned(), ChangeKind::Removed)
            ]
        );
    }

    #[test]
    fn protect_git_false_and_extra_writable_leave_paths_unwatched() {
        let mut policy = SandboxPolicy::new("/ws");
        policy.extra_writable = vec![PathBuf::from("/ws/.claude")];
        let watch = ProtectedWatch::new(&policy);
        assert!(watch.paths().iter().all(|p| !p.starts_with("/ws/.claude")));
        assert!(watch.paths().contains(&PathBuf::from("/ws/.git/config")));
        policy.protect_git = false;
        assert_eq!(ProtectedWatch::new(&policy).paths(), [Path::new("/ws/tackle.toml"), Path::new("/ws/.mcp.json")]);
    }
}
