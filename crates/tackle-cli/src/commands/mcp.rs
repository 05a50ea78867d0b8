//! `tackle mcp serve`: Tackle's tools for any MCP client (mcp.md §1). The command assembles
//! the registry, the selection, the executor and a session factory, then hands them to
//! `tackle_mcp::server`, which does the rest.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use tackle_core::permission::PermissionMode;
use tackle_core::registry::Selection;
use tackle_core::{Registry, Session};
use tackle_mcp::server::{self, McpServer, ServerOptions};

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
    let mode: PermissionMode = args
        .permission_mode
        .parse()
        .map_err(|err: tackle_core::permission::UnknownMode| Failure::usage(err.to_string()))?;
    let executor = session::executor(&args.permission_mode)?;
    let workspace = session::workspace(args.workspace.as_ref())?;
    let config = session::config(&workspace, args.trust_workspace, false)?;
    let settings: ServeSettings = config.section("mcp.serve").map_err(|err| Failure::usage(err.to_string()))?;
    let mut registry = session::registry();
    // MCP servers are started only when the allowlist names imported tools (and never ask:
    // stdin belongs to the MCP client).
    let hub = if server::names_imported_tools(args.tools.as_deref()) {
        Some(session::import_mcp(&mut registry, &config, &workspace, args.allow_project_mcp, false).await)
    } else {
        None
    };
    let selection = match select(&registry, args.tools.as_deref()) {
        Ok(selection) => selection,
        Err(failure) => {
            if let Some(hub) = &hub {
                hub.shutdown().await;
            }
            return Err(failure);
        }
    };
    let session_config = session::session_config(&config, &workspace, true)?;
    // The first session says which sandbox its commands run in; the others are alike.
    let announced = std::sync::Once::new();
    let factory: server::SessionFactory = Arc::new(move || {
        let session = Session::new(session_config.clone(), registry.instantiate(&selection));
        session::tool_settings(&config, &session).map_err(|failure| failure.message)?;
        announced.call_once(|| session::announce_sandbox(&session));
        Ok(session)
    });
    let options = ServerOptions {
        page_size: args.page_size.and_then(|n| usize::try_from(n).ok()),
        approvals: mode != PermissionMode::Bypass,
        idle_timeout: settings.idle_timeout_s.map_or(server::DEFAULT_IDLE_TIMEOUT, Duration::from_secs),
    };
    let server = McpServer::new(factory, executor, options);
    let served = serve_on(&server, http).await;
    if let Some(hub) = &hub {
        hub.shutdown().await;
    }
    served
}

/// Serves until the client leaves (stdio) or a signal arrives.
async fn serve_on(server: &McpServer, http: Option<std::net::SocketAddr>) -> CommandResult {
    match http {
        None => {
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

/// Applies `--tools`, or the serve default (mcp.md §1.3).
fn select(registry: &Registry, tools: Option<&str>) -> Result<Selection, Failure> {
    let selection = server::selection(registry, tools).map_err(|err| Failure::usage(err.to_string()))?;
    for warning in &selection.warnings {
        tracing::warn!("{warning}");
    }
    Ok(selection)
}
