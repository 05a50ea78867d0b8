//! Text utilities every tool and the executor share: removing terminal escape sequences from
//! model-facing text, naming a JSON value's kind and a JSON syntax error in messages, and
//! cutting an over-long text to a head and a tail around a marker (docs/reference/tools.md#outputs).

/// Removes ANSI escape sequences (CSI `ESC [ … final`, OSC `ESC ] … BEL|ESC \`, and two-byte
/// `ESC x` sequences). Text without `ESC` is returned unchanged without copying work.
pub fn strip_ansi(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\u{1b}') {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                // Parameters and intermediates, then one final byte in @..~.
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\u{7}' {
                        break;
                    }
                    if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            // `ESC ( B` and friends: intermediates in 0x20..=0x2F, then one final character.
            Some(c) if (' '..='/').contains(&c) => {
                for c in chars.by_ref() {
                    if !(' '..='/').contains(&c) {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    std::borrow::Cow::Owned(out)
}

/// An over-long text cut to its head and tail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut<'a> {
    /// The kept start of the text (at most `head_chars` characters).
    pub head: &'a str,
    /// The kept end of the text (at most `tail_chars` characters).
    pub tail: &'a str,
    /// Characters left out between head and tail.
    pub omitted_chars: usize,
    /// Lines left out between head and tail.
    pub omitted_lines: usize,
}

impl Cut<'_> {
    /// Joins head and tail around `marker`, each on its own line.
    pub fn join(&self, marker: &str) -> String {
        let mut out = String::with_capacity(self.head.len() + marker.len() + self.tail.len() + 2);
        out.push_str(self.head);
        if !self.head.is_empty() && !self.head.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(marker);
        out.push('\n');
        out.push_str(self.tail);
        out
    }
}

/// Cuts `text` to at most `head_chars + tail_chars` characters, or returns `None` when it
/// already fits. Cuts fall on line boundaries, except that a single line longer than its
/// share is cut inside the line, at a character boundary.
pub fn cut_middle(text: &str, head_chars: usize, tail_chars: usize) -> Option<Cut<'_>> {
    // Cheap exits before counting characters: bytes bound characters from above.
    if text.len() <= head_chars + tail_chars {
        return None;
    }
    let total = text.chars().count();
    if total <= head_chars + tail_chars {
        return None;
    }
    let head_limit = byte_offset_of_char(text, head_chars);
    let head_end = match text[..head_limit].rfind('\n') {
        Some(newline) => newline + 1,
        None => head_limit,
    };
    let tail_limit = byte_offset_of_char_from_end(text, tail_chars);
    let tail_start = if tail_limit == 0 || text.as_bytes()[tail_limit - 1] == b'\n' {
        tail_limit
    } else {
        match text[tail_limit..].find('\n') {
            Some(newline) if tail_limit + newline + 1 < text.len() => tail_limit + newline + 1,
            _ => tail_limit,
        }
    };
    let tail_start = tail_start.max(head_end);
    let omitted = &text[head_end..tail_start];
    Some(Cut {
        head: &text[..head_end],
        tail: &text[tail_start..],
        omitted_chars: omitted.chars().count(),
        omitted_lines: omitted.lines().count(),
    })
}

/// The byte offset of the `n`-th character (or the end).
fn byte_offset_of_char(text: &str, n: usize) -> usize {
    text.char_indices().nth(n).map_or(text.len(), |(i, _)| i)
}

/// The byte offset where the last `n` characters start.
fn byte_offset_of_char_from_end(text: &str, n: usize) -> usize {
    if n == 0 {
        return text.len();
    }
    text.char_indices().rev().nth(n - 1).map_or(0, |(i, _)| i)
}

/// The marker line of the output budget.
pub fn budget_marker(omitted_chars: usize, omitted_lines: usize, spill_path: Option<&str>) -> String {
    match spill_path {
        Some(path) => {
            format!("[... {omitted_chars} characters ({omitted_lines} lines) omitted; full output saved to {path} ...]")
        }
        None => format!("[... {omitted_chars} characters ({omitted_lines} lines) omitted ...]"),
    }
}

/// The JSON kind of a value as messages name it ("a string", "an object", …).
pub fn json_kind(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The deepest nesting of arrays and objects in any JSON text Tackle reads, from a model, a
/// client, a server or a file: what serde_json's recursion limit (128) lets through. Tackle
/// never lifts it (docs/architecture.md, "Bounded input").
pub const JSON_MAX_DEPTH: usize = 127;

/// How deeply `value`'s arrays and objects nest (a scalar is 0, `[]` is 1), counted without
/// recursion, for values built in memory beyond what one text held.
pub fn json_depth(value: &serde_json::Value) -> usize {
    use serde_json::Value;
    let mut deepest = 0;
    let mut pending = vec![(value, 0)];
    while let Some((value, above)) = pending.pop() {
        match value {
            Value::Array(items) => pending.extend(items.iter().map(|item| (item, above + 1))),
            Value::Object(map) => pending.extend(map.values().map(|item| (item, above + 1))),
            _ => {}
        }
        if value.is_array() || value.is_object() {
            deepest = deepest.max(above + 1);
        }
    }
    deepest
}

/// Whether `err` is serde_json refusing a text nested deeper than [`JSON_MAX_DEPTH`].
pub fn json_too_deep(err: &serde_json::Error) -> bool {
    err.to_string().starts_with(RECURSION_LIMIT)
}

const RECURSION_LIMIT: &str = "recursion limit exceeded";

/// serde_json's message for `err`, naming the nesting limit when that is what was hit. The
/// position stays last (`… at line L column C`), as serde_json writes it.
pub fn json_error(err: &serde_json::Error) -> String {
    let message = err.to_string();
    match message.strip_prefix(RECURSION_LIMIT) {
        Some(position) => {
            format!("arrays and objects nested deeper than {JSON_MAX_DEPTH} levels (the most Tackle reads){position}")
        }
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn json_errors_name_the_nesting_limit() {
        let deep = format!("{}{}", "[".repeat(JSON_MAX_DEPTH + 1), "]".repeat(JSON_MAX_DEPTH + 1));
        let err = serde_json::from_str::<serde_json::Value>(&deep).unwrap_err();
        assert_eq!(
            json_error(&err),
            "arrays and objects nested deeper than 127 levels (the most Tackle reads) at line 1 column 128"
        );
        let at_limit = format!("{}{}", "[".repeat(JSON_MAX_DEPTH), "]".repeat(JSON_MAX_DEPTH));
        assert!(serde_json::from_str::<serde_json::Value>(&at_limit).is_ok());
        let err = serde_json::from_str::<serde_json::Value>("{").unwrap_err();
        assert_eq!(json_error(&err), "EOF while parsing an object at line 1 column 1");
        let at_limit: serde_json::Value = serde_json::from_str(&at_limit).unwrap();
        assert_eq!(json_depth(&at_limit), JSON_MAX_DEPTH);
        assert_eq!(json_depth(&serde_json::json!({"a": [1, {"b": []}], "c": 2})), 4);
        assert_eq!(json_depth(&serde_json::json!("scalar")), 0);
    }

    #[test]
    fn strips_csi_osc_and_short_escapes() {
        assert_eq!(strip_ansi("\u{1b}[1;31mred\u{1b}[0m plain"), "red plain");
        assert_eq!(strip_ansi("\u{1b}]0;title\u{7}after"), "after");
        assert_eq!(strip_ansi("\u{1b}]8;;http://x\u{1b}\\link"), "link");
        assert_eq!(strip_ansi("a\u{1b}(Bb"), "ab");
        assert_eq!(strip_ansi("no escapes"), "no escapes");
        assert_eq!(strip_ansi("trailing \u{1b}"), "trailing ");
    }

    #[test]
    fn fits_return_none() {
        assert_eq!(cut_middle("short", 3, 3), None);
        assert_eq!(cut_middle("ééé", 1, 2), None);
    }

    #[test]
    fn cuts_at_line_boundaries() {
        let text: String = (0..100).map(|i| format!("line {i:03}\n")).collect();
        let cut = cut_middle(&text, 25, 25).unwrap();
        assert_eq!(cut.head, "line 000\nline 001\n");
        assert_eq!(cut.tail, "line 098\nline 099\n");
        assert_eq!(cut.omitted_lines, 96);
        assert_eq!(cut.head.len() + cut.tail.len() + cut.omitted_chars, text.len());
    }

    #[test]
    fn a_single_huge_line_is_cut_inside() {
        let text = "x".repeat(1000) + "\n";
        let cut = cut_middle(&text, 10, 20).unwrap();
        assert_eq!(cut.head, "x".repeat(10));
        assert_eq!(cut.tail.chars().count(), 20);
        assert!(cut.tail.ends_with('\n'));
    }

    #[test]
    fn multibyte_text_is_cut_at_char_boundaries() {
        let text = "日本語".repeat(100);
        let cut = cut_middle(&text, 5, 7).unwrap();
        assert_eq!(cut.head.chars().count(), 5);
        assert_eq!(cut.tail.chars().count(), 7);
        assert_eq!(cut.omitted_chars, 300 - 12);
    }

    #[test]
    fn join_puts_the_marker_on_its_own_line() {
        let cut = Cut { head: "a", tail: "z", omitted_chars: 1, omitted_lines: 1 };
        assert_eq!(cut.join("[m]"), "a\n[m]\nz");
    }
}
