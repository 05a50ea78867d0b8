//! Every path Tackle itself reads, creates, appends to, renames or removes in a workspace, in
//! one table ([`TABLE`]), and the one way to use them: beneath the workspace root, never
//! through a symlink (docs/reference/safety.md, "Tackle's own files in the workspace").
//!
//! A cloned repository is hostile input: it may commit `.tackle/outputs -> ../..` so that a
//! clean-up deletes a sibling project, or `.tackle/logs/mcp-x.log -> ~/.bashrc` so that a log
//! appends to it, or `AGENTS.md -> ~/.ssh/id_rsa` so that a key goes into the prompt. So a
//! state path is opened one component at a time beneath the root ([`crate::fs::beneath`],
//! [`crate::fs::own_dir`]): a link anywhere on it is refused with a notice naming the path
//! ([`StateError::notice`]), and the file is not used. Clean-up walks by directory
//! descriptors and removes with `unlinkat`, so it removes a link itself, never its target
//! ([`remove_older_than`]).
//!
//! A user of a path names its entry here (a constant), so that the table stays complete and
//! the link test (`tackle-cli`'s `state_links` test) covers every entry.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::io::{Read as _, Write as _};
use std::os::fd::{AsFd as _, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::fs::beneath::{Beneath, Links, OpenError, READ};
use crate::fs::own_dir::{self, OwnDirError};

/// Whether a state path is a directory or a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A directory Tackle creates or reads files in.
    Dir,
    /// A file Tackle reads, writes or appends to.
    File,
}

/// One path Tackle uses in a workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatePath {
    /// The path relative to the workspace root (`/`-separated, no `..`).
    pub rel: &'static str,
    /// A directory or a file.
    pub kind: Kind,
    /// What uses it (for the docs and the link test's messages).
    pub used_by: &'static str,
}

const fn dir(rel: &'static str, used_by: &'static str) -> StatePath {
    StatePath { rel, kind: Kind::Dir, used_by }
}

const fn file(rel: &'static str, used_by: &'static str) -> StatePath {
    StatePath { rel, kind: Kind::File, used_by }
}

/// `.tackle/`: Tackle's state directory (made before the sandbox starts, so it is protected).
pub const TACKLE: StatePath = dir(".tackle", "every state path below; the shell makes it before its sandbox");
/// Saved full outputs of cut results and the shell's job logs, one directory per session.
pub const OUTPUTS: StatePath = dir(".tackle/outputs", "the executor's spill files, the shell's captures and job logs");
/// MCP servers' stderr logs (`mcp-{server}.log`).
pub const LOGS: StatePath = dir(".tackle/logs", "the MCP client's server logs");
/// Session trajectories (`tackle run --trajectory`, `tackle replay`).
pub const TRAJECTORIES: StatePath = dir(".tackle/trajectories", "run/chat trajectories, replay");
/// The roll-forward journal of multi-file writes.
pub const JOURNAL: StatePath = dir(".tackle/journal", "apply_patch's journal and its recovery");
/// The code knowledge graph's index.
pub const CKG: StatePath = dir(".tackle/ckg", "the ckg index (tackle ckg, the ckg tools)");
/// The task board.
pub const TASKS: StatePath = file(".tackle/tasks.json", "the task board (tackle tasks, the task tools)");
/// The task board's lock.
pub const TASKS_LOCK: StatePath = file(".tackle/tasks.lock", "the task board's lock");
/// Team mailboxes.
pub const TEAMS: StatePath = dir(".tackle/teams", "agent teams' mailboxes");
/// Workspace skills (Tackle's folder).
pub const TACKLE_SKILLS: StatePath = dir(".tackle/skills", "the skill tool (read into the prompt)");
/// Workspace skills (Claude Code's folder).
pub const CLAUDE_SKILLS: StatePath = dir(".claude/skills", "the skill tool (read into the prompt)");
/// Tools defined in files (`NAME.toml`), read with the settings and used only with consent.
pub const TACKLE_TOOLS: StatePath =
    dir(".tackle/tools", "tools defined in files (read with the settings, need consent)");
/// Workspace agent definitions (Tackle's folder).
pub const TACKLE_AGENTS: StatePath = dir(".tackle/agents", "subagent definitions (read into the prompt)");
/// Workspace agent definitions (Claude Code's folder).
pub const CLAUDE_AGENTS: StatePath = dir(".claude/agents", "subagent definitions (read into the prompt)");
/// Project instructions read into the system prompt.
pub const AGENTS_MD: StatePath = file("AGENTS.md", "the system prompt's project instructions");
/// Project instructions read into the system prompt (Claude Code's name).
pub const CLAUDE_MD: StatePath = file("CLAUDE.md", "the system prompt's project instructions");
/// Git's local ignore list, to which Tackle appends `/.tackle/`.
pub const GIT_EXCLUDE: StatePath = file(".git/info/exclude", "run/chat add /.tackle/ to it");
/// The workspace's settings.
pub const TACKLE_TOML: StatePath = file("tackle.toml", "settings (every command); tackle init writes it");
/// The workspace's MCP servers.
pub const MCP_JSON: StatePath =
    file(".mcp.json", "MCP servers (every command that connects them; tackle mcp add/remove --scope project write it)");
/// Claude Code's shared settings.
pub const CLAUDE_SETTINGS: StatePath = file(".claude/settings.json", "Claude Code settings (permissions, hooks)");
/// Claude Code's local settings.
pub const CLAUDE_LOCAL_SETTINGS: StatePath =
    file(".claude/settings.local.json", "Claude Code settings (permissions, hooks)");

/// Every path Tackle uses in a workspace.
pub const TABLE: &[StatePath] = &[
    TACKLE,
    OUTPUTS,
    LOGS,
    TRAJECTORIES,
    JOURNAL,
    CKG,
    TASKS,
    TASKS_LOCK,
    TEAMS,
    TACKLE_SKILLS,
    CLAUDE_SKILLS,
    TACKLE_TOOLS,
    TACKLE_AGENTS,
    CLAUDE_AGENTS,
    AGENTS_MD,
    CLAUDE_MD,
    GIT_EXCLUDE,
    TACKLE_TOML,
    MCP_JSON,
    CLAUDE_SETTINGS,
    CLAUDE_LOCAL_SETTINGS,
];

/// The files of a state directory as [`StatePath::read_files`] read them: each one's
/// workspace-relative path and its bytes, or why it was not read.
pub type FilesRead = Vec<(String, Result<Vec<u8>, StateError>)>;

/// A state path could not be used.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// A symlink (or not a plain file or directory) on the path: refused, not followed.
    #[error(
        "{path} is a symlink (or lies under one, or is not a plain {what}) in the workspace; Tackle does not \
         follow links on its own files, so it was not used (remove the link)"
    )]
    Link {
        /// The path, relative to the workspace.
        path: String,
        /// `file` or `directory`.
        what: &'static str,
    },
    /// Something other than a regular file (a FIFO, a device, a directory) where a file
    /// belongs: not used.
    #[error("{path} is not a regular file, so Tackle did not use it")]
    NotPlain {
        /// The path, relative to the workspace.
        path: String,
    },
    /// The file system refused.
    #[error("cannot {what} {path}: {source}")]
    Io {
        /// The step.
        what: &'static str,
        /// The path, relative to the workspace.
        path: String,
        /// The error.
        source: std::io::Error,
    },
}

impl StateError {
    /// Whether the file or directory does not exist.
    pub fn is_not_found(&self) -> bool {
        matches!(self, StateError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }

    /// Whether a link (or something not plain) was refused.
    pub fn is_link(&self) -> bool {
        matches!(self, StateError::Link { .. })
    }

    /// Tells the person: a refused link as a warning, once per path and process (a session
    /// meets the same link on every call); any other failure in the debug log.
    pub fn notice(&self) {
        match self {
            StateError::Link { path, .. } => notice_once(path, &self.to_string()),
            StateError::NotPlain { path } => notice_once(path, &self.to_string()),
            StateError::Io { .. } => tracing::debug!("{self}"),
        }
    }

    fn from_own(err: OwnDirError, path: &str, what: &'static str, kind: &'static str) -> StateError {
        match err {
            OwnDirError::Escaped => StateError::Link { path: path.to_owned(), what: kind },
            OwnDirError::Io { what: step, source } => {
                StateError::Io { what: if what.is_empty() { step } else { what }, path: path.to_owned(), source }
            }
        }
    }
}

impl StatePath {
    /// Its absolute path in `workspace`.
    pub fn path(&self, workspace: &Path) -> PathBuf {
        workspace.join(self.rel)
    }

    /// Opens this directory, or `sub` below it, beneath `workspace` without following any
    /// link; missing, it is made when `create` (each component beneath the root), else `None`.
    pub fn open_dir(&self, workspace: &Path, sub: &str, create: bool) -> Result<Option<OwnedFd>, StateError> {
        let rel = if sub.is_empty() { self.rel.to_owned() } else { format!("{}/{sub}", self.rel) };
        open_dir(workspace, &rel, create)
    }

    /// Opens this file's directory (made when `create`) and the file in it with `flags`,
    /// never through a link; `None`: the directory does not exist and `create` is off.
    fn open(&self, workspace: &Path, flags: OFlags, create: bool, what: &'static str) -> Result<OwnedFd, StateError> {
        let (parent, name) = self.rel.rsplit_once('/').unwrap_or(("", self.rel));
        let not_found = || StateError::Io { what, path: self.rel.to_owned(), source: Errno::NOENT.into() };
        let dir = open_dir(workspace, parent, create)?.ok_or_else(not_found)?;
        open_file_in(&dir, self.rel, name, flags, what)
    }

    /// Opens this file for reading (not blocking), never through a link.
    pub fn open_read(&self, workspace: &Path) -> Result<OwnedFd, StateError> {
        self.open(workspace, OFlags::RDONLY, false, "read")
    }

    /// The text of this file, at most `max` bytes (more is an error); `None` when it does not
    /// exist.
    pub fn read(&self, workspace: &Path, max: u64) -> Result<Option<Vec<u8>>, StateError> {
        let fd = match self.open(workspace, OFlags::RDONLY, false, "read") {
            Ok(fd) => fd,
            Err(err) if err.is_not_found() => return Ok(None),
            Err(err) => return Err(err),
        };
        read_capped(fd, max).map(Some).map_err(|source| StateError::Io {
            what: "read",
            path: self.rel.to_owned(),
            source,
        })
    }

    /// Appends `bytes` to this file, made (with its directories) when missing.
    pub fn append(&self, workspace: &Path, bytes: &[u8]) -> Result<(), StateError> {
        let fd = self.open(workspace, OFlags::WRONLY | OFlags::APPEND | OFlags::CREATE, true, "append to")?;
        std::fs::File::from(fd).write_all(bytes).map_err(|source| StateError::Io {
            what: "append to",
            path: self.rel.to_owned(),
            source,
        })
    }

    /// Writes this file anew (`create_new`): `Ok(false)` when it already exists.
    pub fn create_new(&self, workspace: &Path, bytes: &[u8]) -> Result<bool, StateError> {
        let fd = match self.open(workspace, OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL, true, "create") {
            Ok(fd) => fd,
            Err(StateError::Io { source, .. }) if source.kind() == std::io::ErrorKind::AlreadyExists => {
                return Ok(false);
            }
            Err(err) => return Err(err),
        };
        std::fs::File::from(fd).write_all(bytes).map(|()| true).map_err(|source| StateError::Io {
            what: "write",
            path: self.rel.to_owned(),
            source,
        })
    }

    /// Replaces this file whole with `bytes` (made, with its directories, when missing): a
    /// temporary file beside it, renamed over it, so a reader sees the old text or the new,
    /// never a mix. A link at the file's place (or on its directories) is refused, not
    /// replaced: the rename would otherwise swap the person's link for a file.
    pub fn replace(&self, workspace: &Path, bytes: &[u8]) -> Result<(), StateError> {
        let (parent, name) = self.rel.rsplit_once('/').unwrap_or(("", self.rel));
        let io = |what: &'static str| {
            move |source: std::io::Error| StateError::Io { what, path: self.rel.to_owned(), source }
        };
        let dir = open_dir(workspace, parent, true)?.ok_or_else(|| StateError::Io {
            what: "write",
            path: self.rel.to_owned(),
            source: Errno::NOENT.into(),
        })?;
        let mode = match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) if FileType::from_raw_mode(stat.st_mode) == FileType::Symlink => {
                return Err(StateError::Link { path: self.rel.to_owned(), what: "file" });
            }
            Ok(stat) if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile => {
                return Err(StateError::NotPlain { path: self.rel.to_owned() });
            }
            Ok(stat) => Mode::from_raw_mode(stat.st_mode & 0o7777),
            Err(Errno::NOENT) => Mode::from_raw_mode(0o644),
            Err(errno) => return Err(io("write")(errno.into())),
        };
        let temp = format!(".{name}.tmp{}", std::process::id());
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&dir, temp.as_str(), flags, mode).map_err(|errno| io("write")(errno.into()))?;
        // The mode asked for at creation is cut by the umask; the file keeps the old one.
        let _ = rustix::fs::fchmod(&fd, mode);
        let mut file = std::fs::File::from(fd);
        let written = file.write_all(bytes).and_then(|()| file.sync_all()).map_err(io("write"));
        let renamed = written.and_then(|()| {
            rustix::fs::renameat(&dir, temp.as_str(), &dir, name).map_err(|errno| io("replace")(errno.into()))
        });
        if renamed.is_err() {
            let _ = rustix::fs::unlinkat(&dir, temp.as_str(), AtFlags::empty());
        }
        renamed
    }

    /// The regular files directly in this directory whose names end with `suffix`, sorted by
    /// name, each read (at most `max` bytes; more is an error for that file) beneath
    /// `workspace` without following any link. `Ok(None)`: the directory does not exist. A
    /// link or something not a regular file among them is an error for that entry (named by
    /// its workspace-relative path), never followed; a linked directory is an error for all.
    pub fn read_files(&self, workspace: &Path, suffix: &str, max: u64) -> Result<Option<FilesRead>, StateError> {
        let Some(dir) = self.open_dir(workspace, "", false)? else { return Ok(None) };
        let mut names: Vec<String> = entries(dir.as_fd())
            .into_iter()
            .filter_map(|(name, _)| name.into_string().ok())
            .filter(|name| name.ends_with(suffix) && !name.starts_with('.'))
            .collect();
        names.sort();
        let files = names
            .into_iter()
            .map(|name| {
                let rel = format!("{}/{name}", self.rel);
                let read = open_file_in(&dir, &rel, &name, OFlags::RDONLY, "read").and_then(|fd| {
                    read_capped(fd, max).map_err(|source| StateError::Io { what: "read", path: rel.clone(), source })
                });
                (rel, read)
            })
            .collect();
        Ok(Some(files))
    }

    /// Whether a link sits anywhere on this path (a notice is given for it): callers that
    /// hand the path to a library that opens it by name check first.
    pub fn refuse_link(&self, workspace: &Path) -> Result<(), StateError> {
        let result = match self.kind {
            Kind::Dir => self.open_dir(workspace, "", false).map(drop),
            Kind::File => self.open(workspace, OFlags::PATH, false, "open").map(drop),
        };
        match result {
            Err(err) if err.is_not_found() => Ok(()),
            other => other,
        }
    }
}

/// Tells the person, once per path and process, of every entry of [`TABLE`] that is a link
/// (or lies under one) in `workspace`: each use refuses it anyway, this says so when a session
/// starts, before any use.
pub fn notice_links(workspace: &Path) {
    for entry in TABLE {
        if let Err(err) = entry.refuse_link(workspace)
            && (err.is_link() || matches!(err, StateError::NotPlain { .. }))
        {
            err.notice();
        }
    }
}

/// Gives the person `message` as a warning, once per `key` and process.
pub fn notice_once(key: &str, message: &str) {
    static SEEN: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    let mut seen = SEEN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if seen.get_or_insert_with(HashSet::new).insert(key.to_owned()) {
        tracing::warn!("{message}");
    }
}

/// Reads a file Tackle puts into a model's prompt (`AGENTS.md`, a skill, an agent
/// definition): beneath `root` (the workspace, or the person's own directory it comes from),
/// following only links that stay under it, and not when a `Read(...)` deny rule covers its
/// path or the file it leads to (`hidden` says which paths one covers: tackle-policy's
/// `ReadRules::hides`), the same as `read_file`. `Ok(None)`: it does not exist;
/// `Err`: why it was not read (for a notice). At most `max` bytes of UTF-8 text. `links`:
/// [`Links::None`] for a file of the state table (`AGENTS.md`), which no link may stand for.
pub fn read_prompt_file(
    root: &Path,
    path: &Path,
    max: u64,
    hidden: &dyn Fn(&Path) -> bool,
    links: Links,
) -> Result<Option<String>, PromptFileError> {
    let shown = path.strip_prefix(root).unwrap_or(path).display().to_string();
    let denied = || PromptFileError::Hidden { shown: shown.clone() };
    if hidden(path) {
        return Err(denied());
    }
    let beneath = Beneath::open(root).map_err(|source| PromptFileError::Root { root: root.to_owned(), source })?;
    let fd = match beneath.open_at(path, READ, links) {
        Ok(fd) => fd,
        Err(OpenError::Escaped) if links == Links::None => return Err(PromptFileError::Link { shown }),
        Err(OpenError::Escaped) => return Err(PromptFileError::LeavesRoot { shown, root: root.to_owned() }),
        Err(OpenError::Io(err)) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(OpenError::Io(source)) => return Err(PromptFileError::Read { shown, source }),
    };
    // The file actually opened (an in-root link leads elsewhere under the root).
    let opened = std::fs::read_link(format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&fd)));
    if opened.is_ok_and(|real| real != path && hidden(&real)) {
        return Err(denied());
    }
    let stat =
        rustix::fs::fstat(&fd).map_err(|err| PromptFileError::Read { shown: shown.clone(), source: err.into() })?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(PromptFileError::NotRegular { shown });
    }
    let bytes = read_capped(fd, max).map_err(|_| PromptFileError::TooLarge { shown: shown.clone(), max })?;
    String::from_utf8(bytes).map(Some).map_err(|_| PromptFileError::NotUtf8 { shown })
}

/// Why [`read_prompt_file`] did not read a file; the text is the notice shown as is (`shown`:
/// the file's path relative to the root it was read beneath).
#[derive(Debug, thiserror::Error)]
pub enum PromptFileError {
    /// A `Read(...)` deny rule covers the file or the file it leads to.
    #[error("{shown} is hidden by a Read(...) deny rule, so it was not read")]
    Hidden {
        /// The file.
        shown: String,
    },
    /// The root directory cannot be opened.
    #[error("cannot open {}: {source}", root.display())]
    Root {
        /// The root.
        root: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A link (or a path under one) where no link may stand ([`Links::None`]).
    #[error(
        "{shown} is a symlink (or lies under one), so it was not read (Tackle does not follow links on its own \
         files)"
    )]
    Link {
        /// The file.
        shown: String,
    },
    /// A link that leads out of the root.
    #[error(
        "{shown} is a link that leads outside {}, so it was not read (Tackle does not follow links out of the \
         directory a prompt file belongs to)",
        root.display()
    )]
    LeavesRoot {
        /// The file.
        shown: String,
        /// The root.
        root: std::path::PathBuf,
    },
    /// Opening or reading the file failed.
    #[error("cannot read {shown}: {source}")]
    Read {
        /// The file.
        shown: String,
        /// Why.
        source: std::io::Error,
    },
    /// A directory, device or FIFO where a file was expected.
    #[error("{shown} is not a regular file, so it was not read")]
    NotRegular {
        /// The file.
        shown: String,
    },
    /// Larger than the cap.
    #[error("{shown} is larger than {} KiB", max / 1024)]
    TooLarge {
        /// The file.
        shown: String,
        /// The cap in bytes.
        max: u64,
    },
    /// Not UTF-8 text.
    #[error("{shown} is not UTF-8 text, so it was not read")]
    NotUtf8 {
        /// The file.
        shown: String,
    },
}

/// Opens the directory `rel` (relative, `/`-separated; empty: the workspace itself) beneath
/// `workspace` without following any link; made when `create`, else `None` when missing.
pub fn open_dir(workspace: &Path, rel: &str, create: bool) -> Result<Option<OwnedFd>, StateError> {
    // The workspace itself is the person's choice: its own path may hold links.
    let root = workspace.canonicalize().unwrap_or_else(|_| workspace.to_owned());
    own_dir::open_dir(&root, Path::new(rel), create)
        .map_err(|err| StateError::from_own(err, if rel.is_empty() { "." } else { rel }, "", "directory"))
}

/// Creates the file `name` in the open directory `dir` (whose workspace-relative path is
/// `dir_rel`) with `flags`, never through a link.
pub fn open_in(dir: &OwnedFd, dir_rel: &str, name: &str, flags: OFlags) -> Result<std::fs::File, StateError> {
    open_file_in(dir, &format!("{dir_rel}/{name}"), name, flags, "open").map(std::fs::File::from)
}

/// Opens `name` in `dir` (`rel`: its path in the workspace), telling a link from something
/// that is not a regular file.
fn open_file_in(
    dir: &OwnedFd,
    rel: &str,
    name: &str,
    flags: OFlags,
    what: &'static str,
) -> Result<OwnedFd, StateError> {
    own_dir::open_file(dir, name, flags, what).map_err(|err| match err {
        OwnDirError::Escaped
            if !rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::Symlink) =>
        {
            StateError::NotPlain { path: rel.to_owned() }
        }
        other => StateError::from_own(other, rel, what, "file"),
    })
}

fn read_capped(fd: OwnedFd, max: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::from(fd).take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::other(format!("larger than {max} bytes")));
    }
    Ok(bytes)
}

/// Removes every entry of the open directory `dir` last modified more than `age` ago: a
/// directory with everything in it, walked by descriptors; a file or a link with
/// `unlinkat` (a link itself, never what it points to). Nothing is followed.
pub fn remove_older_than(dir: &OwnedFd, age: Duration) {
    let now = SystemTime::now();
    for (name, stat) in entries(dir.as_fd()) {
        let modified = SystemTime::UNIX_EPOCH
            .checked_add(Duration::new(u64::try_from(stat.st_mtime).unwrap_or(0), 0))
            .unwrap_or(SystemTime::UNIX_EPOCH);
        if now.duration_since(modified).is_ok_and(|elapsed| elapsed > age) {
            remove_entry(dir.as_fd(), &name, &stat, 0);
        }
    }
}

/// How deep a removal goes (a deeper tree is left; Tackle writes two levels).
const MAX_REMOVE_DEPTH: usize = 32;

fn entries(dir: BorrowedFd<'_>) -> Vec<(std::ffi::OsString, rustix::fs::Stat)> {
    let Ok(listed) = rustix::fs::openat(dir, ".", OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
    else {
        return Vec::new();
    };
    let Ok(reader) = rustix::fs::Dir::read_from(&listed) else { return Vec::new() };
    let mut found = Vec::new();
    for entry in reader.flatten() {
        let bytes = entry.file_name().to_bytes();
        if bytes == b"." || bytes == b".." {
            continue;
        }
        let name = OsStr::from_bytes(bytes).to_owned();
        if let Ok(stat) = rustix::fs::statat(dir, &name, AtFlags::SYMLINK_NOFOLLOW) {
            found.push((name, stat));
        }
    }
    found
}

fn remove_entry(dir: BorrowedFd<'_>, name: &OsStr, stat: &rustix::fs::Stat, depth: usize) {
    if FileType::from_raw_mode(stat.st_mode) != FileType::Directory {
        let _ = rustix::fs::unlinkat(dir, name, AtFlags::empty());
        return;
    }
    if depth >= MAX_REMOVE_DEPTH {
        return;
    }
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let Ok(child) = rustix::fs::openat(dir, name, flags, Mode::empty()) else { return };
    // The entry may have been swapped since the stat: only the directory that was listed.
    match rustix::fs::fstat(&child) {
        Ok(now) if (now.st_dev, now.st_ino) == (stat.st_dev, stat.st_ino) => {}
        _ => return,
    }
    for (inner, inner_stat) in entries(child.as_fd()) {
        remove_entry(child.as_fd(), &inner, &inner_stat, depth + 1);
    }
    let _ = rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    struct Setup {
        _dir: tempfile::TempDir,
        ws: PathBuf,
        outside: PathBuf,
    }

    fn setup() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let ws = base.join("ws");
        let outside = base.join("outside");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(outside.join("project")).unwrap();
        std::fs::write(outside.join("project/keep"), "keep").unwrap();
        std::fs::write(outside.join("secret"), "secret").unwrap();
        Setup { _dir: dir, ws, outside }
    }

    #[test]
    fn replace_swaps_the_file_whole_keeps_its_mode_and_refuses_links_and_fifos() {
        use std::os::unix::fs::PermissionsExt as _;
        let s = setup();
        MCP_JSON.replace(&s.ws, b"{}\n").unwrap();
        assert_eq!(std::fs::read_to_string(s.ws.join(".mcp.json")).unwrap(), "{}\n");
        std::fs::set_permissions(s.ws.join(".mcp.json"), std::fs::Permissions::from_mode(0o600)).unwrap();
        MCP_JSON.replace(&s.ws, b"{\"a\": 1}").unwrap();
        assert_eq!(std::fs::read_to_string(s.ws.join(".mcp.json")).unwrap(), "{\"a\": 1}");
        let mode = std::fs::metadata(s.ws.join(".mcp.json")).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        // Nothing but the file is left in the directory.
        let names: Vec<_> = std::fs::read_dir(&s.ws).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names, [std::ffi::OsString::from(".mcp.json")]);
        // A link at its place, or a linked directory on its way, is refused; the target stays.
        std::fs::remove_file(s.ws.join(".mcp.json")).unwrap();
        symlink(s.outside.join("secret"), s.ws.join(".mcp.json")).unwrap();
        assert!(MCP_JSON.replace(&s.ws, b"x").unwrap_err().is_link());
        assert_eq!(std::fs::read_to_string(s.outside.join("secret")).unwrap(), "secret");
        assert!(std::fs::symlink_metadata(s.ws.join(".mcp.json")).unwrap().file_type().is_symlink());
        symlink(&s.outside, s.ws.join(".tackle")).unwrap();
        assert!(TASKS.replace(&s.ws, b"x").unwrap_err().is_link());
        assert!(!s.outside.join("tasks.json").exists());
        std::fs::remove_file(s.ws.join(".mcp.json")).unwrap();
        assert!(std::process::Command::new("mkfifo").arg(s.ws.join(".mcp.json")).status().unwrap().success());
        assert!(matches!(MCP_JSON.replace(&s.ws, b"x"), Err(StateError::NotPlain { .. })));
    }

    fn age(path: &Path) {
        let old = std::fs::FileTimes::new().set_modified(SystemTime::now() - Duration::from_secs(30 * 24 * 3600));
        std::fs::File::open(path).unwrap().set_times(old).unwrap();
    }

    #[test]
    fn the_table_holds_each_path_once_and_every_constant() {
        let mut seen = HashSet::new();
        for entry in TABLE {
            assert!(seen.insert(entry.rel), "{} twice", entry.rel);
            assert!(!entry.rel.contains("..") && !entry.rel.starts_with('/'), "{}", entry.rel);
        }
        for constant in [OUTPUTS, LOGS, TRAJECTORIES, AGENTS_MD, GIT_EXCLUDE, TACKLE_TOML] {
            assert!(TABLE.contains(&constant), "{}", constant.rel);
        }
    }

    #[test]
    fn files_are_never_read_or_appended_through_a_link() {
        let s = setup();
        symlink(s.outside.join("secret"), s.ws.join("AGENTS.md")).unwrap();
        let err = AGENTS_MD.read(&s.ws, 1000).unwrap_err();
        assert!(err.is_link(), "{err}");
        assert!(err.to_string().contains("AGENTS.md is a symlink"), "{err}");
        std::fs::create_dir_all(s.ws.join(".git")).unwrap();
        symlink(&s.outside, s.ws.join(".git/info")).unwrap();
        assert!(GIT_EXCLUDE.append(&s.ws, b"/.tackle/\n").unwrap_err().is_link());
        assert!(!s.outside.join("exclude").exists());
        symlink(s.outside.join("secret"), s.ws.join("tackle.toml")).unwrap();
        assert!(TACKLE_TOML.append(&s.ws, b"x").unwrap_err().is_link());
        assert!(!TACKLE_TOML.create_new(&s.ws, b"x").is_ok_and(|made| made));
        assert!(TACKLE_TOML.refuse_link(&s.ws).unwrap_err().is_link());
        assert_eq!(std::fs::read_to_string(s.outside.join("secret")).unwrap(), "secret");
        assert!(CLAUDE_MD.read(&s.ws, 10).unwrap().is_none());
        std::fs::write(s.ws.join("CLAUDE.md"), "hello").unwrap();
        assert_eq!(CLAUDE_MD.read(&s.ws, 10).unwrap().unwrap(), b"hello");
        assert!(CLAUDE_MD.read(&s.ws, 2).is_err());
    }

    #[test]
    fn directories_are_never_made_through_a_link() {
        let s = setup();
        std::fs::create_dir_all(s.ws.join(".tackle")).unwrap();
        symlink(&s.outside, s.ws.join(".tackle/outputs")).unwrap();
        assert!(OUTPUTS.open_dir(&s.ws, "session", true).unwrap_err().is_link());
        assert!(!s.outside.join("session").exists());
        std::fs::remove_file(s.ws.join(".tackle/outputs")).unwrap();
        std::fs::remove_dir(s.ws.join(".tackle")).unwrap();
        symlink(&s.outside, s.ws.join(".tackle")).unwrap();
        assert!(LOGS.open_dir(&s.ws, "", true).unwrap_err().is_link());
        assert!(!s.outside.join("logs").exists());
    }

    #[test]
    fn clean_up_removes_old_entries_and_never_goes_through_a_link() {
        let s = setup();
        let outputs = s.ws.join(".tackle/outputs");
        std::fs::create_dir_all(outputs.join("old/jobs")).unwrap();
        std::fs::write(outputs.join("old/jobs/j.log"), "x").unwrap();
        std::fs::create_dir_all(outputs.join("new")).unwrap();
        symlink(s.outside.join("project"), outputs.join("old/link")).unwrap();
        symlink(s.outside.join("project"), outputs.join("linked")).unwrap();
        age(&outputs.join("old"));
        age(&s.outside.join("project"));
        let fd = OUTPUTS.open_dir(&s.ws, "", false).unwrap().unwrap();
        remove_older_than(&fd, Duration::from_secs(7 * 24 * 3600));
        assert!(!outputs.join("old").exists());
        assert!(outputs.join("new").exists());
        assert_eq!(std::fs::read_to_string(s.outside.join("project/keep")).unwrap(), "keep");
    }
}
