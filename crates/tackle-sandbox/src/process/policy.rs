//! The `[sandbox]` settings (docs/reference/safety.md#process-sandbox): which mechanism, whether the network is reachable,
//! what is writable besides the workspace, what is hidden, and whether `.git` is protected.
//!
//! Which of these a workspace's own `tackle.toml` may set is decided by the table of
//! `tackle_policy::config::rules` (docs/configuration.md): a value that would weaken the
//! sandbox (`network = true`, `extra_writable`, `protect_git = false`, a weaker `mode`) is
//! never taken from the workspace, trusted or not, and is ignored with a one-line notice;
//! values that narrow access always apply.

use std::path::{Component, Path, PathBuf};

use serde::Deserialize;
use tackle_policy::config::{Config, ConfigError};

/// `[sandbox] mode`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    /// The first that works of bubblewrap, Landlock, none (with a warning).
    #[default]
    Auto,
    /// bubblewrap, or an error at startup.
    Bwrap,
    /// Landlock, or an error at startup.
    Landlock,
    /// No sandbox.
    None,
}

impl SandboxMode {
    /// How strongly the mode confines commands, for deciding whether an untrusted workspace
    /// value narrows access: none < landlock < auto < bwrap (auto picks the best available).
    fn strength(self) -> u8 {
        match self {
            SandboxMode::None => 0,
            SandboxMode::Landlock => 1,
            SandboxMode::Auto => 2,
            SandboxMode::Bwrap => 3,
        }
    }

    /// The name used in `tackle.toml`.
    pub fn name(self) -> &'static str {
        match self {
            SandboxMode::Auto => "auto",
            SandboxMode::Bwrap => "bwrap",
            SandboxMode::Landlock => "landlock",
            SandboxMode::None => "none",
        }
    }
}

/// The entries hidden by default (a tmpfs over each that exists and is not inside a root).
pub const DEFAULT_HIDE: &[&str] = &["~/.ssh", "~/.aws", "~/.gnupg", "~/.config/gcloud", "~/.config/tackle"];

/// Paths inside every writable root that stay read-only for commands: Tackle's state and the
/// workspace's own configuration, so an agent cannot widen its own permissions.
pub const PROTECTED_IN_ROOT: &[&str] = &[".tackle", "tackle.toml", ".mcp.json", ".claude"];

/// `.git` as a whole, directory or a worktree's pointer file (with `protect_git`): nothing in
/// it that runs code on the host later (`config`, `hooks`, `commondir`) can be written, and a
/// mount point cannot be renamed away and replaced.
pub const PROTECTED_GIT: &[&str] = &[".git"];

/// The `[sandbox]` section as a file holds it.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct SandboxSection {
    mode: Option<SandboxMode>,
    network: Option<bool>,
    extra_writable: Option<Vec<String>>,
    hide: Option<Vec<String>>,
    protect_git: Option<bool>,
}

/// The effective sandbox settings of a session, with every path absolute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// The mechanism to use.
    pub mode: SandboxMode,
    /// Whether commands may use the network.
    pub network: bool,
    /// The workspace root (the first writable root, and the default working directory).
    pub workspace: PathBuf,
    /// Directories commands may write, the workspace first.
    pub writable_roots: Vec<PathBuf>,
    /// Further writable paths; one inside a protected path opens it.
    pub extra_writable: Vec<PathBuf>,
    /// Paths hidden from commands (bubblewrap only).
    pub hide: Vec<PathBuf>,
    /// Whether `.git` stays read-only (bubblewrap) or watched (Landlock). `protect_git = false`
    /// is the user's way out, for `git add` and `git commit` from the shell.
    pub protect_git: bool,
}

impl SandboxPolicy {
    /// The defaults for `workspace`: `auto`, network off, the default hide list, `.git`
    /// protected.
    pub fn new(workspace: impl Into<PathBuf>) -> SandboxPolicy {
        let workspace = workspace.into();
        SandboxPolicy {
            mode: SandboxMode::Auto,
            network: false,
            writable_roots: vec![workspace.clone()],
            hide: DEFAULT_HIDE
                .iter()
                .map(|entry| expand(entry, &workspace))
                .chain(user_config_hidden(&workspace))
                .collect(),
            workspace,
            extra_writable: Vec::new(),
            protect_git: true,
        }
    }

    /// Reads `[sandbox]` from the user config, then the workspace's values where they narrow
    /// (a stricter `mode`, `network = false`, `protect_git = true`, more `hide` entries; the
    /// rules of `tackle_policy::config::rules`). Returns the policy and one notice per ignored
    /// workspace value.
    pub fn from_config(config: &Config, workspace: &Path) -> Result<(SandboxPolicy, Vec<String>), ConfigError> {
        let mut policy = SandboxPolicy::new(workspace);
        let mut notices = Vec::new();
        if let Some(user) = config.user_section::<SandboxSection>("sandbox")? {
            policy.mode = user.mode.unwrap_or(policy.mode);
            policy.network = user.network.unwrap_or(policy.network);
            policy.protect_git = user.protect_git.unwrap_or(policy.protect_git);
            if let Some(extra) = user.extra_writable {
                policy.extra_writable = extra.iter().map(|p| expand(p, workspace)).collect();
            }
            if let Some(hide) = user.hide {
                policy.hide = hide.iter().map(|p| expand(p, workspace)).collect();
                policy.hide.extend(user_config_hidden(workspace));
            }
        }
        let current = policy.mode.strength();
        if let Some(mode) = config.narrowing("sandbox.mode", |m: &SandboxMode| m.strength() >= current, &mut notices)? {
            policy.mode = mode;
        }
        if let Some(network) = config.narrowing("sandbox.network", |on: &bool| !on, &mut notices)? {
            policy.network = network;
        }
        if let Some(protect_git) = config.narrowing("sandbox.protect_git", |on: &bool| *on, &mut notices)? {
            policy.protect_git = protect_git;
        }
        // More hidden paths only narrow: the workspace's entries are added, never a replacement.
        if let Some(hide) = config.narrowing("sandbox.hide", |_: &Vec<String>| true, &mut notices)? {
            policy.hide.extend(hide.iter().map(|p| expand(p, workspace)));
        }
        Ok((policy, notices))
    }

    /// Every writable path: the roots and the extra writable paths.
    pub fn writable_paths(&self) -> impl Iterator<Item = &Path> {
        self.writable_roots.iter().chain(&self.extra_writable).map(PathBuf::as_path)
    }

    /// Whether `path` lies in a writable root or an extra writable path.
    pub fn is_writable(&self, path: &Path) -> bool {
        self.writable_paths().any(|root| path.starts_with(root))
    }

    /// The read-only paths inside the writable roots, in order: for each root its protected
    /// entries, leaving out those inside an `extra_writable` entry.
    pub fn protected_paths(&self) -> Vec<PathBuf> {
        let mut paths = self.in_roots(PROTECTED_IN_ROOT, PROTECTED_GIT);
        paths.extend(self.real_git_dirs());
        paths
    }

    /// With `protect_git`, the real git directories (crate::gitdir) that each writable root's
    /// `.git` leads to, where commands could write them — inside a writable root, or in what
    /// Landlock leaves writable to every command (`/tmp`: a worktree or `--separate-git-dir`
    /// whose git directory lies there) — and no `extra_writable` entry opens them. One
    /// elsewhere is not writable anyway.
    pub fn real_git_dirs(&self) -> Vec<PathBuf> {
        if !self.protect_git {
            return Vec::new();
        }
        let mut found: Vec<PathBuf> = Vec::new();
        for git_dir in self.writable_roots.iter().flat_map(|root| crate::gitdir::real_git_dirs(root)) {
            let inside = self.writable_roots.iter().any(|root| git_dir.starts_with(root))
                || super::landlock::ALWAYS_WRITABLE.iter().any(|always| git_dir.starts_with(always));
            let opened = self.extra_writable.iter().any(|open| git_dir.starts_with(open));
            if inside && !opened && !found.contains(&git_dir) {
                found.push(git_dir);
            }
        }
        found
    }

    /// `entries` and (with `protect_git`) `git` inside every writable root, leaving out those
    /// inside an `extra_writable` entry.
    pub(crate) fn in_roots(&self, entries: &[&str], git: &[&str]) -> Vec<PathBuf> {
        let git = if self.protect_git { git } else { &[] };
        self.writable_roots
            .iter()
            .flat_map(|root| entries.iter().chain(git).map(move |entry| root.join(entry)))
            .filter(|path| !self.extra_writable.iter().any(|open| path.starts_with(open)))
            .collect()
    }

    /// The `extra_writable` entries inside a protected path (`.git/hooks` with `.git`
    /// protected): bubblewrap binds them writable again on top of the read-only path.
    pub fn reopened_paths(&self) -> Vec<&Path> {
        let protected = self.protected_paths();
        self.extra_writable
            .iter()
            .filter(|open| protected.iter().any(|path| open.starts_with(path)))
            .map(PathBuf::as_path)
            .collect()
    }
}

/// Makes a configured path absolute: `~/` is the home directory, a relative path is relative
/// to the workspace; `.` and `..` are removed lexically.
/// The user config directory as Tackle resolved it (`$TACKLE_CONFIG_DIR`,
/// `$XDG_CONFIG_HOME/tackle`, else `~/.config/tackle`), links followed: besides the settings
/// only the user may change, it holds the MCP sign-in tokens, so it is hidden whatever `hide`
/// says, not only under its usual name. When the workspace lies inside it (a config dir of
/// `$HOME`), hiding it would hide the workspace: then only the token directory is hidden
/// (`mcp-oauth`, crates/tackle-mcp/src/client/oauth/store.rs).
fn user_config_hidden(workspace: &Path) -> Option<PathBuf> {
    let dir = tackle_policy::config::user_config_dir()?;
    let dir = dir.canonicalize().unwrap_or(dir);
    let workspace = workspace.canonicalize().unwrap_or_else(|_| workspace.to_path_buf());
    Some(if workspace.starts_with(&dir) { dir.join("mcp-oauth") } else { dir })
}

fn expand(raw: &str, workspace: &Path) -> PathBuf {
    let path = match raw.strip_prefix("~/").or(if raw == "~" { Some("") } else { None }) {
        Some(rest) => dirs::home_dir().unwrap_or_else(|| PathBuf::from("/")).join(rest),
        None => workspace.join(raw),
    };
    let mut clean = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                clean.pop();
            }
            other => clean.push(other),
        }
    }
    clean
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn config(user: &str, workspace: &str, trusted: bool) -> Config {
        Config::from_tables(user.parse().unwrap(), workspace.parse().unwrap(), trusted)
    }

    #[test]
    fn defaults_hide_secrets_and_protect_git() {
        let policy = SandboxPolicy::new("/ws");
        assert_eq!(policy.mode, SandboxMode::Auto);
        assert!(!policy.network);
        let home = dirs::home_dir().unwrap();
        assert_eq!(policy.hide[0], home.join(".ssh"));
        assert_eq!(
            policy.protected_paths(),
            [".tackle", "tackle.toml", ".mcp.json", ".claude", ".git"].map(|p| Path::new("/ws").join(p))
        );
    }

    #[test]
    fn extra_writable_opens_a_protected_path_and_protect_git_false_drops_git() {
        let mut policy = SandboxPolicy::new("/ws");
        policy.extra_writable = vec![PathBuf::from("/ws/.git/hooks"), PathBuf::from("/ws/.claude")];
        assert!(policy.protected_paths().contains(&PathBuf::from("/ws/.git")));
        assert!(!policy.protected_paths().contains(&PathBuf::from("/ws/.claude")));
        assert_eq!(policy.reopened_paths(), [Path::new("/ws/.git/hooks")]);
        policy.protect_git = false;
        assert_eq!(policy.protected_paths().len(), 3);
        assert!(policy.reopened_paths().is_empty());
    }

    #[test]
    fn workspace_values_only_narrow_even_when_trusted() {
        let ws = "[sandbox]\nmode = \"none\"\nnetwork = true\nextra_writable = [\"../out\"]\nprotect_git = false\n\
                  hide = [\"secrets\"]";
        for trusted in [false, true] {
            let config = config("[sandbox]\nnetwork = false", ws, trusted);
            let (policy, notices) = SandboxPolicy::from_config(&config, Path::new("/ws")).unwrap();
            assert_eq!(policy.mode, SandboxMode::Auto);
            assert!(!policy.network);
            assert!(policy.extra_writable.is_empty());
            assert!(policy.protect_git);
            assert!(policy.hide.contains(&PathBuf::from("/ws/secrets")), "more hidden paths narrow");
            let why = format!(
                "from the workspace's tackle.toml: it would widen the sandbox, the path policy or the \
                 environment, which only your user config ({}) and flags may do",
                tackle_policy::config::user_config_shown()
            );
            assert_eq!(
                notices,
                [
                    format!("ignoring [sandbox] mode = \"none\" {why}"),
                    format!("ignoring [sandbox] network = true {why}"),
                    format!("ignoring [sandbox] protect_git = false {why}"),
                ]
            );
            assert_eq!(config.notices(), [format!("ignoring [sandbox] extra_writable {why}")]);
        }
        // The user's own values apply as written.
        let user = "[sandbox]\nmode = \"none\"\nnetwork = true\nextra_writable = [\"../out\"]\nprotect_git = false";
        let (policy, notices) = SandboxPolicy::from_config(&config(user, "", false), Path::new("/ws")).unwrap();
        assert!(notices.is_empty());
        assert_eq!(policy.mode, SandboxMode::None);
        assert!(policy.network);
        assert_eq!(policy.extra_writable, [PathBuf::from("/out")]);
        assert!(!policy.protect_git);
    }

    #[test]
    fn narrowing_workspace_values_apply_without_trust() {
        let user = "[sandbox]\nnetwork = true\nmode = \"landlock\"";
        let ws = "[sandbox]\nnetwork = false\nmode = \"bwrap\"";
        let (policy, notices) = SandboxPolicy::from_config(&config(user, ws, false), Path::new("/ws")).unwrap();
        assert!(notices.is_empty());
        assert!(!policy.network);
        assert_eq!(policy.mode, SandboxMode::Bwrap);
    }

    #[test]
    fn bad_values_are_config_errors() {
        let err = SandboxPolicy::from_config(&config("[sandbox]\nmode = \"docker\"", "", false), Path::new("/ws"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("invalid [sandbox] in the user config: unknown variant `docker`"), "{err}");
    }
}
