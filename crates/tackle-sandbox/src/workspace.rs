//! The `[workspace]` section of the configuration and the path policy built from it.
//!
//! ```toml
//! [workspace]
//! extra_roots = ["../common-lib", "~/notes"]   # more roots, read-write
//! read_only_roots = ["../common-lib"]          # these roots (or new ones) are read-only
//! writable_protected = [".tackle/skills"]      # protected subpaths file tools may write
//! ```
//!
//! Relative entries are relative to the workspace, and `~` expands to the home directory.
//! Which of these a workspace's own `tackle.toml` may set is decided by the table of
//! `tackle_policy::config::rules` (docs/configuration.md): `extra_roots` and `writable_protected`
//! widen access and are never taken from the workspace (the configuration drops them with a
//! notice); a `read_only_roots` entry applies when it marks an existing root read-only, which
//! only narrows access, and is ignored with a notice when it would add a root.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use tackle_policy::config::rules::ignored_notice;
use tackle_policy::config::{Config, ConfigError, WORKSPACE_FILE};

use crate::paths::WorkspacePolicy;

/// The `[workspace]` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkspaceSection {
    /// More roots file tools may reach (read-write unless also in `read_only_roots`).
    pub extra_roots: Vec<String>,
    /// Roots that file tools may read but not write; an entry that is not already a root
    /// adds a read-only root.
    pub read_only_roots: Vec<String>,
    /// Protected subpaths (`.tackle/skills`) that file tools may write.
    pub writable_protected: Vec<String>,
}

/// The policy could not be built.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("workspace {path} is not usable: {source}")]
    Workspace { path: PathBuf, source: std::io::Error },
}

/// A policy and the notices for the person (ignored or unusable settings), one line each.
#[derive(Debug)]
pub struct ConfiguredPolicy {
    pub policy: WorkspacePolicy,
    pub notices: Vec<String>,
}

/// Builds the path policy of `workspace` from the configuration layers.
pub fn policy_from_config(config: &Config, workspace: &Path) -> Result<ConfiguredPolicy, PolicyError> {
    let mut policy = WorkspacePolicy::new(workspace)
        .map_err(|source| PolicyError::Workspace { path: workspace.to_owned(), source })?;
    let user: WorkspaceSection = config.user_section("workspace")?.unwrap_or_default();
    let mut notices = Vec::new();
    let add_root = |policy: &mut WorkspacePolicy, notices: &mut Vec<String>, entry: &str, writable: bool| {
        let path = expand(entry, workspace, policy.home());
        if let Err(err) = policy.add_root(&path, writable) {
            notices.push(format!("ignoring [workspace] root '{entry}': {err}"));
        }
    };
    for entry in &user.extra_roots {
        add_root(&mut policy, &mut notices, entry, true);
    }
    for entry in &user.read_only_roots {
        let path = expand(entry, workspace, policy.home());
        if !policy.make_read_only(&path) {
            add_root(&mut policy, &mut notices, entry, false);
        }
    }
    for entry in &user.writable_protected {
        policy.allow_protected(&expand(entry, workspace, policy.home()));
    }
    // The workspace's entries, one by one: each narrows (an existing root made read-only) or
    // is ignored with a notice.
    let local: Vec<String> =
        config.narrowing("workspace.read_only_roots", |_: &Vec<String>| true, &mut notices)?.unwrap_or_default();
    for entry in &local {
        let path = expand(entry, workspace, policy.home());
        if !policy.make_read_only(&path) {
            notices.push(ignored_notice(
                &format!("[workspace] read_only_roots entry '{entry}' (not a root, so it would add one)"),
                WORKSPACE_FILE,
            ));
        }
    }
    Ok(ConfiguredPolicy { policy, notices })
}

/// A configured path: `~` expanded, relative ones joined to the workspace.
fn expand(entry: &str, workspace: &Path, home: Option<&Path>) -> PathBuf {
    match (entry.strip_prefix('~'), home) {
        (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => home.join(rest.trim_start_matches('/')),
        _ => workspace.join(entry),
    }
}
