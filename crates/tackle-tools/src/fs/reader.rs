//! Streaming a text file line by line, for the tools that show files (`view`, `read_file`):
//! a 1 GB file is never loaded whole. One pass counts the lines, hashes the content for the
//! read ledger, checks that the file is text (docs/reference/tools.md#session-state: no NUL in the first 8,192 bytes, valid
//! UTF-8 throughout; it stops at the first sign of a binary file), and hands the caller only
//! the lines it asked for, each cut to a byte limit.

use std::io::Read;
use std::ops::Range;

use crate::fs::files::MAX_EDIT_BYTES;
use crate::fs::ledger::StreamHasher;
use crate::fs::text::BINARY_SNIFF_BYTES;

/// Bytes read at a time.
const CHUNK: usize = 64 * 1024;

/// The first read's size: the buffer grows to [`CHUNK`] once a read fills it (most files read
/// are small, and a zeroed 64 KiB buffer costs more than reading them).
const FIRST_CHUNK: usize = 4 * 1024;

/// What one pass over a file found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scan {
    /// Bytes read.
    pub size: u64,
    /// `\n` bytes seen.
    pub newlines: u64,
    /// The last byte is `\n`.
    pub ends_with_newline: bool,
    /// The file is binary (the scan stopped there; the other fields are partial).
    pub binary: bool,
    /// The content hash (as [`crate::fs::ledger::content_hash`] computes it); `None` for a
    /// file over [`MAX_EDIT_BYTES`], which no edit tool loads, so no stale check needs it.
    pub hash: Option<u64>,
}

impl Scan {
    /// Lines as `view` counts them (Trae): a file ending in `\n` has a last, empty line.
    pub fn view_lines(&self) -> u64 {
        self.newlines + 1
    }

    /// Lines as `cat -n` counts them: a last line without `\n` counts, no phantom line.
    pub fn cat_lines(&self) -> u64 {
        self.newlines + u64::from(self.size > 0 && !self.ends_with_newline)
    }
}

/// A line handed to the caller.
#[derive(Debug)]
pub struct Line<'a> {
    /// 0-based line number.
    pub index: u64,
    /// The line without its `\n` (and without a `\r` before it), cut to the byte limit at a
    /// character boundary.
    pub text: &'a str,
    /// The length of the whole line in characters (without its ending).
    pub chars: usize,
}

/// Reads `reader` to the end. For each line whose 0-based number is in `window`, calls
/// `on_line` until it returns `false`. With `phantom_last_line`, the empty line after a final
/// `\n` (and the single line of an empty file) is handed over too.
pub fn scan(
    reader: &mut impl Read,
    window: Range<u64>,
    max_line_bytes: usize,
    phantom_last_line: bool,
    mut on_line: impl FnMut(Line<'_>) -> bool,
) -> std::io::Result<Scan> {
    let mut buf = vec![0u8; FIRST_CHUNK];
    let mut hasher = StreamHasher::default();
    let mut utf8 = Utf8Stream::default();
    let mut state = LineState { index: 0, bytes: Vec::new(), chars: 0, len: 0, last: None, collecting: true };
    let mut size = 0u64;
    let mut newlines = 0u64;
    let mut last_byte = None;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        let chunk = &buf[..n];
        let sniffed = usize::try_from(size).unwrap_or(usize::MAX);
        if sniffed < BINARY_SNIFF_BYTES && memchr::memchr(0, &chunk[..n.min(BINARY_SNIFF_BYTES - sniffed)]).is_some()
            || !utf8.feed(chunk)
        {
            return Ok(Scan { size, newlines, ends_with_newline: false, binary: true, hash: None });
        }
        if size < MAX_EDIT_BYTES {
            hasher.update(chunk);
        }
        size += n as u64;
        last_byte = chunk.last().copied();
        let mut start = 0;
        for newline in memchr::memchr_iter(b'\n', chunk) {
            state.push(&chunk[start..newline], &window, max_line_bytes);
            state.end(&window, &mut on_line);
            newlines += 1;
            start = newline + 1;
        }
        state.push(&chunk[start..], &window, max_line_bytes);
        if n == buf.len() && buf.len() < CHUNK {
            buf.resize(CHUNK, 0);
        }
    }
    if !utf8.finish() {
        return Ok(Scan { size, newlines, ends_with_newline: false, binary: true, hash: None });
    }
    let hash = (size <= MAX_EDIT_BYTES).then(|| hasher.finish());
    let ends_with_newline = last_byte == Some(b'\n');
    if phantom_last_line || !(size == 0 || ends_with_newline) {
        state.end(&window, &mut on_line);
    }
    Ok(Scan { size, newlines, ends_with_newline, binary: false, hash })
}

/// The line being read.
struct LineState {
    index: u64,
    /// The kept prefix of the line.
    bytes: Vec<u8>,
    /// Characters and bytes of the whole line so far, and its last byte.
    chars: usize,
    len: usize,
    last: Option<u8>,
    collecting: bool,
}

impl LineState {
    fn wanted(&self, window: &Range<u64>) -> bool {
        self.collecting && window.contains(&self.index)
    }

    fn push(&mut self, piece: &[u8], window: &Range<u64>, max_bytes: usize) {
        if !self.wanted(window) {
            return;
        }
        self.chars += piece.iter().filter(|&&b| (b & 0xC0) != 0x80).count();
        self.len += piece.len();
        if let Some(&last) = piece.last() {
            self.last = Some(last);
        }
        let room = max_bytes.saturating_sub(self.bytes.len());
        self.bytes.extend_from_slice(&piece[..piece.len().min(room)]);
    }

    fn end(&mut self, window: &Range<u64>, on_line: &mut impl FnMut(Line<'_>) -> bool) {
        if self.wanted(window) {
            let mut chars = self.chars;
            if self.last == Some(b'\r') {
                chars -= 1;
                if self.bytes.len() == self.len {
                    self.bytes.pop();
                }
            }
            let text = whole_chars(&self.bytes);
            self.collecting = on_line(Line { index: self.index, text, chars });
        }
        self.bytes.clear();
        self.chars = 0;
        self.len = 0;
        self.last = None;
        self.index += 1;
    }
}

/// The longest prefix of `bytes` that is whole UTF-8 characters.
fn whole_chars(bytes: &[u8]) -> &str {
    match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => std::str::from_utf8(&bytes[..err.valid_up_to()]).unwrap_or_default(),
    }
}

/// Validates UTF-8 that arrives in chunks split anywhere.
#[derive(Default)]
struct Utf8Stream {
    carry: Vec<u8>,
}

impl Utf8Stream {
    /// Feeds a chunk; `false` once the text is invalid.
    fn feed(&mut self, mut chunk: &[u8]) -> bool {
        if !self.carry.is_empty() {
            let Some(width) = utf8_width(self.carry[0]) else {
                return false;
            };
            let take = (width - self.carry.len()).min(chunk.len());
            self.carry.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
            if self.carry.len() < width {
                return true;
            }
            if std::str::from_utf8(&self.carry).is_err() {
                return false;
            }
            self.carry.clear();
        }
        match std::str::from_utf8(chunk) {
            Ok(_) => true,
            Err(err) if err.error_len().is_none() => {
                self.carry.extend_from_slice(&chunk[err.valid_up_to()..]);
                true
            }
            Err(_) => false,
        }
    }

    /// `true` when nothing is left half-read.
    fn finish(&self) -> bool {
        self.carry.is_empty()
    }
}

fn utf8_width(lead: u8) -> Option<usize> {
    match lead {
        0x00..=0x7F => Some(1),
        0xC2..=0xDF => Some(2),
        0xE0..=0xEF => Some(3),
        0xF0..=0xF4 => Some(4),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Reads in tiny pieces, to split lines and characters across reads.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.1.min(self.0.len()).min(buf.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn lines(
        data: &[u8],
        window: Range<u64>,
        max: usize,
        phantom: bool,
        piece: usize,
    ) -> (Scan, Vec<(u64, String, usize)>) {
        let mut got = Vec::new();
        let scan = scan(&mut Trickle(data, piece), window, max, phantom, |line| {
            got.push((line.index, line.text.to_owned(), line.chars));
            true
        })
        .unwrap();
        (scan, got)
    }

    #[test]
    fn lines_counts_and_hash_agree_whatever_the_read_size() {
        let data = "héllo\r\nwörld\n\tlast".as_bytes();
        for piece in [1, 2, 3, 7, 64 * 1024] {
            let (scan, got) = lines(data, 0..10, 100, true, piece);
            assert_eq!(
                got,
                vec![(0, "héllo".into(), 5), (1, "wörld".into(), 5), (2, "\tlast".into(), 5)],
                "piece {piece}"
            );
            assert_eq!((scan.newlines, scan.cat_lines(), scan.view_lines(), scan.binary), (2, 3, 3, false));
            assert_eq!(scan.hash, Some(crate::fs::ledger::content_hash(data)));
        }
    }

    #[test]
    fn the_phantom_last_line_and_empty_files() {
        let (scan, got) = lines(b"a\nb\n", 0..10, 100, true, 3);
        assert_eq!(got.len(), 3);
        assert_eq!((scan.cat_lines(), scan.view_lines()), (2, 3));
        let (_, got) = lines(b"a\nb\n", 0..10, 100, false, 3);
        assert_eq!(got.len(), 2);
        let (scan, got) = lines(b"", 0..10, 100, true, 3);
        assert_eq!((got.len(), scan.cat_lines(), scan.view_lines()), (1, 0, 1));
    }

    #[test]
    fn windows_limits_and_stopping() {
        let data = "0\n1\n2\n3\nlong line ééé\n5\n".as_bytes();
        let (_, got) = lines(data, 2..5, 11, false, 5);
        assert_eq!(got, vec![(2, "2".into(), 1), (3, "3".into(), 1), (4, "long line ".into(), 13)]);
        // A cut inside a character keeps only whole characters.
        let (_, got) = lines(data, 4..5, 12, false, 5);
        assert_eq!(got[0].1, "long line é");
        let mut seen = 0;
        let scan = scan(&mut &data[..], 0..100, 100, false, |_| {
            seen += 1;
            seen < 2
        })
        .unwrap();
        assert_eq!((seen, scan.newlines), (2, 6));
    }

    #[test]
    fn binary_files_are_detected_early() {
        assert!(lines(b"text\0more", 0..1, 10, false, 4).0.binary);
        assert!(lines(b"caf\xe9 au lait", 0..1, 10, false, 4).0.binary);
        assert!(lines(b"truncated \xe2\x82", 0..1, 10, false, 64).0.binary);
        let mut late_nul = vec![b'a'; BINARY_SNIFF_BYTES + 10];
        late_nul.push(0);
        assert!(!lines(&late_nul, 0..1, 10, false, 1000).0.binary);
    }
}
