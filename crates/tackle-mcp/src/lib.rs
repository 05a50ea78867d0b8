//! MCP for Tackle, on the official Rust SDK `rmcp` (docs/mcp.md).
//!
//! Two faces:
//! - [`server`]: `tackle mcp serve`, which lets any MCP client (Claude Code, Codex, Cursor, the
//!   official SDKs) list and call Tackle's tools over stdio or streamable HTTP;
//! - [`client`]: imports the tools of any MCP server into Tackle's registry as
//!   `mcp__SERVER__TOOL`, so `tackle tools` and the agent loop can call them.
//!
//! This crate depends on `tackle-core` only: the server is handed a session factory and an
//! executor by its caller, and the client produces `DynTool`s for the caller's registry.

pub mod client;
mod lines;
pub mod server;

/// Installs the process's TLS crypto provider (ring) if none is installed yet. reqwest is
/// built without a provider of its own (it keeps the build light), so anything that builds
/// an HTTP client calls this first; calling it again does nothing.
pub fn ensure_tls_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}
