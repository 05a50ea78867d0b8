//! The stdio transport of `tackle mcp serve`: one JSON-RPC message per line in, one per line
//! out, nothing else on the output (docs/mcp.md#transports).
//!
//! Tackle keeps its own line transport instead of rmcp's so that every line passes the
//! [`gate`](super::gate) first: rmcp silently drops text that is not JSON, while Tackle answers
//! it with `-32700` and keeps serving. Reading is bounded (a line over 16 MiB is discarded and
//! answered with `-32600`) and cancel-safe (rmcp polls `receive` inside a `select!`).

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _};
use tokio::sync::Mutex;

use super::gate::{self, Screened};
use crate::lines::{Line, LineReader, MAX_LINE_BYTES, write_line};

/// A newline-delimited JSON-RPC transport over any reader and writer.
pub struct LineTransport<R, W> {
    reader: LineReader<R>,
    writer: Arc<Mutex<W>>,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> LineTransport<R, W> {
    /// A transport reading `reader` and writing `writer`.
    pub fn new(reader: R, writer: W) -> Self {
        LineTransport { reader: LineReader::new(reader), writer: Arc::new(Mutex::new(writer)) }
    }
}

/// Writes one gate reply as a line.
async fn write_value<W: AsyncWrite + Unpin>(writer: &Mutex<W>, value: &Value) {
    if let Err(err) = write_line(writer, value.to_string().into_bytes()).await {
        tracing::warn!("cannot write stdout: {err}");
    }
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = Arc::clone(&self.writer);
        async move {
            let bytes = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            write_line(&writer, bytes).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.reader.next().await {
                Line::End => return None,
                Line::Oversized => {
                    let message =
                        format!("Invalid Request: a message longer than {MAX_LINE_BYTES} bytes was discarded");
                    let reply = gate::error_response(&Value::Null, gate::code::INVALID_REQUEST, &message);
                    write_value(&self.writer, &reply).await;
                }
                Line::Text(line) => match gate::screen(&line) {
                    Screened::Pass(message) => return Some(*message),
                    Screened::Reply(reply) => write_value(&self.writer, &reply).await,
                    Screened::Drop(reason) => tracing::debug!("dropped a message: {reason}"),
                },
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.flush().await
    }
}
