//! `view` and `set` of the one value a plain path names (`$.records[2500].score`: names and
//! non-negative indices only), without building the document's tree: the file is checked to
//! be JSON without allocating (serde's `IgnoredAny`), the value's bytes are found by a scan of
//! the text, and `set` replaces only those bytes, written in the file's own layout at their
//! depth. Every other byte of the file stays as it was, so no number can change.
//!
//! Building the tree of a 1 MB document and writing it out again cost most of an edit (the
//! allocations alone a quarter); this path does neither. Any other path, a path that names
//! nothing, a file that is not JSON, or a `pretty_print` that changes the file's layout takes
//! the tree (`mod.rs`), which gives every message.

use std::ops::Range;

use serde::de::IgnoredAny;
use serde_json::Value;

use super::format::{Layout, TooLarge, string_end};
use super::path::{Last, split_last};
use crate::fs::text::UTF8_BOM;

/// The steps of a plain path (`$` then names and non-negative indices), or `None` for any
/// other path (or `$` alone).
pub fn plain_steps(path: &str) -> Option<Vec<Last>> {
    let mut steps = Vec::new();
    let mut rest = path.to_owned();
    while rest != "$" {
        let (parent, last) = split_last(&rest)?;
        match last? {
            Last::Index(i) if i < 0 => return None,
            step => steps.push(step),
        }
        rest = parent;
    }
    steps.reverse();
    (!steps.is_empty()).then_some(steps)
}

/// Where the value at `steps` lies in `text` (a BOM skipped), when `text` is JSON and the
/// value exists. Keys are compared decoded. A key on the path that the object repeats gives
/// `None` (serde_json's tree keeps the last one: the tree decides).
///
/// One pass at most: the path is followed to the value, skipping what comes before each
/// step, then the containers are scanned from the value's end outwards to their ends, for
/// repeated keys.
pub fn locate(text: &str, steps: &[Last]) -> Option<Range<usize>> {
    let body = text.strip_prefix(UTF8_BOM).unwrap_or(text);
    serde_json::from_str::<IgnoredAny>(body).ok()?;
    let bytes = text.as_bytes();
    let mut start = whitespace_end(bytes, text.len() - body.len());
    for step in steps {
        start = match (bytes[start], step) {
            (b'{', Last::Name(name)) => member_start(text, start, name)?,
            (b'[', Last::Index(index)) => element_start(bytes, start, usize::try_from(*index).ok()?)?,
            _ => return None,
        };
    }
    let value = start..skip_value(bytes, start)?;
    let mut end = value.end;
    for step in steps.iter().rev() {
        end = match step {
            Last::Name(name) => rest_of_object(text, end, name)?,
            Last::Index(_) => rest_of_array(bytes, end)?,
        };
    }
    Some(value)
}

/// `value` as it goes in place of the bytes at `depth` levels of a file in `layout`: indented
/// as the file is, its lines after the first moved in to that depth.
pub fn piece(value: &Value, layout: &Layout, depth: usize) -> Result<String, TooLarge> {
    let inline = Layout { bom: false, final_newline: false, ..layout.clone() };
    let text = inline.write(value, None, 0)?;
    match &layout.indent {
        Some(indent) if text.contains('\n') => Ok(text.replace('\n', &format!("\n{}", indent.repeat(depth)))),
        _ => Ok(text),
    }
}

fn whitespace_end(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && matches!(bytes[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The end of the value that starts at `start`, in a document known to be JSON.
fn skip_value(bytes: &[u8], start: usize) -> Option<usize> {
    match *bytes.get(start)? {
        b'"' => Some(string_end(bytes, start) + 1),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = start;
            while i < bytes.len() {
                match bytes[i] {
                    b'"' => i = string_end(bytes, i),
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            None
        }
        _ => {
            let len = bytes[start..]
                .iter()
                .take_while(|b| !matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                .count();
            Some(start + len)
        }
    }
}

/// A member's key at `at` (an opening quote): where it ends, and whether it is `name`.
fn key_at(text: &str, at: usize, name: &str) -> Option<(usize, bool)> {
    let key_end = string_end(text.as_bytes(), at);
    let raw = text.get(at + 1..key_end)?;
    let same = if raw.contains('\\') {
        serde_json::from_str::<String>(text.get(at..=key_end)?).ok().is_some_and(|key| key == name)
    } else {
        raw == name
    };
    Some((key_end + 1, same))
}

/// Where the value of a member starts, from the end of its key.
fn after_colon(bytes: &[u8], key_end: usize) -> usize {
    let i = whitespace_end(bytes, key_end);
    whitespace_end(bytes, i + usize::from(bytes.get(i) == Some(&b':')))
}

/// Where the value of the first member `name` of the object that opens at `open` starts.
fn member_start(text: &str, open: usize, name: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = whitespace_end(bytes, open + 1);
    while bytes.get(i) == Some(&b'"') {
        let (key_end, same) = key_at(text, i, name)?;
        let value = after_colon(bytes, key_end);
        if same {
            return Some(value);
        }
        i = whitespace_end(bytes, skip_value(bytes, value)?);
        if bytes.get(i) != Some(&b',') {
            return None;
        }
        i = whitespace_end(bytes, i + 1);
    }
    None
}

/// The end of an object whose member `name` ends at `from`; `None` if `name` comes again.
fn rest_of_object(text: &str, from: usize, name: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = whitespace_end(bytes, from);
    while bytes.get(i) == Some(&b',') {
        i = whitespace_end(bytes, i + 1);
        let (key_end, same) = key_at(text, i, name)?;
        if same {
            return None;
        }
        i = whitespace_end(bytes, skip_value(bytes, after_colon(bytes, key_end))?);
    }
    (bytes.get(i) == Some(&b'}')).then_some(i + 1)
}

/// Where the element `index` of the array that opens at `open` starts.
fn element_start(bytes: &[u8], open: usize, index: usize) -> Option<usize> {
    let mut i = whitespace_end(bytes, open + 1);
    if bytes.get(i) == Some(&b']') {
        return None;
    }
    for _ in 0..index {
        i = whitespace_end(bytes, skip_value(bytes, i)?);
        if bytes.get(i) != Some(&b',') {
            return None;
        }
        i = whitespace_end(bytes, i + 1);
    }
    Some(i)
}

/// The end of an array whose element ends at `from`.
fn rest_of_array(bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = whitespace_end(bytes, from);
    while bytes.get(i) == Some(&b',') {
        i = whitespace_end(bytes, skip_value(bytes, whitespace_end(bytes, i + 1))?);
    }
    (bytes.get(i) == Some(&b']')).then_some(i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn at<'t>(text: &'t str, path: &str) -> Option<&'t str> {
        locate(text, &plain_steps(path)?).map(|range| &text[range])
    }

    #[test]
    fn plain_paths_only() {
        assert_eq!(
            plain_steps("$.a['b c'][2]"),
            Some(vec![Last::Name("a".into()), Last::Name("b c".into()), Last::Index(2)])
        );
        for other in ["$", "$.a[-1]", "$.a[*]", "$..a", "$.a[0:2]", "$[?@.a]", "$.a['b','c']", "$.*"] {
            assert_eq!(plain_steps(other), None, "{other}");
        }
    }

    #[test]
    fn values_are_found_where_the_tree_finds_them() {
        let text =
            "\u{feff}{ \"a\" : {\"x\\\"y\": [1, \"]}\\\"\", {\"k\": null}] }, \"b\": -2.5e3 ,\"a\": {\"x\\\"y\": [7]}}";
        assert_eq!(at(text, "$.b"), Some("-2.5e3"));
        // A repeated key on the path is left to the tree (which keeps the last); elsewhere
        // it does not matter.
        assert_eq!(at(text, "$.a[\"x\\\"y\"][0]"), None);
        assert_eq!(at("{\"a\": {\"k\": 1, \"k\": 2}, \"b\": [0, {\"c\": 3}]}", "$.b[1].c"), Some("3"));
        assert_eq!(at("{\"a\": {\"k\": 1}, \"b\\u0062\": 2, \"bb\": 3}", "$.a.k"), Some("1"));
        assert_eq!(at("{\"a\": {\"k\": 1}, \"\\u0061\": 2}", "$.a.k"), None);
        assert_eq!(at("[1, \"]}\", {\"k\": null}]", "$[2].k"), Some("null"));
        assert_eq!(at("[1, \"]}\", {\"k\": null}]", "$[1]"), Some("\"]}\""));
        for missing in ["$.c", "$.b.c", "$.a[\"x\\\"y\"][1]", "$.b[0]"] {
            assert_eq!(at(text, missing), None, "{missing}");
        }
        // A file that is not JSON is left to the tree, which says where it is broken.
        assert_eq!(at("{\"a\": 1,}", "$.a"), None);
        assert_eq!(at("{\"a\": 1} x", "$.a"), None);
    }

    #[test]
    fn a_piece_is_indented_to_its_depth_in_the_files_layout() {
        let pretty = Layout::of("{\r\n    \"a\": 1\r\n}\r\n");
        assert_eq!(
            piece(&json!({"k": [1]}), &pretty, 2).unwrap(),
            "{\r\n            \"k\": [\r\n                1\r\n            ]\r\n        }"
        );
        assert_eq!(piece(&json!("s"), &pretty, 3).unwrap(), "\"s\"");
        assert_eq!(piece(&json!({"k": [1, 2]}), &Layout::of("{\"a\": 1}"), 1).unwrap(), "{\"k\": [1, 2]}");
        assert_eq!(piece(&json!({"k": [1, 2]}), &Layout::of("{\"a\":1}"), 1).unwrap(), "{\"k\":[1,2]}");
    }
}
