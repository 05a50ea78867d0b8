//! `tackle mcp serve`: Tackle's tools for any MCP client (docs/mcp.md#serving-tackle-mcp-serve). The command assembles
//! the registry, the selection, the executor and a session factory, then hands them to
//! `tackle::mcp_serve`, which does the rest.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use tackle::mcp_serve::{self as server, McpServer, ServerOptions};
use tackle::{McpImport, PermissionMode, SessionBuilder};

use crate::cli::ServeArgs;
use crate::exit::{CommandResult, Failure, OK};
use crate::{session, signals};

/// `[mcp.serve]` in the configuration.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct ServeSettings {
    /// Seconds an HTTP session with nothing in flight lives.
    idle_timeout_s: Option<u64>,
    /// The most HTTP sessions at once.
    max_sessions: Option<u64>,
}

/// The environment variable that may hold the HTTP bearer token.
const TOKEN_VAR: &str = "TACKLE_MCP_TOKEN";

/// `[mcp.serve]` from the user config, lowered (never raised) by the workspace's: a file in
/// the workspace may tighten the server's bounds, not loosen them (both keys are `Narrowing`
/// in the table of docs/configuration.md; a value that would loosen is ignored with a notice).
fn serve_settings(config: &tackle::Config) -> Result<ServeSettings, Failure> {
    let usage = |err: tackle::config::ConfigError| Failure::usage(err.to_string());
    let user: ServeSettings = config.user_section("mcp.serve").map_err(usage)?.unwrap_or_default();
    let mut notices = Vec::new();
    let mut lower = |key: &str, mine: Option<u64>, default: u64| -> Result<Option<u64>, Failure> {
        let limit = mine.unwrap_or(default);
        let theirs = config.narrowing(key, |theirs: &u64| *theirs <= limit, &mut notices).map_err(usage)?;
        Ok(theirs.or(mine))
    };
    let default_sessions = u64::try_from(server::DEFAULT_MAX_SESSIONS).unwrap_or(u64::MAX);
    let settings = ServeSettings {
        idle_timeout_s: lower("mcp.serve.idle_timeout_s", user.idle_timeout_s, server::DEFAULT_IDLE_TIMEOUT.as_secs())?,
        max_sessions: lower("mcp.serve.max_sessions", user.max_sessions, default_sessions)?,
    };
    for notice in notices {
        diagln!("tackle: {notice}");
    }
    Ok(settings)
}

/// `--auth-token`, else a non-empty `TACKLE_MCP_TOKEN`.
fn auth_token(flag: Option<server::AuthToken>) -> Result<Option<server::AuthToken>, Failure> {
    if flag.is_some() {
        return Ok(flag);
    }
    // Through the secrets store: a name with TOKEN in it is moved out of the environment
    // before Tackle re-executes itself (docs/configuration.md, "Secrets").
    match tackle::secrets::var(TOKEN_VAR) {
        Some(token) if !token.is_empty() => {
            server::AuthToken::new(&token).map(Some).map_err(|err| Failure::usage(format!("{TOKEN_VAR}: {err}")))
        }
        _ => Ok(None),
    }
}

/// `tackle mcp serve`.
pub async fn serve(args: ServeArgs) -> CommandResult {
    let http =
        args.http.as_deref().map(server::check_loopback).transpose().map_err(|err| Failure::usage(err.to_string()))?;
    let workspace = session::workspace(args.workspace.as_ref())?;
    let config = session::config(&workspace, args.trust_workspace, false)?;
    let settings = serve_settings(&config)?;
    let auth_token = auth_token(args.auth_token)?;
    // MCP servers are started only when the allowlist names imported tools (and never ask:
    // stdin belongs to the MCP client).
    let import =
        if server::names_imported_tools(args.tools.as_deref()) { McpImport::UserAndWorkspace } else { McpImport::None };
    let tools = args.tools.clone();
    let builder = SessionBuilder::new(&workspace);
    let template = crate::commands::containers::apply(builder, &args.container, &workspace)
        .config(config)
        .on_notice(|line| diagln!("tackle: {line}"))
        .mcp(import)
        .mcp_required(false)
        .allow_project_mcp(args.allow_project_mcp)
        .select_with(move |registry| server::selection(registry, tools.as_deref()))
        .permission_mode(args.permission_mode)
        .rules(args.rules.flags())
        .build_template()
        .await?;
    if let Err(failure) = session::announce_sandbox(&template) {
        template.close().await;
        return Err(failure);
    }
    let sessions = template.clone();
    let factory: server::MakeSession = Arc::new(move || Ok(sessions.session()));
    let options = ServerOptions {
        page_size: args.page_size.and_then(|n| usize::try_from(n).ok()),
        approvals: args.permission_mode != PermissionMode::Bypass,
        idle_timeout: settings.idle_timeout_s.map_or(server::DEFAULT_IDLE_TIMEOUT, Duration::from_secs),
        max_sessions: args
            .max_sessions
            .or(settings.max_sessions)
            .map_or(server::DEFAULT_MAX_SESSIONS, |n| usize::try_from(n).unwrap_or(usize::MAX)),
        auth_token,
    };
    let server = McpServer::new(factory, template.executor(), options);
    let served = serve_on(&server, http).await;
    template.close().await;
    served
}

/// Serves until the client leaves (stdio) or a signal arrives; every session's tools are
/// closed (shells and jobs killed) before this returns.
async fn serve_on(server: &McpServer, http: Option<std::net::SocketAddr>) -> CommandResult {
    match http {
        None => {
            if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                diagln!(
                    "tackle: waiting for an MCP client on stdin (an MCP client such as Claude Code starts this command; Ctrl-C stops it)"
                );
            }
            let served = tokio::select! {
                served = server.serve_stdio() => served.map_err(|err| Failure::failed(err.to_string())),
                () = signals::terminated() => Ok(()),
            };
            server.shutdown().await;
            served?;
        }
        Some(addr) => {
            let bound = server
                .bind_http(addr)
                .await
                .map_err(|err| Failure::failed(format!("cannot serve on {addr}: {err}")))?;
            let local = bound.local_addr().map_err(|err| Failure::failed(err.to_string()))?;
            diagln!("listening on http://{local}/mcp");
            bound.run(signals::terminated()).await.map_err(|err| Failure::failed(err.to_string()))?;
        }
    }
    Ok(ExitCode::from(OK))
}
