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
/// value exists. Keys are compared decoded; of duplicate keys the last counts, as in the tree.
pub fn locate(text: &str, steps: &[Last]) -> Option<Range<usize>> {
    let body = text.strip_prefix(UTF8_BOM).unwrap_or(text);
    serde_json::from_str::<IgnoredAny>(body).ok()?;
    let bytes = text.as_bytes();
    // Only where each value starts matters until the last step.
    let mut value = whitespace_end(bytes, text.len() - body.len())..text.len();
    for step in steps {
        value = match (bytes[value.start], step) {
            (b'{', Last::Name(name)) => member(text, value.start, name)?,
            (b'[', Last::Index(index)) => element(bytes, value.start, usize::try_from(*index).ok()?)?,
            _ => return None,
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

/// The value of the member `name` of the object that opens at `open` (the last, if repeated).
fn member(text: &str, open: usize, name: &str) -> Option<Range<usize>> {
    let bytes = text.as_bytes();
    let mut found = None;
    let mut i = whitespace_end(bytes, open + 1);
    while bytes.get(i) == Some(&b'"') {
        let key_end = string_end(bytes, i);
        let raw = text.get(i + 1..key_end)?;
        let same = if raw.contains('\\') {
            serde_json::from_str::<String>(&text[i..=key_end]).ok().is_some_and(|key| key == name)
        } else {
            raw == name
        };
        i = whitespace_end(bytes, key_end + 1);
        i = whitespace_end(bytes, i + usize::from(bytes.get(i) == Some(&b':')));
        let end = skip_value(bytes, i)?;
        if same {
            found = Some(i..end);
        }
        i = whitespace_end(bytes, end);
        if bytes.get(i) != Some(&b',') {
            break;
        }
        i = whitespace_end(bytes, i + 1);
    }
    found
}

/// The element `index` of the array that opens at `open`.
fn element(bytes: &[u8], open: usize, index: usize) -> Option<Range<usize>> {
    let mut i = whitespace_end(bytes, open + 1);
    if bytes.get(i) == Some(&b']') {
        return None;
    }
    let mut n = 0;
    loop {
        let end = skip_value(bytes, i)?;
        if n == index {
            return Some(i..end);
        }
        i = whitespace_end(bytes, end);
        if bytes.get(i) != Some(&b',') {
            return None;
        }
        i = whitespace_end(bytes, i + 1);
        n += 1;
    }
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
        // A repeated key: the last counts, as in serde_json's tree.
        assert_eq!(at(text, "$.a[\"x\\\"y\"][0]"), Some("7"));
        assert_eq!(at(text, "$['a']['x\"y']"), Some("[7]"));
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
