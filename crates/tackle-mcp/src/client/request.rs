//! One request of Tackle's own to an imported server (resources, prompts; not a tool call):
//! marked in flight, so the server may ask for a form meanwhile; bounded by the server's call
//! timeout; cancellable; and an error that says which request failed and how.

use std::time::Duration;

use rmcp::service::{RoleClient, ServiceError};
use tackle_core::ToolError;
use tokio_util::sync::CancellationToken;

use super::connection::Connection;

/// Why a request to a server got no answer.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// The server is not running and could not be started again.
    #[error("{0}")]
    Unavailable(#[source] ToolError),
    /// The server answered with an MCP error.
    #[error("{what} failed: MCP error {code}: {message}")]
    Mcp { what: &'static str, code: i32, message: String },
    /// The exchange itself failed.
    #[error("{what} failed: {source}")]
    Service {
        what: &'static str,
        #[source]
        source: ServiceError,
    },
    #[error("{what} did not answer within {} ms", timeout.as_millis())]
    Timeout { what: &'static str, timeout: Duration },
    #[error("{what} was cancelled")]
    Cancelled { what: &'static str },
}

impl RequestError {
    /// Whether the server said it does not know the method (JSON-RPC -32601).
    pub fn is_unknown_method(&self) -> bool {
        matches!(self, RequestError::Mcp { code: -32601, .. })
    }
}

/// Runs `request` (`what`: the method, for messages) on `server`'s peer within its call
/// timeout, or until `cancel`.
pub async fn request<T, F, Fut>(
    server: &Connection,
    cancel: &CancellationToken,
    what: &'static str,
    request: F,
) -> Result<T, RequestError>
where
    F: FnOnce(rmcp::Peer<RoleClient>) -> Fut,
    Fut: std::future::Future<Output = Result<T, ServiceError>>,
{
    let _in_flight = server.in_request();
    let peer = server.peer(cancel).await.map_err(RequestError::Unavailable)?;
    let timeout = server.config().call_timeout;
    tokio::select! {
        answered = tokio::time::timeout(timeout, request(peer)) => match answered {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(ServiceError::McpError(error))) => {
                Err(RequestError::Mcp { what, code: error.code.0, message: error.message.into_owned() })
            }
            Ok(Err(source)) => Err(RequestError::Service { what, source }),
            Err(_) => Err(RequestError::Timeout { what, timeout }),
        },
        () = cancel.cancelled() => Err(RequestError::Cancelled { what }),
    }
}
