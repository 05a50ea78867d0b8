//! The workspace path policy (docs/reference/safety.md#path-policy): where the in-process file tools may read and
//! write.
//!
//! A path as the model wrote it is resolved in four steps: `~` expands to the home
//! directory and a relative path joins the workspace root; `.` and `..` are removed
//! lexically; every existing component is resolved through its symlinks (a link that does not
//! resolve, or a component that does not exist, keeps the rest of the path as written, so a
//! dangling link to the outside is followed to where a write would land); the result must lie
//! inside a root. On top of that, writes into `.git/` (at any depth), `.tackle/`, `.claude/`,
//! `tackle.toml` and `.mcp.json` (at each root) are refused unless
//! `[workspace] writable_protected` opens them, and device paths are never read or written.
//! A FIFO or socket (opening one can block) is refused as not a regular file: docs/reference/safety.md's
//! device paths are `/dev/*` and `/proc/*/fd/*`, and docs/reference/formats.md#block-tools words this refusal.
//!
//! The resolved path is what the tools open, so the file a tool touches is exactly the one
//! the policy checked. They open it beneath its root with no symlink allowed, through its
//! directory's descriptor, and before a write is put in place the atomic writer checks that
//! the directory's path still leads to that directory (docs/file-tools.md).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::fs;
use std::os::unix::fs::FileTypeExt as _;
use std::path::{Component, Path, PathBuf};

use tackle_core::{Access, PathPolicy, ToolError};

/// The longest path accepted, in bytes (Linux `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;
/// The longest file name accepted, in bytes (Linux `NAME_MAX`).
pub const MAX_NAME_BYTES: usize = 255;
/// How many symlinks one resolution may follow (Linux's `MAXSYMLINKS`).
const MAX_SYMLINKS: usize = 40;
/// How much of an over-long path a message shows.
const SHOWN_PATH_CHARS: usize = 200;

/// Directories (and files) at the top of a root that file tools may not write.
const PROTECTED_AT_ROOT: &[(&str, &str)] = &[
    (".git", ".git/"),
    (".tackle", ".tackle/"),
    (".claude", ".claude/"),
    ("tackle.toml", "tackle.toml"),
    (".mcp.json", ".mcp.json"),
];

/// One directory file tools may reach.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    /// The canonical path of the root.
    pub path: PathBuf,
    /// Whether file tools may write inside it.
    pub writable: bool,
}

/// Why a path was refused. The `Display` text is the model-facing message of docs/reference/safety.md#path-policy.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error(
        "Path {shown} is outside the workspace ({root}). Use a path inside it; the user can allow another directory with [workspace] extra_roots in {}.",
        tackle_policy::config::user_config_shown()
    )]
    Outside { shown: String, root: String },
    #[error("{shown} is inside a protected directory ({dir}); file tools cannot write there.")]
    Protected { shown: String, dir: String },
    #[error("{shown} is inside the read-only root {root}; file tools can read there but not write.")]
    ReadOnlyRoot { shown: String, root: String },
    #[error("Reading {shown} is blocked (device path).")]
    DeviceRead { shown: String },
    #[error("Writing {shown} is blocked (device path).")]
    DeviceWrite { shown: String },
    #[error("{shown} is not a regular file")]
    NotRegular { shown: String },
    #[error("The path is empty. Give a path relative to the workspace, or an absolute path inside it.")]
    Empty,
    #[error("Path {shown} contains a NUL byte, which no file name can hold. Give the path without it.")]
    NulByte { shown: String },
    #[error("Path {shown} is too long ({bytes} bytes; the limit is {MAX_PATH_BYTES}). Use a shorter path.")]
    TooLong { shown: String, bytes: usize },
    #[error(
        "Path {shown} has a name of {bytes} bytes; names are limited to {MAX_NAME_BYTES} bytes. Use a shorter name."
    )]
    NameTooLong { shown: String, bytes: usize },
    #[error("Path {shown} cannot be resolved: too many levels of symbolic links.")]
    SymlinkLoop { shown: String },
    #[error("Path {shown} starts with ~ but there is no home directory to expand it to. Use an absolute path.")]
    NoHome { shown: String },
}

impl From<PathError> for ToolError {
    fn from(err: PathError) -> Self {
        match err {
            PathError::Outside { .. }
            | PathError::Protected { .. }
            | PathError::ReadOnlyRoot { .. }
            | PathError::DeviceRead { .. }
            | PathError::DeviceWrite { .. } => ToolError::Denied(err.to_string()),
            PathError::Empty
            | PathError::NulByte { .. }
            | PathError::TooLong { .. }
            | PathError::NameTooLong { .. }
            | PathError::SymlinkLoop { .. }
            | PathError::NoHome { .. }
            | PathError::NotRegular { .. } => ToolError::InvalidInput(err.to_string()),
        }
    }
}

/// The workspace path policy.
#[derive(Debug, Clone)]
pub struct WorkspacePolicy {
    workspace: PathBuf,
    roots: Vec<Root>,
    home: Option<PathBuf>,
    writable_protected: Vec<PathBuf>,
}

impl WorkspacePolicy {
    /// A policy whose only root is `workspace` (canonicalized; it must exist), writable.
    pub fn new(workspace: &Path) -> std::io::Result<Self> {
        let workspace = workspace.canonicalize()?;
        Ok(WorkspacePolicy {
            roots: vec![Root { path: workspace.clone(), writable: true }],
            workspace,
            home: std::env::home_dir(),
            writable_protected: Vec::new(),
        })
    }

    /// Sets the directory `~` expands to (`None`: `~` paths are refused).
    pub fn with_home(mut self, home: Option<PathBuf>) -> Self {
        self.home = home;
        self
    }

    /// Adds a root (canonicalized; it must exist). Adding an existing root again changes
    /// only whether it is writable.
    pub fn add_root(&mut self, path: &Path, writable: bool) -> std::io::Result<()> {
        let path = path.canonicalize()?;
        match self.roots.iter_mut().find(|root| root.path == path) {
            Some(root) => root.writable = writable,
            None => self.roots.push(Root { path, writable }),
        }
        Ok(())
    }

    /// Marks the root at `path` read-only; returns whether such a root exists.
    pub fn make_read_only(&mut self, path: &Path) -> bool {
        let path = path.canonicalize().unwrap_or_else(|_| path.to_owned());
        let mut found = false;
        for root in self.roots.iter_mut().filter(|root| root.path == path) {
            root.writable = false;
            found = true;
        }
        found
    }

    /// Opens a protected subpath (e.g. `.tackle/skills`) for writing. A relative path is
    /// taken relative to the workspace.
    pub fn allow_protected(&mut self, path: &Path) {
        let absolute = normalize(&self.workspace.join(path));
        let resolved = resolve_links(&absolute, None).unwrap_or_else(|_| absolute.clone());
        self.writable_protected.push(absolute);
        if !self.writable_protected.contains(&resolved) {
            self.writable_protected.push(resolved);
        }
    }

    /// The roots, the workspace first.
    pub fn roots(&self) -> &[Root] {
        &self.roots
    }

    /// The home directory `~` expands to.
    pub fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    /// Resolves `raw` for `access`, or says why not.
    pub fn check(&self, raw: &str, access: Access) -> Result<PathBuf, PathError> {
        let shown = || shorten(raw);
        if raw.is_empty() {
            return Err(PathError::Empty);
        }
        if raw.contains('\0') {
            return Err(PathError::NulByte { shown: shorten(&raw.replace('\0', "\\0")) });
        }
        if raw.len() > MAX_PATH_BYTES {
            return Err(PathError::TooLong { shown: shown(), bytes: raw.len() });
        }
        if let Some(name) = raw.split('/').find(|name| name.len() > MAX_NAME_BYTES) {
            return Err(PathError::NameTooLong { shown: shown(), bytes: name.len() });
        }

        let joined = if raw == "~" || raw.starts_with("~/") {
            let home = self.home.as_ref().ok_or_else(|| PathError::NoHome { shown: shown() })?;
            home.join(raw.trim_start_matches('~').trim_start_matches('/'))
        } else {
            self.workspace.join(raw)
        };
        let lexical = normalize(&joined);
        if is_device_path(&lexical, access) {
            return Err(device_error(access, shown()));
        }
        // Roots are canonical, so resolution starts below the deepest root the path names.
        let start = self.root_of(&lexical).map(|root| root.path.as_path());
        let resolved = resolve_links(&lexical, start).map_err(|LinkLoop| PathError::SymlinkLoop { shown: shown() })?;
        if is_device_path(&resolved, access) {
            return Err(device_error(access, shown()));
        }
        // One stat of the resolved path serves the device check here and the FIFO check below.
        let file_type = fs::metadata(&resolved).ok().map(|meta| meta.file_type());
        if is_device_node(&resolved, file_type) {
            return Err(device_error(access, shown()));
        }
        let Some(root) = self.root_of(&resolved) else {
            return Err(PathError::Outside { shown: shown(), root: self.workspace.display().to_string() });
        };
        if access == Access::Write {
            if !root.writable {
                return Err(PathError::ReadOnlyRoot { shown: shown(), root: root.path.display().to_string() });
            }
            for path in [&lexical, &resolved] {
                if let Some(dir) = self.protected_dir(path) {
                    return Err(PathError::Protected { shown: shown(), dir: dir.to_owned() });
                }
            }
            if let Some(dir) = self.real_git_dir_of(&resolved) {
                return Err(PathError::Protected { shown: shown(), dir });
            }
        }
        if is_pipe_or_socket(file_type) {
            return Err(PathError::NotRegular { shown: shown() });
        }
        Ok(resolved)
    }

    /// The deepest root holding `path`.
    fn root_of(&self, path: &Path) -> Option<&Root> {
        self.roots.iter().filter(|root| path.starts_with(&root.path)).max_by_key(|root| root.path.as_os_str().len())
    }

    /// The real git directory (crate::gitdir) `path` lies in, named for messages, when a
    /// `.git` of one of its ancestors inside a root leads there (a symlink, a `gitdir:` file, a
    /// `commondir`) or one of its ancestors has a git directory's contents, the directory lies
    /// inside a root, and `writable_protected` does not open it.
    fn real_git_dir_of(&self, path: &Path) -> Option<String> {
        let root = self.root_of(path)?;
        let ancestors = || path.ancestors().take_while(|dir| dir.starts_with(&root.path));
        let git_dir = ancestors()
            .flat_map(crate::gitdir::real_git_dirs)
            .find(|git_dir| path.starts_with(git_dir) && self.root_of(git_dir).is_some())
            .or_else(|| ancestors().find(|dir| crate::gitdir::looks_like_git_dir(dir)).map(Path::to_owned))?;
        if self.writable_protected.iter().any(|open| path.starts_with(open)) {
            return None;
        }
        let shown = self.roots.iter().find_map(|root| git_dir.strip_prefix(&root.path).ok()).unwrap_or(&git_dir);
        Some(format!("{}/, the git directory .git leads to", shown.display()))
    }

    /// The protected directory `path` lies in, unless `writable_protected` opens it.
    fn protected_dir(&self, path: &Path) -> Option<&'static str> {
        let dir = self.roots.iter().filter_map(|root| path.strip_prefix(&root.path).ok()).find_map(|relative| {
            let mut names = relative.components().filter_map(|c| match c {
                Component::Normal(name) => name.to_str(),
                _ => None,
            });
            let first = names.next()?;
            let at_root =
                PROTECTED_AT_ROOT.iter().find(|(name, _)| first.eq_ignore_ascii_case(name)).map(|(_, shown)| *shown);
            // A nested repository's `.git` holds hooks and config as much as the top one.
            at_root.or_else(|| names.any(|name| name.eq_ignore_ascii_case(".git")).then_some(".git/"))
        })?;
        let opened = self.writable_protected.iter().any(|open| path.starts_with(open));
        (!opened).then_some(dir)
    }
}

impl PathPolicy for WorkspacePolicy {
    fn resolve(&self, raw: &str, access: Access) -> Result<PathBuf, ToolError> {
        self.check(raw, access).map_err(ToolError::from)
    }

    fn workspace(&self) -> &Path {
        &self.workspace
    }

    fn root_of(&self, resolved: &Path) -> Option<&Path> {
        WorkspacePolicy::root_of(self, resolved).map(|root| root.path.as_path())
    }
}

/// `path` with `.` removed and `..` applied lexically (never above `/`). `path` is absolute.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::Normal(name) => out.push(name),
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// More symlinks than [`MAX_SYMLINKS`] in one resolution.
#[derive(Debug)]
struct LinkLoop;

/// Resolves every existing symlink in the absolute, normalized `path`, component by
/// component. Components that do not exist (or cannot be examined) are kept as written, and
/// a `..` coming from a link target is applied to what is resolved so far, so the result is
/// where the kernel would land. `canonical`, a prefix of `path` known to hold no symlink,
/// is taken as it is.
fn resolve_links(path: &Path, canonical: Option<&Path>) -> Result<PathBuf, LinkLoop> {
    let (mut resolved, rest) = match canonical.and_then(|prefix| Some((prefix, path.strip_prefix(prefix).ok()?))) {
        Some((prefix, rest)) => (prefix.to_owned(), rest),
        None => (PathBuf::from("/"), path),
    };
    let mut pending: VecDeque<OsString> = rest
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name.to_owned()),
            _ => None,
        })
        .collect();
    let mut links = 0;
    while let Some(name) = pending.pop_front() {
        if name == ".." {
            resolved.pop();
            continue;
        }
        if name == "." {
            continue;
        }
        resolved.push(&name);
        let is_link = fs::symlink_metadata(&resolved).is_ok_and(|meta| meta.file_type().is_symlink());
        if !is_link {
            continue;
        }
        let Ok(target) = fs::read_link(&resolved) else {
            continue;
        };
        links += 1;
        if links > MAX_SYMLINKS {
            return Err(LinkLoop);
        }
        resolved.pop();
        if target.is_absolute() {
            resolved = PathBuf::from("/");
        }
        for component in target.components().rev() {
            match component {
                Component::Normal(name) => pending.push_front(name.to_owned()),
                Component::ParentDir => pending.push_front(OsString::from("..")),
                Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
            }
        }
    }
    Ok(resolved)
}

/// For reading: `/dev/*` except `/dev/null`, and `/proc/*/fd/*` (reading them can hang or
/// never end). For writing: anything under `/dev` or `/proc`, `/dev/null` included (an atomic
/// write renames over its target, which must never be a device).
fn is_device_path(path: &Path, access: Access) -> bool {
    if access == Access::Write {
        return path.starts_with("/dev") || path.starts_with("/proc");
    }
    if path.starts_with("/dev") && path != Path::new("/dev") {
        return path != Path::new("/dev/null");
    }
    let mut components = path.components().skip(1);
    matches!(
        (components.next(), components.next(), components.next()),
        (Some(Component::Normal(proc)), Some(_), Some(Component::Normal(fd))) if proc == "proc" && fd == "fd"
    )
}

/// Device nodes anywhere (`file_type` is that of `path` with its links followed, `None` when
/// it cannot be read).
fn is_device_node(path: &Path, file_type: Option<fs::FileType>) -> bool {
    file_type.is_some_and(|kind| kind.is_char_device() || kind.is_block_device()) && path != Path::new("/dev/null")
}

/// FIFOs and sockets (a FIFO in the workspace would hang a read, or a write's diff).
fn is_pipe_or_socket(file_type: Option<fs::FileType>) -> bool {
    file_type.is_some_and(|kind| kind.is_fifo() || kind.is_socket())
}

fn device_error(access: Access, shown: String) -> PathError {
    match access {
        Access::Read => PathError::DeviceRead { shown },
        Access::Write => PathError::DeviceWrite { shown },
    }
}

/// The path as written, cut for a message when it is very long.
fn shorten(raw: &str) -> String {
    if raw.chars().count() <= SHOWN_PATH_CHARS {
        return raw.to_owned();
    }
    let head: String = raw.chars().take(SHOWN_PATH_CHARS).collect();
    format!("{head}…")
}
