//! Draining one of the shell's output pipes and finding the end of each command in it.
//!
//! A reader task per pipe reads as data arrives (epoll, no polling interval) and feeds it to
//! the stream's [`StreamState`]: bytes go into the current [`Capture`] until the armed
//! sentinel — a newline, the call's random token, a trailer and a NUL — is seen, which ends
//! the call's capture. Bytes that arrive between calls (from processes left running with `&`)
//! go into the next call's capture. The few bytes at the end of a chunk that could be the
//! start of the sentinel are held back until the next chunk decides.

use std::sync::{Arc, Mutex};

use memchr::memmem::Finder;
use tokio::io::{AsyncRead, AsyncReadExt as _};
use tokio::sync::Notify;

use super::capture::{Capture, SpillTarget};

/// How much one read takes from a pipe.
const READ_CHUNK: usize = 256 * 1024;

/// The most trailer bytes accepted after a sentinel (the exit code and working directory).
const MAX_TRAILER: usize = 64 * 1024;

/// How a stream's new captures are made.
#[derive(Debug, Clone)]
pub struct CaptureFactory {
    pub head_limit: usize,
    pub tail_limit: usize,
    /// The spill target for output that arrives between calls (renamed when a call arms).
    pub idle_target: SpillTarget,
}

impl CaptureFactory {
    fn make(&self) -> Capture {
        Capture::new(self.head_limit, self.tail_limit, Some(self.idle_target.clone()))
    }
}

/// What a finished call left in one stream.
#[derive(Debug)]
pub struct Finished {
    pub capture: Capture,
    /// The bytes between the sentinel and its NUL.
    pub trailer: Vec<u8>,
}

/// An armed sentinel.
struct Scanner {
    finder: Finder<'static>,
    /// Stream bytes not yet given to the capture because they may start the sentinel.
    held: Vec<u8>,
    /// Once the sentinel was seen: the trailer so far.
    trailer: Option<Vec<u8>>,
}

/// The state of one stream, shared by its reader task and the calls.
pub struct StreamState {
    capture: Capture,
    factory: CaptureFactory,
    scanner: Option<Scanner>,
    finished: Option<Finished>,
    eof: bool,
}

impl StreamState {
    /// A stream with an empty capture.
    pub fn new(factory: CaptureFactory) -> StreamState {
        StreamState { capture: factory.make(), factory, scanner: None, finished: None, eof: false }
    }

    /// Arms `pattern` (the newline and token that end this call's output) and names the spill
    /// target of the call's capture.
    pub fn arm(&mut self, pattern: &[u8], target: SpillTarget) {
        self.capture.set_target(target);
        self.finished = None;
        self.scanner = Some(Scanner { finder: Finder::new(pattern).into_owned(), held: Vec::new(), trailer: None });
    }

    /// Whether the pipe is closed.
    pub fn is_eof(&self) -> bool {
        self.eof
    }

    /// The last non-empty line of the current capture (a running command's live tail).
    pub fn last_line(&self) -> Option<String> {
        self.capture.last_line()
    }

    /// Takes the finished call's capture, if the sentinel was seen.
    pub fn take_finished(&mut self) -> Option<Finished> {
        self.finished.take()
    }

    /// Whether the armed sentinel has been seen.
    pub fn has_finished(&self) -> bool {
        self.finished.is_some()
    }

    /// Disarms and takes what was captured so far (a call that ends without its sentinel).
    pub fn take_partial(&mut self) -> Capture {
        if let Some(scanner) = self.scanner.take()
            && scanner.trailer.is_none()
        {
            self.capture.push(&scanner.held);
        }
        std::mem::replace(&mut self.capture, self.factory.make())
    }

    /// Adds output that belongs to the next call (output read back from an internal query).
    pub fn push_idle(&mut self, bytes: &[u8]) {
        self.capture.push(bytes);
    }

    /// Feeds bytes read from the pipe; returns true when the armed sentinel completed.
    pub fn feed(&mut self, mut data: &[u8]) -> bool {
        let Some(scanner) = self.scanner.as_mut() else {
            self.capture.push(data);
            return false;
        };
        if let Some(trailer) = scanner.trailer.as_mut() {
            return match memchr::memchr(0, data) {
                Some(nul) => {
                    trailer.extend_from_slice(&data[..nul]);
                    let trailer = std::mem::take(trailer);
                    self.complete(trailer, &data[nul + 1..]);
                    true
                }
                None => {
                    let room = MAX_TRAILER.saturating_sub(trailer.len()).min(data.len());
                    trailer.extend_from_slice(&data[..room]);
                    false
                }
            };
        }
        let plen = scanner.finder.needle().len();
        if !scanner.held.is_empty() {
            let held_len = scanner.held.len();
            let mut window = std::mem::take(&mut scanner.held);
            window.extend_from_slice(&data[..data.len().min(plen - 1)]);
            if let Some(at) = scanner.finder.find(&window) {
                // A match that starts in the held bytes (one inside `data` alone is too short
                // to fit in the window).
                self.capture.push(&window[..at]);
                data = &data[at + plen - held_len..];
                return self.after_sentinel(data);
            }
            if data.len() < plen - 1 {
                let keep = partial_suffix(&window, scanner.finder.needle());
                self.capture.push(&window[..window.len() - keep]);
                scanner.held = window[window.len() - keep..].to_vec();
                return false;
            }
            self.capture.push(&window[..held_len]);
        }
        if let Some(at) = scanner.finder.find(data) {
            self.capture.push(&data[..at]);
            return self.after_sentinel(&data[at + plen..]);
        }
        let keep = partial_suffix(data, scanner.finder.needle());
        scanner.held = data[data.len() - keep..].to_vec();
        self.capture.push(&data[..data.len() - keep]);
        false
    }

    /// The sentinel was just seen; `rest` follows it.
    fn after_sentinel(&mut self, rest: &[u8]) -> bool {
        if let Some(scanner) = self.scanner.as_mut() {
            scanner.held.clear();
            scanner.trailer = Some(Vec::new());
        }
        self.feed(rest)
    }

    /// The trailer ended; `rest` belongs to the next call.
    fn complete(&mut self, trailer: Vec<u8>, rest: &[u8]) {
        self.scanner = None;
        let capture = std::mem::replace(&mut self.capture, self.factory.make());
        self.finished = Some(Finished { capture, trailer });
        self.capture.push(rest);
    }

    /// The pipe closed.
    pub fn close(&mut self) {
        self.eof = true;
    }
}

/// The length of the longest proper suffix of `data` that is a prefix of `pattern`.
fn partial_suffix(data: &[u8], pattern: &[u8]) -> usize {
    let max = (pattern.len() - 1).min(data.len());
    (1..=max).rev().find(|&k| data[data.len() - k..] == pattern[..k]).unwrap_or(0)
}

/// A stream shared between its reader task and the shell.
pub type SharedStream = Arc<Mutex<StreamState>>;

/// Locks a stream, ignoring poisoning (the state stays consistent between feeds).
pub fn lock(stream: &SharedStream) -> std::sync::MutexGuard<'_, StreamState> {
    stream.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Reads `pipe` until it closes, feeding `stream` and waking `events` when a sentinel
/// completes or the pipe closes.
pub async fn drain(mut pipe: impl AsyncRead + Unpin, stream: SharedStream, events: Arc<Notify>) {
    let mut buf = vec![0u8; READ_CHUNK];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => {
                lock(&stream).close();
                events.notify_waiters();
                return;
            }
            Ok(n) => {
                if lock(&stream).feed(&buf[..n]) {
                    events.notify_waiters();
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// `tackle-stream-test/` in the temporary directory.
    fn test_dir() -> tackle_core::spill::SpillDir {
        let workspace = std::env::temp_dir().canonicalize().unwrap();
        let rel = "tackle-stream-test".to_owned();
        tackle_core::spill::SpillDir { path: workspace.join(&rel), workspace, rel }
    }

    fn stream() -> StreamState {
        let idle = SpillTarget::new(&test_dir(), "idle");
        StreamState::new(CaptureFactory { head_limit: 1 << 20, tail_limit: 1 << 20, idle_target: idle })
    }

    fn arm(state: &mut StreamState, pattern: &str) {
        let target = SpillTarget::new(&test_dir(), "t");
        state.arm(pattern.as_bytes(), target);
    }

    fn finished_text(state: &mut StreamState) -> (String, String) {
        let done = state.take_finished().unwrap();
        let captured = done.capture.finish();
        (String::from_utf8(captured.head).unwrap(), String::from_utf8(done.trailer).unwrap())
    }

    #[test]
    fn partial_suffixes() {
        assert_eq!(partial_suffix(b"abc\n", b"\nSENT"), 1);
        assert_eq!(partial_suffix(b"abc\nSE", b"\nSENT"), 3);
        assert_eq!(partial_suffix(b"abc", b"\nSENT"), 0);
        assert_eq!(partial_suffix(b"\nSEN", b"\nSENT"), 4);
    }

    #[test]
    fn the_sentinel_is_found_in_every_split_of_the_stream() {
        let full = b"out\nmore\n\nSENT 0 /w\0after".to_vec();
        for a in 0..=full.len() {
            for b in a..=full.len() {
                let mut state = stream();
                arm(&mut state, "\nSENT");
                let mut done = false;
                for chunk in [&full[..a], &full[a..b], &full[b..]] {
                    done |= state.feed(chunk);
                }
                assert!(done, "split {a} {b}");
                assert_eq!(finished_text(&mut state), ("out\nmore\n".to_owned(), " 0 /w".to_owned()), "split {a} {b}");
                assert_eq!(state.take_partial().finish().head, b"after", "split {a} {b}");
            }
        }
    }

    #[test]
    fn lookalikes_and_byte_by_byte_feeding() {
        let mut state = stream();
        arm(&mut state, "\nSENT");
        let full = b"\nSEN\nSENX\n\nSENT\0";
        for byte in full {
            state.feed(std::slice::from_ref(byte));
        }
        assert_eq!(finished_text(&mut state), ("\nSEN\nSENX\n".to_owned(), String::new()));
    }

    #[test]
    fn output_between_calls_goes_to_the_next_call() {
        let mut state = stream();
        state.feed(b"background line\n");
        arm(&mut state, "\nSENT");
        state.feed(b"own\n\nSENT\0");
        assert_eq!(finished_text(&mut state).0, "background line\nown\n");
    }

    #[test]
    fn a_call_without_sentinel_yields_what_arrived() {
        let mut state = stream();
        arm(&mut state, "\nSENT");
        state.feed(b"partial\n\nSE");
        assert_eq!(state.take_partial().finish().head, b"partial\n\nSE");
    }
}
