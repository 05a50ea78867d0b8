//! The streamable HTTP transport of `tackle mcp serve --http ADDR` (mcp.md §1.1): rmcp's
//! tower service at `/mcp`, served by axum on a loopback address only, behind one layer that
//! gives bad or foreign input the answers of the [`gate`](super::gate) and refuses
//! `MCP-Protocol-Version` headers Tackle does not speak.
//!
//! rmcp does the rest: `Mcp-Session-Id` sessions (random 128-bit hex ids here), `400` for a
//! request without one, `404` for an unknown or ended one, `DELETE` to end one, SSE answers
//! so progress can precede a result, the `GET` stream for list changes, `Host` checked against
//! the bound address and `Origin` against loopback origins (`403`), idle sessions ended.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::WorkerTransport;
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::LocalSessionWorker;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, SessionConfig, create_local_session,
};
use rmcp::transport::streamable_http_server::{
    RestoreOutcome, SessionId, SessionManager, StreamableHttpServerConfig, StreamableHttpService,
};
use tokio_util::sync::CancellationToken;

use super::gate::{self, Screened};
use super::handler::SUPPORTED_VERSIONS;
use super::{McpServer, ServeError};
use crate::lines::MAX_LINE_BYTES;

/// The path of the MCP endpoint.
pub const ENDPOINT: &str = "/mcp";

const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

/// Browser origins allowed to reach the server (any port on a loopback host).
const LOOPBACK_ORIGINS: &[&str] = &[
    "http://127.0.0.1:*",
    "http://localhost:*",
    "http://[::1]:*",
    "https://127.0.0.1:*",
    "https://localhost:*",
    "https://[::1]:*",
];

/// Parses `--http ADDR`: a loopback address with a port (`127.0.0.1:PORT`, `[::1]:PORT`,
/// `localhost:PORT`). Anything else is refused with a message saying why.
pub fn check_loopback(addr: &str) -> Result<SocketAddr, String> {
    let usage = || format!("--http takes a loopback address such as 127.0.0.1:PORT (port 0 picks one), not '{addr}'");
    let parsed = match addr.strip_prefix("localhost:") {
        Some(port) => port.parse::<u16>().map(|port| SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port)).ok(),
        None => addr.parse::<SocketAddr>().ok(),
    };
    match parsed {
        Some(socket) if socket.ip().is_loopback() => Ok(socket),
        Some(_) => Err(format!("{}; serving beyond this machine is not supported", usage())),
        None => Err(usage()),
    }
}

/// A bound HTTP server, ready to run.
pub struct HttpServer {
    listener: tokio::net::TcpListener,
    router: axum::Router,
    cancel: CancellationToken,
    server: McpServer,
}

impl std::fmt::Debug for HttpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpServer").field("addr", &self.listener.local_addr().ok()).finish_non_exhaustive()
    }
}

impl McpServer {
    /// Binds `addr` (which must be loopback) and prepares the `/mcp` endpoint.
    pub async fn bind_http(&self, addr: SocketAddr) -> Result<HttpServer, ServeError> {
        if !addr.ip().is_loopback() {
            return Err(ServeError::Io(std::io::Error::other(format!("{addr} is not a loopback address"))));
        }
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let bound = listener.local_addr()?;
        let cancel = CancellationToken::new();
        let host = match bound.ip() {
            IpAddr::V6(ip) => format!("[{ip}]"),
            IpAddr::V4(ip) => ip.to_string(),
        };
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts([format!("{host}:{}", bound.port()), format!("localhost:{}", bound.port())])
            .with_allowed_origins(LOOPBACK_ORIGINS.iter().copied())
            .enforce_origin_validation()
            .with_max_request_body_bytes(MAX_LINE_BYTES)
            .with_cancellation_token(cancel.clone());
        let mut session_config = SessionConfig::default();
        session_config.keep_alive = Some(self.shared.options.idle_timeout);
        let sessions = Arc::new(HexSessions::new(session_config));
        let server = self.clone();
        let service =
            StreamableHttpService::new(move || server.handler().map_err(std::io::Error::other), sessions, config);
        let router = axum::Router::new().route_service(ENDPOINT, service).layer(axum::middleware::from_fn(guard));
        Ok(HttpServer { listener, router, cancel, server: self.clone() })
    }
}

impl HttpServer {
    /// The bound address (the port chosen for port 0).
    pub fn local_addr(&self) -> Result<SocketAddr, ServeError> {
        Ok(self.listener.local_addr()?)
    }

    /// Serves until `shutdown` completes; then ends every MCP session and closes its tools.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send + 'static) -> Result<(), ServeError> {
        let cancel = self.cancel.clone();
        let stop = async move {
            shutdown.await;
            cancel.cancel();
        };
        let served = axum::serve(self.listener, self.router).with_graceful_shutdown(stop).await;
        self.server.shutdown().await;
        Ok(served?)
    }
}

/// Screens POST bodies through the gate and checks the protocol-version header.
async fn guard(request: Request, next: Next) -> Response {
    if request.method() != Method::POST {
        if let Some(refusal) = unsupported_version(&request) {
            return refusal;
        }
        let deleting = request.method() == Method::DELETE;
        let mut response = next.run(request).await;
        // rmcp answers a session DELETE with 202; clients expect 200 or 204 (the Python SDK
        // logs a failed termination otherwise).
        if deleting && response.status() == StatusCode::ACCEPTED {
            *response.status_mut() = StatusCode::NO_CONTENT;
        }
        return response;
    }
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_LINE_BYTES).await {
        Ok(bytes) => bytes,
        Err(err) => {
            let message = format!("Invalid Request: cannot read the body ({err}); at most {MAX_LINE_BYTES} bytes");
            return json_response(
                StatusCode::PAYLOAD_TOO_LARGE,
                &gate::error_response(&serde_json::Value::Null, gate::code::INVALID_REQUEST, &message),
            );
        }
    };
    match gate::screen(&bytes) {
        Screened::Reply(reply) => {
            let code = reply["error"]["code"].as_i64();
            let status = match code {
                Some(gate::code::PARSE_ERROR | gate::code::INVALID_REQUEST) => StatusCode::BAD_REQUEST,
                _ => StatusCode::OK,
            };
            json_response(status, &reply)
        }
        Screened::Drop(reason) => {
            tracing::debug!("dropped a message: {reason}");
            StatusCode::ACCEPTED.into_response()
        }
        Screened::Pass(_) => {
            let request = Request::from_parts(parts, Body::from(bytes));
            if let Some(refusal) = unsupported_version(&request) {
                return refusal;
            }
            next.run(request).await
        }
    }
}

/// `400` for an `MCP-Protocol-Version` header naming a version Tackle does not support.
fn unsupported_version(request: &Request) -> Option<Response> {
    let value = request.headers().get(PROTOCOL_VERSION_HEADER)?;
    let supported = value.to_str().is_ok_and(|v| SUPPORTED_VERSIONS.iter().any(|s| s.as_str() == v));
    if supported {
        return None;
    }
    let shown = String::from_utf8_lossy(value.as_bytes()).into_owned();
    let body = format!(
        "Bad Request: Unsupported MCP-Protocol-Version: {shown} (supported: {})",
        SUPPORTED_VERSIONS.iter().map(|v| v.as_str()).collect::<Vec<_>>().join(", ")
    );
    Some((StatusCode::BAD_REQUEST, body).into_response())
}

fn json_response(status: StatusCode, value: &serde_json::Value) -> Response {
    let mut response = (status, value.to_string()).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// rmcp's in-memory session manager with Tackle's session ids: 128 random bits as 32 hex
/// digits (rmcp's own are UUIDs).
struct HexSessions {
    inner: LocalSessionManager,
}

impl HexSessions {
    fn new(config: SessionConfig) -> Self {
        let mut inner = LocalSessionManager::default();
        inner.session_config = config;
        HexSessions { inner }
    }
}

fn hex_session_id() -> SessionId {
    let bits: u128 = rand::random();
    format!("{bits:032x}").into()
}

impl SessionManager for HexSessions {
    type Error = <LocalSessionManager as SessionManager>::Error;
    type Transport = WorkerTransport<LocalSessionWorker>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let id = hex_session_id();
        let (handle, worker) = create_local_session(id.clone(), self.inner.session_config.clone());
        self.inner.sessions.write().await.insert(id.clone(), handle);
        Ok((id, WorkerTransport::spawn(worker)))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(&self, _id: SessionId) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        Ok(RestoreOutcome::NotSupported)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_are_served() {
        assert_eq!(check_loopback("127.0.0.1:0").unwrap(), "127.0.0.1:0".parse().unwrap());
        assert_eq!(check_loopback("[::1]:8080").unwrap(), "[::1]:8080".parse().unwrap());
        assert_eq!(check_loopback("localhost:3901").unwrap(), "127.0.0.1:3901".parse().unwrap());
        for bad in ["0.0.0.0:80", "192.168.1.2:80", "example.com:80", "127.0.0.1", "localhost", ""] {
            assert!(check_loopback(bad).is_err(), "{bad}");
        }
        assert!(check_loopback("0.0.0.0:80").unwrap_err().contains("beyond this machine"));
    }

    #[test]
    fn session_ids_are_128_bit_hex() {
        let a = hex_session_id().to_string();
        let b = hex_session_id().to_string();
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(a, b);
    }
}
