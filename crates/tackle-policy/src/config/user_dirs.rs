//! The person's own directories Tackle reads skills and agent definitions from: `skills/` and
//! `agents/` in the user configuration directory, and, with `[compat] claude = true`, Claude
//! Code's `~/.claude/skills/` and `~/.claude/agents/` (`~` is `HOME`). Resolved once where a
//! session is assembled (`crates/tackle/src/builder.rs`) and kept in the session's state, so
//! the system prompt, `load_skill`, `tools list` and subagent discovery all see the same list.
//! Files under them are read beneath the directory they belong to, without following a link
//! out of it (`tackle_core::fs::state::read_prompt_file`).

use std::path::PathBuf;

/// The person's skill and agent directories, in the order they are searched (after the
/// workspace's own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserDirs {
    /// Directories holding skill folders (`NAME/SKILL.md`).
    pub skills: Vec<PathBuf>,
    /// Directories holding agent definitions (`NAME.md`).
    pub agents: Vec<PathBuf>,
}

impl UserDirs {
    /// The user configuration directory's `skills/` and `agents/`, then Claude Code's
    /// `$HOME/.claude/skills/` and `$HOME/.claude/agents/` when `claude_compat`.
    pub fn new(claude_compat: bool) -> UserDirs {
        let mut roots: Vec<PathBuf> = super::user_config_dir().into_iter().collect();
        if claude_compat && let Some(home) = std::env::var_os("HOME").filter(|home| !home.is_empty()) {
            roots.push(PathBuf::from(home).join(".claude"));
        }
        UserDirs {
            skills: roots.iter().map(|root| root.join("skills")).collect(),
            agents: roots.iter().map(|root| root.join("agents")).collect(),
        }
    }
}

impl Default for UserDirs {
    /// Without a session's configuration: the user configuration directory's alone.
    fn default() -> UserDirs {
        UserDirs::new(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_directories_only_with_compat() {
        let without = UserDirs::new(false);
        let with = UserDirs::new(true);
        let claude = |dirs: &[PathBuf]| dirs.iter().any(|dir| dir.parent().is_some_and(|p| p.ends_with(".claude")));
        assert!(!claude(&without.skills) && !claude(&without.agents));
        if std::env::var_os("HOME").is_some_and(|home| !home.is_empty()) {
            assert!(claude(&with.skills) && claude(&with.agents));
            assert_eq!(with.skills.len(), without.skills.len() + 1);
        }
    }
}
