//! Consent for MCP servers the workspace defines (mcp.md §2.1, safety.md §2.2): a cloned
//! repository's `.mcp.json` could run any command, so such a server starts only when the
//! person agreed, in one of these ways, and never because a workspace file said so:
//! `--allow-project-mcp`, `TACKLE_ALLOW_PROJECT_MCP=1`, a trusted workspace
//! (`--trust-workspace`, `TACKLE_TRUST_WORKSPACE=1`, the user config's `trusted_workspaces`
//! or `[mcp] trusted_workspaces`), or an answer to a prompt, remembered in the user config
//! directory per workspace path and per hash of the server's definition.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use tackle_core::config::same_dir;

use super::config::Candidate;

/// The file of remembered answers in the user config directory.
pub const CONSENT_FILE: &str = "mcp-consent.json";

/// Asks the person whether a workspace server may start (a terminal prompt).
pub type Prompt<'a> = &'a (dyn Fn(&Candidate) -> bool + Send + Sync);

/// What grants consent in this run.
#[derive(Clone, Default)]
pub struct ConsentPolicy<'a> {
    /// `--allow-project-mcp`.
    pub allow_project_flag: bool,
    /// The workspace's settings are trusted (`--trust-workspace`, `TACKLE_TRUST_WORKSPACE=1`,
    /// the user config's `trusted_workspaces`).
    pub workspace_trusted: bool,
    /// The user config's `[mcp] trusted_workspaces`.
    pub trusted_workspaces: Vec<String>,
    /// Where answers are remembered (`None`: nowhere).
    pub store: Option<PathBuf>,
    /// Asks the person; `None` when nobody can be asked (no terminal, CI).
    pub prompt: Option<Prompt<'a>>,
}

impl std::fmt::Debug for ConsentPolicy<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConsentPolicy")
            .field("allow_project_flag", &self.allow_project_flag)
            .field("workspace_trusted", &self.workspace_trusted)
            .field("store", &self.store)
            .field("interactive", &self.prompt.is_some())
            .finish_non_exhaustive()
    }
}

/// `TACKLE_ALLOW_PROJECT_MCP=1` (or `true`).
pub fn allowed_by_env() -> bool {
    std::env::var("TACKLE_ALLOW_PROJECT_MCP").is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"))
}

/// The remembered-consent file of the user config directory.
pub fn default_store() -> Option<PathBuf> {
    tackle_core::config::user_config_dir().map(|dir| dir.join(CONSENT_FILE))
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Remembered {
    #[serde(default)]
    approved: Vec<Approval>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Approval {
    workspace: String,
    server: String,
    fingerprint: String,
}

impl ConsentPolicy<'_> {
    /// Whether `candidate` (defined by `workspace`) may start; `Err` carries the one-line
    /// notice for the person.
    pub fn decide(&self, candidate: &Candidate, workspace: &Path) -> Result<(), String> {
        if !candidate.origin.is_workspace()
            || self.allow_project_flag
            || allowed_by_env()
            || self.workspace_trusted
            || self.trusted_workspaces.iter().any(|listed| same_dir(Path::new(listed), workspace))
        {
            return Ok(());
        }
        let approval = Approval {
            workspace: workspace.display().to_string(),
            server: candidate.name.clone(),
            fingerprint: candidate.fingerprint(),
        };
        if let Some(store) = &self.store
            && read(store).approved.contains(&approval)
        {
            return Ok(());
        }
        if let Some(prompt) = self.prompt
            && prompt(candidate)
        {
            if let Some(store) = &self.store
                && let Err(err) = remember(store, approval)
            {
                tracing::warn!("cannot remember the consent in {}: {err}", store.display());
            }
            return Ok(());
        }
        Err(format!(
            "MCP server '{}' from {} was not started: servers defined by the workspace need your consent. Allow them \
             with --allow-project-mcp, TACKLE_ALLOW_PROJECT_MCP=1, or by trusting the workspace (--trust-workspace, \
             or [mcp] trusted_workspaces in your config).",
            candidate.name,
            candidate.origin.label()
        ))
    }
}

fn read(store: &Path) -> Remembered {
    std::fs::read_to_string(store).ok().and_then(|text| serde_json::from_str(&text).ok()).unwrap_or_default()
}

/// Adds an approval, writing the file atomically (a temporary file renamed over it).
fn remember(store: &Path, approval: Approval) -> std::io::Result<()> {
    let mut remembered = read(store);
    remembered.approved.retain(|a| !(a.workspace == approval.workspace && a.server == approval.server));
    remembered.approved.push(approval);
    if let Some(dir) = store.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text = serde_json::to_string_pretty(&remembered).map_err(std::io::Error::other)?;
    let temporary = store.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&temporary, text)?;
    std::fs::rename(&temporary, store)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::config::{Origin, RawServer};
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn candidate(origin: Origin, command: &str) -> Candidate {
        Candidate {
            name: "git".into(),
            raw: RawServer { command: Some(command.into()), ..RawServer::default() },
            origin,
        }
    }

    #[test]
    fn user_servers_need_nothing_and_workspace_servers_need_a_way_in() {
        let ws = tempfile::tempdir().unwrap();
        let refused = ConsentPolicy::default();
        assert!(refused.decide(&candidate(Origin::User, "x"), ws.path()).is_ok());
        let notice = refused.decide(&candidate(Origin::McpJson, "x"), ws.path()).unwrap_err();
        assert_eq!(
            notice,
            "MCP server 'git' from .mcp.json was not started: servers defined by the workspace need your consent. \
             Allow them with --allow-project-mcp, TACKLE_ALLOW_PROJECT_MCP=1, or by trusting the workspace \
             (--trust-workspace, or [mcp] trusted_workspaces in your config)."
        );
        assert!(
            refused.decide(&candidate(Origin::WorkspaceToml, "x"), ws.path()).unwrap_err().contains("from tackle.toml")
        );
        let flag = ConsentPolicy { allow_project_flag: true, ..ConsentPolicy::default() };
        assert!(flag.decide(&candidate(Origin::McpJson, "x"), ws.path()).is_ok());
        let trusted = ConsentPolicy { workspace_trusted: true, ..ConsentPolicy::default() };
        assert!(trusted.decide(&candidate(Origin::McpJson, "x"), ws.path()).is_ok());
        let listed =
            ConsentPolicy { trusted_workspaces: vec![ws.path().display().to_string()], ..ConsentPolicy::default() };
        assert!(listed.decide(&candidate(Origin::McpJson, "x"), ws.path()).is_ok());
    }

    #[test]
    fn a_prompt_answer_is_remembered_per_workspace_and_definition() {
        let ws = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let store = home.path().join("tackle").join(CONSENT_FILE);
        let asked = AtomicUsize::new(0);
        let yes = |_: &Candidate| {
            asked.fetch_add(1, Ordering::SeqCst);
            true
        };
        let policy = ConsentPolicy { store: Some(store.clone()), prompt: Some(&yes), ..ConsentPolicy::default() };
        assert!(policy.decide(&candidate(Origin::McpJson, "x"), ws.path()).is_ok());
        assert!(policy.decide(&candidate(Origin::McpJson, "x"), ws.path()).is_ok());
        assert_eq!(asked.load(Ordering::SeqCst), 1, "the answer is remembered");
        // Without a prompt, the remembered answer still holds; a changed definition does not.
        let quiet = ConsentPolicy { store: Some(store.clone()), ..ConsentPolicy::default() };
        assert!(quiet.decide(&candidate(Origin::McpJson, "x"), ws.path()).is_ok());
        assert!(quiet.decide(&candidate(Origin::McpJson, "changed"), ws.path()).is_err());
        let other = tempfile::tempdir().unwrap();
        assert!(quiet.decide(&candidate(Origin::McpJson, "x"), other.path()).is_err());
        // A refusal is not remembered as consent.
        let no = |_: &Candidate| false;
        let refusing = ConsentPolicy { store: Some(store), prompt: Some(&no), ..ConsentPolicy::default() };
        assert!(refusing.decide(&candidate(Origin::McpJson, "changed"), ws.path()).is_err());
    }
}
