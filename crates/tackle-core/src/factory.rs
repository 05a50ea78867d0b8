//! Building further sessions from inside one. Subagents and teammates get a child session
//! built exactly as their parent's was (the same configuration, path policy, sandbox settings,
//! permission policy and MCP connections), through this small object-safe trait: the crates
//! that hold those tools need not depend on the `tackle` crate, which implements it.
//!
//! A child never gains a tool or a permission its parent lacks: whatever its allowlist says,
//! its tools are a subset of the parent's, and its permission mode is the parent's or a
//! stricter one.

use std::sync::Arc;

use crate::executor::Executor;
use crate::permission::PermissionMode;
use crate::registry::AllowlistError;
use crate::session::ToolSession;
use crate::tool::BoxFuture;

/// What a child session should hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ChildRequest {
    /// An allowlist (the `--tools` grammar) applied to the parent's tools; `None` keeps them
    /// all.
    pub tools: Option<String>,
    /// The tools the requesting session has now (a child's child asks within its own parent's
    /// tools, not the template's); `None` means the template's selection.
    pub within: Option<Vec<String>>,
    /// The permission mode the child asks for; the factory uses the stricter of it and the
    /// template's ([`PermissionMode::narrowed_to`]), never a wider one.
    pub mode: Option<PermissionMode>,
    /// The allowlists the requesting session was itself cut with (its [`Allowlists`]),
    /// outermost first: the child's are these and `tools`.
    pub ancestry: Vec<String>,
}

/// The allowlists a child session was cut with, outermost first, kept in its state by the
/// factory: a tool an MCP server adds later joins the session only when each of them admits
/// it, so a child never gains a tool one of its ancestors was denied.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowlists(pub Vec<String>);

/// A child session and the executor that runs its calls. Closing the child closes its own
/// tools and resources (its shell, its jobs), never the parent's shared MCP connections.
#[derive(Debug)]
pub struct ChildSession {
    /// The child's session.
    pub session: ToolSession,
    /// The executor, with the parent's permission rules, approver and hooks, in the child's
    /// (possibly narrower) permission mode.
    pub executor: Executor,
}

/// Why a child session cannot be built. Its text is shown to the model as is (the
/// `subagent` tool's error), so each variant says what went wrong in words.
#[derive(Debug, thiserror::Error)]
pub enum ChildError {
    /// The request's allowlist is malformed or names no known tool or toolset.
    #[error(transparent)]
    Tools(#[from] AllowlistError),
    /// The allowlist keeps none of the requesting session's tools.
    #[error("the tool list of the child session selects none of the parent's tools")]
    NoTools,
}

/// Builds child sessions like the session it belongs to.
pub trait SessionFactory: Send + Sync + 'static {
    /// A fresh child session, or why it cannot be built.
    fn child(&self, request: ChildRequest) -> BoxFuture<'_, Result<ChildSession, ChildError>>;
}

/// How a tool finds the factory of the session it runs in: it is kept in the session state
/// (`ctx.state().existing::<Factory>()`) by whoever built the session.
#[derive(Clone)]
pub struct Factory(pub Arc<dyn SessionFactory>);

impl std::fmt::Debug for Factory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Factory")
    }
}
