//! `tackle mcp login NAME` and `tackle mcp logout NAME`: OAuth sign-in to an HTTP MCP server
//! (docs/mcp.md#remote-servers-and-sign-in); the work is `tackle::mcp_login`'s.

use std::path::PathBuf;

use clap::Args;
use tackle::mcp_login::McpSignIn;

use crate::exit::{CommandResult, Failure, OK};
use crate::session;

#[derive(Debug, Args)]
pub struct SignInArgs {
    /// The server's name in [mcp.servers], .mcp.json or tackle.toml.
    pub name: String,
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Consent to the workspace's own settings for this run; also TACKLE_TRUST_WORKSPACE=1.
    #[arg(long)]
    pub trust_workspace: bool,
    /// Use a server the workspace defines without asking; also TACKLE_ALLOW_PROJECT_MCP=1.
    #[arg(long)]
    pub allow_project_mcp: bool,
}

/// `tackle mcp login NAME`.
pub async fn login(args: SignInArgs) -> CommandResult {
    let workspace = session::workspace(args.workspace.as_ref())?;
    let config = session::config(&workspace, args.trust_workspace, session::interactive())?;
    let prompt = session::interactive().then_some(&session::ask_consent as &(dyn Fn(&_) -> bool + Send + Sync));
    let sign_in =
        McpSignIn { config: &config, workspace: &workspace, allow_project_mcp: args.allow_project_mcp, prompt };
    let line = sign_in.login(&args.name).await.map_err(|err| Failure::failed(err.to_string()))?;
    diagln!("tackle: {line}");
    Ok(std::process::ExitCode::from(OK))
}

/// `tackle mcp logout NAME`.
pub fn logout(args: SignInArgs) -> CommandResult {
    let workspace = session::workspace(args.workspace.as_ref())?;
    let config = session::config(&workspace, args.trust_workspace, false)?;
    let sign_in =
        McpSignIn { config: &config, workspace: &workspace, allow_project_mcp: args.allow_project_mcp, prompt: None };
    let line = sign_in.logout(&args.name).map_err(|err| Failure::failed(err.to_string()))?;
    diagln!("tackle: {line}");
    Ok(std::process::ExitCode::from(OK))
}
