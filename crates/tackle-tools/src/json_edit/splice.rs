//! `view` and `set` of the one value a plain path names (`$.records[2500].score`: names and
//! non-negative indices only), without building the document's tree: one scan of the text
//! checks that it is JSON and finds the value's bytes ([`super::scan`]), and `set` replaces
//! only those bytes, written in the file's own layout at their
//! depth. Every other byte of the file stays as it was, so no number can change.
//!
//! Building the tree of a 1 MB document and writing it out again cost most of an edit (the
//! allocations alone a quarter); this path does neither. Any other path, a path that names
//! nothing, a file that is not JSON, or a `pretty_print` that changes the file's layout takes
//! the tree (`mod.rs`), which gives every message.

use serde_json::Value;

use super::format::{Layout, TooLarge};
use super::path::{Last, split_last};

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

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn at<'t>(text: &'t str, path: &str) -> Option<&'t str> {
        super::super::scan::locate(text, &plain_steps(path)?).map(|range| &text[range])
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
