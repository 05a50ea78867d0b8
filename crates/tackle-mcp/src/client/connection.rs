//! One connection to one MCP server (docs/mcp.md#startup, #timeouts-cancellation-crashes): start it (initialize, then list its
//! tools, within the startup timeout), call its tools (timeout restarted by progress, at most
//! ten times the call timeout in all; cancellation sent as `notifications/cancelled`), notice
//! a crash (a stdio server's exit, or a lost HTTP connection: every call in flight fails at
//! once with the crash message), restart or reconnect it on the next call
//! after a backoff of 1, 2 and 4 s, give up after 3 failures within 5 minutes, and shut it
//! down (close stdin, SIGTERM, SIGKILL).
//!
//! A call is never retried: it may not be idempotent.

use std::path::{Path, PathBuf};
use std::str::FromStr as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use rmcp::handler::client::progress::ProgressDispatcher;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientConfig, ClientRequest,
    PaginatedRequestParams, ProgressNotificationParam, ServerResult, Tool,
};
use rmcp::model::{ElicitRequestParams, ElicitResult};
use rmcp::service::{
    ClientInitializeError, NotificationContext, PeerRequestOptions, RequestContext, RoleClient, RunningService,
    ServiceError,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, Peer, ServiceExt as _};
use serde_json::{Value, json};
use tackle_core::{Progress, ToolContext, ToolError, ToolOutput};

use super::config::{Endpoint, ServerConfig};
use super::elicitation::{ElicitAnswer, Elicitor, Form, MAX_FIELDS, Unattended};
use super::oauth::{self, SignIn, SignedInClient};
use super::result;
use super::transport::{
    self, ChildLines, ChildProcess, Launch, LoginNeeded, Lost, StreamOpenError, TapClient, TaskTap,
};

/// Backoff before the 1st, 2nd and 3rd restart.
pub const BACKOFF: [Duration; 3] = [Duration::from_secs(1), Duration::from_secs(2), Duration::from_secs(4)];

/// Failures within this window that mark a server failed.
pub const FAILURE_WINDOW: Duration = Duration::from_secs(5 * 60);

/// Failures within the window that mark a server failed.
pub const MAX_FAILURES: usize = 3;

/// `tools/list` pages followed at most.
pub const MAX_PAGES: usize = 100;

/// How long progress reports that trail a result are waited for.
const PROGRESS_TRAIL: Duration = Duration::from_millis(20);

/// How long a crashed stdio server is given to report its exit status.
const EXIT_REPORT_WAIT: Duration = Duration::from_secs(1);

/// Why a server did not start or its tools could not be listed; the text is for the person
/// (it follows "MCP server 'NAME' was left out: ").
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Initialize and the first listing took longer than the startup timeout.
    #[error("it did not start within {} ms", .0.as_millis())]
    StartTimeout(Duration),
    /// A relisting found the server down.
    #[error("the server is not running")]
    NotRunning,
    /// A relisting took longer than the startup timeout.
    #[error("tools/list did not answer within {} ms", .0.as_millis())]
    ListTimeout(Duration),
    /// A stdio server's program could not be started.
    #[error("cannot start '{command}': {source}")]
    Spawn {
        command: String,
        #[source]
        source: std::io::Error,
    },
    /// A stream to the server could not be opened (the opener's own words).
    #[error(transparent)]
    Open(StreamOpenError),
    /// `initialize` failed; `detail` says how, with the server's exit and where its stderr is
    /// when known.
    #[error("initialize failed: {detail}")]
    Initialize {
        detail: String,
        #[source]
        source: Box<ClientInitializeError>,
    },
    #[error("cannot build an HTTP client: {0}")]
    HttpClient(#[source] reqwest::Error),
    /// The server needs a sign-in that could not be had.
    #[error(transparent)]
    SignIn(crate::client::oauth::OAuthError),
    #[error("bad header name '{name}': {source}")]
    HeaderName {
        name: String,
        #[source]
        source: http::header::InvalidHeaderName,
    },
    #[error("bad header value: {0}")]
    HeaderValue(#[source] http::header::InvalidHeaderValue),
    /// `tools/list` was answered with an error, or not at all.
    #[error("tools/list failed: {0}")]
    List(#[source] ServiceError),
}

/// The client side of the protocol: Tackle declares elicitation (form mode, answered by
/// the connection's [`Elicitor`]), no roots or sampling.
#[derive(Clone)]
struct ClientSide {
    progress: ProgressDispatcher,
    changed: Arc<AtomicBool>,
    server: String,
    elicitor: Arc<dyn Elicitor>,
    /// Requests of Tackle's in flight to this server ([`Connection::in_request`]).
    busy: Arc<std::sync::atomic::AtomicUsize>,
}

impl ClientHandler for ClientSide {
    fn get_info(&self) -> ClientConfig {
        let info = json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "tackle", "version": env!("CARGO_PKG_VERSION")}
        });
        serde_json::from_value(info).unwrap_or_default()
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        let wire = serde_json::to_value(&request).unwrap_or_default();
        let answer = if wire.get("mode").and_then(Value::as_str) == Some("url") {
            // Tackle opens no links on a server's behalf.
            ElicitAnswer::Decline
        } else if self.busy.load(Ordering::SeqCst) == 0 {
            // A form is an answer to something Tackle asked (a call, a read): one out of the
            // blue would take the terminal from whatever holds it (chat's prompt).
            tracing::warn!("MCP server '{}' asked for a form while Tackle had asked it nothing; declined", self.server);
            ElicitAnswer::Decline
        } else {
            let message = wire.get("message").and_then(Value::as_str).unwrap_or_default();
            let schema = wire.get("requestedSchema").cloned().unwrap_or_default();
            let form = Form::from_schema(&self.server, message, &schema);
            if form.fields.len() > MAX_FIELDS {
                tracing::warn!(
                    "MCP server '{}' asked for a form of {} fields, more than {MAX_FIELDS}; declined",
                    self.server,
                    form.fields.len()
                );
                ElicitAnswer::Decline
            } else {
                self.elicitor.elicit(form).await
            }
        };
        serde_json::from_value(answer.to_wire()).map_err(|err| rmcp::ErrorData::internal_error(err.to_string(), None))
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.progress.handle_notification(params).await;
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.store(true, Ordering::SeqCst);
    }
}

/// A started server.
struct Live {
    running: tokio::sync::Mutex<Option<RunningService<RoleClient, ClientSide>>>,
    peer: Peer<RoleClient>,
    progress: ProgressDispatcher,
    /// A stdio server's process.
    child: Option<ChildProcess>,
    /// An HTTP server's connection state.
    lost: Option<Lost>,
}

impl Live {
    fn is_gone(&self) -> bool {
        self.peer.is_transport_closed()
            || self.child.as_ref().is_some_and(|c| c.exit_reason().is_some())
            || self.lost.as_ref().is_some_and(|l| l.reason().is_some())
    }

    /// Why the server went away.
    async fn gone_reason(&self, fallback: &str) -> String {
        let known = match (&self.child, &self.lost) {
            (Some(child), _) => child.wait_exit(EXIT_REPORT_WAIT).await,
            (None, Some(lost)) => lost.reason(),
            (None, None) => None,
        };
        known.unwrap_or_else(|| fallback.to_owned())
    }

    /// Waits until the process exits or the connection is lost; why.
    async fn gone(&self) -> String {
        match (&self.child, &self.lost) {
            (Some(child), _) => child.exited().await,
            (None, Some(lost)) => lost.wait().await,
            (None, None) => std::future::pending().await,
        }
    }

    async fn close(&self) {
        if let Some(mut running) = self.running.lock().await.take() {
            // Cancelling the service closes the transport, which closes the server's stdin.
            let _ = running.close_with_timeout(transport::SHUTDOWN_GRACE).await;
        }
        if let Some(child) = &self.child {
            child.shutdown().await;
        }
    }
}

enum Slot {
    /// Not running: never started, or crashed (with the reason and when).
    Down(Option<(String, Instant)>),
    Up(Arc<Live>),
    /// Too many failures; the reason of the last.
    Failed(String),
    Closed,
}

/// One server's connection.
pub struct Connection {
    config: ServerConfig,
    workspace: PathBuf,
    slot: tokio::sync::Mutex<Slot>,
    failures: Mutex<Vec<Instant>>,
    changed: Arc<AtomicBool>,
    tap: TaskTap,
    /// An HTTP server's OAuth sign-in (none with a static `Authorization` header).
    sign_in: Option<Arc<SignIn>>,
    login: LoginNeeded,
    elicitor: Arc<dyn Elicitor>,
    busy: Arc<std::sync::atomic::AtomicUsize>,
}

/// A request of Tackle's to a server in flight, while it lives ([`Connection::in_request`]).
pub struct InRequest(Arc<std::sync::atomic::AtomicUsize>);

impl Drop for InRequest {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection").field("server", &self.config.name).finish_non_exhaustive()
    }
}

/// What `tools/list` gave.
#[derive(Debug, Clone)]
pub struct Listing {
    pub tools: Vec<RemoteTool>,
    /// Why the listing stopped before the end (a repeated cursor, or the page limit).
    pub cut: Option<String>,
}

/// A tool as the server listed it.
#[derive(Debug, Clone)]
pub struct RemoteTool {
    pub tool: Tool,
    /// The server said the tool can only run as an MCP task.
    pub task_only: bool,
}

impl Connection {
    /// A connection that is not started yet.
    pub fn new(config: ServerConfig, workspace: &Path) -> Self {
        let sign_in = oauth::session_sign_in(&config, workspace);
        Connection {
            sign_in,
            config,
            workspace: workspace.to_path_buf(),
            slot: tokio::sync::Mutex::new(Slot::Down(None)),
            failures: Mutex::new(Vec::new()),
            changed: Arc::new(AtomicBool::new(false)),
            tap: TaskTap::default(),
            login: LoginNeeded::default(),
            elicitor: Arc::new(Unattended::Decline),
            busy: Arc::default(),
        }
    }

    /// The connection with sign-ins never started by themselves (`tackle mcp list` and `get`
    /// only look: a server that asks for one shows "needs login").
    pub fn without_sign_in_flows(mut self) -> Self {
        self.sign_in = self.sign_in.map(|s| {
            Arc::new(SignIn::new(&s.server, &s.url, s.settings.clone(), s.store.clone(), s.opener.clone(), false))
        });
        self
    }

    /// Marks a request of Tackle's in flight until the guard is dropped: only then may the
    /// server ask for a form.
    pub fn in_request(&self) -> InRequest {
        self.busy.fetch_add(1, Ordering::SeqCst);
        InRequest(Arc::clone(&self.busy))
    }

    /// The connection with `elicitor` answering the server's forms (by default every form is
    /// declined).
    pub fn with_elicitor(mut self, elicitor: Arc<dyn Elicitor>) -> Self {
        self.elicitor = elicitor;
        self
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// The server's settings.
    pub fn config(&self) -> &ServerConfig {
        &self.config
    }

    /// Starts the server and lists its tools, within the startup timeout.
    pub async fn start(&self) -> Result<Listing, StartError> {
        let startup = self.config.startup_timeout;
        let started = self
            .within_startup(async {
                let live = self.connect().await?;
                let listing = self.list(&live).await?;
                Ok::<_, StartError>((live, listing))
            })
            .await;
        match started {
            Ok(Ok((live, listing))) => {
                *self.slot.lock().await = Slot::Up(live);
                Ok(listing)
            }
            Ok(Err(err)) => Err(err),
            Err(_) => Err(StartError::StartTimeout(startup)),
        }
    }

    /// Runs `work` within the startup timeout, which does not run while the person is signing
    /// in (the sign-in has a window of its own).
    async fn within_startup<T>(&self, work: impl Future<Output = T>) -> Result<T, tokio::time::error::Elapsed> {
        let startup = self.config.startup_timeout;
        let mut work = std::pin::pin!(work);
        loop {
            match tokio::time::timeout(startup, &mut work).await {
                Err(_) if self.sign_in.as_ref().is_some_and(|s| s.signing_in()) => {}
                done => return done,
            }
        }
    }

    /// Lists the tools again (after `notifications/tools/list_changed`).
    pub async fn relist(&self) -> Result<Listing, StartError> {
        self.changed.store(false, Ordering::SeqCst);
        let live = match &*self.slot.lock().await {
            Slot::Up(live) if !live.is_gone() => Arc::clone(live),
            _ => return Err(StartError::NotRunning),
        };
        tokio::time::timeout(self.config.startup_timeout, self.list(&live))
            .await
            .map_err(|_| StartError::ListTimeout(self.config.startup_timeout))?
    }

    /// Whether the HTTP server answered 401 (a sign-in is needed; the seam for OAuth).
    pub fn needs_login(&self) -> bool {
        self.login.is_set()
    }

    /// Whether the server said its tools changed since the last listing.
    pub fn tools_changed(&self) -> bool {
        self.changed.load(Ordering::SeqCst)
    }

    async fn connect(&self) -> Result<Arc<Live>, StartError> {
        let side = ClientSide {
            progress: ProgressDispatcher::new(),
            changed: Arc::clone(&self.changed),
            server: self.config.name.clone(),
            elicitor: Arc::clone(&self.elicitor),
            busy: Arc::clone(&self.busy),
        };
        let progress = side.progress.clone();
        let (running, child, lost) = match &self.config.endpoint {
            Endpoint::Stdio { command, args, env, cwd } => {
                let log = transport::log_rel(&self.config.name);
                let launch = Launch { command, args, env, cwd, workspace: &self.workspace, server: &self.config.name };
                let (lines, child) = transport::spawn(&launch, self.tap.clone())
                    .map_err(|source| StartError::Spawn { command: command.clone(), source })?;
                let running = side.serve(lines).await.map_err(|source| {
                    child.kill();
                    let reason = child.exit_reason().map(|r| format!(" ({r})")).unwrap_or_default();
                    let detail = format!("{source}{reason}; its stderr is in {log}");
                    StartError::Initialize { detail, source: Box::new(source) }
                })?;
                (running, Some(child), None)
            }
            Endpoint::Stream(opener) => {
                let opened = (opener.0)().await.map_err(StartError::Open)?;
                let (lines, child) = ChildLines::over(opened, self.tap.clone());
                let running = side.serve(lines).await.map_err(|source| {
                    let reason = child.exit_reason().map(|r| format!(" ({r})")).unwrap_or_default();
                    StartError::Initialize { detail: format!("{source}{reason}"), source: Box::new(source) }
                })?;
                (running, Some(child), None)
            }
            Endpoint::Http { url, headers, .. } => {
                crate::ensure_tls_provider();
                let client = match &self.sign_in {
                    Some(sign_in) => {
                        SignedInClient::signed_in(Arc::clone(sign_in)).await.map_err(StartError::SignIn)?
                    }
                    None => SignedInClient::Plain(reqwest::Client::builder().build().map_err(StartError::HttpClient)?),
                };
                let mut config = StreamableHttpClientTransportConfig::with_uri(url.as_str());
                for (name, value) in headers {
                    let name = http::HeaderName::from_str(name)
                        .map_err(|source| StartError::HeaderName { name: name.clone(), source })?;
                    let value = http::HeaderValue::from_str(value).map_err(StartError::HeaderValue)?;
                    config.custom_headers.insert(name, value);
                }
                // A session the server forgot is a lost connection, reconnected on the next
                // call; rmcp's own recovery would send the failed request again.
                config.reinit_on_expired_session = false;
                let lost = Lost::default();
                let transport = StreamableHttpClientTransport::with_client(
                    TapClient::new(client, self.tap.clone(), lost.clone()).reporting_login(self.login.clone()),
                    config,
                );
                let running = side.serve(transport).await.map_err(|source| StartError::Initialize {
                    detail: lost.reason().unwrap_or_else(|| transport::in_words(&source)),
                    source: Box::new(source),
                })?;
                (running, None, Some(lost))
            }
        };
        let peer = running.peer().clone();
        Ok(Arc::new(Live { running: tokio::sync::Mutex::new(Some(running)), peer, progress, child, lost }))
    }

    /// Every tool, following cursors (at most 100 pages; a repeated cursor stops the listing;
    /// either is the listing's `cut`).
    async fn list(&self, live: &Live) -> Result<Listing, StartError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = std::collections::HashSet::new();
        let mut cut = None;
        for pages in 1.. {
            let mut params = PaginatedRequestParams::default();
            params.cursor = cursor.clone();
            let page = live.peer.list_tools(Some(params)).await.map_err(StartError::List)?;
            tools.extend(page.tools);
            match page.next_cursor {
                None => break,
                Some(next) if !seen.insert(next.clone()) => {
                    cut = Some(format!("tools/list repeated the cursor '{next}'; the listing stopped there"));
                    break;
                }
                Some(_) if pages >= MAX_PAGES => {
                    cut = Some(format!(
                        "tools/list had more pages after {MAX_PAGES}; only the tools of the first {MAX_PAGES} were imported"
                    ));
                    break;
                }
                Some(next) => cursor = Some(next),
            }
        }
        let tools = tools
            .into_iter()
            .map(|tool| {
                let task_only = self.tap.requires_tasks(&tool.name);
                RemoteTool { tool, task_only }
            })
            .collect();
        Ok(Listing { tools, cut })
    }

    /// The live server, restarting it after a crash (with backoff).
    async fn live(&self, cancel: &tokio_util::sync::CancellationToken) -> Result<Arc<Live>, ToolError> {
        let mut slot = self.slot.lock().await;
        if let Slot::Up(live) = &*slot {
            if !live.is_gone() {
                return Ok(Arc::clone(live));
            }
            let reason = live.gone_reason("the connection closed").await;
            *slot = self.record_failure(reason);
        }
        match &*slot {
            Slot::Up(live) => Ok(Arc::clone(live)),
            Slot::Failed(reason) => Err(self.unavailable(reason)),
            Slot::Closed => Err(self.unavailable("the session has ended")),
            Slot::Down(crash) => {
                if let Some((_, at)) = crash {
                    let failures = self.recent_failures();
                    let wait = BACKOFF[failures.saturating_sub(1).min(BACKOFF.len() - 1)];
                    let due = *at + wait;
                    tokio::select! {
                        () = tokio::time::sleep_until(due.into()) => {}
                        () = cancel.cancelled() => return Err(ToolError::Cancelled(format!("MCP server {} was not restarted: the call was cancelled.", self.config.name))),
                    }
                }
                tracing::info!(server = %self.config.name, "restarting the MCP server");
                match self.within_startup(self.connect()).await {
                    Ok(Ok(live)) => {
                        *slot = Slot::Up(Arc::clone(&live));
                        // Its tools may have changed while it was down.
                        self.changed.store(true, Ordering::SeqCst);
                        Ok(live)
                    }
                    Ok(Err(err)) => {
                        let reason = err.to_string();
                        *slot = self.record_failure(reason.clone());
                        Err(self.unavailable(&reason))
                    }
                    Err(_) => {
                        let reason =
                            format!("it did not restart within {} ms", self.config.startup_timeout.as_millis());
                        *slot = self.record_failure(reason.clone());
                        Err(self.unavailable(&reason))
                    }
                }
            }
        }
    }

    fn unavailable(&self, reason: &str) -> ToolError {
        ToolError::Failed(format!("MCP server {} is unavailable: {reason}", self.config.name))
    }

    fn recent_failures(&self) -> usize {
        let mut failures = self.failures.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let now = Instant::now();
        failures.retain(|at| now.duration_since(*at) < FAILURE_WINDOW);
        failures.len()
    }

    /// Counts a failure; the slot the connection goes to.
    fn record_failure(&self, reason: String) -> Slot {
        let now = Instant::now();
        self.failures.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(now);
        if self.recent_failures() >= MAX_FAILURES {
            tracing::warn!(server = %self.config.name, "the MCP server failed {MAX_FAILURES} times; giving up: {reason}");
            Slot::Failed(reason)
        } else {
            Slot::Down(Some((reason, now)))
        }
    }

    /// Marks `live` as crashed (if it is still the current one); the crash message.
    async fn crashed(&self, live: &Arc<Live>, fallback: &str) -> ToolError {
        let reason = live.gone_reason(fallback).await;
        let mut slot = self.slot.lock().await;
        if let Slot::Up(current) = &*slot
            && Arc::ptr_eq(current, live)
        {
            *slot = self.record_failure(reason.clone());
        }
        ToolError::Failed(format!(
            "MCP server {} exited unexpectedly ({reason}); it will be restarted on the next call.",
            self.config.name
        ))
    }

    /// The longest a call can take before its own timeout fires.
    pub fn max_call_time(&self) -> Duration {
        self.config.call_timeout.saturating_mul(10)
    }

    /// Calls `raw_name` with `args`; progress goes to `ctx`, and `ctx`'s cancellation is
    /// sent to the server.
    pub async fn call(&self, raw_name: &str, args: Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let _in_flight = self.in_request();
        let live = self.live(ctx.cancel_token()).await?;
        let mut params = CallToolRequestParams::new(raw_name.to_owned());
        if let Value::Object(map) = args {
            params = params.with_arguments(map);
        }
        let options = PeerRequestOptions::with_timeout(self.config.call_timeout)
            .reset_timeout_on_progress()
            .with_max_total_timeout(self.max_call_time());
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let handle = match live.peer.send_cancellable_request(request, options).await {
            Ok(handle) => handle,
            Err(err) => return Err(self.crashed(&live, &transport::in_words(&err)).await),
        };
        let id = handle.id.clone();
        let mut progress = live.progress.subscribe(handle.progress_token.clone()).await;
        let response = handle.await_response();
        let mut response = std::pin::pin!(response);
        let mut saw_progress = false;
        let outcome = loop {
            tokio::select! {
                biased;
                outcome = &mut response => {
                    // rmcp hands notifications to the handler in tasks of their own, so the
                    // last report can trail the result by a moment; it still counts.
                    if saw_progress {
                        while let Ok(Some(report)) = tokio::time::timeout(PROGRESS_TRAIL, progress.next()).await {
                            report_progress(ctx, report);
                        }
                    }
                    break outcome;
                }
                Some(report) = progress.next() => {
                    saw_progress = true;
                    report_progress(ctx, report);
                }
                reason = live.gone() => return Err(self.crashed(&live, &reason).await),
                () = ctx.cancel_token().cancelled() => {
                    let cancel = json!({"requestId": id, "reason": "cancelled by the user"});
                    if let Ok(cancel) = serde_json::from_value::<CancelledNotificationParam>(cancel) {
                        let _ = live.peer.notify_cancelled(cancel).await;
                    }
                    return Ok(ToolOutput::error(format!("MCP tool {raw_name} was cancelled.")));
                }
            }
        };
        match outcome {
            Ok(ServerResult::CallToolResult(result)) => {
                let wire = serde_json::to_value(&result).map_err(|err| ToolError::Internal(err.to_string()))?;
                Ok(result::to_output(&wire))
            }
            Ok(other) => Err(ToolError::Failed(format!(
                "MCP server {} answered tools/call with something that is not a tool result: {}",
                self.config.name,
                serde_json::to_string(&other).unwrap_or_default()
            ))),
            Err(ServiceError::McpError(error)) => Ok(result::error_output(error.code.0, &error.message)),
            Err(ServiceError::Timeout { timeout }) => Err(ToolError::Timeout(format!(
                "MCP tool {raw_name} timed out after {} ms (server {}).",
                timeout.as_millis(),
                self.config.name
            ))),
            Err(ServiceError::TransportClosed) => Err(self.crashed(&live, "the connection closed").await),
            Err(err @ ServiceError::TransportSend(_)) => Err(self.crashed(&live, &transport::in_words(&err)).await),
            Err(err) => Err(ToolError::Failed(format!("MCP tool {raw_name} failed: {err}"))),
        }
    }

    /// The live server's peer (restarted after a crash, as for a call), for requests other
    /// than tool calls (resources, prompts: [`super::resources`], [`super::prompts`]).
    pub async fn peer(&self, cancel: &tokio_util::sync::CancellationToken) -> Result<Peer<RoleClient>, ToolError> {
        Ok(self.live(cancel).await?.peer.clone())
    }

    /// The process id of a running stdio server.
    pub async fn pid(&self) -> Option<u32> {
        match &*self.slot.lock().await {
            Slot::Up(live) => live.child.as_ref().and_then(ChildProcess::pid),
            _ => None,
        }
    }

    /// Shuts the server down for good.
    pub async fn shutdown(&self) {
        let previous = std::mem::replace(&mut *self.slot.lock().await, Slot::Closed);
        if let Slot::Up(live) = previous {
            live.close().await;
        }
    }
}

fn report_progress(ctx: &ToolContext, report: ProgressNotificationParam) {
    ctx.progress(Progress { progress: report.progress, total: report.total, message: report.message });
}
