//! The stdio transport of `tackle mcp serve`: one JSON-RPC message per line in, one per line
//! out, nothing else on the output (docs/mcp.md#transports).
//!
//! Tackle keeps its own line transport instead of rmcp's so that every line passes the
//! [`gate`](super::gate) first: rmcp silently drops text that is not JSON, while Tackle answers
//! it with `-32700` and keeps serving. Reading is bounded (a line over 16 MiB is discarded and
//! answered with `-32600`) and cancel-safe (rmcp polls `receive` inside a `select!`).
//!
//! [`standard_streams`] registers stdin and stdout with the runtime when they are pipes (as
//! every MCP client starts a server): each read and write is then one non-blocking system call
//! on the task's own thread. Tokio's `stdin()` and `stdout()` hand every read and write to a
//! blocking helper thread and wake the task from there, which cost about half of a round trip
//! (docs/performance.md#mcp-round-trip).

use std::os::fd::AsFd as _;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
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

/// A byte stream the server reads from.
pub type Input = Box<dyn AsyncRead + Send + Unpin>;
/// A byte stream the server writes to.
pub type Output = Box<dyn AsyncWrite + Send + Unpin>;

/// Standard input and output for serving: registered with the runtime's reactor when they are
/// pipes, tokio's (blocking, on helper threads) otherwise: a terminal, a file, a socket.
///
/// A pipe is switched to non-blocking mode for the server's lifetime; the returned guard puts
/// back the flags both had when it is dropped, so that whoever shares the pipe gets it as it was.
pub fn standard_streams() -> (Input, Output, RestoreFlags) {
    let stdin = std::io::stdin();
    let stdout = std::io::stdout();
    let restore = RestoreFlags { stdin: fcntl_getfl(stdin.as_fd()).ok(), stdout: fcntl_getfl(stdout.as_fd()).ok() };
    let input: Input =
        match stdin.as_fd().try_clone_to_owned().and_then(tokio::net::unix::pipe::Receiver::from_owned_fd) {
            Ok(pipe) => Box::new(pipe),
            Err(_) => Box::new(tokio::io::stdin()),
        };
    let output: Output =
        match stdout.as_fd().try_clone_to_owned().and_then(tokio::net::unix::pipe::Sender::from_owned_fd) {
            Ok(pipe) => Box::new(pipe),
            Err(_) => Box::new(tokio::io::stdout()),
        };
    (input, output, restore)
}

/// Puts back the file status flags stdin and stdout had before [`standard_streams`].
#[derive(Debug)]
pub struct RestoreFlags {
    stdin: Option<OFlags>,
    stdout: Option<OFlags>,
}

impl Drop for RestoreFlags {
    fn drop(&mut self) {
        if let Some(flags) = self.stdin {
            let _ = fcntl_setfl(std::io::stdin().as_fd(), flags);
        }
        if let Some(flags) = self.stdout {
            let _ = fcntl_setfl(std::io::stdout().as_fd(), flags);
        }
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
