//! The stdio transport of `tackle mcp serve`: one JSON-RPC message per line in, one per line
//! out, nothing else on the output (mcp.md §1.1).
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
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::sync::Mutex;

use super::gate::{self, Screened};

/// The longest line accepted.
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// A newline-delimited JSON-RPC transport over any reader and writer.
pub struct LineTransport<R, W> {
    reader: BufReader<R>,
    line: Vec<u8>,
    discarding: bool,
    writer: Arc<Mutex<W>>,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> LineTransport<R, W> {
    /// A transport reading `reader` and writing `writer`.
    pub fn new(reader: R, writer: W) -> Self {
        LineTransport {
            reader: BufReader::new(reader),
            line: Vec::new(),
            discarding: false,
            writer: Arc::new(Mutex::new(writer)),
        }
    }

    /// Reads the next whole line into `self.line` (without its newline). `None` at end of
    /// input or on a read error; `Some(false)` for an oversized line that was dropped.
    async fn read_line(&mut self) -> Option<bool> {
        loop {
            let (consumed, done) = {
                let available = match self.reader.fill_buf().await {
                    Ok(available) => available,
                    Err(err) => {
                        tracing::warn!("cannot read stdin: {err}");
                        return None;
                    }
                };
                if available.is_empty() {
                    return None;
                }
                let newline = available.iter().position(|b| *b == b'\n');
                let take = newline.map_or(available.len(), |at| at + 1);
                if self.discarding {
                    if newline.is_some() {
                        self.discarding = false;
                    }
                    (take, None)
                } else if self.line.len() + take > MAX_LINE_BYTES {
                    self.line.clear();
                    self.discarding = newline.is_none();
                    (take, Some(false))
                } else {
                    self.line.extend_from_slice(&available[..take]);
                    (take, newline.map(|_| true))
                }
            };
            self.reader.consume(consumed);
            if let Some(whole) = done {
                return Some(whole);
            }
        }
    }
}

/// Writes one gate reply as a line.
async fn write_value<W: AsyncWrite + Unpin>(writer: &Mutex<W>, value: &Value) {
    let mut bytes = value.to_string().into_bytes();
    bytes.push(b'\n');
    let mut writer = writer.lock().await;
    if let Err(err) = write_all_flush(&mut *writer, &bytes).await {
        tracing::warn!("cannot write stdout: {err}");
    }
}

async fn write_all_flush<W: AsyncWrite + Unpin>(writer: &mut W, bytes: &[u8]) -> std::io::Result<()> {
    writer.write_all(bytes).await?;
    writer.flush().await
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
            let mut bytes = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            bytes.push(b'\n');
            let mut writer = writer.lock().await;
            write_all_flush(&mut *writer, &bytes).await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let whole = self.read_line().await?;
            if !whole {
                let message = format!("Invalid Request: a message longer than {MAX_LINE_BYTES} bytes was discarded");
                let reply = gate::error_response(&Value::Null, gate::code::INVALID_REQUEST, &message);
                write_value(&self.writer, &reply).await;
                continue;
            }
            let mut line = std::mem::take(&mut self.line);
            while matches!(line.last(), Some(b'\n' | b'\r')) {
                line.pop();
            }
            let screened = if line.iter().all(u8::is_ascii_whitespace) { None } else { Some(gate::screen(&line)) };
            line.clear();
            self.line = line;
            match screened {
                None => {}
                Some(Screened::Pass(message)) => return Some(*message),
                Some(Screened::Reply(reply)) => write_value(&self.writer, &reply).await,
                Some(Screened::Drop(reason)) => tracing::debug!("dropped a message: {reason}"),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.flush().await
    }
}
