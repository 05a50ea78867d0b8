//! [`ToolRefresh`]: the seam through which a session's tools change between model requests
//! (MCP servers that announced `list_changed`). A leaf of the crate, so the loop that calls it
//! and the `Delegation` that hands it to children (`lineage.rs`) name it without naming
//! each other.

use tackle_core::{BoxFuture, ToolSession};

/// Takes up changes to a session's tools between model requests. One refresh serves an agent
/// and its children: whatever it keeps about a session (what it has taken up, what the session
/// admits) it keeps in that session's state.
pub trait ToolRefresh: Send + Sync {
    /// Updates the session's tools; true when they changed. Tool-list notices for the model
    /// go to the session's `Notifications`.
    fn refresh<'a>(&'a self, session: &'a mut ToolSession) -> BoxFuture<'a, bool>;
}
