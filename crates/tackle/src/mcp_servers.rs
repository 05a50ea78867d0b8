//! Managing the MCP servers Tackle imports (`tackle mcp add`, `list`, `get`, `remove`;
//! docs/mcp.md#managing-servers-from-the-command-line): writing a definition to the user config
//! or the workspace's `.mcp.json`, removing one, and checking how each defined server fares.

use std::path::{Path, PathBuf};

use tackle_mcp::client::consent::{self, ConsentPolicy};
use tackle_policy::config::Config;
use tackle_policy::config::consent::Consent;

pub use tackle_mcp::client::config::{Origin, RawServer};
pub use tackle_mcp::client::health::{Health, Report, origin_label, target, transport};
pub use tackle_mcp::client::manage::{ManageError, Scope, check_name};

/// The file a scope's definitions live in, for the person.
pub fn place(scope: Scope) -> String {
    match scope {
        Scope::User => tackle_policy::config::user_config_shown(),
        Scope::Project => tackle_mcp::client::config::MCP_JSON.to_owned(),
    }
}

/// Adds `server` as `name` in `scope`; the file written. A server added to the workspace's
/// `.mcp.json` this way is the person's own doing, so their consent to it is recorded (bound
/// to the definition's hash, as a prompt's answer is): a later change to it by anyone needs
/// consent again.
pub fn add(scope: Scope, workspace: &Path, name: &str, server: &RawServer) -> Result<PathBuf, ManageError> {
    match scope {
        Scope::User => {
            let path = user_config()?;
            tackle_mcp::client::manage::add_to_user_config(&path, name, server)?;
            Ok(path)
        }
        Scope::Project => {
            let workspace = workspace.canonicalize().unwrap_or_else(|_| workspace.to_owned());
            tackle_mcp::client::manage::add_to_mcp_json(&workspace, name, server)?;
            let candidate = tackle_mcp::client::config::Candidate {
                name: name.to_owned(),
                raw: server.clone(),
                origin: Origin::McpJson,
            };
            if let Some(store) = consent::default_store() {
                store.record_or_warn(Consent {
                    workspace: workspace.display().to_string(),
                    subject: name.to_owned(),
                    fingerprint: candidate.fingerprint(),
                    parts: Default::default(),
                });
            }
            Ok(workspace.join(tackle_mcp::client::config::MCP_JSON))
        }
    }
}

/// Removes `name` from `scope`; the file written.
pub fn remove(scope: Scope, workspace: &Path, name: &str) -> Result<PathBuf, ManageError> {
    match scope {
        Scope::User => {
            let path = user_config()?;
            tackle_mcp::client::manage::remove_from_user_config(&path, name)?;
            Ok(path)
        }
        Scope::Project => {
            tackle_mcp::client::manage::remove_from_mcp_json(workspace, name)?;
            Ok(workspace.join(tackle_mcp::client::config::MCP_JSON))
        }
    }
}

fn user_config() -> Result<PathBuf, ManageError> {
    tackle_policy::config::user_config_file().ok_or_else(|| ManageError::Unusable {
        place: "the user config".to_owned(),
        why: "there is no config directory (set TACKLE_CONFIG_DIR)".to_owned(),
    })
}

/// Every defined server (or only `only`) and, when `connect`, how connecting to it went
/// (each within its startup timeout). Workspace servers are started only with the consent
/// run/chat would need (`allow_project_mcp`, a trusted workspace, `[mcp] trusted_workspaces`,
/// a remembered answer); nobody is asked. The notices are for the person.
pub async fn check(
    config: &Config,
    workspace: &Path,
    allow_project_mcp: bool,
    only: Option<&str>,
    connect: bool,
) -> (Vec<Report>, Vec<String>) {
    let (listed_trusted, mut notices) = consent::listed_trust(config, workspace, allow_project_mcp);
    let policy = ConsentPolicy {
        allow_project_flag: allow_project_mcp,
        workspace_trusted: config.workspace_trusted,
        listed_trusted,
        store: consent::default_store(),
        prompt: None,
    };
    let (reports, more) = tackle_mcp::client::health::check(config, workspace, &policy, only, connect).await;
    notices.extend(more);
    (reports, notices)
}
