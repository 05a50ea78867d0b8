//! Reading and writing a JSON file the way it was written: key order kept (serde_json's
//! `preserve_order`), the file's own indentation (width, tabs or spaces), its BOM, its line
//! ending and its final newline, non-ASCII text unescaped; and a refusal to write a file
//! whose numbers would not survive being parsed and written again.

use serde::Serialize as _;
use serde_json::Value;
use serde_json::ser::{CompactFormatter, PrettyFormatter, Serializer};

use crate::fs::text::{LineEnding, UTF8_BOM, dominant_ending, lf_to_crlf};

/// How a JSON file was laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub indent: String,
    pub bom: bool,
    pub ending: LineEnding,
    pub final_newline: bool,
}

impl Layout {
    /// The layout of `text`: the indentation of its first indented line (2 spaces when no
    /// line is indented).
    pub fn of(text: &str) -> Layout {
        let indent = text
            .lines()
            .skip(1)
            .map(|line| &line[..line.len() - line.trim_start_matches([' ', '\t']).len()])
            .find(|lead| !lead.is_empty())
            .map(|lead| {
                let tabs = lead.len() - lead.trim_start_matches('\t').len();
                if tabs > 0 { "\t".repeat(tabs) } else { lead.to_owned() }
            })
            .unwrap_or_else(|| "  ".to_owned());
        Layout {
            indent,
            bom: text.starts_with(UTF8_BOM),
            ending: dominant_ending(text),
            final_newline: text.ends_with('\n'),
        }
    }

    /// `value` written in this layout (compact when `pretty` is false).
    pub fn write(&self, value: &Value, pretty: bool) -> String {
        let mut bytes = Vec::new();
        let result = if pretty {
            let mut serializer =
                Serializer::with_formatter(&mut bytes, PrettyFormatter::with_indent(self.indent.as_bytes()));
            value.serialize(&mut serializer)
        } else {
            value.serialize(&mut Serializer::with_formatter(&mut bytes, CompactFormatter))
        };
        // Serializing a `Value` into memory cannot fail, and it is always UTF-8.
        let mut text = if result.is_ok() { String::from_utf8(bytes).unwrap_or_default() } else { String::new() };
        if self.final_newline {
            text.push('\n');
        }
        if self.ending == LineEnding::CrLf {
            text = lf_to_crlf(&text).into_owned();
        }
        if self.bom {
            text.insert_str(0, UTF8_BOM);
        }
        text
    }
}

/// Values pretty-printed for `view` (2 spaces, `": "`).
pub fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// The first number in `text` (outside strings) that parsing and writing would change in
/// value: an integer outside the 64-bit range, or a decimal with more significant digits
/// than a double keeps.
pub fn lossy_number(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
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
        assert_eq!(layout, Layout { indent: "\t".into(), bom: false, ending: LineEnding::Lf, final_newline: true });
        let value: Value = serde_json::from_str(tabs).unwrap();
        assert_eq!(layout.write(&value, true), tabs);
        let four = "{\r\n    \"k\": \"é\"\r\n}";
        let value: Value = serde_json::from_str(four).unwrap();
        assert_eq!(Layout::of(four).write(&value, true), four);
        assert_eq!(Layout::of("{\"a\":1}").indent, "  ");
        assert_eq!(Layout::of("{\"a\":1}\n").write(&json!({"a": 1, "b": [true]}), false), "{\"a\":1,\"b\":[true]}\n");
        let bom = "\u{feff}{\n  \"x\": null\n}\n";
        let value: Value = serde_json::from_str(bom.trim_start_matches(UTF8_BOM)).unwrap();
        assert_eq!(Layout::of(bom).write(&value, true), bom);
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
