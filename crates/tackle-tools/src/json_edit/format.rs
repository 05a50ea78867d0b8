//! Reading and writing a JSON file the way it was written: key order kept (serde_json's
//! `preserve_order`), the file's own indentation (width, tabs or spaces), its BOM, its line
//! ending and its final newline, non-ASCII text unescaped; and a refusal to write a file
//! whose numbers would not survive being parsed and written again.
//!
//! Writing is bounded: indenting a compact document can multiply its size a hundredfold (a
//! 64 MiB file of deeply nested arrays indents to gigabytes), so a document is written out
//! to at most [`MAX_WRITTEN_BYTES`], and a view keeps only the characters it shows.

use serde::Serialize;
use serde_json::Value;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter, Serializer};

use crate::fs::files::MAX_EDIT_BYTES;
use crate::fs::text::{LineEnding, UTF8_BOM, dominant_ending, lf_to_crlf};

/// The most bytes a document is written out as: what the edit tools read back.
pub const MAX_WRITTEN_BYTES: usize = MAX_EDIT_BYTES as usize;

/// The document would be written out larger than [`MAX_WRITTEN_BYTES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooLarge;

/// How a JSON file was laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The indentation of an indented file; `None` for a document on one line.
    pub indent: Option<String>,
    /// On one line: whether `:` and `,` are followed by a space (`{"a": 1, "b": 2}`, as
    /// Python writes JSON).
    pub spaced: bool,
    pub bom: bool,
    pub ending: LineEnding,
    pub final_newline: bool,
}

impl Layout {
    /// The layout of `text`. A document on one line whose top container holds something is
    /// compact; otherwise the indentation is that of its first indented line (2 spaces when
    /// no line is indented, as for `{}`).
    pub fn of(text: &str) -> Layout {
        let body = text.strip_prefix(UTF8_BOM).unwrap_or(text).trim();
        let inner = body.get(1..body.len().saturating_sub(1)).filter(|_| body.starts_with(['{', '[']));
        let compact = !body.contains('\n') && inner.is_some_and(|inner| !inner.trim().is_empty());
        let indent = (!compact).then(|| {
            text.lines()
                .skip(1)
                .map(|line| &line[..line.len() - line.trim_start_matches([' ', '\t']).len()])
                .find(|lead| !lead.is_empty())
                .map(|lead| {
                    let tabs = lead.len() - lead.trim_start_matches('\t').len();
                    if tabs > 0 { "\t".repeat(tabs) } else { lead.to_owned() }
                })
                .unwrap_or_else(|| "  ".to_owned())
        });
        Layout {
            indent,
            spaced: compact && first_separator_spaced(body),
            bom: text.starts_with(UTF8_BOM),
            ending: dominant_ending(text),
            final_newline: text.ends_with('\n'),
        }
    }

    /// `value` written in this layout: `pretty` `Some(true)` indents (in the file's own
    /// indentation, else 2 spaces), `Some(false)` writes one line, `None` keeps the file's
    /// choice.
    /// `size_hint`: about how large the text will be (the file's size), reserved at once.
    pub fn write(&self, value: &Value, pretty: Option<bool>, size_hint: usize) -> Result<String, TooLarge> {
        let mut out = Bounded::new(MAX_WRITTEN_BYTES).reserving(size_hint.saturating_add(64));
        let indent = match (pretty, &self.indent) {
            (Some(false), _) | (None, None) => None,
            (Some(true), None) => Some("  "),
            (_, Some(indent)) => Some(indent.as_str()),
        };
        let result = match indent {
            Some(indent) => value
                .serialize(&mut Serializer::with_formatter(&mut out, PrettyFormatter::with_indent(indent.as_bytes()))),
            None if self.spaced => value.serialize(&mut Serializer::with_formatter(&mut out, SpacedCompact)),
            None => value.serialize(&mut Serializer::with_formatter(&mut out, CompactFormatter)),
        };
        if result.is_err() {
            return Err(TooLarge);
        }
        // Serialized JSON is always UTF-8.
        let mut text = String::from_utf8(out.kept).unwrap_or_default();
        if self.final_newline {
            text.push('\n');
        }
        if self.ending == LineEnding::CrLf {
            text = lf_to_crlf(&text).into_owned();
        }
        if self.bom {
            text.insert_str(0, UTF8_BOM);
        }
        Ok(text)
    }
}

/// Whether the first `:` or `,` outside strings in `body` is followed by a space.
fn first_separator_spaced(body: &str) -> bool {
    let bytes = body.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => i = string_end(bytes, i),
            b':' | b',' => return bytes.get(i + 1) == Some(&b' '),
            _ => {}
        }
        i += 1;
    }
    false
}

/// The index of the quote closing the JSON string that opens at `open` (or the end of
/// `bytes` when it is not closed), skipping escaped characters.
pub(super) fn string_end(bytes: &[u8], open: usize) -> usize {
    // A plain loop: JSON strings are mostly short, where a call to memchr costs more.
    let mut i = open + 1;
    while i < bytes.len() && bytes[i] != b'"' {
        i += if bytes[i] == b'\\' { 2 } else { 1 };
    }
    i.min(bytes.len())
}

/// One line with a space after each `:` and `,`.
struct SpacedCompact;

impl Formatter for SpacedCompact {
    fn begin_array_value<W: ?Sized + std::io::Write>(&mut self, writer: &mut W, first: bool) -> std::io::Result<()> {
        if first { Ok(()) } else { writer.write_all(b", ") }
    }

    fn begin_object_key<W: ?Sized + std::io::Write>(&mut self, writer: &mut W, first: bool) -> std::io::Result<()> {
        if first { Ok(()) } else { writer.write_all(b", ") }
    }

    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, writer: &mut W) -> std::io::Result<()> {
        writer.write_all(b": ")
    }
}

/// The start of `value` pretty-printed for `view` (2 spaces, `": "`): at most `keep`
/// characters, and how many characters the whole text has (`None` past
/// [`MAX_WRITTEN_BYTES`], where counting stops).
pub fn pretty_head(value: &impl Serialize, keep: usize) -> (String, Option<usize>) {
    // A character is at most 4 bytes.
    let mut out = Bounded::new(MAX_WRITTEN_BYTES).keeping(keep.saturating_mul(4)).counting_chars();
    let complete = value.serialize(&mut Serializer::pretty(&mut out)).is_ok();
    let valid = match std::str::from_utf8(&out.kept) {
        Ok(text) => text,
        // The kept bytes may end inside a character.
        Err(err) => std::str::from_utf8(&out.kept[..err.valid_up_to()]).unwrap_or_default(),
    };
    (valid.chars().take(keep).collect(), complete.then_some(out.chars.unwrap_or_default()))
}

/// An in-memory writer that keeps the first `keep` bytes, counts every character if asked,
/// and fails once more than `limit` bytes were written (so serializing stops there).
struct Bounded {
    kept: Vec<u8>,
    keep: usize,
    limit: usize,
    written: usize,
    /// The characters written, when counted (a view's total; a write needs no count).
    chars: Option<usize>,
}

impl Bounded {
    fn new(limit: usize) -> Bounded {
        Bounded { kept: Vec::new(), keep: limit, limit, written: 0, chars: None }
    }

    fn keeping(self, keep: usize) -> Bounded {
        Bounded { keep: keep.min(self.limit), ..self }
    }

    fn counting_chars(self) -> Bounded {
        Bounded { chars: Some(0), ..self }
    }

    /// Reserves room for `bytes` (at most what is kept) up front.
    fn reserving(mut self, bytes: usize) -> Bounded {
        self.kept.reserve(bytes.min(self.keep));
        self
    }
}

impl std::io::Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.written += buf.len();
        if self.written > self.limit {
            return Err(std::io::Error::other("over the size limit"));
        }
        if let Some(chars) = &mut self.chars {
            // Every byte but a UTF-8 continuation byte starts a character.
            *chars += buf.iter().filter(|&&b| b & 0xC0 != 0x80).count();
        }
        let room = self.keep.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&buf[..buf.len().min(room)]);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The first number in `text` (outside strings) that parsing and writing would change in
/// value: an integer outside the 64-bit range, or a decimal with more significant digits
/// than a double keeps.
pub fn lossy_number(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => i = string_end(bytes, i) + 1,
            b'-' | b'0'..=b'9' => {
                let start = i;
                while i < bytes.len() && matches!(bytes[i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9') {
                    i += 1;
                }
                let token = &text[start..i];
                if !survives(token) {
                    return Some(token);
                }
            }
            _ => i += 1,
        }
    }
    None
}

fn survives(token: &str) -> bool {
    if !token.contains(['.', 'e', 'E']) {
        return token.parse::<i64>().is_ok() || token.parse::<u64>().is_ok();
    }
    let mantissa = token.split(['e', 'E']).next().unwrap_or(token);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let significant = digits.trim_start_matches('0').trim_end_matches('0');
    significant.len() <= 17
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn layouts_are_detected_and_reproduced() {
        let tabs = "{\n\t\"a\": [\n\t\t1\n\t]\n}\n";
        let layout = Layout::of(tabs);
        assert_eq!(
            layout,
            Layout {
                indent: Some("\t".into()),
                spaced: false,
                bom: false,
                ending: LineEnding::Lf,
                final_newline: true
            }
        );
        let value: Value = serde_json::from_str(tabs).unwrap();
        assert_eq!(layout.write(&value, None, 0).unwrap(), tabs);
        assert_eq!(layout.write(&value, Some(true), 0).unwrap(), tabs);
        assert_eq!(layout.write(&value, Some(false), 0).unwrap(), "{\"a\":[1]}\n");
        let four = "{\r\n    \"k\": \"é\"\r\n}";
        let value: Value = serde_json::from_str(four).unwrap();
        assert_eq!(Layout::of(four).write(&value, None, 0).unwrap(), four);
        let bom = "\u{feff}{\n  \"x\": null\n}\n";
        let value: Value = serde_json::from_str(bom.trim_start_matches(UTF8_BOM)).unwrap();
        assert_eq!(Layout::of(bom).write(&value, None, 0).unwrap(), bom);
    }

    #[test]
    fn one_line_files_stay_on_one_line_in_their_own_spacing() {
        let grown = json!({"a": 1, "b": [true, "x, y: z"]});
        assert_eq!(Layout::of("{\"a\":1}").indent, None);
        assert_eq!(Layout::of("{\"a\":1}\n").write(&grown, None, 0).unwrap(), "{\"a\":1,\"b\":[true,\"x, y: z\"]}\n");
        assert_eq!(Layout::of("{\"a\": 1}").write(&grown, None, 0).unwrap(), "{\"a\": 1, \"b\": [true, \"x, y: z\"]}");
        assert_eq!(Layout::of("[\"a:b\",1]").write(&json!(["a:b", 1, 2]), None, 0).unwrap(), "[\"a:b\",1,2]");
        assert_eq!(Layout::of("[\"a\\\",b\", 1]").write(&json!([1, 2]), None, 0).unwrap(), "[1, 2]");
        assert_eq!(
            Layout::of("\u{feff}{\"a\":1}\r\n").write(&json!({"a": 2}), None, 0).unwrap(),
            "\u{feff}{\"a\":2}\r\n"
        );
        // Asked for, a one-line file is indented (2 spaces: it has no indentation of its own).
        assert_eq!(Layout::of("{\"a\":1}").write(&json!({"a": 2}), Some(true), 0).unwrap(), "{\n  \"a\": 2\n}");
        // An empty container says nothing about the layout: it is indented, as before.
        for empty in ["{}", "[ ]\n"] {
            assert_eq!(Layout::of(empty).indent.as_deref(), Some("  "), "{empty}");
        }
        assert_eq!(Layout::of("{}").write(&json!({"a": 1}), None, 0).unwrap(), "{\n  \"a\": 1\n}");
    }

    #[test]
    fn writing_stops_at_the_size_limit() {
        // 127 levels of arrays around 300,000 zeros: 600 KB compact, 77 MB indented.
        let mut value = Value::Array(vec![json!(0); 300_000]);
        for _ in 0..126 {
            value = Value::Array(vec![value]);
        }
        let layout = Layout::of("[\n  0\n]\n");
        assert_eq!(layout.write(&value, Some(true), 0), Err(TooLarge));
        assert_eq!(layout.write(&value, Some(false), 0).unwrap().len(), 600_001 + 2 * 126 + 1);
        let (head, total) = pretty_head(&value, 100);
        assert_eq!((head.chars().count(), total), (100, None));
        assert!(head.starts_with("[\n  [\n    ["), "{head}");
        // Under the limit, the count is exact and a character is never cut.
        let (head, total) = pretty_head(&json!({"k": "ééé"}), 11);
        assert_eq!((head.as_str(), total), ("{\n  \"k\": \"é", Some(16)));
    }

    #[test]
    fn numbers_that_would_change_are_found() {
        assert_eq!(
            lossy_number(r#"{"a": 1, "b": -2.5e10, "c": 18446744073709551615, "s": "99999999999999999999999"}"#),
            None
        );
        assert_eq!(lossy_number(r#"{"id": 123456789012345678901234}"#), Some("123456789012345678901234"));
        assert_eq!(lossy_number("[0.12345678901234567891]"), Some("0.12345678901234567891"));
        assert_eq!(lossy_number("[1.50000000000000000000]"), None);
    }
}
