//! Managing the MCP servers Tackle imports (`tackle mcp add`, `list`, `get`, `remove`;
//! docs/mcp.md#managing-servers-from-the-command-line): writing a definition to the user config
//! or the workspace's `.mcp.json`, removing one, and checking how each defined server fares.

use std::path::{Path, PathBuf};

use tackle_core::ToolSession;
use tackle_mcp::client::McpHub;
use tackle_mcp::client::connection::Connection;
use tackle_mcp::client::consent::{self, ConsentPolicy};
use tackle_mcp::client::prompts;
use tackle_policy::config::Config;
use tackle_policy::config::consent::Consent;
use tokio_util::sync::CancellationToken;

pub use tackle_mcp::client::config::{Origin, RawServer};
pub use tackle_mcp::client::elicitation::{
    ElicitAnswer, Elicitor, Field as ElicitField, Form as ElicitForm, Unattended, shown,
};
pub use tackle_mcp::client::health::{Health, ServerReport, origin_label, target, transport};
pub use tackle_mcp::client::manage::{ManageError, Scope, check_name};
pub use tackle_mcp::client::prompts::{ListedPrompt, PromptError};

/// Why `tackle mcp prompt` or chat's `/mcp__SERVER__PROMPT` gave no prompt.
#[derive(Debug, thiserror::Error)]
pub enum ServerPromptError {
    /// No server of that name; `notice` says why one was left out, when it was.
    #[error("{}", notice.clone().unwrap_or_else(|| format!("no MCP server named '{server}' is defined")))]
    NoServer {
        /// The name asked for.
        server: String,
        /// The notice that left a server of that name out.
        notice: Option<String>,
    },
    /// The server did not start.
    #[error("MCP server '{server}' did not start: {source}")]
    Start {
        /// Its name.
        server: String,
        /// Why.
        source: tackle_mcp::client::connection::StartError,
    },
    /// The server has no prompt of that name.
    #[error("MCP server '{server}' has no prompt '{name}' (its prompts: {})", names.join(", "))]
    NoPrompt {
        /// The server.
        server: String,
        /// The prompt asked for.
        name: String,
        /// The prompts it has.
        names: Vec<String>,
    },
    /// The session imports no MCP servers.
    #[error("this session imports no MCP servers")]
    NoServers,
    /// Listing or filling in the prompt failed.
    #[error(transparent)]
    Prompt(#[from] PromptError),
}

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
) -> (Vec<ServerReport>, Vec<String>) {
    let (policy, mut notices) = ConsentPolicy::for_workspace(config, workspace, allow_project_mcp, None);
    let (reports, more) = tackle_mcp::client::health::check(config, workspace, &policy, only, connect).await;
    notices.extend(more);
    (reports, notices)
}

/// `tackle mcp prompt`: starts `server` alone (with the consent run/chat would need, nobody
/// asked), fills in its prompt `name` with `arguments` (`k=v`, or plain words in the prompt's
/// order), and gives its messages as text. `name` empty: the server's prompts instead, one
/// per line with their arguments.
pub async fn prompt_text(
    config: &Config,
    workspace: &Path,
    allow_project_mcp: bool,
    server: &str,
    name: &str,
    arguments: &[String],
) -> Result<String, ServerPromptError> {
    let (policy, _) = ConsentPolicy::for_workspace(config, workspace, allow_project_mcp, None);
    let wanted = |names: &[String]| names.iter().filter(|n| *n == server).cloned().collect();
    let (servers, notices) = tackle_mcp::client::servers(config, workspace, &policy, true, &wanted);
    let Some(chosen) = servers.into_iter().next() else {
        let why = notices.into_iter().find(|n| n.contains(&format!("'{server}'")));
        return Err(ServerPromptError::NoServer { server: server.to_owned(), notice: why });
    };
    let connection = Connection::new(chosen, workspace);
    let text = async {
        connection.start().await.map_err(|source| ServerPromptError::Start { server: server.to_owned(), source })?;
        let cancel = CancellationToken::new();
        let listed = prompts::list(&connection, &cancel).await?;
        if name.is_empty() {
            return Ok(listed
                .iter()
                .map(|p| {
                    let about = p.description.as_deref().map(|d| format!(" — {d}")).unwrap_or_default();
                    format!("{} {}{about}", p.name, prompts::usage(p)).replace("  ", " ")
                })
                .collect::<Vec<_>>()
                .join("\n"));
        }
        let prompt = listed.iter().find(|p| p.name == name).ok_or_else(|| ServerPromptError::NoPrompt {
            server: server.to_owned(),
            name: name.to_owned(),
            names: listed.iter().map(|p| p.name.clone()).collect(),
        })?;
        let map = prompts::arguments(prompt, arguments)?;
        Ok(prompts::get(&connection, name, map, &cancel).await?)
    }
    .await;
    connection.shutdown().await;
    text
}

/// Chat's `/mcp__SERVER__PROMPT ARGS`: the prompt of a server `session` imports, filled in
/// with the words after the command, as the text of the next task. An error says why, or
/// lists the prompts there are.
pub async fn chat_prompt(session: &ToolSession, command: &str, rest: &str) -> Result<String, ServerPromptError> {
    let hub = McpHub::of(session).ok_or(ServerPromptError::NoServers)?;
    let cancel = CancellationToken::new();
    let (connection, prompt) = prompts::find(&hub.connections(), command, &cancel).await?;
    let words = prompts::split_words(rest)?;
    let map = prompts::arguments(&prompt, &words)?;
    Ok(prompts::get(&connection, &prompt.name, map, &cancel).await?)
}
