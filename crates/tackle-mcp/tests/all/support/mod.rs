//! Shared pieces of the tackle-mcp tests: small real tools whose behaviour the tests can
//! observe (progress, cancellation, closing, the order calls start in), an in-process server
//! over a pipe, and a raw line client that sees exactly the bytes a stdio client would; the
//! same server over HTTP is [`http`].

#![allow(dead_code)]

pub mod client;
pub mod http;
#[macro_use]
pub mod peers;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tackle_core::{
    Executor, Progress, Registry, Tool, ToolContext, ToolError, ToolOutput, ToolSession, ToolSessionConfig, ToolSpec,
};
use tackle_mcp::server::{McpServer, ServerOptions};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader, DuplexStream, ReadHalf, WriteHalf};

/// What the test tools saw.
#[derive(Debug, Default)]
pub struct Probe {
    pub cancelled: AtomicBool,
    pub closed: AtomicUsize,
    pub running: AtomicUsize,
    pub max_running: AtomicUsize,
    /// The labels of the `slow` calls, in the order they started.
    pub started: Mutex<Vec<String>>,
}

/// `echo {text}`: read-only and concurrency-safe, with a structured payload.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EchoInput {
    /// The text to echo.
    pub text: String,
}

pub struct Echo;

impl Tool for Echo {
    type Input = EchoInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("echo", "Echo the text back.").read_only().concurrency_safe()
    }

    async fn call(&self, input: EchoInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(format!("Echo: {}", input.text)).with_structured(json!({"echo": input.text})))
    }
}

/// `slow {steps, step_ms, label?, safe?}`: reports progress after each step, honours
/// cancellation, counts how many calls overlap and records the order in which calls start;
/// concurrency-safe when `safe` is true.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SlowInput {
    pub steps: u32,
    pub step_ms: u64,
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub safe: bool,
}

pub struct Slow {
    pub probe: Arc<Probe>,
}

impl Tool for Slow {
    type Input = SlowInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("slow", "Wait in steps, reporting progress.")
    }

    fn is_concurrency_safe(&self, input: &SlowInput) -> bool {
        input.safe
    }

    async fn call(&self, input: SlowInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if let Some(label) = &input.label {
            self.probe.started.lock().unwrap().push(label.clone());
        }
        let now = self.probe.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.probe.max_running.fetch_max(now, Ordering::SeqCst);
        let result = async {
            for step in 1..=input.steps {
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(input.step_ms)) => {}
                    () = ctx.cancel_token().cancelled() => {
                        self.probe.cancelled.store(true, Ordering::SeqCst);
                        return Err(ToolError::Cancelled("slow was cancelled".into()));
                    }
                }
                ctx.progress(Progress {
                    progress: f64::from(step),
                    total: Some(f64::from(input.steps)),
                    message: Some(format!("step {step}")),
                });
            }
            Ok(ToolOutput::text(format!("done after {} steps", input.steps)))
        }
        .await;
        self.probe.running.fetch_sub(1, Ordering::SeqCst);
        result
    }

    async fn close(&self) {
        self.probe.closed.fetch_add(1, Ordering::SeqCst);
    }
}

/// `fail`: always fails.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct FailInput {}

pub struct Fail;

impl Tool for Fail {
    type Input = FailInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("fail", "Always fails.")
    }

    async fn call(&self, _input: FailInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Err(ToolError::Failed("it failed, as it always does".into()))
    }
}

/// A registry with the test tools and the built-ins.
pub fn registry(probe: &Arc<Probe>) -> Registry {
    let mut registry = tackle_tools::builtin_registry();
    registry.register(&["default"], || Echo);
    let probe = Arc::clone(probe);
    registry.register(&["default"], move || Slow { probe: Arc::clone(&probe) });
    registry.register(&["default"], || Fail);
    registry
}

/// A server over the test registry (every tool) in `workspace`, allowing every call.
pub fn server(probe: &Arc<Probe>, workspace: &std::path::Path, options: ServerOptions) -> McpServer {
    server_with(probe, workspace, options, Executor::default())
}

/// A server over the test registry with the given executor.
pub fn server_with(
    probe: &Arc<Probe>,
    workspace: &std::path::Path,
    options: ServerOptions,
    executor: Executor,
) -> McpServer {
    let registry = registry(probe);
    let selection = registry.select("sequentialthinking,task_done,echo,slow,fail", "all").unwrap();
    let config = ToolSessionConfig::new(workspace.to_path_buf());
    McpServer::new(
        Arc::new(move || Ok(ToolSession::new(config.clone(), registry.instantiate(&selection)))),
        executor,
        options,
    )
}

/// A client end of an in-process stdio-like connection, speaking raw JSON lines.
pub struct RawClient {
    reader: BufReader<ReadHalf<DuplexStream>>,
    writer: WriteHalf<DuplexStream>,
}

/// Starts `server` on a pipe; returns the raw client and the server task.
pub fn connect(server: &McpServer) -> (RawClient, tokio::task::JoinHandle<Result<(), tackle_mcp::server::ServeError>>) {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_io);
    let server = server.clone();
    let task = tokio::spawn(async move { server.serve_io(server_read, server_write).await });
    let (client_read, client_write) = tokio::io::split(client_io);
    (RawClient { reader: BufReader::new(client_read), writer: client_write }, task)
}

impl RawClient {
    /// Sends one line as is.
    pub async fn send_raw(&mut self, line: &str) {
        self.writer.write_all(line.as_bytes()).await.unwrap();
        self.writer.write_all(b"\n").await.unwrap();
        self.writer.flush().await.unwrap();
    }

    /// Sends one message.
    pub async fn send(&mut self, message: Value) {
        self.send_raw(&message.to_string()).await;
    }

    /// The next message, or `None` after `wait` without one (or at end of stream).
    pub async fn recv_within(&mut self, wait: Duration) -> Option<Value> {
        let mut line = String::new();
        match tokio::time::timeout(wait, self.reader.read_line(&mut line)).await {
            Ok(Ok(0)) | Err(_) => None,
            Ok(Ok(_)) => Some(serde_json::from_str(&line).unwrap_or_else(|err| panic!("not JSON ({err}): {line}"))),
            Ok(Err(err)) => panic!("read failed: {err}"),
        }
    }

    /// The next message (fails after 10 s).
    pub async fn recv(&mut self) -> Value {
        self.recv_within(Duration::from_secs(10)).await.expect("no message within 10 s")
    }

    /// Sends a request and returns its response, collecting the notifications before it.
    pub async fn request(&mut self, id: i64, method: &str, params: Value) -> (Value, Vec<Value>) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await;
        let mut notes = Vec::new();
        loop {
            let message = self.recv().await;
            if message.get("id") == Some(&json!(id)) {
                return (message, notes);
            }
            notes.push(message);
        }
    }

    /// `initialize` at `version`, then `notifications/initialized`; returns the result.
    pub async fn initialize(&mut self, version: &str) -> Value {
        let params =
            json!({"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}});
        let (response, _) = self.request(0, "initialize", params).await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await;
        response["result"].clone()
    }

    /// Closes the client's side (the server sees end of input).
    pub async fn close(mut self) {
        self.writer.shutdown().await.unwrap();
    }
}
