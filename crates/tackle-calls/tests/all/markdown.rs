//! Langtag dispatch of the markdown format (docs/reference/formats.md#langtag-dispatch), ids and order.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tackle_calls::{ParsedCall, Parser, TextFormat, ToolIndex, parse};

fn calls(text: &str) -> Vec<ParsedCall> {
    let tools = support::test_tools();
    let whole = parse(TextFormat::Markdown, text, &tools);
    for size in [1, 2, 3, 7] {
        assert_eq!(support::parse_chunked(TextFormat::Markdown, text, &tools, &[size]), whole, "chunks of {size}");
    }
    whole
}

/// `(name, args, error)` of each call.
fn summary(text: &str) -> Vec<(String, Value, Option<String>)> {
    calls(text).into_iter().map(|c| (c.name, Value::Object(c.args), c.parse_error)).collect()
}

fn ok(name: &str, args: Value) -> (String, Value, Option<String>) {
    (name.to_owned(), args, None)
}

#[test]
fn shell_langtags_call_bash_with_one_prompt_removed() {
    let text = "```bash\n$ ls -la\n```\n\n```shell\npwd\n```\n\n```sh\n$ $ echo\n```\n";
    assert_eq!(
        summary(text),
        vec![
            ok("bash", json!({"command": "ls -la"})),
            ok("bash", json!({"command": "pwd"})),
            ok("bash", json!({"command": "$ echo"}))
        ]
    );
}

#[test]
fn bash_with_words_after_the_langtag_is_a_malformed_call() {
    assert_eq!(
        summary("```bash script.sh\nls\n```\n"),
        vec![(
            "bash".into(),
            json!({"command": "ls"}),
            Some("```bash blocks take no words after the language tag".into())
        )]
    );
}

#[test]
fn save_append_and_patch_take_the_rest_of_the_langtag_as_the_path() {
    let text = "```save my notes/todo list.md\n# Todo\n- a\n```\n\n```append log.txt\nline\n```\n\n```patch src/main.rs\n<<<<<<< ORIGINAL\na\n=======\nb\n>>>>>>> UPDATED\n```\n";
    assert_eq!(
        summary(text),
        vec![
            ok("save", json!({"path": "my notes/todo list.md", "content": "# Todo\n- a"})),
            ok("append", json!({"path": "log.txt", "content": "line"})),
            ok("patch", json!({"path": "src/main.rs", "patch": "<<<<<<< ORIGINAL\na\n=======\nb\n>>>>>>> UPDATED"})),
        ]
    );
    // No path: the executor reports the missing parameter.
    assert_eq!(summary("```save\nx\n```\n"), vec![ok("save", json!({"content": "x"}))]);
}

#[test]
fn other_tools_take_a_json_object_body() {
    assert_eq!(
        summary("```read_file\n{\"path\": \"a.txt\", \"limit\": 5}\n```\n"),
        vec![ok("read_file", json!({"path": "a.txt", "limit": 5}))]
    );
    // Aliases name the tool too, and an empty body is `{}`.
    assert_eq!(summary("```Read\n{\"path\": \"a\"}\n```\n"), vec![ok("read_file", json!({"path": "a"}))]);
    assert_eq!(summary("```task_done\n\n```\n"), vec![ok("task_done", json!({}))]);
}

#[test]
fn a_json_body_that_is_not_an_object_is_a_malformed_call() {
    let [call] = calls("```read_file\n[\"a.txt\"]\n```\n").try_into().unwrap();
    assert_eq!(
        call.parse_error.as_deref(),
        Some("The body of a ```read_file block must be a JSON object with the tool's parameters: got an array")
    );
    let [call] = calls("```read_file\npath: a.txt\n```\n").try_into().unwrap();
    assert_eq!(
        call.parse_error.as_deref(),
        Some(
            "The body of a ```read_file block must be a JSON object with the tool's parameters: expected value at line 1 column 1"
        )
    );
    let [call] = calls("```read_file extra\n{}\n```\n").try_into().unwrap();
    assert_eq!(call.parse_error.as_deref(), Some("```read_file blocks take no words after the language tag"));
}

#[test]
fn languages_and_file_names_are_prose() {
    let text = "```python\nprint(1)\n```\n\n```json\n{}\n```\n\n```text\nx\n```\n\n```stdout\nok\n```\n\n```hello.py\nx\n```\n\n```src/main.rs\nfn main() {}\n```\n\n```\nbare\n```\n";
    assert_eq!(summary(text), vec![]);
    // A file-name label is never a call, even if its first word names a tool.
    assert_eq!(summary("```save.py\nx\n```\n"), vec![]);
}

#[test]
fn the_first_tool_in_name_order_wins_a_shared_langtag() {
    use tackle_core::{BlockMapping, ToolSpec};
    let mapped = |name: &str| {
        ToolSpec::new(name, "x").input_schema(json!({"type": "object", "properties": {"c": {"type": "string"}}})).block(
            BlockMapping {
                langtags: vec!["sh".into()],
                body_param: "c".into(),
                words_param: None,
                strip_prompt: false,
            },
        )
    };
    let specs = [mapped("z_shell"), mapped("a_shell")];
    let tools = ToolIndex::new(&specs);
    let calls = parse(TextFormat::Markdown, "```sh\nls\n```\n", &tools);
    assert_eq!(calls[0].name, "a_shell");
}

#[test]
fn calls_carry_synthetic_ids_offsets_and_text_order() {
    let tools = support::test_tools();
    let text = "Run:\n```bash\nls\n```\n\n```python\nnot a call\n```\n\n```sh\npwd\n```\n";
    let mut parser = Parser::new(TextFormat::Markdown, &tools).with_step(4);
    let mut calls = parser.feed(text);
    calls.extend(parser.finish());
    let ids: Vec<(&str, usize, usize)> = calls.iter().map(|c| (c.id.as_str(), c.start, c.end)).collect();
    assert_eq!(ids, vec![("call_4_1", 5, 19), ("call_4_2", 47, 60)]);
    assert_eq!((&text[5..19], &text[47..60]), ("```bash\nls\n```", "```sh\npwd\n```"));
}

#[test]
fn a_malformed_call_still_reaches_the_executor_as_an_error() {
    let [call] = calls("```bash extra\nls\n```\n").try_into().unwrap();
    let tool_call = call.to_tool_call();
    assert_eq!(
        tool_call.args,
        tackle_core::CallArgs::Malformed("```bash blocks take no words after the language tag".into())
    );
}
