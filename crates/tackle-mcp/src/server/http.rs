//! The streamable HTTP transport of `tackle mcp serve --http ADDR` (docs/mcp.md#transports): rmcp's
//! tower service at `/mcp`, served by axum on a loopback address only, behind one layer (the
//! guard) that checks every request before anything else, then gives bad or foreign input the
//! answers of the [`gate`](super::gate).
//!
//! The guard, in order:
//! 1. `Host` must name the bound address and a present `Origin` must be a loopback origin,
//!    else `403`, before the body is read (DNS-rebinding protection);
//! 2. with a token ([`super::auth`]), `Authorization: Bearer TOKEN` must carry it, else `401`;
//! 3. an `MCP-Protocol-Version` header naming a version Tackle does not speak gets `400`
//!    (for a POST, only once the gate has passed the body, so the era probe gets its `-32601`);
//! 4. a POST body goes through the gate; a message the gate answers or drops itself still
//!    needs a live session, as rmcp would ask (`400` without `Mcp-Session-Id`, `404` for an
//!    unknown or ended one), unless it may come before a session (`initialize`,
//!    `server/discover`, a request naming the 2026-07-28 era);
//! 5. an `initialize` that would open a session needs room for it ([`super::sessions`]):
//!    the session idle the longest ends to make it, and without one the answer is `503` with
//!    a JSON-RPC error;
//! 6. a `DELETE` of an unknown or ended session gets `404`.
//!
//! rmcp does the rest: `Mcp-Session-Id` sessions, the session checks of the messages it
//! handles, `DELETE` to end one, SSE answers so progress can precede a result, the `GET`
//! stream for list changes, and its own `Host` and `Origin` checks (the same rules, kept as a
//! second line). The sessions' ids, bounds and expiry are [`super::sessions`]'.

use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::time::Duration;

use axum::serve::ListenerExt as _;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage};
use rmcp::transport::streamable_http_server::{
    SessionId, SessionManager, StreamableHttpServerConfig, StreamableHttpService,
};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::auth::AuthToken;
use super::gate::{self, Screened};
use super::handler::SUPPORTED_VERSIONS;
use super::sessions::Sessions;
use super::{McpServer, ServeError};
use crate::lines::MAX_LINE_BYTES;

/// The path of the MCP endpoint.
pub const ENDPOINT: &str = "/mcp";

const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";

const SESSION_HEADER: &str = "mcp-session-id";

/// The hosts of the browser origins allowed to reach the server (any port, http or https).
const LOOPBACK_ORIGIN_HOSTS: &[&str] = &["127.0.0.1", "localhost", "[::1]"];

/// An `--http ADDR` that is refused; the text says why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpAddressError {
    /// Not an address with a port.
    #[error("--http takes a loopback address such as 127.0.0.1:PORT (port 0 picks one), not '{0}'")]
    Malformed(String),
    /// An address of another machine, or of every interface.
    #[error(
        "--http takes a loopback address such as 127.0.0.1:PORT (port 0 picks one), not '{0}'; serving beyond this \
         machine is not supported"
    )]
    NotLoopback(String),
}

/// Parses `--http ADDR`: a loopback address with a port (`127.0.0.1:PORT`, `[::1]:PORT`,
/// `localhost:PORT`). Anything else is refused.
pub fn check_loopback(addr: &str) -> Result<SocketAddr, HttpAddressError> {
    let parsed = match addr.strip_prefix("localhost:") {
        Some(port) => port.parse::<u16>().map(|port| SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port)).ok(),
        None => addr.parse::<SocketAddr>().ok(),
    };
    match parsed {
        Some(socket) if socket.ip().is_loopback() => Ok(socket),
        Some(_) => Err(HttpAddressError::NotLoopback(addr.to_owned())),
        None => Err(HttpAddressError::Malformed(addr.to_owned())),
    }
}

/// A bound HTTP server, ready to run.
pub struct HttpServer {
    listener: tokio::net::TcpListener,
    router: axum::Router,
    cancel: CancellationToken,
    server: McpServer,
    sessions: Arc<Sessions>,
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
        let hosts = vec![format!("{host}:{}", bound.port()), format!("localhost:{}", bound.port())];
        let origins = ["http", "https"]
            .iter()
            .flat_map(|scheme| LOOPBACK_ORIGIN_HOSTS.iter().map(move |host| format!("{scheme}://{host}:*")));
        let config = StreamableHttpServerConfig::default()
            .with_allowed_hosts(hosts.clone())
            .with_allowed_origins(origins)
            .enforce_origin_validation()
            .with_max_request_body_bytes(MAX_LINE_BYTES)
            .with_cancellation_token(cancel.clone());
        let sessions = Arc::new(Sessions::new(self.shared.options.max_sessions));
        let guard = Guard {
            hosts: hosts.into(),
            token: self.shared.options.auth_token.clone().map(Arc::new),
            sessions: Arc::clone(&sessions),
        };
        let server = self.clone();
        let service = StreamableHttpService::new(
            move || server.handler().map(|(handler, _)| handler).map_err(std::io::Error::other),
            Arc::clone(&sessions),
            config,
        );
        let router = axum::Router::new()
            .route_service(ENDPOINT, service)
            .layer(axum::middleware::from_fn_with_state(guard, Guard::check));
        Ok(HttpServer { listener, router, cancel, server: self.clone(), sessions })
    }
}

impl HttpServer {
    /// The bound address (the port chosen for port 0).
    pub fn local_addr(&self) -> Result<SocketAddr, ServeError> {
        Ok(self.listener.local_addr()?)
    }

    /// The number of HTTP sessions alive.
    pub fn live_sessions(&self) -> usize {
        self.sessions.live()
    }

    /// Serves until `shutdown` completes; then ends every MCP session and closes its tools.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send + 'static) -> Result<(), ServeError> {
        let cancel = self.cancel.clone();
        let stop = async move {
            shutdown.await;
            cancel.cancel();
        };
        let idle_timeout = self.server.shared.options.idle_timeout;
        let sessions = Arc::clone(&self.sessions);
        let expiry = tokio::spawn(async move {
            let mut sweep = tokio::time::interval(sweep_period(idle_timeout));
            sweep.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                sweep.tick().await;
                sessions.expire(idle_timeout).await;
            }
        });
        // Without TCP_NODELAY an answer written in two segments (head, then body or an SSE
        // event) waits for the client's delayed ACK: 40 ms a call on Linux.
        let listener = self.listener.tap_io(|stream| {
            if let Err(err) = stream.set_nodelay(true) {
                tracing::debug!("cannot set TCP_NODELAY: {err}");
            }
        });
        let served = axum::serve(listener, self.router).with_graceful_shutdown(stop).await;
        expiry.abort();
        self.server.shutdown().await;
        Ok(served?)
    }
}

/// How often idle sessions are looked for: a quarter of the timeout, between 10 ms and 30 s.
fn sweep_period(idle_timeout: Duration) -> Duration {
    (idle_timeout / 4).clamp(Duration::from_millis(10), Duration::from_secs(30))
}

/// What the guard layer needs: the allowed `Host` values, the token and the sessions.
#[derive(Clone)]
struct Guard {
    /// `HOST:PORT` of the bound address, and `localhost:PORT`, lower case.
    hosts: Arc<[String]>,
    token: Option<Arc<AuthToken>>,
    sessions: Arc<Sessions>,
}

impl Guard {
    /// Checks one request in the order the module header gives; passes it on to rmcp or answers it.
    async fn check(State(guard): State<Guard>, request: Request, next: Next) -> Response {
        if let Some(refusal) = guard.foreign(&request) {
            return refusal;
        }
        if let Some(refusal) = guard.token.as_ref().and_then(|token| token.refusal(request.headers())) {
            return refusal;
        }
        if request.method() != Method::POST
            && let Some(refusal) = unsupported_version(&request)
        {
            return refusal;
        }
        if request.method() == Method::DELETE {
            if let Some(refusal) = guard.session_refusal(request.headers(), || false).await {
                return refusal;
            }
            let mut response = next.run(request).await;
            // rmcp answers a session DELETE with 202; clients expect 200 or 204 (the Python SDK
            // logs a failed termination otherwise).
            if response.status() == StatusCode::ACCEPTED {
                *response.status_mut() = StatusCode::NO_CONTENT;
            }
            return response;
        }
        if request.method() != Method::POST {
            return next.run(request).await;
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
        let screened = gate::screen(&bytes);
        if !matches!(screened, Screened::Pass(_))
            && let Some(refusal) = guard.session_refusal(&parts.headers, || gate::may_precede_session(&bytes)).await
        {
            return refusal;
        }
        match screened {
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
            Screened::Pass(message) => {
                let request = Request::from_parts(parts, Body::from(bytes));
                // After the gate, so that the era probe gets its -32601 whatever its header says.
                if let Some(refusal) = unsupported_version(&request) {
                    return refusal;
                }
                let Some(id) = opens_session(&message, request.headers()) else {
                    return next.run(request).await;
                };
                match guard.sessions.admit().await {
                    Ok(slot) => Sessions::admitted(slot, next.run(request)).await,
                    Err(busy) => json_response(
                        StatusCode::SERVICE_UNAVAILABLE,
                        &gate::error_response(&id, gate::code::SERVER_BUSY, &busy.to_string()),
                    ),
                }
            }
        }
    }

    /// `403` for a `Host` that is not the bound address, or an `Origin` that is not loopback.
    fn foreign(&self, request: &Request) -> Option<Response> {
        let host = request
            .headers()
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(str::to_owned)
            .or_else(|| request.uri().authority().map(ToString::to_string));
        let host_allowed = host.is_some_and(|host| self.hosts.iter().any(|h| h.eq_ignore_ascii_case(&host)));
        if !host_allowed {
            tracing::warn!("refused a request with a foreign Host header (possible DNS rebinding)");
            return Some((StatusCode::FORBIDDEN, "Forbidden: Host header is not allowed").into_response());
        }
        let origin = request.headers().get(header::ORIGIN)?;
        if !is_loopback_origin(origin.as_bytes()) {
            tracing::warn!("refused a request with a foreign Origin header");
            return Some((StatusCode::FORBIDDEN, "Forbidden: Origin header is not allowed").into_response());
        }
        None
    }

    /// `400` without an `Mcp-Session-Id` header, `404` for an unknown or ended one; nothing
    /// when the session is live or `exempt()` says the message may come before a session.
    async fn session_refusal(&self, headers: &HeaderMap, exempt: impl FnOnce() -> bool) -> Option<Response> {
        let known = match headers.get(SESSION_HEADER).and_then(|id| id.to_str().ok()) {
            Some(id) => Some(self.sessions.has_session(&SessionId::from(id)).await.unwrap_or(false)),
            None => None,
        };
        match known {
            Some(true) => None,
            _ if exempt() => None,
            None => Some((StatusCode::BAD_REQUEST, "Bad Request: ToolSession ID is required").into_response()),
            Some(false) => Some((StatusCode::NOT_FOUND, "Not Found: Session not found").into_response()),
        }
    }
}

/// The id of an `initialize` that opens a session (one sent without `Mcp-Session-Id`).
fn opens_session(message: &ClientJsonRpcMessage, headers: &HeaderMap) -> Option<Value> {
    match message {
        JsonRpcMessage::Request(request)
            if matches!(request.request, ClientRequest::InitializeRequest(_))
                && !headers.contains_key(SESSION_HEADER) =>
        {
            serde_json::to_value(&request.id).ok()
        }
        _ => None,
    }
}

/// Whether an `Origin` header value is `http(s)://` a loopback host, on any port.
fn is_loopback_origin(origin: &[u8]) -> bool {
    let Ok(uri) = axum::http::Uri::try_from(origin) else {
        return false;
    };
    // An origin is scheme://host[:port]; browsers never send a path or user information.
    let scheme_ok = matches!(uri.scheme_str(), Some("http" | "https"))
        && uri.authority().is_some_and(|authority| !authority.as_str().contains('@'));
    let host = uri.host().map(str::to_ascii_lowercase);
    scheme_ok
        && uri.path_and_query().is_none_or(|p| p.as_str().is_empty() || p.as_str() == "/")
        && host.is_some_and(|host| LOOPBACK_ORIGIN_HOSTS.contains(&host.as_str()))
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
        SUPPORTED_VERSIONS.iter().map(rmcp::model::ProtocolVersion::as_str).collect::<Vec<_>>().join(", ")
    );
    Some((StatusCode::BAD_REQUEST, body).into_response())
}

fn json_response(status: StatusCode, value: &serde_json::Value) -> Response {
    let mut response = (status, value.to_string()).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
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
        assert_eq!(
            check_loopback("0.0.0.0:80").unwrap_err().to_string(),
            "--http takes a loopback address such as 127.0.0.1:PORT (port 0 picks one), not '0.0.0.0:80'; serving \
             beyond this machine is not supported"
        );
        assert_eq!(check_loopback("localhost").unwrap_err(), HttpAddressError::Malformed("localhost".to_owned()));
        assert_eq!(check_loopback("[::]:80").unwrap_err(), HttpAddressError::NotLoopback("[::]:80".to_owned()));
    }

    #[test]
    fn only_loopback_origins_pass() {
        for good in [
            "http://localhost:5173",
            "https://127.0.0.1:8443",
            "http://[::1]:80",
            "http://LOCALHOST:1",
            "http://127.0.0.1",
        ] {
            assert!(is_loopback_origin(good.as_bytes()), "{good}");
        }
        for bad in [
            "http://evil.com",
            "http://localhost.evil.com:80",
            "http://127.0.0.1.evil.com",
            "file://localhost",
            "null",
            "",
            "localhost:80",
            "http://localhost:80/path",
            "http://evil.com@localhost:1",
        ] {
            assert!(!is_loopback_origin(bad.as_bytes()), "{bad}");
        }
    }
}
