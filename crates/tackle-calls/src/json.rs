//! Reading the JSON object of a call body: strict JSON first, then a small repair pass for
//! what models commonly get wrong (docs/reference/formats.md#tool): trailing commas, single-quoted strings,
//! Python's `True` / `False` / `None`. The pass also escapes raw control characters and lone
//! backslashes inside strings (`"C:\dir"`), which strict JSON refuses and models write.
//! Anything else is reported with the strict parser's message.

use serde_json::{Map, Value};

/// Why a body is not a JSON object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum JsonProblem {
    /// Not JSON, even after repair (the strict parser's message).
    Invalid(String),
    /// JSON, but not an object (its kind: "an array", "a string", …).
    NotObject(&'static str),
}

/// Reads `text` as a JSON object.
pub(crate) fn read_object(text: &str) -> Result<Map<String, Value>, JsonProblem> {
    let value = match serde_json::from_str::<Value>(text) {
        Ok(value) => value,
        Err(strict) => match serde_json::from_str::<Value>(&repair(text)) {
            Ok(value) => value,
            Err(_) => return Err(JsonProblem::Invalid(tackle_core::text::json_error(&strict))),
        },
    };
    match value {
        Value::Object(map) => Ok(map),
        other => Err(JsonProblem::NotObject(tackle_core::text::json_kind(&other))),
    }
}

/// The repaired text (it may still be invalid).
fn repair(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() + 8);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '"' | '\'' => i = copy_string(&chars, i, &mut out),
            ',' => {
                let next = chars[i + 1..].iter().find(|c| !c.is_whitespace());
                if !matches!(next, Some('}' | ']')) {
                    out.push(',');
                }
                i += 1;
            }
            c if c.is_ascii_alphabetic() => {
                let word_end =
                    chars[i..].iter().position(|c| !(c.is_alphanumeric() || *c == '_')).map_or(chars.len(), |n| i + n);
                let word: String = chars[i..word_end].iter().collect();
                let after_word_char = i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_');
                match word.as_str() {
                    "True" if !after_word_char => out.push_str("true"),
                    "False" if !after_word_char => out.push_str("false"),
                    "None" if !after_word_char => out.push_str("null"),
                    _ => out.push_str(&word),
                }
                i = word_end;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// Copies the string starting at `chars[start]` (a `"` or `'`) as a valid double-quoted JSON
/// string; returns the index after it. An unterminated string is copied as it is.
fn copy_string(chars: &[char], start: usize, out: &mut String) -> usize {
    let quote = chars[start];
    let mut body = String::new();
    let mut i = start + 1;
    while i < chars.len() {
        let c = chars[i];
        if c == quote {
            out.push('"');
            out.push_str(&body);
            out.push('"');
            return i + 1;
        }
        match c {
            '\\' => match chars.get(i + 1) {
                Some(&e @ ('"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't' | 'u')) => {
                    body.push('\\');
                    body.push(e);
                    i += 2;
                    continue;
                }
                Some('\'') => {
                    body.push('\'');
                    i += 2;
                    continue;
                }
                _ => body.push_str("\\\\"),
            },
            '"' => body.push_str("\\\""),
            '\n' => body.push_str("\\n"),
            '\r' => body.push_str("\\r"),
            '\t' => body.push_str("\\t"),
            c if (c as u32) < 0x20 => body.push_str(&format!("\\u{:04x}", c as u32)),
            c => body.push(c),
        }
        i += 1;
    }
    out.push(quote);
    out.push_str(&chars[start + 1..].iter().collect::<String>());
    chars.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(text: &str) -> Result<Value, JsonProblem> {
        read_object(text).map(Value::Object)
    }

    #[test]
    fn strict_json_first() {
        assert_eq!(read(r#"{"a": 1, "b": "x"}"#), Ok(json!({"a": 1, "b": "x"})));
    }

    #[test]
    fn repairs_what_models_get_wrong() {
        assert_eq!(read(r#"{"a": [1, 2,], "b": 3,}"#), Ok(json!({"a": [1, 2], "b": 3})));
        assert_eq!(read(r#"{'a': 'it\'s "x"'}"#), Ok(json!({"a": "it's \"x\""})));
        assert_eq!(read(r#"{"a": True, "b": False, "c": None}"#), Ok(json!({"a": true, "b": false, "c": null})));
        assert_eq!(read("{\"a\": \"line1\nline2\"}"), Ok(json!({"a": "line1\nline2"})));
        assert_eq!(read(r#"{"path": "C:\dir\x"}"#), Ok(json!({"path": "C:\\dir\\x"})));
        assert_eq!(read(r#"{"a": "True, False"}"#), Ok(json!({"a": "True, False"})));
        assert_eq!(read(r#"{"Truex": 1}"#), Ok(json!({"Truex": 1})));
    }

    #[test]
    fn reports_the_strict_error_and_the_kind() {
        assert_eq!(read("[1, 2]"), Err(JsonProblem::NotObject("an array")));
        let Err(JsonProblem::Invalid(message)) = read(r#"{"a": "cut"#) else { panic!("should fail") };
        assert!(message.contains("EOF"), "{message}");
        assert!(matches!(read("{a: 1}"), Err(JsonProblem::Invalid(_))));
    }
}
