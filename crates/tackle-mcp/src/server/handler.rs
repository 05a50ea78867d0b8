//! The MCP request handler of one MCP session: `initialize` (versions of docs/mcp.md#versions),
//! `tools/list` (docs/mcp.md#tools), `tools/call` through the core executor (docs/mcp.md#calls) with progress and
//! cancellation (docs/mcp.md#calls), `logging/setLevel`, and nothing of the 2026-07-28 era.

use std::borrow::Cow;
use std::sync::Arc;

#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorCode, ErrorData, InitializeRequestParams, InitializeResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ServerConfig,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{Peer, ServerHandler};
use serde_json::{Value, json};
use tackle_core::{Executor, ToolCall};

use super::ServerShared;
use super::approval;
use super::intake;
use super::listing;
use super::live::LiveSession;
use super::progress;
use super::result;

/// The versions `initialize` accepts (and echoes); anything else gets the newest.
pub const SUPPORTED_VERSIONS: &[ProtocolVersion] = &[
    ProtocolVersion::V_2024_11_05,
    ProtocolVersion::V_2025_03_26,
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_11_25,
];

/// The handler of one MCP session, owning its tool session.
#[derive(Clone)]
pub struct Handler {
    shared: Arc<ServerShared>,
    live: Arc<LiveSession>,
}

impl Handler {
    pub(super) fn new(shared: Arc<ServerShared>, live: Arc<LiveSession>) -> Self {
        Handler { shared, live }
    }

    /// The executor for a call from `peer`: the caller's, with the approver that fits the
    /// client when the permission mode can ask.
    fn executor_for(&self, peer: &Peer<RoleServer>) -> Cow<'_, Executor> {
        if self.shared.options.approvals {
            Cow::Owned(self.shared.executor.clone().with_approver(approval::for_peer(peer)))
        } else {
            Cow::Borrowed(&self.shared.executor)
        }
    }

    fn instructions(&self) -> String {
        format!(
            "Tackle's tools, working in the workspace {}. Paths may be relative to the workspace root, or absolute \
             inside it.",
            self.live.session().info().workspace.display()
        )
    }
}

/// The JSON-RPC error for a name that resolves to no tool (the spec's form).
fn unknown_tool(name: &str, available: Vec<String>) -> ErrorData {
    ErrorData::new(ErrorCode::INVALID_PARAMS, format!("Unknown tool: {name}"), Some(json!({ "available": available })))
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        let info = json!({
            "protocolVersion": ProtocolVersion::V_2025_11_25,
            "capabilities": {"tools": {"listChanged": true}, "logging": {}},
            "serverInfo": {"name": "tackle", "version": env!("CARGO_PKG_VERSION")},
            "instructions": self.instructions(),
        });
        serde_json::from_value(info).unwrap_or_else(|err| {
            tracing::error!("cannot build the server info: {err}");
            InitializeResult::default()
        })
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(SUPPORTED_VERSIONS)
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn discover(&self, _context: RequestContext<RoleServer>) -> Result<rmcp::model::DiscoverResult, ErrorData> {
        // The gate answers the probe before it gets here; this keeps rmcp's default (which
        // advertises 2026-07-28) from ever answering it.
        Err(ErrorData::new(ErrorCode::METHOD_NOT_FOUND, "Method not found: server/discover", None))
    }

    #[allow(deprecated)] // logging is deprecated by the 2026 era, which Tackle does not speak
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        tracing::debug!(level = ?request.level, "client set the log level");
        Ok(())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let cursor = request.and_then(|r| r.cursor);
        listing::page(self.live.rendered_tools(&self.shared.rendered), cursor.as_deref(), self.shared.options.page_size)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Taken first, so that a call refused below gives up its place at once.
        let Some(ticket) = intake::ticket(&mut context.extensions) else {
            return Err(ErrorData::internal_error("the call reached the server without a place in line", None));
        };
        let session = self.live.session();
        let Some(handle) = session.tools().resolve(&request.name) else {
            let available = session.tools().specs().map(|spec| spec.name.clone()).collect();
            return Err(unknown_tool(&request.name, available));
        };
        let args = request.arguments.map_or_else(|| json!({}), Value::Object);
        let concurrency_safe = handle.tool.prepare(&args).is_ok_and(|prepared| prepared.concurrency_safe);
        let cancel = context.ct.clone();
        tokio::select! {
            () = ticket.turn(concurrency_safe) => {}
            () = cancel.cancelled() => {
                return Err(ErrorData::new(ErrorCode::INTERNAL_ERROR, "cancelled before it ran", None));
            }
        };
        let call_id = self.live.next_call_id();
        let call = ToolCall::new(call_id.clone(), request.name.to_string(), args);
        let executor = self.executor_for(&context.peer);
        // The executor's future is large: boxed, it is not copied each time rmcp moves the
        // handler's future (into a task of its own, for every request).
        let run = Box::pin(executor.run(session, call, &cancel));
        let output = match context.meta.get_progress_token() {
            Some(token) => {
                let events = session.subscribe();
                progress::forward(run, events, &call_id, token, &context.peer).await
            }
            None => run.await,
        };
        let result = result::call_result(&output)
            .map_err(|err| ErrorData::internal_error(format!("cannot encode the result: {err}"), None))?;
        Ok(result.into())
    }
}
