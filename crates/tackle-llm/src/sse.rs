//! A provider's Server-Sent Events, parsed by the `sse-stream` crate (the parser rmcp's HTTP
//! transport uses, so the workspace has one), with what the crate does not guarantee added
//! around it (docs/reference/providers.md#event-streams):
//!
//! - **A bound on lines.** The crate buffers a line until it ends; a server that never ends
//!   one would fill memory. The response's bytes are cut into lines here first, and a line
//!   longer than [`MAX_LINE`] bytes ends the stream with an error.
//! - **Lines the standard says to ignore are ignored.** The crate answers a line without a
//!   colon, an unknown field, a `retry:` that is not a number or a repeated `id:`/`retry:`
//!   with an error (WHATWG's rules say to ignore them). Each line is given to the crate alone
//!   (its `\r\n` or `\r` ending made `\n`), so such an error costs that line only, and it is
//!   skipped. Text that is not UTF-8 stays an error, as in the official SDKs.
//! - **The idle timeout counts bytes**, not events: a comment (`: keep-alive`) keeps a slow
//!   stream alive.
//!
//! As the standard says, an event without `data:` is not dispatched, and an event the stream
//! ends in the middle of (no blank line after it) is dropped.

use std::collections::VecDeque;
use std::time::Duration;

use bytes::{BufMut as _, Bytes, BytesMut};
use futures::stream::{self, BoxStream, Stream, StreamExt as _};

/// The longest line accepted, in bytes (without its ending).
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` name, if the server gave one.
    pub event: Option<String>,
    /// The `data:` lines, joined with `\n`.
    pub data: String,
}

/// Why an event stream ended early.
#[derive(Debug, thiserror::Error)]
pub enum SseError<E> {
    /// Reading the response failed.
    #[error(transparent)]
    Read(E),
    /// No bytes came within the idle timeout.
    #[error("no data within {} s", .0.as_secs_f64())]
    Idle(Duration),
    /// A line longer than [`MAX_LINE`].
    #[error("the provider sent a line longer than {0} bytes in its event stream")]
    LineTooLong(usize),
    /// Text that is not UTF-8, or an answer of the crate this module does not expect.
    #[error("the provider sent a malformed event stream ({0})")]
    Malformed(String),
}

/// The events of `bytes` (a response body), with no more than `idle` between two chunks.
pub fn events<S, E>(bytes: S, idle: Duration) -> BoxStream<'static, Result<SseEvent, SseError<E>>>
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    events_with_limit(bytes, idle, MAX_LINE)
}

fn events_with_limit<S, E>(
    bytes: S,
    idle: Duration,
    max_line: usize,
) -> BoxStream<'static, Result<SseEvent, SseError<E>>>
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    sse_stream::SseStream::from_bytes_stream(lines(bytes, idle, max_line))
        .filter_map(|item| async move {
            match item {
                Ok(sse) => {
                    let data = sse.data?;
                    Some(Ok(SseEvent { event: sse.event.filter(|name| !name.is_empty()), data }))
                }
                // Our own errors, passed through the crate as the body's.
                Err(sse_stream::Error::Body(err)) => Some(Err(match err.downcast::<SseError<E>>() {
                    Ok(err) => *err,
                    Err(other) => SseError::Malformed(other.to_string()),
                })),
                Err(sse_stream::Error::Utf8Parse(err)) => Some(Err(SseError::Malformed(format!("not UTF-8: {err}")))),
                Err(ignored) => {
                    tracing::debug!("ignored an event-stream line: {ignored}");
                    None
                }
            }
        })
        .boxed()
}

/// The bytes of `body` as one item per line (each ending in `\n`, a line split across
/// chunks coming in pieces), under the idle timeout and the line bound.
fn lines<S, E>(body: S, idle: Duration, max_line: usize) -> impl Stream<Item = Result<Bytes, SseError<E>>> + Send
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: Send + 'static,
{
    let splitter = Splitter { max_line, line_len: 0, after_cr: false, ready: VecDeque::new() };
    // The lines read so far go out before the error that ends the stream.
    let failed: Option<SseError<E>> = None;
    stream::unfold(Some((body.boxed(), splitter, failed)), move |state| async move {
        let (mut body, mut splitter, mut failed) = state?;
        loop {
            if let Some(piece) = splitter.ready.pop_front() {
                return Some((Ok(piece), Some((body, splitter, failed))));
            }
            if let Some(failed) = failed {
                return Some((Err(failed), None));
            }
            failed = match tokio::time::timeout(idle, body.next()).await {
                Err(_) => Some(SseError::Idle(idle)),
                Ok(None) => return None,
                Ok(Some(Err(err))) => Some(SseError::Read(err)),
                Ok(Some(Ok(chunk))) => splitter.split(&chunk).err(),
            };
        }
    })
}

/// Cuts chunks into lines.
struct Splitter {
    max_line: usize,
    /// The length of the line being read so far.
    line_len: usize,
    /// The last chunk ended in `\r`: a `\n` starting the next one belongs to it.
    after_cr: bool,
    ready: VecDeque<Bytes>,
}

impl Splitter {
    fn split<E>(&mut self, mut chunk: &[u8]) -> Result<(), SseError<E>> {
        if chunk.is_empty() {
            return Ok(());
        }
        if std::mem::take(&mut self.after_cr) {
            chunk = chunk.strip_prefix(b"\n").unwrap_or(chunk);
        }
        while !chunk.is_empty() {
            let end = chunk.iter().position(|&byte| byte == b'\n' || byte == b'\r');
            let text = &chunk[..end.unwrap_or(chunk.len())];
            self.line_len += text.len();
            if self.line_len > self.max_line {
                return Err(SseError::LineTooLong(self.max_line));
            }
            let Some(end) = end else {
                self.ready.push_back(Bytes::copy_from_slice(text));
                break;
            };
            let mut line = BytesMut::with_capacity(text.len() + 1);
            line.put_slice(text);
            line.put_u8(b'\n');
            self.ready.push_back(line.freeze());
            self.line_len = 0;
            let ending = chunk[end];
            chunk = &chunk[end + 1..];
            if ending == b'\r' {
                match chunk.first() {
                    Some(b'\n') => chunk = &chunk[1..],
                    None => self.after_cr = true,
                    Some(_) => {}
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Error = SseError<std::io::Error>;

    fn data(text: &str) -> SseEvent {
        SseEvent { event: None, data: text.into() }
    }

    /// The events of `input` given in chunks of `split` bytes, then how the stream ended
    /// (`None` when it ended without an error).
    async fn read(input: &[u8], split: usize, max_line: usize) -> (Vec<SseEvent>, Option<Error>) {
        let chunks: Vec<Result<Bytes, std::io::Error>> =
            input.chunks(split.max(1)).map(|chunk| Ok(Bytes::copy_from_slice(chunk))).collect();
        let mut events = events_with_limit(stream::iter(chunks), Duration::from_secs(5), max_line);
        let mut seen = Vec::new();
        while let Some(item) = events.next().await {
            match item {
                Ok(event) => seen.push(event),
                Err(err) => return (seen, Some(err)),
            }
        }
        (seen, None)
    }

    async fn read_all_splits(input: &[u8]) -> Vec<SseEvent> {
        let (whole, end) = read(input, input.len(), MAX_LINE).await;
        assert!(end.is_none(), "{end:?}");
        for split in 1..input.len() {
            let (events, end) = read(input, split, MAX_LINE).await;
            assert!(end.is_none(), "split {split}: {end:?}");
            assert_eq!(events, whole, "split {split}");
        }
        whole
    }

    #[tokio::test]
    async fn events_survive_any_chunking_and_line_ending() {
        let text = "\u{feff}event: message_start\r\ndata: {\"a\":\"é日\"}\r\n\r\n: ping comment\n\ndata: one\ndata: two\n\n\
                    retry: 5\nid: 1\ndata: [DONE]\r\rdata:  two spaces\r\n\r\nevent: ping\n\ndata:\n\n";
        let expected = vec![
            SseEvent { event: Some("message_start".into()), data: "{\"a\":\"é日\"}".into() },
            data("one\ntwo"),
            data("[DONE]"),
            data(" two spaces"),
            data(""),
        ];
        assert_eq!(read_all_splits(text.as_bytes()).await, expected);
    }

    #[tokio::test]
    async fn lines_the_standard_ignores_are_ignored() {
        let text = "garbage without colon\ndata:x\nfoo: bar\nretry: soon\nid: 1\nid: 2\nretry: 1\nretry: 2\n\
                    data:y\n\nevent: error\ndata: {}\n\n";
        assert_eq!(
            read_all_splits(text.as_bytes()).await,
            vec![data("x\ny"), SseEvent { event: Some("error".into()), data: "{}".into() }]
        );
    }

    #[tokio::test]
    async fn an_event_the_stream_ends_in_is_dropped() {
        for cut in ["data: {\"partial\"", "data: complete line\n", "data: x\r"] {
            let text = format!("data: first\n\n{cut}");
            assert_eq!(read_all_splits(text.as_bytes()).await, vec![data("first")], "{cut:?}");
        }
    }

    #[tokio::test]
    async fn a_line_longer_than_the_bound_ends_the_stream() {
        let max = 64;
        let fits = format!("data: {}\n\n", "a".repeat(max - 6));
        for split in [1, 7, fits.len()] {
            let (events, end) = read(fits.as_bytes(), split, max).await;
            assert!(end.is_none(), "split {split}: {end:?}");
            assert_eq!(events, vec![data(&"a".repeat(max - 6))], "split {split}");
        }
        // One byte more, whether or not the line ever ends, and whatever the chunks.
        for tail in ["\n\n", "", "\r"] {
            let long = format!("data: first\r\n\r\ndata: {}{tail}", "a".repeat(max - 5));
            for split in [1, 7, 40, long.len()] {
                let (events, end) = read(long.as_bytes(), split, max).await;
                assert_eq!(events, vec![data("first")], "split {split}");
                assert!(matches!(end, Some(SseError::LineTooLong(64))), "split {split}: {end:?}");
            }
        }
    }

    #[tokio::test]
    async fn a_huge_line_under_the_bound_is_read() {
        let payload = "é".repeat(3 * 1024 * 1024);
        let text = format!("data: {payload}\n\n");
        let (events, end) = read(text.as_bytes(), 1 << 16, MAX_LINE).await;
        assert!(end.is_none(), "{end:?}");
        assert_eq!(events.len(), 1);
        assert!(events[0].data == payload, "the data came back changed");
    }

    #[tokio::test]
    async fn text_that_is_not_utf8_is_an_error() {
        let (events, end) = read(b"data: ok\n\ndata: \xff\xfe\n\ndata: never\n\n", 3, MAX_LINE).await;
        assert_eq!(events, vec![data("ok")]);
        let end = end.map(|err| err.to_string()).unwrap_or_default();
        assert!(end.starts_with("the provider sent a malformed event stream (not UTF-8"), "{end}");
    }

    #[tokio::test]
    async fn a_read_error_ends_the_stream_with_it() {
        let chunks = vec![Ok(Bytes::from_static(b"data: a\n\ndata: b")), Err(std::io::Error::other("reset by peer"))];
        let mut events = events(stream::iter(chunks), Duration::from_secs(5));
        assert_eq!(events.next().await.map(Result::ok), Some(Some(data("a"))));
        let end = events.next().await;
        assert!(matches!(&end, Some(Err(SseError::Read(err))) if err.to_string() == "reset by peer"), "{end:?}");
        assert!(events.next().await.is_none());
    }

    #[tokio::test]
    async fn comments_keep_a_slow_stream_alive_and_silence_ends_it() {
        let idle = Duration::from_millis(150);
        let slow = |pieces: Vec<(u64, &'static str)>| {
            stream::iter(pieces).then(|(wait_ms, text)| async move {
                tokio::time::sleep(Duration::from_millis(wait_ms)).await;
                Ok::<_, std::io::Error>(Bytes::from_static(text.as_bytes()))
            })
        };
        // Comments every 60 ms for 360 ms, longer than the idle timeout in all.
        let mut pieces = vec![(60, ": wait\n\n"); 6];
        pieces.push((60, "data: done\n\n"));
        let kept = slow(pieces);
        let got: Vec<_> = events(kept, idle).collect().await;
        assert_eq!(got.into_iter().map(Result::ok).collect::<Vec<_>>(), vec![Some(data("done"))]);
        let silent = slow(vec![(0, "data: a\n\n"), (400, "data: late\n\n")]);
        let got: Vec<_> = events(silent, idle).collect().await;
        assert_eq!(got.len(), 2);
        assert!(matches!(&got[1], Err(SseError::Idle(wait)) if *wait == idle), "{got:?}");
    }
}
