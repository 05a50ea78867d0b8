//! Text rules every file tool shares (docs/reference/tools.md#session-state): what counts as a binary file, how line
//! endings are detected and matched without ever being converted, how lines are numbered
//! (`cat -n`), and how a replacement is located.

use std::borrow::Cow;

/// How many leading bytes are searched for a NUL byte.
pub const BINARY_SNIFF_BYTES: usize = 8192;

/// The UTF-8 byte order mark (allowed, and kept, at the start of a text file).
pub const UTF8_BOM: &str = "\u{feff}";

/// The message for a binary file.
pub fn binary_message(path: &str) -> String {
    format!("{path} is a binary file; this tool only handles UTF-8 text")
}

/// `bytes` as text, or `None` when the file is binary: a NUL byte in the first 8,192 bytes,
/// or not valid UTF-8 (a UTF-8 BOM is valid and stays part of the text).
pub fn as_text(bytes: &[u8]) -> Option<&str> {
    if has_nul_head(bytes) {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}

/// Whether the first 8,192 bytes hold a NUL byte (binary by any rule, ripgrep's included).
pub fn has_nul_head(bytes: &[u8]) -> bool {
    memchr::memchr(0, &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)]).is_some()
}

/// A file's line ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineEnding {
    Lf,
    CrLf,
}

impl LineEnding {
    /// The ending's characters.
    pub fn as_str(self) -> &'static str {
        match self {
            LineEnding::Lf => "\n",
            LineEnding::CrLf => "\r\n",
        }
    }
}

/// The line ending most lines of `text` use (LF for a text without line breaks, and on ties).
pub fn dominant_ending(text: &str) -> LineEnding {
    let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    let crlf = memchr::memmem::find_iter(text.as_bytes(), b"\r\n").count();
    if crlf * 2 > newlines { LineEnding::CrLf } else { LineEnding::Lf }
}

/// Whether `text` contains a CRLF line break.
pub fn has_crlf(text: &str) -> bool {
    memchr::memmem::find(text.as_bytes(), b"\r\n").is_some()
}

/// `text` with every `\n` that is not already preceded by `\r` turned into `\r\n`.
pub fn lf_to_crlf(text: &str) -> Cow<'_, str> {
    if !text.contains('\n') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    let mut previous = '\0';
    for c in text.chars() {
        if c == '\n' && previous != '\r' {
            out.push('\r');
        }
        out.push(c);
        previous = c;
    }
    Cow::Owned(out)
}

/// `text` with its line breaks turned into `ending` (used for text a tool inserts).
pub fn with_ending(text: &str, ending: LineEnding) -> Cow<'_, str> {
    match ending {
        LineEnding::Lf => Cow::Borrowed(text),
        LineEnding::CrLf => lf_to_crlf(text),
    }
}

/// The byte offsets of every occurrence of `needle` in `haystack`, overlapping ones
/// included: `aa` occurs twice in `aaa`, so an edit of it is ambiguous.
pub fn find_all(haystack: &str, needle: &str) -> Vec<usize> {
    if needle.is_empty() {
        return Vec::new();
    }
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = finder.find(&haystack.as_bytes()[from..]) {
        found.push(from + at);
        from += at + 1;
    }
    found
}

/// The byte offsets of the non-overlapping occurrences of `needle`, left to right (what
/// "replace all" replaces).
pub fn find_disjoint(haystack: &str, needle: &str) -> Vec<usize> {
    if needle.is_empty() {
        return Vec::new();
    }
    memchr::memmem::find_iter(haystack.as_bytes(), needle.as_bytes()).collect()
}

/// The occurrences of `old` in `text`, retried with CRLF line breaks when there are none and
/// the file has CRLF (docs/reference/tools.md#session-state). Returns the offsets and the old and new strings as
/// matched (converted when the retry matched), so the replacement takes the file's endings.
pub fn locate<'a>(text: &str, old: &'a str, new: &'a str) -> (Vec<usize>, Cow<'a, str>, Cow<'a, str>) {
    let found = find_all(text, old);
    if found.is_empty() && old.contains('\n') && has_crlf(text) {
        let old_crlf = lf_to_crlf(old);
        if let Cow::Owned(_) = old_crlf {
            let retried = find_all(text, &old_crlf);
            if !retried.is_empty() {
                return (retried, old_crlf, lf_to_crlf(new));
            }
        }
    }
    (found, Cow::Borrowed(old), Cow::Borrowed(new))
}

/// The 0-based line of byte `offset`.
pub fn line_of(text: &str, offset: usize) -> usize {
    memchr::memchr_iter(b'\n', &text.as_bytes()[..offset.min(text.len())]).count()
}

/// The lines of `text` split on `\n`, each without a trailing `\r` (as `view` shows them). A
/// text that ends with `\n` has a last, empty line (Trae's count).
pub fn split_lines(text: &str) -> impl Iterator<Item = &str> {
    text.split('\n').map(|line| line.strip_suffix('\r').unwrap_or(line))
}

/// One `cat -n` line: the number right-aligned in six columns, a tab, the line.
pub fn push_numbered(out: &mut String, number: usize, line: &str) {
    use std::fmt::Write as _;
    let _ = write!(out, "{number:6}\t{line}");
}

/// Lines numbered from `first`, joined with `\n` (no trailing newline).
pub fn numbered<'a>(lines: impl IntoIterator<Item = &'a str>, first: usize) -> String {
    let mut out = String::new();
    for (index, line) in lines.into_iter().enumerate() {
        if index > 0 {
            out.push('\n');
        }
        push_numbered(&mut out, first + index, line);
    }
    out
}

/// The lines `start..=end` (0-based, clamped) of `text`, numbered from `start + 1`.
pub fn snippet(text: &str, start: usize, end: usize) -> String {
    let from = match start.checked_sub(1) {
        None => 0,
        Some(newline) => match memchr::memchr_iter(b'\n', text.as_bytes()).nth(newline) {
            Some(at) => at + 1,
            None => return String::new(),
        },
    };
    numbered(split_lines(&text[from..]).take((end + 1).saturating_sub(start)), start + 1)
}

/// The snippet of an edit that replaced `old_len` bytes at `at` (on 0-based line `line`)
/// of `text` with `new`: from `before` lines above the edit to `after` lines below its last
/// new line, numbered, built from the lines around the edit only.
pub fn edit_snippet(
    text: &str,
    at: usize,
    old_len: usize,
    new: &str,
    line: usize,
    before: usize,
    after: usize,
) -> String {
    let bytes = text.as_bytes();
    let back = before.min(line);
    let mut start = memchr::memrchr(b'\n', &bytes[..at]).map_or(0, |i| i + 1);
    for _ in 0..back {
        if start == 0 {
            break;
        }
        start = memchr::memrchr(b'\n', &bytes[..start - 1]).map_or(0, |i| i + 1);
    }
    let rest = &text[at + old_len..];
    let end = memchr::memchr_iter(b'\n', rest.as_bytes()).nth(after).map_or(rest.len(), |i| i);
    let local = format!("{}{new}{}", &text[start..at], &rest[..end]);
    let count = back + new.matches('\n').count() + after + 1;
    numbered(split_lines(&local).take(count), line - back + 1)
}

/// The comma-separated list `[a, b, c]` of 1-based line numbers (docs/reference/tools.md#str_replace_based_edit_tool, #edit_file).
pub fn line_list(lines: impl IntoIterator<Item = usize>) -> String {
    let items: Vec<String> = lines.into_iter().map(|n| n.to_string()).collect();
    format!("[{}]", items.join(", "))
}

/// A byte count for people: `812 bytes`, `300.0 KiB`, `1.5 MiB`, `2.0 GiB`.
pub fn human_size(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    #[allow(clippy::cast_precision_loss)] // display only
    let value = bytes as f64;
    if value < KIB {
        format!("{bytes} bytes")
    } else if value < KIB * KIB {
        format!("{:.1} KiB", value / KIB)
    } else if value < KIB * KIB * KIB {
        format!("{:.1} MiB", value / (KIB * KIB))
    } else {
        format!("{:.1} GiB", value / (KIB * KIB * KIB))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn binary_means_nul_in_the_head_or_invalid_utf8() {
        assert_eq!(as_text(b"plain\n"), Some("plain\n"));
        assert_eq!(as_text("\u{feff}bom kept".as_bytes()), Some("\u{feff}bom kept"));
        assert_eq!(as_text(b"a\0b"), None);
        assert_eq!(as_text(b"caf\xe9"), None);
        // A NUL after the first 8 KiB is not sniffed; the file is valid UTF-8 (NUL is).
        let mut late = vec![b'a'; BINARY_SNIFF_BYTES];
        late.push(0);
        assert!(as_text(&late).is_some());
        assert_eq!(as_text(b""), Some(""));
    }

    #[test]
    fn endings_are_detected_and_converted_only_where_lone() {
        assert_eq!(dominant_ending("a\r\nb\r\nc\n"), LineEnding::CrLf);
        assert_eq!(dominant_ending("a\nb\r\n"), LineEnding::Lf);
        assert_eq!(dominant_ending("no breaks"), LineEnding::Lf);
        assert_eq!(lf_to_crlf("a\nb\r\nc\n"), "a\r\nb\r\nc\r\n");
        assert!(matches!(lf_to_crlf("none"), Cow::Borrowed(_)));
    }

    #[test]
    fn locate_retries_with_crlf_and_converts_new_text() {
        let text = "one\r\ntwo\r\nthree\r\n";
        let (at, old, new) = locate(text, "one\ntwo", "1\n2");
        assert_eq!((at, old.as_ref(), new.as_ref()), (vec![0], "one\r\ntwo", "1\r\n2"));
        let (at, old, _) = locate("x\ny\n", "x\ny", "z");
        assert_eq!((at, old.as_ref()), (vec![0], "x\ny"));
        assert_eq!(locate("aaaa", "aa", "b").0, vec![0, 1, 2]);
        assert_eq!(find_disjoint("aaaa", "aa"), vec![0, 2]);
        assert!(locate("abc", "", "b").0.is_empty());
    }

    #[test]
    fn numbering_and_snippets_follow_cat_n() {
        assert_eq!(numbered(["a", "\tb"], 9), "     9\ta\n    10\t\tb");
        assert_eq!(snippet("l1\r\nl2\nl3\n", 1, 9), "     2\tl2\n     3\tl3\n     4\t");
        assert_eq!(line_of("a\nb\nc", 4), 2);
        assert_eq!(line_list([3, 17]), "[3, 17]");
        assert_eq!(human_size(300 * 1024), "300.0 KiB");
        assert_eq!(human_size(12), "12 bytes");
    }

    #[test]
    fn edit_snippets_match_snippets_of_the_whole_edited_text() {
        let text: String = (0..30).map(|i| format!("line {i}\n")).collect();
        for (line, new) in [(0, "X"), (2, "A\nB"), (15, ""), (29, "end\nmore\n")] {
            let at = text.match_indices("line ").nth(line).unwrap().0;
            let old_len = format!("line {line}").len();
            let edited = format!("{}{new}{}", &text[..at], &text[at + old_len..]);
            let expected = snippet(&edited, line.saturating_sub(4), line + 4 + new.matches('\n').count());
            assert_eq!(edit_snippet(&text, at, old_len, new, line, 4, 4), expected, "{line} {new:?}");
        }
    }
}
