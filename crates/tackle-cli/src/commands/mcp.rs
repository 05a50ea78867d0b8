//! `tackle mcp serve`: Tackle's tools for any MCP client (docs/mcp.md#serving-tackle-mcp-serve). The command assembles
//! the registry, the selection, the executor and a session factory, then hands them to
//! `tackle::mcp::server`, which does the rest.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use tackle::mcp::server::{self, McpServer, ServerOptions};
use tackle::{McpImport, PermissionMode, SessionBuilder};

use crate::cli::ServeArgs;
use crate::exit::{CommandResult, Failure, OK};
use crate::{session, signals};

/// `[mcp.serve]` in the configuration.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct ServeSettings {
    /// Seconds an idle HTTP session lives.
    idle_timeout_s: Option<u64>,
}

/// `tackle mcp serve`.
pub async fn serve(args: ServeArgs) -> CommandResult {
    let http = args.http.as_deref().map(server::check_loopback).transpose().map_err(Failure::usage)?;
    let workspace = session::workspace(args.workspace.as_ref())?;
    let config = session::config(&workspace, args.trust_workspace, false)?;
    let settings: ServeSettings = config.section("mcp.serve").map_err(|err| Failure::usage(err.to_string()))?;
    // MCP servers are started only when the allowlist names imported tools (and never ask:
    // stdin belongs to the MCP client).
    let import =
        if server::names_imported_tools(args.tools.as_deref()) { McpImport::UserAndWorkspace } else { McpImport::None };
    let tools = args.tools.clone();
    let template = SessionBuilder::new(&workspace)
        .config(config)
        .on_notice(|line| diagln!("tackle: {line}"))
        .mcp(import)
        .mcp_required(false)
        .allow_project_mcp(args.allow_project_mcp)
        .select_with(move |registry| server::selection(registry, tools.as_deref()))
        .permission_mode(args.permission_mode)
        .build_template()
        .await?;
    session::announce_sandbox(&template);
    let sessions = template.clone();
    let factory: server::SessionFactory = Arc::new(move || sessions.session().map_err(|err| err.to_string()));
    let options = ServerOptions {
        page_size: args.page_size.and_then(|n| usize::try_from(n).ok()),
        approvals: args.permission_mode != PermissionMode::Bypass,
        idle_timeout: settings.idle_timeout_s.map_or(server::DEFAULT_IDLE_TIMEOUT, Duration::from_secs),
    };
    let server = McpServer::new(factory, template.executor(), options);
    let served = serve_on(&server, http).await;
    template.close().await;
    served
}

/// Serves until the client leaves (stdio) or a signal arrives.
async fn serve_on(server: &McpServer, http: Option<std::net::SocketAddr>) -> CommandResult {
    match http {
        None => {
            if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                diagln!(
                    "tackle: waiting for an MCP client on stdin (an MCP client such as Claude Code starts this command; Ctrl-C stops it)"
                );
            }
            tokio::select! {
                served = server.serve_stdio() => served.map_err(|err| Failure::failed(err.to_string()))?,
                () = signals::terminated() => server.shutdown().await,
            }
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
