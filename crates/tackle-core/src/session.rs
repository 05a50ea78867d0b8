//! One tool session: its tools, workspace, path policy, shared state and event stream. A
//! session lives as long as one agent run, one `tools batch`, or one MCP session; its state
//! (shell, read ledger, edit history, jobs) lives across calls, and `close` releases it.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::FutureExt;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::context::{SessionInfo, SessionState, ToolContext};
use crate::deferral::Deferral;
use crate::events::{EventSink, ExecEvent};
use crate::paths::{NoPaths, PathPolicy};
use crate::registry::ToolSet;
use crate::spill::{SpillDir, remove_old_spills};

/// How to build a session.
#[derive(Clone)]
pub struct ToolSessionConfig {
    /// The workspace root (absolute).
    pub workspace: PathBuf,
    /// The session id; a random one when `None`.
    pub id: Option<String>,
    /// The path policy; without one every path is refused.
    pub path_policy: Option<Arc<dyn PathPolicy>>,
}

impl ToolSessionConfig {
    /// A config for `workspace` (no path policy: every path is refused until one is set).
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        ToolSessionConfig { workspace: workspace.into(), id: None, path_policy: None }
    }
}

impl std::fmt::Debug for ToolSessionConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSessionConfig")
            .field("workspace", &self.workspace)
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

/// A random session id: 16 hex digits.
pub fn new_session_id() -> String {
    let value: u64 = rand::random();
    format!("{value:016x}")
}

/// One tool session.
pub struct ToolSession {
    info: Arc<SessionInfo>,
    state: Arc<SessionState>,
    paths: Arc<dyn PathPolicy>,
    events: EventSink,
    tools: ToolSet,
    closed: AtomicBool,
    json_text_params: HashMap<String, Vec<Vec<String>>>,
}

impl ToolSession {
    /// A session over `tools`. Old spill files of the workspace are cleaned up here.
    pub fn new(config: ToolSessionConfig, tools: ToolSet) -> Self {
        ToolSession::with_state(config, tools, SessionState::default())
    }

    /// A session over `tools` whose state already holds its tools' settings (see
    /// [`SessionState::insert`]).
    pub fn with_state(config: ToolSessionConfig, tools: ToolSet, state: SessionState) -> Self {
        let id = config.id.unwrap_or_else(new_session_id);
        crate::fs::state::notice_links(&config.workspace);
        remove_old_spills(&config.workspace);
        let spill = SpillDir::of(&config.workspace, &id);
        let paths = config.path_policy.unwrap_or_else(|| Arc::new(NoPaths::new(config.workspace.clone())));
        state.get::<Deferral>().set_catalog(tools.specs());
        ToolSession {
            info: Arc::new(SessionInfo { id, workspace: config.workspace, spill }),
            state: Arc::new(state),
            closed: AtomicBool::new(false),
            paths,
            events: EventSink::new(1024),
            tools,
            json_text_params: HashMap::new(),
        }
    }

    /// The session id.
    pub fn id(&self) -> &str {
        &self.info.id
    }

    /// Facts about the session.
    pub fn info(&self) -> &SessionInfo {
        &self.info
    }

    /// The session's tools.
    pub fn tools(&self) -> &ToolSet {
        &self.tools
    }

    /// Replaces the tools between turns (MCP `list_changed`). The tools that leave are closed
    /// by the caller; the catalog of deferred tools ([`Deferral`]) follows the new tools.
    pub fn set_tools(&mut self, tools: ToolSet) -> ToolSet {
        self.state.get::<Deferral>().set_catalog(tools.specs());
        std::mem::replace(&mut self.tools, tools)
    }

    /// The path policy the session's tools resolve paths with.
    pub fn path_policy(&self) -> &Arc<dyn PathPolicy> {
        &self.paths
    }

    /// The shared state of the session's tools.
    pub fn state(&self) -> &Arc<SessionState> {
        &self.state
    }

    /// Subscribes to the session's call events.
    pub fn subscribe(&self) -> broadcast::Receiver<ExecEvent> {
        self.events.subscribe()
    }

    /// Records that `tool` was shown in the `openai-strict` dialect with these parameters
    /// advertised as JSON text; the decoder then parses them back.
    pub fn set_json_text_params(&mut self, tool: &str, paths: Vec<Vec<String>>) {
        if paths.is_empty() {
            self.json_text_params.remove(tool);
        } else {
            self.json_text_params.insert(tool.to_owned(), paths);
        }
    }

    pub(crate) fn json_text_params(&self, tool: &str) -> &[Vec<String>] {
        self.json_text_params.get(tool).map(Vec::as_slice).unwrap_or_default()
    }

    pub(crate) fn events(&self) -> &EventSink {
        &self.events
    }

    /// The context a call of `tool` runs with.
    pub fn context(&self, call_id: &str, tool: &str, cancel: CancellationToken) -> ToolContext {
        ToolContext {
            call_id: call_id.into(),
            tool: tool.into(),
            info: Arc::clone(&self.info),
            state: Arc::clone(&self.state),
            paths: Arc::clone(&self.paths),
            cancel,
            events: self.events.clone(),
            read_only_restricted: false,
        }
    }

    /// Ends the session, once: closes every tool, then every resource registered in its state
    /// (shells and jobs, MCP connections, ...) in reverse order of registration. Later calls
    /// do nothing.
    pub async fn close(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        let closes = self.tools.handles().iter().map(|handle| async move {
            // A tool that panics while closing must not keep the others from closing.
            if AssertUnwindSafe(handle.tool.close()).catch_unwind().await.is_err() {
                tracing::warn!(tool = %handle.spec().name, "the tool panicked while closing");
            }
        });
        futures::future::join_all(closes).await;
        for resource in self.state.take_resources() {
            if AssertUnwindSafe(resource.close()).catch_unwind().await.is_err() {
                tracing::warn!(resource = resource.name(), "a session resource panicked while closing");
            }
        }
    }

    /// Whether [`ToolSession::close`] has run.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Ordering::SeqCst)
    }
}

impl std::fmt::Debug for ToolSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolSession")
            .field("id", &self.info.id)
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}
