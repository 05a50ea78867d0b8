//! A scripted fake LLM server for Tackle's tests (docs/reference/providers.md#fake-llm-server-for-tests): an axum server on
//! `127.0.0.1:0` that serves `POST /v1/chat/completions` (OpenAI) and `POST /v1/messages`
//! (Anthropic), streamed or whole, from one script of turns. It records every request, checks
//! each against its turn's expectation and the history invariants, and injects faults.
//!
//! ```no_run
//! # async fn demo() {
//! use tackle_testkit::{FakeLlm, Reply, Script, Turn};
//! let server = FakeLlm::start(Script::new([Turn::reply(Reply::text("hello"))])).await;
//! let base = server.openai_base_url(); // http://127.0.0.1:PORT/v1
//! // … run the client against `base` …
//! server.assert_clean();
//! # }
//! ```

mod inspect;
mod script;
mod wire;

pub use inspect::{View, ViewMessage, view};
pub use script::{Expect, Fault, Reply, Script, ScriptCall, ScriptUsage, Turn};
pub use wire::Protocol;

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use axum::routing::post;
use bytes::Bytes;
use serde_json::{Value, json};

/// One request the server received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    pub protocol: Protocol,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
    /// The index of the turn that served it (`None` when the script had run out).
    pub turn: Option<usize>,
}

impl RecordedRequest {
    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The neutral view of the request.
    pub fn view(&self) -> View {
        view(self.protocol, &self.body)
    }
}

#[derive(Debug, Default)]
struct ServerState {
    script: Script,
    next: usize,
    requests: Vec<RecordedRequest>,
    failures: Vec<String>,
}

/// A running fake server; it stops when dropped.
#[derive(Debug)]
pub struct FakeLlm {
    addr: SocketAddr,
    state: Arc<Mutex<ServerState>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn lock(state: &Mutex<ServerState>) -> MutexGuard<'_, ServerState> {
    state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl FakeLlm {
    /// Starts a server on a free loopback port.
    ///
    /// # Panics
    /// If no loopback port can be bound (a broken test machine).
    #[allow(clippy::expect_used)]
    pub async fn start(script: Script) -> FakeLlm {
        let state = Arc::new(Mutex::new(ServerState { script, ..ServerState::default() }));
        let app = Router::new()
            .route("/v1/chat/completions", post(openai))
            .route("/v1/messages", post(anthropic))
            .with_state(Arc::clone(&state));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address");
        let task = tokio::spawn(async move {
            // Small SSE writes must not wait for Nagle's algorithm (40 ms stalls).
            let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
                let _ = tcp.set_nodelay(true);
            });
            let _ = axum::serve(listener, app).await;
        });
        FakeLlm { addr, state, task }
    }

    /// The OpenAI base URL (`http://127.0.0.1:PORT/v1`).
    pub fn openai_base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The Anthropic base URL (`http://127.0.0.1:PORT`).
    pub fn anthropic_base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The base URL for `protocol`.
    pub fn base_url(&self, protocol: Protocol) -> String {
        match protocol {
            Protocol::OpenAi => self.openai_base_url(),
            Protocol::Anthropic => self.anthropic_base_url(),
        }
    }

    /// Every request so far.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.state).requests.clone()
    }

    /// Unmet expectations, invariant violations and requests past the script's end.
    pub fn failures(&self) -> Vec<String> {
        lock(&self.state).failures.clone()
    }

    /// The turns not served yet.
    pub fn remaining_turns(&self) -> usize {
        let state = lock(&self.state);
        state.script.turns.len().saturating_sub(state.next)
    }

    /// Panics with every failure, naming the turn, if there was any.
    pub fn assert_clean(&self) {
        let failures = self.failures();
        assert!(failures.is_empty(), "the fake LLM server saw problems:\n{}", failures.join("\n"));
    }
}

async fn openai(State(state): State<Arc<Mutex<ServerState>>>, headers: HeaderMap, body: Bytes) -> Response {
    serve(state, Protocol::OpenAi, "/v1/chat/completions", headers, body).await
}

async fn anthropic(State(state): State<Arc<Mutex<ServerState>>>, headers: HeaderMap, body: Bytes) -> Response {
    serve(state, Protocol::Anthropic, "/v1/messages", headers, body).await
}

fn error_response(status: StatusCode, message: &str) -> Response {
    let body = json!({"error": {"message": message, "type": "invalid_request_error", "code": "fake_llm"}});
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap_or_default()
}

async fn serve(
    state: Arc<Mutex<ServerState>>,
    protocol: Protocol,
    path: &str,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let body: Value = match serde_json::from_slice(&body) {
        Ok(body) => body,
        Err(err) => {
            lock(&state).failures.push(format!("a request to {path} is not JSON: {err}"));
            return error_response(StatusCode::BAD_REQUEST, "the request body is not JSON");
        }
    };
    let headers: Vec<(String, String)> = headers
        .iter()
        .map(|(name, value)| (name.to_string(), String::from_utf8_lossy(value.as_bytes()).into_owned()))
        .collect();
    let request_view = view(protocol, &body);
    let (turn, index) = {
        let mut guard = lock(&state);
        let index = if guard.next < guard.script.turns.len() {
            guard.next += 1;
            Some(guard.next - 1)
        } else if guard.script.repeat_last && !guard.script.turns.is_empty() {
            Some(guard.script.turns.len() - 1)
        } else {
            None
        };
        let number = guard.requests.len();
        guard.requests.push(RecordedRequest {
            protocol,
            path: path.to_owned(),
            headers,
            body: body.clone(),
            turn: index,
        });
        for problem in &request_view.problems {
            guard.failures.push(format!("request {number} (turn {index:?}): {problem}"));
        }
        let Some(index) = index else {
            guard.failures.push(format!("request {number}: the script has no turn left"));
            return error_response(StatusCode::BAD_REQUEST, "the fake LLM script has no turn left");
        };
        (guard.script.turns[index].clone(), index)
    };
    if !request_view.problems.is_empty() {
        return error_response(StatusCode::BAD_REQUEST, &request_view.problems.join("; "));
    }
    if let Some(expect) = &turn.expect {
        let diffs = inspect::unmet(expect, &request_view);
        if !diffs.is_empty() {
            let message = format!("turn {index}: {}", diffs.join("; "));
            lock(&state).failures.push(message.clone());
            return error_response(StatusCode::BAD_REQUEST, &message);
        }
    }
    let turn = with_results(turn, &request_view);
    respond(protocol, &turn, request_view.stream).await
}

/// The turn with each string argument of the form `{{result:CALL_ID/POINTER}}` replaced by
/// the value at the JSON pointer in the result of call `CALL_ID` that the request carries
/// (parsed as JSON): a scripted model can use an id a tool made up (a task's id). A
/// placeholder that finds nothing is left as it is.
fn with_results(mut turn: Turn, request: &View) -> Turn {
    fn fill(value: &mut Value, request: &View) {
        match value {
            Value::String(text) => {
                let Some(inner) = text.strip_prefix("{{result:").and_then(|t| t.strip_suffix("}}")) else {
                    return;
                };
                let (id, pointer) =
                    inner.split_once('/').map_or((inner, String::new()), |(id, p)| (id, format!("/{p}")));
                let found = request
                    .messages
                    .iter()
                    .flat_map(|m| &m.results)
                    .find(|(call, _)| call == id)
                    .and_then(|(_, content)| serde_json::from_str::<Value>(content).ok())
                    .and_then(|result| result.pointer(&pointer).cloned());
                if let Some(found) = found {
                    *value = found;
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|item| fill(item, request)),
            Value::Object(map) => map.values_mut().for_each(|item| fill(item, request)),
            _ => {}
        }
    }
    if let Some(reply) = turn.reply.as_mut() {
        for call in &mut reply.tool_calls {
            fill(&mut call.args, request);
        }
    }
    turn
}

async fn respond(protocol: Protocol, turn: &Turn, stream: bool) -> Response {
    let fault = turn.fault.clone().unwrap_or_default();
    if let Some(ms) = fault.delay_first_byte_ms {
        tokio::time::sleep(Duration::from_millis(ms)).await;
    }
    if let Some(status) = fault.status {
        let mut builder = Response::builder()
            .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
            .header(header::CONTENT_TYPE, "application/json");
        for (name, value) in &fault.headers {
            let value = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
            builder = builder.header(name.as_str(), value);
        }
        let body = fault.body.clone().unwrap_or_else(|| {
            json!({"error": {"message": format!("injected HTTP {status}"), "type": "fake_error"}}).to_string()
        });
        return builder.body(Body::from(body)).unwrap_or_default();
    }
    let reply = turn.reply.clone().unwrap_or_else(|| Reply::text("(the script gave no reply)"));
    if !stream {
        let body = wire::whole_response(protocol, &reply);
        return Response::builder()
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))
            .unwrap_or_default();
    }
    let mut events = wire::stream_events(protocol, &reply);
    let mut cut = None;
    if let Some(n) = fault.error_after_events {
        let error_type = fault.error_type.as_deref().unwrap_or("overloaded_error");
        events.truncate(n);
        events.push(wire::error_event(protocol, error_type));
    }
    if let Some(n) = fault.malformed_after_events {
        let n = n.min(events.len());
        events.insert(n, "data: {\"choices\": [{\"delta\": {\"content\": \"oops\n\n".to_owned());
    }
    if let Some(n) = fault.disconnect_after_events {
        events.truncate(n);
        cut = Some(());
    }
    let delay = fault.delay_between_chunks_ms.map(Duration::from_millis);
    let (sender, receiver) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(16);
    tokio::spawn(async move {
        for (n, event) in events.into_iter().enumerate() {
            if n > 0
                && let Some(delay) = delay
            {
                tokio::time::sleep(delay).await;
            }
            if sender.send(Ok(Bytes::from(event))).await.is_err() {
                return;
            }
        }
        if cut.is_some() {
            // An error ends the body without its terminating chunk: the client sees a reset.
            // Give the server a moment to flush what was sent before it aborts.
            tokio::time::sleep(Duration::from_millis(30)).await;
            let _ = sender.send(Err(std::io::Error::other("injected disconnect"))).await;
        }
    });
    let stream =
        futures::stream::unfold(
            receiver,
            |mut receiver| async move { receiver.recv().await.map(|item| (item, receiver)) },
        );
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(stream))
        .unwrap_or_default()
}
