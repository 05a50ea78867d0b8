//! An in-process server on real streamable HTTP over 127.0.0.1, and a raw client for it
//! (reqwest) that sees the status codes, headers and event streams a real client would.

use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{Value, json};
use tackle_mcp::server::{McpServer, ServerOptions};
use tokio::sync::oneshot;

use super::{Probe, server};

/// A running server.
pub struct Running {
    pub url: String,
    pub probe: Arc<Probe>,
    pub server: McpServer,
    pub http: reqwest::Client,
    stop: Option<oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
    _dir: tempfile::TempDir,
}

/// Starts a server over the test registry on a free port.
pub async fn start(options: ServerOptions) -> Running {
    let probe = Arc::new(Probe::default());
    let dir = tempfile::tempdir().unwrap();
    let server = server(&probe, dir.path(), options);
    let bound = server.bind_http("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let url = format!("http://{}/mcp", bound.local_addr().unwrap());
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        bound
            .run(async move {
                let _ = stopped.await;
            })
            .await
            .unwrap();
    });
    tackle_mcp::ensure_tls_provider();
    Running { url, probe, server, http: reqwest::Client::new(), stop: Some(stop), task, _dir: dir }
}

/// A response: status, session id header, and the JSON-RPC messages of the body (one JSON
/// document, or the `data:` events of an SSE stream).
#[derive(Debug)]
pub struct Reply {
    pub status: StatusCode,
    pub session: Option<String>,
    pub headers: reqwest::header::HeaderMap,
    pub messages: Vec<Value>,
    pub text: String,
}

impl Reply {
    /// Reads the rest of a response whose headers have arrived.
    pub async fn read(response: reqwest::Response) -> Reply {
        let status = response.status();
        let headers = response.headers().clone();
        let session = headers.get("mcp-session-id").map(|v| v.to_str().unwrap().to_owned());
        let text = response.text().await.unwrap();
        let messages = if let Ok(value) = serde_json::from_str::<Value>(&text) {
            vec![value]
        } else {
            text.lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .filter_map(|data| serde_json::from_str(data.trim()).ok())
                .collect()
        };
        Reply { status, session, headers, messages, text }
    }

    /// The message answering request `id`.
    pub fn answer(&self, id: &Value) -> &Value {
        self.messages.iter().find(|m| m["id"] == *id).unwrap_or_else(|| panic!("no answer to {id}: {}", self.text))
    }
}

/// The JSON-RPC `initialize` request (id 0).
pub fn initialize_body() -> String {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    .to_string()
}

impl Running {
    /// Sends a POST and returns once its headers have arrived (the message has then reached
    /// the session), leaving the body to [`Reply::read`].
    pub async fn send(&self, session: Option<&str>, body: &str, headers: &[(&str, &str)]) -> reqwest::Response {
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_owned());
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.send().await.unwrap()
    }

    /// Sends a POST and reads its whole answer.
    pub async fn post(&self, session: Option<&str>, body: &str, headers: &[(&str, &str)]) -> Reply {
        Reply::read(self.send(session, body, headers).await).await
    }

    /// Opens a session (`initialize`, then `notifications/initialized`); returns its id.
    pub async fn initialize(&self) -> String {
        self.initialize_with(&[]).await
    }

    /// [`initialize`](Self::initialize) with more headers on both requests.
    pub async fn initialize_with(&self, headers: &[(&str, &str)]) -> String {
        let reply = self.post(None, &initialize_body(), headers).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
        let session = reply.session.expect("no Mcp-Session-Id");
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let ack = self.post(Some(&session), &initialized.to_string(), headers).await;
        assert_eq!(ack.status, StatusCode::ACCEPTED);
        session
    }

    /// Calls a tool and returns the response.
    pub async fn call(&self, session: &str, id: i64, name: &str, args: Value) -> Value {
        let body =
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}});
        let reply = self.post(Some(session), &body.to_string(), &[]).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
        reply.answer(&json!(id)).clone()
    }

    /// Stops the server; returns what the tools saw.
    pub async fn stop(mut self) -> Arc<Probe> {
        self.stop.take().unwrap().send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(10), self.task).await.expect("the server did not stop").unwrap();
        self.probe
    }
}

/// Waits (at most 5 s) until `check` holds.
pub async fn wait_for(what: &str, check: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
