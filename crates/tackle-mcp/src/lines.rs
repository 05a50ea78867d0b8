//! Newline-delimited JSON-RPC framing shared by the stdio transports of both faces: a
//! bounded, cancel-safe line reader (rmcp polls `receive` inside a `select!`, so a read may
//! be dropped half way; the partial line stays buffered) and a line writer behind a lock.

use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, AsyncWriteExt as _, BufReader};
use tokio::sync::Mutex;

/// The longest line accepted (as rmcp's own transports and HTTP bodies).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// One read.
#[derive(Debug)]
pub enum Line {
    /// A whole line, without its line ending (`\n`, `\r\n`).
    Text(Vec<u8>),
    /// A line over [`MAX_LINE_BYTES`], dropped.
    Oversized,
    /// End of input (or a read error, logged).
    End,
}

/// Reads lines from `R`, never buffering more than [`MAX_LINE_BYTES`].
pub struct LineReader<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
    discarding: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(reader: R) -> Self {
        LineReader { reader: BufReader::new(reader), line: Vec::new(), discarding: false }
    }

    /// The next non-blank line.
    pub async fn next(&mut self) -> Line {
        loop {
            let (consumed, done) = {
                let available = match self.reader.fill_buf().await {
                    Ok(available) => available,
                    Err(err) => {
                        tracing::warn!("read failed: {err}");
                        return Line::End;
                    }
                };
                if available.is_empty() {
                    return Line::End;
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
            match done {
                None => {}
                Some(false) => return Line::Oversized,
                Some(true) => {
                    let mut line = std::mem::take(&mut self.line);
                    while matches!(line.last(), Some(b'\n' | b'\r')) {
                        line.pop();
                    }
                    if !line.iter().all(u8::is_ascii_whitespace) {
                        return Line::Text(line);
                    }
                }
            }
        }
    }
}

/// Writes `bytes` and a newline, then flushes.
pub async fn write_line<W: AsyncWrite + Unpin>(writer: &Mutex<W>, mut bytes: Vec<u8>) -> std::io::Result<()> {
    bytes.push(b'\n');
    let mut writer = writer.lock().await;
    writer.write_all(&bytes).await?;
    writer.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_are_split_trimmed_and_bounded() {
        let big = "x".repeat(MAX_LINE_BYTES + 10);
        let input = format!("a\r\n\n  \nb\n{big}\nc");
        let mut reader = LineReader::new(input.as_bytes());
        assert!(matches!(reader.next().await, Line::Text(t) if t == b"a"));
        assert!(matches!(reader.next().await, Line::Text(t) if t == b"b"));
        assert!(matches!(reader.next().await, Line::Oversized));
        // A last line without a newline is incomplete: end of input.
        assert!(matches!(reader.next().await, Line::End));
    }
}
