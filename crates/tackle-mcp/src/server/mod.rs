//! The server face: `tackle mcp serve` (docs/mcp.md#serving-tackle-mcp-serve). Any MCP client (Claude Code, Codex,
//! Cursor, the official SDKs) lists Tackle's tools and calls them through the same executor
//! as every other front end.
//!
//! The server never builds tools: its caller hands it a [`MakeSession`] (one fresh tool
//! session per MCP session: per process over stdio, per `Mcp-Session-Id` over HTTP) and the
//! [`Executor`] with its permission policy.

mod approval;
mod auth;
pub mod gate;
mod handler;
mod http;
mod intake;
mod listing;
mod live;
mod progress;
mod result;
mod scheduler;
mod sessions;
mod stdio;

pub use auth::AuthToken;
pub use handler::SUPPORTED_VERSIONS;
pub use http::{HttpAddressError, HttpServer, check_loopback};
pub use progress::Limiter as ProgressLimiter;
pub use result::call_result_json;
pub use stdio::LineTransport;

use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt as _;
use tackle_core::registry::{AllowlistError, Selection, ToolSource};
use tackle_core::{Executor, Registry, ToolSession};
use tokio::io::{AsyncRead, AsyncWrite};

use self::handler::Handler;
use self::intake::{InFlight, Intake};
use self::live::{LiveSession, Tracker};

/// Why a fresh tool session could not be made: the maker's own error, whose text is shown to
/// the client.
pub type SessionError = Box<dyn std::error::Error + Send + Sync>;

/// Makes a fresh tool session.
pub type MakeSession = Arc<dyn Fn() -> Result<ToolSession, SessionError> + Send + Sync>;

/// The default idle timeout of an HTTP session (`[mcp.serve] idle_timeout_s`).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// The default cap on live HTTP sessions (`--max-sessions`, `[mcp.serve] max_sessions`).
pub const DEFAULT_MAX_SESSIONS: usize = 64;

/// How the server behaves.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// `tools/list` page size; `None` lists everything at once.
    pub page_size: Option<usize>,
    /// Whether the permission mode can ask (anything but `bypass`): asks then go to the
    /// client through elicitation.
    pub approvals: bool,
    /// How long an HTTP session may stay idle (no request in flight) before it ends.
    pub idle_timeout: Duration,
    /// The most HTTP sessions alive at once (at least 1); when full, the session idle the
    /// longest ends to make room, and without an idle one `initialize` is refused.
    pub max_sessions: usize,
    /// The bearer token every HTTP request must carry; `None` asks for none.
    pub auth_token: Option<AuthToken>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            page_size: None,
            approvals: false,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_sessions: DEFAULT_MAX_SESSIONS,
            auth_token: None,
        }
    }
}

/// A failure to serve.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("cannot open a tool session: {0}")]
    Session(#[source] SessionError),
    #[error("the MCP session ended before it was initialized: {0}")]
    Handshake(String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// What every MCP session of a server shares.
pub(crate) struct ServerShared {
    factory: MakeSession,
    executor: Executor,
    options: ServerOptions,
    tracker: Tracker,
    rendered: listing::Shared,
}

/// Tackle's MCP server.
#[derive(Clone)]
pub struct McpServer {
    shared: Arc<ServerShared>,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer").field("options", &self.shared.options).finish_non_exhaustive()
    }
}

impl McpServer {
    /// A server whose MCP sessions each get a session from `factory`, run by `executor`.
    pub fn new(factory: MakeSession, executor: Executor, options: ServerOptions) -> Self {
        McpServer {
            shared: Arc::new(ServerShared {
                factory,
                executor,
                options,
                tracker: Tracker::default(),
                rendered: listing::Shared::default(),
            }),
        }
    }

    /// A handler with a fresh tool session, and that session.
    fn handler(&self) -> Result<(Handler, Arc<LiveSession>), ServeError> {
        let session = (self.shared.factory)().map_err(ServeError::Session)?;
        let live = LiveSession::new(session, &self.shared.tracker);
        Ok((Handler::new(Arc::clone(&self.shared), Arc::clone(&live)), live))
    }

    /// Serves one MCP session over stdin and stdout until stdin ends.
    pub async fn serve_stdio(&self) -> Result<(), ServeError> {
        let (input, output, _restore) = stdio::standard_streams();
        self.serve_io(input, output).await
    }

    /// Serves one MCP session over a reader and a writer (newline-delimited JSON-RPC) until
    /// the reader ends; then every tool of the session is closed (shells and jobs killed)
    /// before this returns.
    pub async fn serve_io<R, W>(&self, reader: R, writer: W) -> Result<(), ServeError>
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (handler, live) = self.handler()?;
        let running = handler.serve(Intake::new(LineTransport::new(reader, writer), InFlight::new())).await;
        let result = match running {
            Ok(running) => {
                let _ = running.waiting().await;
                Ok(())
            }
            // A client that leaves before `initialize` is not an error of the server.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => Ok(()),
            Err(err) => Err(ServeError::Handshake(err.to_string())),
        };
        // This session's own close, awaited here: by now rmcp has let go of the handler, and
        // a close left to `Drop` would run in the background while the process exits.
        live.close().await;
        result
    }

    /// Closes the tools of every live session (shells and jobs are killed), and waits for
    /// the sessions that ended on their own to finish closing.
    pub async fn shutdown(&self) {
        self.shared.tracker.close_all().await;
    }

    /// The number of tool sessions alive (one per MCP session).
    pub fn live_sessions(&self) -> usize {
        self.shared.tracker.live().len()
    }
}

/// Tools that steer an agent's own loop and mean nothing to another agent (docs/mcp.md#tools); the
/// default of `tackle mcp serve` leaves them out.
pub fn is_loop_control(name: &str) -> bool {
    matches!(name, "task_done" | "tool_search" | "subagent" | "sequentialthinking")
        || name.starts_with("team_")
        || name.starts_with("todo_")
}

/// The tools `tackle mcp serve` exposes by default: the `default` toolset's built-ins (and the
/// tools defined in files, which join it) plus
/// the editors (`str_replace_based_edit_tool`, `json_edit_tool`, `ckg`, those that exist),
/// minus the loop-control tools. Imported MCP tools are never in it.
pub fn default_selection(registry: &Registry) -> Result<Selection, AllowlistError> {
    let mut list = vec!["default"];
    list.extend(
        ["str_replace_based_edit_tool", "json_edit_tool", "ckg"].into_iter().filter(|n| registry.get(n).is_some()),
    );
    let mut selection = registry.select(&list.join(","), "default")?;
    selection.names.retain(|name| !is_loop_control(name) && is_builtin(registry, name));
    Ok(selection)
}

/// What `tackle mcp serve --tools LIST` serves: the allowlist (a list starting with a removal
/// starts from [`default_selection`]), where imported MCP tools count only when an entry
/// names them (`mcp__git__*`, `mcp__git__git_status`), so that Tackle never re-exports a
/// server's tools by accident and no two servers feed each other in a loop.
///
/// A list of only `+NAME` and `-NAME` entries adjusts the default (`+apply_patch`, `-bash`)
/// instead of replacing it.
pub fn selection(registry: &Registry, list: Option<&str>) -> Result<Selection, AllowlistError> {
    let default = default_selection(registry)?;
    let Some(list) = list else { return Ok(default) };
    let entries: Vec<&str> = list_entries(list).collect();
    let adjusts = !entries.is_empty() && entries.iter().all(|entry| entry.starts_with(['+', '-']));
    let list = if adjusts {
        let added = entries.iter().map(|entry| entry.strip_prefix('+').unwrap_or(entry));
        default.names.iter().map(String::as_str).chain(added).collect::<Vec<_>>().join(",")
    } else {
        list.to_owned()
    };
    let mut selection = registry.select(&list, &default.names.join(","))?;
    let named: Vec<globset::GlobMatcher> = list_entries(&list)
        .filter(|entry| entry.starts_with("mcp__"))
        .filter_map(|entry| globset::Glob::new(entry).ok().map(|glob| glob.compile_matcher()))
        .collect();
    selection.names.retain(|name| is_builtin(registry, name) || named.iter().any(|glob| glob.is_match(name)));
    Ok(selection)
}

/// Whether `name` is Tackle's own tool: a built-in, or one defined in a file (never an
/// imported MCP tool).
fn is_builtin(registry: &Registry, name: &str) -> bool {
    registry.get(name).is_some_and(|entry| matches!(entry.source, ToolSource::Builtin | ToolSource::File(_)))
}

/// The entries of an allowlist.
fn list_entries(list: &str) -> impl Iterator<Item = &str> {
    list.split(|c: char| c == ',' || c.is_whitespace()).filter(|entry| !entry.is_empty())
}

/// Whether an allowlist names imported MCP tools (only then does `serve` start MCP servers).
pub fn names_imported_tools(list: Option<&str>) -> bool {
    list.is_some_and(|list| list_entries(list).any(|entry| entry.trim_start_matches('+').starts_with("mcp__")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::sync::Arc;
    use tackle_core::{BoxFuture, DynTool, PreparedCall, ToolError, ToolSpec};

    struct Stub(ToolSpec);

    impl DynTool for Stub {
        fn spec(&self) -> &ToolSpec {
            &self.0
        }
        fn prepare(&self, _args: &serde_json::Value) -> Result<PreparedCall, ToolError> {
            Err(ToolError::Failed("stub".into()))
        }
        fn close(&self) -> BoxFuture<'_, ()> {
            Box::pin(async {})
        }
    }

    fn registry() -> Registry {
        let mut registry = Registry::new();
        let mut add = |name: &str, toolsets: &[&str], source: ToolSource| {
            let spec = ToolSpec::new(name, "d").input_schema(serde_json::json!({}));
            registry.register_dyn(toolsets, source, Arc::new(move || Arc::new(Stub(spec.clone())) as Arc<dyn DynTool>));
        };
        add("read_file", &["default"], ToolSource::Builtin);
        add("task_done", &["default"], ToolSource::Builtin);
        add("todo_write", &["default"], ToolSource::Builtin);
        add("sequentialthinking", &["trae"], ToolSource::Builtin);
        add("json_edit_tool", &[], ToolSource::Builtin);
        let mcp = ToolSource::Mcp("git".into());
        add("mcp__git__git_status", &["default", "mcp"], mcp.clone());
        add("mcp__git__git_log", &["default", "mcp"], mcp);
        registry
    }

    #[test]
    fn the_default_serves_builtins_without_loop_control() {
        assert_eq!(default_selection(&registry()).unwrap().names, ["read_file", "json_edit_tool"]);
        assert_eq!(selection(&registry(), None).unwrap().names, ["read_file", "json_edit_tool"]);
    }

    #[test]
    fn imported_tools_are_served_only_when_named() {
        let registry = registry();
        let names = |list: &str| selection(&registry, Some(list)).unwrap().names;
        assert_eq!(names("all"), ["read_file", "task_done", "todo_write", "sequentialthinking", "json_edit_tool"]);
        assert_eq!(names("default"), ["read_file", "task_done", "todo_write"]);
        assert_eq!(names("read_file,mcp__git__*"), ["read_file", "mcp__git__git_status", "mcp__git__git_log"]);
        assert_eq!(names("mcp__git__git_log"), ["mcp__git__git_log"]);
        assert_eq!(names("-json_edit_tool"), ["read_file"]);
        assert_eq!(names("+sequentialthinking"), ["read_file", "sequentialthinking", "json_edit_tool"]);
        assert_eq!(names("+sequentialthinking,-read_file"), ["sequentialthinking", "json_edit_tool"]);
        assert_eq!(names("+mcp__git__git_log"), ["read_file", "json_edit_tool", "mcp__git__git_log"]);
        assert!(names_imported_tools(Some("+mcp__git__git_log")));
        assert!(names_imported_tools(Some("default, mcp__git__*")));
        assert!(!names_imported_tools(Some("default,-mcp")));
        assert!(!names_imported_tools(None));
        assert!(selection(&registry, Some("nope")).is_err());
    }
}
