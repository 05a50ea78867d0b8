//! What a session owns besides its tools: a shell and its jobs, MCP connections, an index.
//!
//! Whoever creates such a thing for a session registers it in the session state
//! ([`crate::SessionState::add_resource`]); [`crate::ToolSession::close`] then closes every
//! resource exactly once, in reverse order of registration (what was opened last, and may use
//! what was opened before it, is closed first), after the tools. No owner has to remember to
//! call a separate shutdown function, and nothing a session started outlives it.

use crate::tool::BoxFuture;

/// Something a session owns and must release when it ends.
pub trait SessionResource: Send + Sync + 'static {
    /// A short name for logs ("shell", "mcp").
    fn name(&self) -> &str;

    /// Releases the resource: kills processes, closes connections. Called once.
    fn close(&self) -> BoxFuture<'_, ()>;
}
