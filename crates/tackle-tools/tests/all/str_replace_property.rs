//! The property of docs/reference/tools.md#session-state: for any file content (tabs, CRLF, Unicode, with or without
//! a final newline) and any substring that occurs exactly once, `str_replace` changes exactly
//! that span and nothing else; and an LF `old_str` that matches a CRLF file only through the
//! retry is replaced with the file's own endings.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};

use common::Ws;
use proptest::prelude::*;
use serde_json::json;

static FILES: AtomicUsize = AtomicUsize::new(0);

fn content() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        4 => "[a-z]{1,6}",
        2 => Just(" ".to_owned()),
        2 => Just("\t".to_owned()),
        2 => Just("\n".to_owned()),
        2 => Just("\r\n".to_owned()),
        1 => Just("\r".to_owned()),
        1 => "[éüß日本語🎉ℝ]{1,3}",
        1 => "[{}();=<>\"'`$\\\\]{1,2}",
    ];
    prop::collection::vec(piece, 1..200).prop_map(|pieces| pieces.concat())
}

/// Occurrences of `needle`, overlapping ones included (`aa` is twice in `aaa`).
fn occurrences(text: &str, needle: &str) -> usize {
    (0..text.len()).filter(|&i| text.as_bytes()[i..].starts_with(needle.as_bytes())).count()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn str_replace_changes_exactly_the_unique_span(
        text in content(),
        start in any::<prop::sample::Index>(),
        len in 1usize..40,
        new in "[a-z\t\n é]{0,12}",
    ) {
        let boundaries: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
        let from = boundaries[start.index(boundaries.len() - 1)];
        let to = boundaries.iter().copied().find(|&b| b >= from + len).unwrap_or(text.len());
        let old = &text[from..to];
        prop_assume!(!old.is_empty() && old != new);
        prop_assume!(occurrences(&text, old) == 1);
        let ws = Ws::new();
        let name = format!("f{}.txt", FILES.fetch_add(1, Ordering::Relaxed));
        ws.write(&name, &text);
        let output = runtime().block_on(ws.call(
            "str_replace_based_edit_tool",
            json!({"command": "str_replace", "path": name, "old_str": old, "new_str": new}),
        ));
        prop_assert!(!output.is_error, "{}", output.text_content());
        let expected = format!("{}{}{}", &text[..from], new, &text[to..]);
        prop_assert_eq!(ws.bytes(&name), expected.into_bytes());
        prop_assert_eq!(ws.names_in(""), vec![name]);
    }

    #[test]
    fn an_lf_old_str_replaces_crlf_lines_with_crlf(
        lines in prop::collection::vec("[a-z\t é]{0,8}", 2..30),
        first in any::<prop::sample::Index>(),
        count in 2usize..5,
        new_lines in prop::collection::vec("[a-z]{0,5}", 1..4),
        final_newline in any::<bool>(),
    ) {
        let first = first.index(lines.len() - 1);
        let last = (first + count).min(lines.len());
        prop_assume!(last - first >= 2);
        let mut text = lines.join("\r\n");
        if final_newline {
            text.push_str("\r\n");
        }
        let old_crlf = lines[first..last].join("\r\n");
        prop_assume!(occurrences(&text, &old_crlf) == 1);
        let old_lf = lines[first..last].join("\n");
        prop_assume!(!text.contains(&old_lf));
        let new_lf = new_lines.join("\n");
        prop_assume!(new_lf != old_lf);
        let ws = Ws::new();
        ws.write("f.txt", &text);
        let output = runtime().block_on(ws.call(
            "str_replace_based_edit_tool",
            json!({"command": "str_replace", "path": "f.txt", "old_str": old_lf, "new_str": new_lf}),
        ));
        prop_assert!(!output.is_error, "{}", output.text_content());
        let expected = text.replacen(&old_crlf, &new_lines.join("\r\n"), 1);
        prop_assert_eq!(ws.read("f.txt"), expected);
    }
}
