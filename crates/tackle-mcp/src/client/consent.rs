//! Consent for MCP servers the workspace defines (docs/mcp.md, docs/configuration.md): a
//! cloned repository's `.mcp.json` could run any command, so such a server starts only when
//! the person agreed, in one of these ways, and never because a workspace file said so:
//! `--allow-project-mcp`, `TACKLE_ALLOW_PROJECT_MCP=1`, a trusted workspace (its settings
//! consented: `--trust-workspace`, `TACKLE_TRUST_WORKSPACE=1`, the user config's
//! `trusted_workspaces` or a prompt), the workspace listed in `[mcp] trusted_workspaces`, or
//! an answer to a prompt, remembered per workspace path and per hash of the server's
//! definition.
//!
//! The remembering is `tackle_policy::config::consent`'s one mechanism: answers go to a
//! [`ConsentStore`] in the user config directory, and `[mcp] trusted_workspaces` is bound to
//! the hash of the workspace's settings files like the top-level list, so a changed
//! `.mcp.json` in a listed workspace needs consent again.

use std::path::Path;

use tackle_policy::config::consent::{self as core_consent, Consent, ConsentStore, TrustInputs};
use tackle_policy::config::{Config, flag_from_env};

use super::config::Candidate;

/// The file of remembered answers in the user config directory.
pub const CONSENT_FILE: &str = "mcp-consent.json";

/// The user config's list of workspaces whose MCP servers start without asking.
pub const TRUSTED_WORKSPACES: &str = "mcp.trusted_workspaces";

/// The subject under which `[mcp] trusted_workspaces` consent is recorded.
const LISTED_SUBJECT: &str = "mcp-servers";

/// Asks the person whether a workspace server may start (a terminal prompt).
pub type Prompt<'a> = &'a (dyn Fn(&Candidate) -> bool + Send + Sync);

/// What grants consent in this run.
#[derive(Clone, Default)]
pub struct ConsentPolicy<'a> {
    /// `--allow-project-mcp`.
    pub allow_project_flag: bool,
    /// The workspace's settings are trusted (`Config::workspace_trusted`).
    pub workspace_trusted: bool,
    /// The workspace is listed in `[mcp] trusted_workspaces` and its settings are as they were
    /// consented (see [`listed_trust`]).
    pub listed_trusted: bool,
    /// Where answers are remembered (`None`: nowhere).
    pub store: Option<ConsentStore>,
    /// Asks the person; `None` when nobody can be asked (no terminal, CI).
    pub prompt: Option<Prompt<'a>>,
}

impl std::fmt::Debug for ConsentPolicy<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConsentPolicy")
            .field("allow_project_flag", &self.allow_project_flag)
            .field("workspace_trusted", &self.workspace_trusted)
            .field("listed_trusted", &self.listed_trusted)
            .field("store", &self.store)
            .field("interactive", &self.prompt.is_some())
            .finish_non_exhaustive()
    }
}

impl<'a> ConsentPolicy<'a> {
    /// The policy for `workspace` under `config`: the flag, the workspace's trust, the
    /// `[mcp] trusted_workspaces` listing ([`listed_trust`], whose notices come back for the
    /// person), the remembered answers of the user config dir, and `prompt` to ask.
    pub fn for_workspace(
        config: &Config,
        workspace: &Path,
        allow_project_flag: bool,
        prompt: Option<Prompt<'a>>,
    ) -> (ConsentPolicy<'a>, Vec<String>) {
        let (listed_trusted, notices) = listed_trust(config, workspace, allow_project_flag);
        let policy = ConsentPolicy {
            allow_project_flag,
            workspace_trusted: config.workspace_trusted,
            listed_trusted,
            store: default_store(),
            prompt,
        };
        (policy, notices)
    }
}

/// `TACKLE_ALLOW_PROJECT_MCP=1` (or `true`).
pub fn allowed_by_env() -> bool {
    flag_from_env("TACKLE_ALLOW_PROJECT_MCP")
}

/// The remembered-consent store of the user config directory.
pub fn default_store() -> Option<ConsentStore> {
    ConsentStore::in_user_config(CONSENT_FILE)
}

/// Whether `[mcp] trusted_workspaces` trusts `workspace` now: listed, with its settings files
/// as they were when first seen listed or last consented explicitly (`allow_project_flag` or
/// `TACKLE_ALLOW_PROJECT_MCP=1` records them again). The notices are for the person.
pub fn listed_trust(config: &Config, workspace: &Path, allow_project_flag: bool) -> (bool, Vec<String>) {
    if !config.user_lists(TRUSTED_WORKSPACES, workspace) {
        return (false, Vec::new());
    }
    let store = ConsentStore::in_user_config(core_consent::WORKSPACE_CONSENT_FILE);
    let decision = core_consent::decide(&TrustInputs {
        workspace,
        snapshot: config.snapshot(),
        subject: LISTED_SUBJECT,
        explicit: allow_project_flag || allowed_by_env(),
        listed: true,
        list_name: "[mcp] trusted_workspaces",
        explicit_hint: "--allow-project-mcp (or TACKLE_ALLOW_PROJECT_MCP=1)",
        wanted: &[],
        runs: &[],
        store: store.as_ref(),
        prompt: None,
    });
    (decision.trusted, decision.notices)
}

/// A server the workspace defines was refused for want of consent; the text is the one-line
/// notice for the person.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "MCP server '{server}' from {origin} was not started: servers defined by the workspace need your consent. Allow \
     them with --allow-project-mcp, TACKLE_ALLOW_PROJECT_MCP=1, or by trusting the workspace (--trust-workspace, or \
     [mcp] trusted_workspaces in {}).",
    tackle_policy::config::user_config_shown()
)]
pub struct NoConsent {
    /// The server's name.
    pub server: String,
    /// Where it is defined (`.mcp.json`, `tackle.toml`).
    pub origin: &'static str,
}

impl ConsentPolicy<'_> {
    /// Whether `candidate` (defined by `workspace`) may start.
    pub fn decide(&self, candidate: &Candidate, workspace: &Path) -> Result<(), NoConsent> {
        if !candidate.origin.is_workspace()
            || self.allow_project_flag
            || allowed_by_env()
            || self.workspace_trusted
            || self.listed_trusted
        {
            return Ok(());
        }
        let approval = Consent {
            workspace: workspace.display().to_string(),
            subject: candidate.name.clone(),
            fingerprint: candidate.fingerprint(),
            parts: Default::default(),
        };
        if self.store.as_ref().is_some_and(|store| store.holds(&approval)) {
            return Ok(());
        }
        if let Some(prompt) = self.prompt
            && prompt(candidate)
        {
            if let Some(store) = &self.store {
                store.record_or_warn(approval);
            }
            return Ok(());
        }
        Err(NoConsent { server: candidate.name.clone(), origin: candidate.origin.label() })
    }
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
        let notice = refused.decide(&candidate(Origin::McpJson, "x"), ws.path()).unwrap_err().to_string();
        assert_eq!(
            notice,
            format!(
                "MCP server 'git' from .mcp.json was not started: servers defined by the workspace need your consent. \
                 Allow them with --allow-project-mcp, TACKLE_ALLOW_PROJECT_MCP=1, or by trusting the workspace \
                 (--trust-workspace, or [mcp] trusted_workspaces in {}).",
                tackle_policy::config::user_config_shown()
            )
        );
        assert!(
            refused
                .decide(&candidate(Origin::WorkspaceToml, "x"), ws.path())
                .unwrap_err()
                .to_string()
                .contains("from tackle.toml")
        );
        let flag = ConsentPolicy { allow_project_flag: true, ..ConsentPolicy::default() };
        assert!(flag.decide(&candidate(Origin::McpJson, "x"), ws.path()).is_ok());
        let trusted = ConsentPolicy { workspace_trusted: true, ..ConsentPolicy::default() };
        assert!(trusted.decide(&candidate(Origin::McpJson, "x"), ws.path()).is_ok());
        let listed = ConsentPolicy { listed_trusted: true, ..ConsentPolicy::default() };
        assert!(listed.decide(&candidate(Origin::McpJson, "x"), ws.path()).is_ok());
    }

    #[test]
    fn a_prompt_answer_is_remembered_per_workspace_and_definition() {
        let ws = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let store = ConsentStore::new(home.path().join("tackle").join(CONSENT_FILE));
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
