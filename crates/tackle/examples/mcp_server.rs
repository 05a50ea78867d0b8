//! Serves a session's tools over MCP on stdio: the read-only file tools of a workspace, for
//! any MCP client (Claude Code, Codex, the official SDKs).
//!
//! `cargo run -p tackle --example mcp_server -- [WORKSPACE]`, then speak JSON-RPC on stdin.

use tackle::mcp_serve::{McpServer, ServerOptions};
use tackle::{PermissionMode, SessionBuilder};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let workspace = std::env::args().nth(1).unwrap_or_else(|| ".".to_owned());
    // A template makes one session per MCP client session.
    let template = SessionBuilder::new(workspace)
        .tools("read_file,glob,grep")
        .permission_mode(PermissionMode::Bypass)
        .build_template()
        .await?;
    let sessions = template.clone();
    let server = McpServer::new(
        std::sync::Arc::new(move || Ok(sessions.session())),
        template.executor(),
        ServerOptions::default(),
    );
    server.serve_stdio().await?;
    template.close().await;
    Ok(())
}
