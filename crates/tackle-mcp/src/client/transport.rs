//! How the client reaches a server: a child process on stdio (started in its own process
//! group, stderr to `.tackle/logs/mcp-{server}.log`, shut down by closing stdin, then SIGTERM
//! and SIGKILL to the group; docs/mcp.md#startup), or streamable HTTP through reqwest.
//!
//! Both transports let the client see the raw `tools/list` results, because rmcp's `Tool`
//! drops `execution.taskSupport`, which decides whether a tool can be imported at all.
//!
//! Over HTTP the transport also reports a lost connection ([`Lost`]): a request that cannot
//! reach the server, an event stream that breaks, a session the server no longer knows (`404`,
//! or an error answer that is not about the request, as a `400` for an unknown session is).
//! rmcp alone would leave the calls in flight waiting for their timeouts; the connection
//! treats a lost one as a crash (docs/mcp.md#timeouts-cancellation-crashes).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt as _;
use futures::stream::BoxStream;
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use serde_json::Value;
use tackle_core::fs::state::{self, LOGS};
use tokio::io::AsyncWriteExt as _;
use tokio::sync::watch;

use crate::lines::{Line, LineReader};

/// Raw `tools/list` results seen on the wire: the names of tools that require MCP tasks.
#[derive(Debug, Clone, Default)]
pub struct TaskTap(Arc<Mutex<HashSet<String>>>);

impl TaskTap {
    /// Records the task-only tools of a raw message, if it is a `tools/list` result.
    fn inspect(&self, message: &Value) {
        let Some(tools) = message.get("result").and_then(|r| r.get("tools")).and_then(Value::as_array) else {
            return;
        };
        let mut required = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for tool in tools {
            let task_only = tool.pointer("/execution/taskSupport").and_then(Value::as_str) == Some("required");
            if let (true, Some(name)) = (task_only, tool.get("name").and_then(Value::as_str)) {
                required.insert(name.to_owned());
            }
        }
    }

    /// Whether `tool` can only be called as an MCP task (not supported in v1).
    pub fn requires_tasks(&self, tool: &str) -> bool {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).contains(tool)
    }
}

/// The server's output, read by the client.
pub type ServerOutput = Box<dyn tokio::io::AsyncRead + Send + Unpin>;

/// The server's input, written by the client.
pub type ServerInput = Box<dyn tokio::io::AsyncWrite + Send + Unpin>;

/// A byte stream to a server that someone other than this crate started: its output, its
/// input, and a watch that holds why it ended once it has (set by the opener).
pub struct OpenedStream {
    pub output: ServerOutput,
    pub input: ServerInput,
    pub exit: watch::Receiver<Option<String>>,
}

/// Why a stream could not be opened: the opener's own error, whose text is in words for the
/// person (the connection shows it as is).
pub type StreamOpenError = Box<dyn std::error::Error + Send + Sync>;

/// Opens a stream to a server (again after a crash).
#[derive(Clone)]
pub struct StreamOpener(
    pub Arc<dyn Fn() -> tackle_core::BoxFuture<'static, Result<OpenedStream, StreamOpenError>> + Send + Sync>,
);

impl std::fmt::Debug for StreamOpener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StreamOpener")
    }
}

/// Two openers are the same endpoint only when they are the same opener.
impl PartialEq for StreamOpener {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for StreamOpener {}

/// The stdio side of a server: its output in, its input out.
pub struct ChildLines {
    reader: LineReader<ServerOutput>,
    writer: Arc<tokio::sync::Mutex<Option<ServerInput>>>,
    tap: TaskTap,
}

impl ChildLines {
    /// Lines over an opened stream, and the stream's end as a process without a pid.
    pub fn over(stream: OpenedStream, tap: TaskTap) -> (ChildLines, ChildProcess) {
        let lines = ChildLines {
            reader: LineReader::new(stream.output),
            writer: Arc::new(tokio::sync::Mutex::new(Some(stream.input))),
            tap,
        };
        (lines, ChildProcess { pid: None, exit: stream.exit })
    }
}

impl Transport<RoleClient> for ChildLines {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = Arc::clone(&self.writer);
        async move {
            let mut bytes = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            bytes.push(b'\n');
            let mut guard = writer.lock().await;
            let Some(stdin) = guard.as_mut() else {
                return Err(std::io::Error::new(std::io::ErrorKind::NotConnected, "the server's stdin is closed"));
            };
            stdin.write_all(&bytes).await?;
            stdin.flush().await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            match self.reader.next().await {
                Line::End => return None,
                Line::Oversized => tracing::warn!("an MCP server sent a message over the size limit; it was dropped"),
                Line::Text(line) => {
                    let value: Value = match serde_json::from_slice(&line) {
                        Ok(value) => value,
                        Err(err) => {
                            // Servers sometimes print banners on stdout; they are not messages.
                            tracing::debug!("ignoring a non-JSON line from an MCP server: {err}");
                            continue;
                        }
                    };
                    self.tap.inspect(&value);
                    match serde_json::from_value(value) {
                        Ok(message) => return Some(message),
                        Err(err) => tracing::debug!("ignoring an unusable message from an MCP server: {err}"),
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Dropping stdin is how a stdio server is asked to exit.
        self.writer.lock().await.take();
        Ok(())
    }
}

/// A running stdio server process.
#[derive(Debug)]
pub struct ChildProcess {
    pid: Option<u32>,
    exit: watch::Receiver<Option<String>>,
}

/// What to start.
#[derive(Debug, Clone)]
pub struct Launch<'a> {
    pub command: &'a str,
    pub args: &'a [String],
    pub env: &'a BTreeMap<String, String>,
    pub cwd: &'a Path,
    /// The workspace, whose `.tackle/logs/` holds the log.
    pub workspace: &'a Path,
    /// The server's name (the log's).
    pub server: &'a str,
}

/// Starts a stdio server in its own process group, with the user's environment (without the
/// secrets Tackle stripped from it: a server gets a secret only when its definition's `env`
/// names it) plus `env`, and stderr appended to the log file.
pub fn spawn(launch: &Launch<'_>, tap: TaskTap) -> std::io::Result<(ChildLines, ChildProcess)> {
    let log = open_log(launch.workspace, launch.server)?;
    let mut command = tokio::process::Command::new(launch.command);
    for (name, _) in tackle_policy::secrets::stored() {
        command.env_remove(name);
    }
    command
        .args(launch.args)
        .envs(launch.env)
        .current_dir(launch.cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::from(log))
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command.spawn()?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(std::io::Error::other("the server's stdio could not be captured"));
    };
    let pid = child.id();
    let (tx, exit) = watch::channel(None);
    tokio::spawn(async move {
        let reason = match child.wait().await {
            Ok(status) => describe(status),
            Err(err) => format!("could not be waited for: {err}"),
        };
        let _ = tx.send(Some(reason));
    });
    let (stdout, stdin): (ServerOutput, ServerInput) = (Box::new(stdout), Box::new(stdin));
    let lines =
        ChildLines { reader: LineReader::new(stdout), writer: Arc::new(tokio::sync::Mutex::new(Some(stdin))), tap };
    Ok((lines, ChildProcess { pid, exit }))
}

fn describe(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt as _;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exit status {code}"),
        None => "exited".to_owned(),
    }
}

/// Grace after stdin closes, and again after SIGTERM.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

impl ChildProcess {
    /// The process id (also its process group's id).
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Why the process ended, once it has.
    pub fn exit_reason(&self) -> Option<String> {
        self.exit.borrow().clone()
    }

    /// Waits up to `limit` for the process to end; its reason, if it did.
    pub async fn wait_exit(&self, limit: Duration) -> Option<String> {
        let mut exit = self.exit.clone();
        tokio::time::timeout(limit, exit.wait_for(Option::is_some)).await.ok()?.ok().and_then(|r| r.clone())
    }

    /// Waits until the process ends; why it did.
    pub async fn exited(&self) -> String {
        let mut exit = self.exit.clone();
        let reason = exit.wait_for(Option::is_some).await.ok().and_then(|reason| reason.clone());
        reason.unwrap_or_else(|| "exited".to_owned())
    }

    /// Ends the process once its stdin is closed: wait, SIGTERM the group, wait, SIGKILL.
    pub async fn shutdown(&self) {
        if self.wait_exit(SHUTDOWN_GRACE).await.is_some() {
            return;
        }
        self.signal_group(Signal::Term);
        if self.wait_exit(SHUTDOWN_GRACE).await.is_some() {
            return;
        }
        self.signal_group(Signal::Kill);
        let _ = self.wait_exit(SHUTDOWN_GRACE).await;
    }

    /// Kills the whole group at once (a crash or a drop without shutdown).
    pub fn kill(&self) {
        self.signal_group(Signal::Kill);
    }

    fn signal_group(&self, signal: Signal) {
        #[cfg(unix)]
        if let Some(pid) = self.pid.and_then(|pid| i32::try_from(pid).ok()) {
            let signal = match signal {
                Signal::Term => nix::sys::signal::Signal::SIGTERM,
                Signal::Kill => nix::sys::signal::Signal::SIGKILL,
            };
            // The group may already be gone; that is the point.
            let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), signal);
        }
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        if self.exit_reason().is_none() {
            self.kill();
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Signal {
    Term,
    Kill,
}

/// Whether an HTTP connection is lost, and why (in words): set once by the transport, read
/// and awaited by the connection.
#[derive(Debug, Clone)]
pub struct Lost(Arc<watch::Sender<Option<String>>>);

impl Default for Lost {
    fn default() -> Self {
        Lost(Arc::new(watch::Sender::new(None)))
    }
}

impl Lost {
    /// Records the first reason; later ones are consequences.
    fn record(&self, reason: String) {
        self.0.send_if_modified(|current| {
            if current.is_some() {
                return false;
            }
            tracing::debug!("MCP HTTP connection lost: {reason}");
            *current = Some(reason);
            true
        });
    }

    /// Why the connection was lost, once it has been.
    pub fn reason(&self) -> Option<String> {
        self.0.borrow().clone()
    }

    /// Waits until the connection is lost; the reason.
    pub async fn wait(&self) -> String {
        let mut lost = self.0.subscribe();
        // The sender lives as long as `self`, so the wait ends only with a reason.
        let reason = lost.wait_for(Option::is_some).await.ok().and_then(|reason| reason.clone());
        reason.unwrap_or_default()
    }
}

/// A sign-in error in words: Tackle's own messages as they are, rmcp's prefixed.
fn auth_in_words(err: &rmcp::transport::auth::AuthError) -> String {
    match err {
        rmcp::transport::auth::AuthError::AuthorizationFailed(message) => message.clone(),
        other => format!("the sign-in failed: {other}"),
    }
}

/// A transport error in words ("connection refused"), without the types it went through.
pub fn in_words(err: &(dyn std::error::Error + 'static)) -> String {
    let mut innermost = err;
    let mut io_kind = None;
    let mut timed_out = false;
    let mut source = Some(err);
    while let Some(current) = source {
        if let Some(io) = current.downcast_ref::<std::io::Error>() {
            io_kind = Some(io.kind());
        }
        if let Some(request) = current.downcast_ref::<reqwest::Error>() {
            timed_out |= request.is_timeout();
        }
        innermost = current;
        source = current.source();
    }
    use std::io::ErrorKind;
    match io_kind {
        Some(ErrorKind::ConnectionRefused) => "connection refused".to_owned(),
        Some(ErrorKind::ConnectionReset) => "connection reset".to_owned(),
        Some(ErrorKind::ConnectionAborted | ErrorKind::BrokenPipe | ErrorKind::UnexpectedEof) => {
            "the connection broke".to_owned()
        }
        _ if timed_out => "the request timed out".to_owned(),
        _ => format!("the connection failed: {innermost}"),
    }
}

/// The HTTP client (signed in or not, [`super::oauth::SignedInClient`]) with a tap on the raw SSE events, so `tools/list` results are seen whole, and a
/// [`Lost`] flag for the connection. A server that answers with a plain JSON body instead of
/// an event stream is parsed by rmcp before Tackle sees it, so its task-only tools are not
/// recognised (server-everything, like every TypeScript SDK server, answers with event streams).
#[derive(Clone)]
pub struct TapClient {
    inner: super::oauth::SignedInClient,
    tap: TaskTap,
    lost: Lost,
    login: LoginNeeded,
}

/// Set when the server answered 401 (or `403 insufficient_scope`): the server wants a sign-in
/// Tackle has not done (`tackle mcp list` shows "needs login").
#[derive(Debug, Clone, Default)]
pub struct LoginNeeded(Arc<std::sync::atomic::AtomicBool>);

impl LoginNeeded {
    fn set(&self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether the server asked for a sign-in.
    pub fn is_set(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl TapClient {
    pub fn new(inner: super::oauth::SignedInClient, tap: TaskTap, lost: Lost) -> Self {
        TapClient { inner, tap, lost, login: LoginNeeded::default() }
    }

    /// Reports a server's request for a sign-in to `login`.
    pub fn reporting_login(mut self, login: LoginNeeded) -> Self {
        self.login = login;
        self
    }

    /// Records a failed HTTP exchange that means the connection is lost.
    fn note_error(&self, err: &StreamableHttpError<reqwest::Error>) {
        const SESSION_GONE: &str = "the server no longer knows the session (HTTP 404)";
        match err {
            StreamableHttpError::AuthRequired(_) | StreamableHttpError::InsufficientScope(_) => self.login.set(),
            StreamableHttpError::Client(err) if err.status() == Some(http::StatusCode::UNAUTHORIZED) => {
                self.login.set();
            }
            // No status: the server could not be reached, or the exchange broke.
            StreamableHttpError::Client(err) if err.status().is_none() => self.lost.record(in_words(err)),
            StreamableHttpError::Client(err) if err.status() == Some(http::StatusCode::NOT_FOUND) => {
                self.lost.record(SESSION_GONE.to_owned());
            }
            StreamableHttpError::SessionExpired => self.lost.record(SESSION_GONE.to_owned()),
            StreamableHttpError::Io(err) => self.lost.record(in_words(err)),
            // A sign-in that cannot happen (or failed): the connection cannot go on.
            StreamableHttpError::Auth(err) => {
                self.login.set();
                self.lost.record(auth_in_words(err));
            }
            // Other statuses (405 for no GET stream, 429, 5xx) fail one exchange only.
            _ => {}
        }
    }

    /// A stream whose failure means the connection is lost.
    fn watched(
        &self,
        stream: BoxStream<'static, Result<sse_stream::Sse, SseError>>,
    ) -> BoxStream<'static, Result<sse_stream::Sse, SseError>> {
        let lost = self.lost.clone();
        let tap = self.tap.clone();
        stream
            .inspect(move |event| match event {
                Ok(event) => {
                    if let Some(data) = &event.data
                        && let Ok(value) = serde_json::from_str::<Value>(data)
                    {
                        tap.inspect(&value);
                    }
                }
                Err(err) => lost.record(in_words(err)),
            })
            .boxed()
    }
}

type Headers = HashMap<http::HeaderName, http::HeaderValue>;

impl StreamableHttpClient for TapClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: rmcp::model::ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        let request_id = match (&message, &session_id) {
            (rmcp::model::ClientJsonRpcMessage::Request(request), Some(_)) => Some(request.id.clone()),
            _ => None,
        };
        let response = self
            .inner
            .post_message(uri, message, session_id, auth_header, custom_headers)
            .await
            .inspect_err(|err| self.note_error(err))?;
        Ok(match response {
            StreamableHttpPostResponse::Sse(stream, session) => {
                StreamableHttpPostResponse::Sse(self.watched(stream), session)
            }
            StreamableHttpPostResponse::Json(rmcp::model::ServerJsonRpcMessage::Error(error), session)
                if request_id.is_some() && error.id != request_id =>
            {
                // An error that is not about the request (a 400 for an unknown session, from
                // a server restarted on the same address): the request will never be answered.
                self.lost.record(format!("the server refused the session: {}", error.error.message));
                StreamableHttpPostResponse::Json(rmcp::model::ServerJsonRpcMessage::Error(error), session)
            }
            other => other,
        })
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.inner.delete_session(uri, session_id, auth_header, custom_headers).await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: Headers,
    ) -> Result<BoxStream<'static, Result<sse_stream::Sse, SseError>>, StreamableHttpError<Self::Error>> {
        let stream = self
            .inner
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
            .inspect_err(|err| self.note_error(err))?;
        Ok(self.watched(stream))
    }
}

/// The log file's name of a stdio server's stderr, in [`LOGS`].
fn log_name(server: &str) -> String {
    format!("mcp-{}.log", super::naming::sanitize(server))
}

/// The log file of a stdio server's stderr, relative to the workspace.
pub fn log_rel(server: &str) -> String {
    format!("{}/{}", LOGS.rel, log_name(server))
}

/// Opens the log of `server` for appending, made beneath the workspace and never through a
/// link: a linked `.tackle`, `.tackle/logs` or log file is refused with a notice, and the
/// server's stderr goes nowhere (`/dev/null`) instead.
fn open_log(workspace: &Path, server: &str) -> std::io::Result<std::fs::File> {
    let flags = rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::APPEND | rustix::fs::OFlags::CREATE;
    let opened = LOGS
        .open_dir(workspace, "", true)
        .and_then(|dir| dir.ok_or_else(|| state::StateError::Link { path: LOGS.rel.to_owned(), what: "directory" }))
        .and_then(|dir| state::open_in(&dir, LOGS.rel, &log_name(server), flags));
    match opened {
        Ok(file) => Ok(file),
        Err(err) if err.is_link() => {
            err.notice();
            std::fs::OpenOptions::new().write(true).open("/dev/null")
        }
        Err(err) => Err(std::io::Error::other(err.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_linked_log_is_refused_and_the_target_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let bashrc = outside.path().join("bashrc");
        std::fs::write(&bashrc, "keep").unwrap();
        std::fs::create_dir_all(ws.join(".tackle/logs")).unwrap();
        std::os::unix::fs::symlink(&bashrc, ws.join(".tackle/logs/mcp-x.log")).unwrap();
        let mut log = open_log(&ws, "x").unwrap();
        std::io::Write::write_all(&mut log, b"stderr").unwrap();
        assert_eq!(std::fs::read_to_string(&bashrc).unwrap(), "keep");
        std::fs::remove_dir_all(ws.join(".tackle")).unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.join(".tackle")).unwrap();
        open_log(&ws, "x").unwrap();
        assert!(!outside.path().join("logs").exists());
        std::fs::remove_file(ws.join(".tackle")).unwrap();
        let mut log = open_log(&ws, "x").unwrap();
        std::io::Write::write_all(&mut log, b"line").unwrap();
        assert_eq!(std::fs::read_to_string(ws.join(".tackle/logs/mcp-x.log")).unwrap(), "line");
    }
    use serde_json::json;

    #[test]
    fn the_tap_sees_task_only_tools() {
        let tap = TaskTap::default();
        tap.inspect(&json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
            {"name": "a", "execution": {"taskSupport": "forbidden"}},
            {"name": "b", "execution": {"taskSupport": "required"}},
            {"name": "c"}
        ]}}));
        tap.inspect(&json!({"jsonrpc": "2.0", "id": 2, "result": {"content": []}}));
        assert!(!tap.requires_tasks("a"));
        assert!(tap.requires_tasks("b"));
        assert!(!tap.requires_tasks("c"));
    }
}
