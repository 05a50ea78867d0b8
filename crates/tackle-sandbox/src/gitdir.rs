//! Where a repository's git directory really is, so that it is protected like `.git`
//! (docs/reference/safety.md#path-policy, docs/shell.md "Protected paths").
//!
//! Protecting the name `.git` is not enough: `.git` may be a symlink to another directory, a
//! file saying `gitdir: PATH` (worktrees, submodules), and any git directory may hold a
//! `commondir` naming the directory its `config` and `hooks` are read from. A host `git` run
//! in the workspace reads the `config` (`core.fsmonitor`, `core.hooksPath`, ...) and `hooks` of
//! those real directories, so a write there runs code on the host later. [`real_git_dirs`]
//! follows these pointers the way git does; the file tools' path policy and the process
//! sandbox protect what it returns, where it lies inside the workspace's roots (a git
//! directory outside them is not writable anyway).

use std::io::Read as _;
use std::path::{Path, PathBuf};

/// The longest `gitdir:` or `commondir` file read (git's own are one short line).
const MAX_POINTER_BYTES: u64 = 4096;

/// The git directories that `dir/.git` really stands for, canonical and existing, besides
/// `dir/.git` itself when that is a plain directory (already protected by its name): the
/// target of a `.git` symlink, the `gitdir:` of a `.git` file, and the `commondir` of each of
/// these (and of a plain `.git`). Empty when `dir` has no `.git`.
pub fn real_git_dirs(dir: &Path) -> Vec<PathBuf> {
    let dot_git = dir.join(".git");
    let Ok(meta) = std::fs::symlink_metadata(&dot_git) else { return Vec::new() };
    let plain = meta.is_dir();
    let first = if meta.file_type().is_symlink() || plain {
        dot_git.canonicalize().ok()
    } else if meta.is_file() {
        read_pointer(&dot_git)
            .and_then(|text| text.strip_prefix("gitdir:").map(|rest| rest.trim().to_owned()))
            .filter(|target| !target.is_empty())
            .and_then(|target| dir.join(target).canonicalize().ok())
    } else {
        None
    };
    // A git directory that holds its own working tree (`gitdir: .`) is no git layout; taking it
    // would protect the whole workspace.
    let usable = |path: &PathBuf| path.is_dir() && !dir.starts_with(path);
    let Some(first) = first.filter(usable) else { return Vec::new() };
    let common = read_pointer(&first.join("commondir"))
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty())
        .and_then(|text| first.join(text).canonicalize().ok())
        .filter(usable);
    let mut found = Vec::new();
    if !plain {
        found.push(first.clone());
    }
    if let Some(common) = common
        && common != first
        && !found.contains(&common)
    {
        found.push(common);
    }
    found
}

/// Whether `dir` has what git requires of a git directory: a `HEAD` file, and `objects` and
/// `refs` directories or a `commondir` file (a worktree's). Git uses no other directory as one,
/// so this finds a repository's directory however it is pointed at (a nested checkout's
/// `gitdir:` file, `GIT_DIR`, a bare repository).
pub fn looks_like_git_dir(dir: &Path) -> bool {
    dir.join("HEAD").is_file()
        && ((dir.join("objects").is_dir() && dir.join("refs").is_dir()) || dir.join("commondir").is_file())
}

/// The first line of a small pointer file, if it is a regular file.
fn read_pointer(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(path).ok()?.take(MAX_POINTER_BYTES).read_to_string(&mut text).ok()?;
    text.lines().next().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn repo() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(ws.join("gitstore/hooks")).unwrap();
        (dir, ws)
    }

    #[test]
    fn a_symlink_a_gitdir_file_and_a_commondir_lead_to_the_real_directories() {
        let (_dir, ws) = repo();
        assert_eq!(real_git_dirs(&ws), Vec::<PathBuf>::new(), "no .git");
        std::os::unix::fs::symlink("gitstore", ws.join(".git")).unwrap();
        assert_eq!(real_git_dirs(&ws), [ws.join("gitstore")]);

        std::fs::remove_file(ws.join(".git")).unwrap();
        std::fs::write(ws.join(".git"), "gitdir: gitstore\n").unwrap();
        assert_eq!(real_git_dirs(&ws), [ws.join("gitstore")]);

        // A worktree: its gitdir's commondir names the main repository's directory.
        std::fs::create_dir_all(ws.join("main/worktrees/wt")).unwrap();
        std::fs::write(ws.join("main/worktrees/wt/commondir"), "../..\n").unwrap();
        std::fs::write(ws.join(".git"), format!("gitdir: {}\n", ws.join("main/worktrees/wt").display())).unwrap();
        assert_eq!(real_git_dirs(&ws), [ws.join("main/worktrees/wt"), ws.join("main")]);

        // A plain .git with a commondir elsewhere: only the commondir is new.
        std::fs::remove_file(ws.join(".git")).unwrap();
        std::fs::create_dir(ws.join(".git")).unwrap();
        std::fs::write(ws.join(".git/commondir"), "../gitstore").unwrap();
        assert_eq!(real_git_dirs(&ws), [ws.join("gitstore")]);
    }

    #[test]
    fn a_git_directory_is_known_by_its_contents() {
        let (_dir, ws) = repo();
        let store = ws.join("gitstore");
        assert!(!looks_like_git_dir(&store));
        std::fs::write(store.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        assert!(!looks_like_git_dir(&store), "HEAD alone is not enough for git");
        std::fs::create_dir_all(store.join("objects")).unwrap();
        std::fs::create_dir_all(store.join("refs")).unwrap();
        assert!(looks_like_git_dir(&store));
        std::fs::create_dir_all(store.join("worktrees/w")).unwrap();
        std::fs::write(store.join("worktrees/w/HEAD"), "x").unwrap();
        std::fs::write(store.join("worktrees/w/commondir"), "../..").unwrap();
        assert!(looks_like_git_dir(&store.join("worktrees/w")));
    }

    #[test]
    fn broken_or_hostile_pointers_lead_nowhere() {
        let (_dir, ws) = repo();
        for text in [
            "",
            "gitdir:",
            "gitdir: .",
            "gitdir: ..",
            "gitdir: missing",
            "not a pointer",
            "gitdir: gitstore/hooks/../../nope",
        ] {
            std::fs::write(ws.join(".git"), text).unwrap();
            assert_eq!(real_git_dirs(&ws), Vec::<PathBuf>::new(), "{text:?}");
        }
        std::fs::remove_file(ws.join(".git")).unwrap();
        std::os::unix::fs::symlink(".git", ws.join(".git")).unwrap();
        assert_eq!(real_git_dirs(&ws), Vec::<PathBuf>::new(), "a link loop");
        std::fs::remove_file(ws.join(".git")).unwrap();
        std::os::unix::fs::symlink("/dev/null", ws.join(".git")).unwrap();
        assert_eq!(real_git_dirs(&ws), Vec::<PathBuf>::new(), "not a directory");
    }
}
