//! The `tool` format, `@NAME(CALL_ID): {json}` (docs/reference/formats.md#tool).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tackle_calls::{ParsedCall, TextFormat, parse};

fn calls(text: &str) -> Vec<ParsedCall> {
    let tools = support::test_tools();
    let whole = parse(TextFormat::Tool, text, &tools);
    for sizes in [&[1][..], &[2], &[3], &[5], &[7, 1, 13]] {
        assert_eq!(
            support::parse_chunked(TextFormat::Tool, text, &tools, sizes),
            whole,
            "chunks {sizes:?} of {text:?}"
        );
    }
    whole
}

fn summary(text: &str) -> Vec<(String, String, Value, Option<String>)> {
    calls(text).into_iter().map(|c| (c.name, c.id, Value::Object(c.args), c.parse_error)).collect()
}

fn ok(name: &str, id: &str, args: Value) -> (String, String, Value, Option<String>) {
    (name.to_owned(), id.to_owned(), args, None)
}

#[test]
fn a_call_is_an_at_line_with_a_name_an_id_and_a_json_object() {
    let text =
        "I'll read it.\n@read_file(call_1): {\"path\": \"a.txt\"}\nand run\n@bash(c-2.x:y):\n  {\"command\": \"ls\"}\n";
    assert_eq!(
        summary(text),
        vec![ok("read_file", "call_1", json!({"path": "a.txt"})), ok("bash", "c-2.x:y", json!({"command": "ls"}))]
    );
    let found = calls(text);
    assert_eq!((found[0].start, found[0].end), (14, 14 + "@read_file(call_1): {\"path\": \"a.txt\"}".len()));
}

#[test]
fn the_at_must_start_a_line_and_the_id_is_mandatory() {
    assert_eq!(summary("say @bash(c1): {\"command\": \"ls\"}\n"), vec![]);
    assert_eq!(summary("@bash: {\"command\": \"ls\"}\n"), vec![]);
    assert_eq!(summary("@bash(): {}\n@bash(a b): {}\n@bash(c1) {}\n@bash(c1): x {}\n@(c1): {}\n"), vec![]);
}

#[test]
fn a_name_runs_to_the_first_parenthesis_and_may_hold_spaces_slashes_and_dots() {
    assert_eq!(summary("@git server/status.v2(id1): {}\n"), vec![ok("git server/status.v2", "id1", json!({}))]);
    // Names resolve like any other call: alias, then normalized.
    assert_eq!(summary("@Read(r): {\"path\": \"a\"}\n@READ_FILE(s): {\"path\": \"b\"}\n")[1].0, "read_file");
    assert_eq!(summary("@Read(r): {\"path\": \"a\"}\n")[0].0, "read_file");
}

#[test]
fn braces_are_matched_outside_strings_and_escapes_count_only_inside() {
    let text = "@bash(c1): {\"command\": \"echo '}' \\\" { \\\\\"}\nafter\n@bash(c2): {\"command\": \"x\"}\n";
    assert_eq!(
        summary(text),
        vec![ok("bash", "c1", json!({"command": "echo '}' \" { \\"})), ok("bash", "c2", json!({"command": "x"}))]
    );
    // A backslash outside a string hides nothing (gptme's did): the `}` after it closes.
    let [call] = calls("@typed(c1): {\"options\": {\"a\": 1\\}}\n").try_into().unwrap();
    assert_eq!(call.end, "@typed(c1): {\"options\": {\"a\": 1\\}}".len());
    assert!(call.parse_error.is_some());
}

fn unbalanced(id: &str, before: &str) -> (String, String, Value, Option<String>) {
    let error = format!(
        "The JSON arguments for tool 'bash' have no closing brace before {before}. Send the arguments as one complete JSON object."
    );
    ("bash".to_owned(), id.to_owned(), json!({}), Some(error))
}

#[test]
fn a_call_cut_off_is_a_malformed_call() {
    // The message ends inside the JSON.
    let text = "@bash(c1): {\"command\": \"ec";
    assert_eq!(summary(text), vec![unbalanced("c1", "the message ends")]);
    assert_eq!((calls(text)[0].start, calls(text)[0].end), (0, text.len()));
    assert_eq!(summary("Run:\n@bash(c1): {\"command\": {\n"), vec![unbalanced("c1", "the message ends")]);
    // A header that is not complete is not a call.
    assert_eq!(summary("@bash(c1): "), vec![]);
}

#[test]
fn a_call_header_inside_unbalanced_json_starts_the_next_call() {
    let text = "@bash(c1): {\"command\": \"ls\"\n@bash(c2): {\"command\": \"pwd\"}\nDone.";
    assert_eq!(
        summary(text),
        vec![unbalanced("c1", "the next call starts"), ok("bash", "c2", json!({"command": "pwd"}))]
    );
    let found = calls(text);
    assert_eq!((found[0].end, found[1].start), (text.find("\n@").unwrap() + 1, text.find("\n@").unwrap() + 1));
    // Cut off inside a string, with a blank line and CRLF before the next call.
    let text = "@bash(c1): {\"command\": \"ls\r\n\r\n@bash(c2): {\"command\": \"pwd\"}\r\n";
    assert_eq!(
        summary(text),
        vec![unbalanced("c1", "the next call starts"), ok("bash", "c2", json!({"command": "pwd"}))]
    );
    // A line starting with `@` that is no call's header stays in the JSON.
    let text = "@bash(c1): {\"command\": \"echo\n@decorator(x)\n@a(b): [\n@\"}\n";
    assert_eq!(summary(text), vec![ok("bash", "c1", json!({"command": "echo\n@decorator(x)\n@a(b): [\n@"}))]);
}

#[test]
fn json_is_repaired_once_then_reported() {
    assert_eq!(
        summary("@typed(c1): {'text': 'it\\'s', 'flag': True, 'items': ['a',], 'options': None,}\n"),
        vec![ok("typed", "c1", json!({"text": "it's", "flag": true, "items": ["a"], "options": null}))]
    );
    let [call] = calls("@bash(c1): {command: ls}\n").try_into().unwrap();
    assert_eq!(
        call.parse_error.as_deref(),
        Some(
            "Invalid JSON in arguments for tool 'bash': key must be a string at line 1 column 2. Send the arguments as one JSON object."
        )
    );
    let [call] = calls("@bash(c1): {}\n").try_into().unwrap();
    assert_eq!(call.parse_error, None);
}

#[test]
fn a_malformed_call_is_emitted_and_the_calls_around_it_still_come_out() {
    let text = "@bash(a): {\"command\": \"ls\"}\n@bash(b): {\"command\": ls}\n@bash(c): {\"command\": \"pwd\"}\n";
    let found = calls(text);
    assert_eq!(
        found.iter().map(|c| (c.id.as_str(), c.parse_error.is_some())).collect::<Vec<_>>(),
        vec![("a", false), ("b", true), ("c", false)]
    );
}

#[test]
fn calls_inside_code_blocks_are_examples() {
    let text = "Example:\n```\n@bash(x): {\"command\": \"rm -rf /\"}\n```\n\n````markdown\n```\n@bash(y): {}\n```\nafter\n````\n\n@bash(z): {\"command\": \"ls\"}\n";
    assert_eq!(summary(text), vec![ok("bash", "z", json!({"command": "ls"}))]);
    // After an unclosed opener nothing is a call.
    assert_eq!(summary("```python\n@bash(z): {\"command\": \"ls\"}\n"), vec![]);
}

#[test]
fn markdown_blocks_are_not_calls_in_this_format() {
    assert_eq!(summary("```bash\nls\n```\n"), vec![]);
}

#[test]
fn a_fence_inside_the_json_does_not_open_a_block() {
    let text =
        "@save(s1): {\"path\": \"a.md\", \"content\": \"```python\nx\n```\"}\n@bash(b1): {\"command\": \"ls\"}\n";
    let ids: Vec<String> = calls(text).into_iter().map(|c| c.id).collect();
    assert_eq!(ids, vec!["s1", "b1"]);
}
