//! `json_edit_tool` (docs/reference/tools.md#json_edit_tool) on real files: every operation and message, filters,
//! `null` as a value, the file's own layout kept, nothing written when anything fails, and
//! `value` as JSON text only in a session that showed the `openai-strict` dialect.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::Ws;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const TOOL: &str = "json_edit_tool";

fn op(operation: &str, path: Option<&str>, value: Option<Value>) -> Value {
    let mut args = json!({"operation": operation, "file_path": "f.json"});
    if let Some(path) = path {
        args["json_path"] = json!(path);
    }
    if let Some(value) = value {
        args["value"] = value;
    }
    args
}

const USERS: &str = "{\n  \"name\": \"demo\",\n  \"users\": [\n    {\n      \"name\": \"ann\",\n      \"age\": 31\n    },\n    {\n      \"name\": \"bob\",\n      \"age\": 25\n    },\n    {\n      \"name\": \"cy\",\n      \"age\": 40\n    }\n  ],\n  \"zeta\": true\n}\n";

#[tokio::test]
async fn view_shows_the_file_or_what_the_path_matches() {
    let ws = Ws::new();
    ws.write("f.json", USERS);
    assert_eq!(ws.ok(TOOL, op("view", None, None)).await, format!("JSON content of f.json:\n{}", USERS.trim_end()));
    assert_eq!(ws.ok(TOOL, op("view", Some("$.name"), None)).await, "JSONPath '$.name' matches:\n\"demo\"");
    assert_eq!(
        ws.ok(TOOL, op("view", Some("$.users[?@.age > 30].name"), None)).await,
        "JSONPath '$.users[?@.age > 30].name' matches:\n[\n  \"ann\",\n  \"cy\"\n]"
    );
    // No match is an answer, not an error (as in Trae).
    assert_eq!(ws.ok(TOOL, op("view", Some("$.nothing"), None)).await, "No matches found for JSONPath: $.nothing");
    let big: Vec<Value> = (0..3000).map(|i| json!({"index": i})).collect();
    ws.write("f.json", serde_json::to_string(&big).unwrap());
    let out = ws.ok(TOOL, op("view", Some("$[*].index"), None)).await;
    assert!(
        out.ends_with("\n[... view truncated: 22923 characters total; use a narrower json_path ...]"),
        "{}",
        &out[out.len() - 100..]
    );
    assert_eq!(
        out.chars().count(),
        20_000 + "\n[... view truncated: 22923 characters total; use a narrower json_path ...]".chars().count()
    );
}

#[tokio::test]
async fn set_replaces_every_match_and_keeps_the_layout() {
    let ws = Ws::new();
    ws.write("f.json", USERS);
    assert_eq!(
        ws.ok(TOOL, op("set", Some("$.users[?@.age < 35].age"), Some(json!({"years": 0})))).await,
        "Successfully updated 2 location(s) at JSONPath '$.users[?@.age < 35].age' with value: {\"years\":0}"
    );
    assert_eq!(
        ws.read("f.json"),
        USERS
            .replace("\"age\": 31", "\"age\": {\n        \"years\": 0\n      }")
            .replace("\"age\": 25", "\"age\": {\n        \"years\": 0\n      }")
    );
    // null is a value (Trae #173); a missing key is not created.
    ws.ok(TOOL, op("set", Some("$.zeta"), Some(Value::Null))).await;
    assert!(ws.read("f.json").contains("\"zeta\": null\n}"));
    assert_eq!(
        ws.err(TOOL, op("set", Some("$.missing"), Some(json!(1)))).await,
        "No matches found for JSONPath: $.missing Use add to create it."
    );
    ws.ok(TOOL, op("set", Some("$"), Some(json!({"fresh": "é"})))).await;
    assert_eq!(ws.read("f.json"), "{\n  \"fresh\": \"é\"\n}\n");
}

#[tokio::test]
async fn the_files_indentation_ending_and_final_newline_are_kept() {
    let ws = Ws::new();
    ws.write("f.json", "{\n\t\"b\": 1,\n\t\"a\": [\n\t\t1\n\t]\n}");
    ws.ok(TOOL, op("set", Some("$.b"), Some(json!(2)))).await;
    assert_eq!(ws.read("f.json"), "{\n\t\"b\": 2,\n\t\"a\": [\n\t\t1\n\t]\n}");
    ws.write("f.json", "{\r\n    \"z\": 1,\r\n    \"a\": 2\r\n}\r\n");
    ws.ok(TOOL, op("add", Some("$.m"), Some(json!("new")))).await;
    assert_eq!(ws.read("f.json"), "{\r\n    \"z\": 1,\r\n    \"a\": 2,\r\n    \"m\": \"new\"\r\n}\r\n");
    let mut args = op("set", Some("$.a"), Some(json!(3)));
    args["pretty_print"] = json!(false);
    ws.ok(TOOL, args).await;
    assert_eq!(ws.read("f.json"), "{\"z\":1,\"a\":3,\"m\":\"new\"}\r\n");
    // A one-line file stays on one line, in its own spacing, unless indentation is asked for.
    ws.write("f.json", "{\"a\":1}");
    ws.ok(TOOL, op("set", Some("$.a"), Some(json!({"b": [1, 2]})))).await;
    assert_eq!(ws.read("f.json"), "{\"a\":{\"b\":[1,2]}}");
    ws.write("f.json", "{\"a\": 1, \"b\": 2}\n");
    ws.ok(TOOL, op("remove", Some("$.a"), None)).await;
    ws.ok(TOOL, op("add", Some("$.c"), Some(json!([true, null])))).await;
    assert_eq!(ws.read("f.json"), "{\"b\": 2, \"c\": [true, null]}\n");
    let mut args = op("set", Some("$.b"), Some(json!(3)));
    args["pretty_print"] = json!(true);
    ws.ok(TOOL, args).await;
    assert_eq!(ws.read("f.json"), "{\n  \"b\": 3,\n  \"c\": [\n    true,\n    null\n  ]\n}\n");
}

#[tokio::test]
async fn add_inserts_keys_and_elements_and_never_overwrites() {
    let ws = Ws::new();
    ws.write("f.json", "{\"list\": [1, 3], \"obj\": {\"k\": 1}, \"n\": 5}\n");
    assert_eq!(
        ws.ok(TOOL, op("add", Some("$.obj.new"), Some(json!([true])))).await,
        "Successfully added value at JSONPath '$.obj.new' (1 location(s))"
    );
    ws.ok(TOOL, op("add", Some("$.list[1]"), Some(json!(2)))).await;
    ws.ok(TOOL, op("add", Some("$.list[3]"), Some(json!(4)))).await;
    ws.ok(TOOL, op("add", Some("$['with space']"), Some(Value::Null))).await;
    assert_eq!(
        serde_json::from_str::<Value>(&ws.read("f.json")).unwrap(),
        json!({"list": [1, 2, 3, 4], "obj": {"k": 1, "new": [true]}, "n": 5, "with space": null})
    );
    let cases = [
        ("$.obj.k", "Key 'k' already exists at $.obj; use set to change it."),
        ("$.list[9]", "Index 9 is out of range for an array of length 4 at $.list"),
        ("$.list[-1]", "Index -1 is out of range for an array of length 4 at $.list"),
        ("$.n.x", "Cannot add key to non-object at path: $.n"),
        ("$.obj[0]", "Cannot add element to non-array at path: $.obj"),
        ("$.missing.x", "Parent path not found: $.missing"),
        ("$.list[*]", "add needs a path that ends in a key or an array index, e.g. $.a.b or $.a[3]"),
        ("$..k", "add needs a path that ends in a key or an array index, e.g. $.a.b or $.a[3]"),
        ("$", "add needs a path that ends in a key or an array index, e.g. $.a.b or $.a[3]"),
    ];
    let before = ws.read("f.json");
    for (path, message) in cases {
        assert_eq!(ws.err(TOOL, op("add", Some(path), Some(json!(0)))).await, message, "{path}");
    }
    assert_eq!(ws.read("f.json"), before);
    // A filter parent adds under every match, all or nothing.
    ws.write("f.json", "{\"users\": [{\"n\": 1}, {\"n\": 2, \"tag\": 0}, {\"n\": 3}]}");
    assert_eq!(
        ws.err(TOOL, op("add", Some("$.users[?@.n > 1].tag"), Some(json!(1)))).await,
        "Key 'tag' already exists at $.users[?@.n > 1]; use set to change it."
    );
    assert_eq!(ws.read("f.json"), "{\"users\": [{\"n\": 1}, {\"n\": 2, \"tag\": 0}, {\"n\": 3}]}");
    ws.ok(TOOL, op("add", Some("$.users[?@.n != 2].tag"), Some(json!(9)))).await;
    assert_eq!(
        serde_json::from_str::<Value>(&ws.read("f.json")).unwrap(),
        json!({"users": [{"n": 1, "tag": 9}, {"n": 2, "tag": 0}, {"n": 3, "tag": 9}]})
    );
}

#[tokio::test]
async fn remove_deletes_every_match_from_the_end() {
    let ws = Ws::new();
    ws.write("f.json", "{\"items\": [1, 5, 2, 7, 3], \"keep\": {\"a\": 1, \"b\": 2, \"c\": 3}}");
    assert_eq!(
        ws.ok(TOOL, op("remove", Some("$.items[?@ > 2]"), None)).await,
        "Successfully removed 3 element(s) at JSONPath '$.items[?@ > 2]'"
    );
    ws.ok(TOOL, op("remove", Some("$.keep.b"), None)).await;
    assert_eq!(ws.read("f.json"), "{\"items\": [1, 2], \"keep\": {\"a\": 1, \"c\": 3}}");
    assert_eq!(ws.err(TOOL, op("remove", Some("$"), None)).await, "Cannot remove the document root");
    assert_eq!(ws.err(TOOL, op("remove", Some("$.gone"), None)).await, "No matches found for JSONPath: $.gone");
}

#[tokio::test]
async fn argument_and_file_errors_leave_the_file_untouched() {
    let ws = Ws::new();
    assert_eq!(
        ws.err(TOOL, op("set", None, Some(json!(1)))).await,
        "json_path parameter is required for the 'set' operation."
    );
    assert_eq!(
        ws.err(TOOL, op("remove", None, None)).await,
        "json_path parameter is required for the 'remove' operation."
    );
    assert_eq!(
        ws.err(TOOL, op("add", Some("$.a"), None)).await,
        "A 'value' parameter is required for the 'add' operation."
    );
    assert_eq!(
        ws.err(TOOL, op("view", Some("users[0].name"), None)).await,
        "JSONPath must start with '$' (e.g. $.users[0].name)"
    );
    let err = ws.err(TOOL, op("view", Some("$.a[?"), None)).await;
    assert!(err.starts_with("Invalid JSONPath expression '$.a[?': "), "{err}");
    assert!(err.ends_with(". Hint: the filter [? opened at '[?' is not closed: add ]"), "{err}");
    // The path is taken as written (RFC 9535): whitespace around it is refused, with what to write.
    assert_eq!(
        ws.err(TOOL, op("view", Some(" $"), None)).await,
        "JSONPath must start with '$', with no whitespace before it (e.g. $)"
    );
    assert_eq!(
        ws.err(TOOL, op("set", Some("$.a "), Some(json!(1)))).await,
        "Invalid JSONPath expression '$.a ': at position 3, parser error. Hint: remove the whitespace after the path: '$.a'"
    );
    let err = ws.err(TOOL, op("remove", Some("$.users[?@.tags.* == 'x']"), None)).await;
    assert!(err.contains(". Hint: @.tags.* can select several values, and a comparison needs"), "{err}");
    let err = ws.err(TOOL, op("view", Some("$.users.0"), None)).await;
    assert!(err.ends_with("Hint: .0 is not an index: write an array index in brackets ($.users[0]), and a key that is a number quoted ($.users['0'])"), "{err}");
    assert_eq!(ws.err(TOOL, op("view", None, None)).await, "File does not exist: f.json");
    ws.write("f.json", "  \n");
    assert_eq!(ws.err(TOOL, op("view", None, None)).await, "File is empty: f.json");
    ws.write("f.json", "{\n  \"a\": 1,\n  \"b\": ,\n}\n");
    assert_eq!(
        ws.err(TOOL, op("set", Some("$.a"), Some(json!(2)))).await,
        "Invalid JSON in file f.json: expected value at line 3 column 8"
    );
    assert_eq!(ws.read("f.json"), "{\n  \"a\": 1,\n  \"b\": ,\n}\n");
    // JSON is UTF-8: another byte is placed like any syntax error; a NUL byte makes the file
    // binary (docs/reference/tools.md#session-state).
    for (content, at) in [
        (&b"{\"a\": \"caf\xe9\"}"[..], "0xe9 at line 1 column 11"),
        (b"{\n  \"a\": 1,\n  \"\xc3\xa9\xff\": 2\n}\n", "0xff at line 3 column 6"),
        (b"\xef\xbb\xbf{\"\x80\": 1}", "0x80 at line 1 column 3"),
    ] {
        ws.write("latin.txt", content);
        assert_eq!(
            ws.err(TOOL, json!({"operation": "view", "file_path": "latin.txt"})).await,
            format!("Invalid JSON in file latin.txt: invalid UTF-8 byte {at}"),
        );
    }
    ws.write("nul.json", b"{\"a\": 1}\0");
    assert_eq!(
        ws.err(TOOL, json!({"operation": "set", "file_path": "nul.json", "json_path": "$.a", "value": 2})).await,
        "nul.json is a binary file; this tool only handles UTF-8 text"
    );
    assert_eq!(ws.bytes("nul.json"), b"{\"a\": 1}\0");
    ws.write("f.json", "{\"id\": 123456789012345678901234, \"x\": 1}");
    let err = ws.err(TOOL, op("remove", Some("$.x"), None)).await;
    assert!(err.starts_with("f.json holds the number 123456789012345678901234, which would change"), "{err}");
    assert_eq!(ws.read("f.json"), "{\"id\": 123456789012345678901234, \"x\": 1}");
    // `set` of one plain path changes only that value's bytes: the number stays as written (any
    // other path rewrites the document, and is refused).
    ws.ok(TOOL, op("set", Some("$.x"), Some(json!({"y": [2]})))).await;
    assert_eq!(ws.read("f.json"), "{\"id\": 123456789012345678901234, \"x\": {\"y\": [2]}}");
    let err = ws.err(TOOL, op("set", Some("$.x.y[*]"), Some(json!(3)))).await;
    assert!(err.starts_with("f.json holds the number 123456789012345678901234"), "{err}");
    let err = ws.err(TOOL, json!({"operation": "rename", "file_path": "f.json"})).await;
    assert!(err.contains("operation must be one of: view, set, add, remove"), "{err}");
}

#[tokio::test]
async fn edits_are_undoable_and_bom_is_kept() {
    let ws = Ws::new();
    ws.write("f.json", "\u{feff}{\"a\": 1}\n");
    ws.ok(TOOL, op("set", Some("$.a"), Some(json!(2)))).await;
    assert_eq!(ws.read("f.json"), "\u{feff}{\"a\": 2}\n");
    ws.ok("str_replace_based_edit_tool", json!({"command": "undo_edit", "path": "f.json"})).await;
    assert_eq!(ws.read("f.json"), "\u{feff}{\"a\": 1}\n");
}

#[tokio::test]
async fn value_is_json_text_only_where_the_strict_dialect_was_shown() {
    // Elsewhere a string is the string itself.
    let ws = Ws::new();
    ws.write("f.json", "{\"a\": 1}");
    ws.ok(TOOL, op("set", Some("$.a"), Some(json!("zz")))).await;
    ws.ok(TOOL, op("set", Some("$.a"), Some(json!("null")))).await;
    assert_eq!(serde_json::from_str::<Value>(&ws.read("f.json")).unwrap(), json!({"a": "null"}));

    // In a session that showed openai-strict, value arrives as JSON text.
    let mut ws = Ws::new();
    let spec = ws.session.tools().resolve(TOOL).unwrap().spec().clone();
    let strict = tackle_core::schema::strict_schema(&spec.input_schema);
    assert_eq!(strict.json_text_params, vec![vec!["value".to_owned()]]);
    ws.session.set_json_text_params(TOOL, strict.json_text_params);
    ws.write("f.json", "{\"a\": 1}");
    for (text, expected) in [
        ("{\"b\":[1,null]}", json!({"b": [1, null]})),
        ("\"text\"", json!("text")),
        ("null", Value::Null),
        ("zz", json!("zz")),
    ] {
        ws.ok(TOOL, op("set", Some("$.a"), Some(json!(text)))).await;
        assert_eq!(serde_json::from_str::<Value>(&ws.read("f.json")).unwrap()["a"], expected, "{text}");
    }
    // There, a JSON null is the strict dialect's "absent".
    assert_eq!(
        ws.err(TOOL, op("set", Some("$.a"), Some(Value::Null))).await,
        "A 'value' parameter is required for the 'set' operation."
    );
}

#[tokio::test]
async fn directories_and_files_over_64_mib_are_refused() {
    let ws = Ws::new();
    std::fs::create_dir(ws.path("dir.json")).unwrap();
    assert_eq!(
        ws.err(TOOL, json!({"operation": "view", "file_path": "dir.json"})).await,
        "dir.json is a directory. Give the path of a JSON file."
    );
    let file = std::fs::File::create(ws.path("huge.json")).unwrap();
    file.set_len(65 * 1024 * 1024).unwrap();
    assert_eq!(
        ws.err(TOOL, json!({"operation": "view", "file_path": "huge.json"})).await,
        "huge.json is 68157440 bytes; json_edit_tool handles files up to 64 MiB. Use jq in the shell for larger ones."
    );
}

#[tokio::test]
async fn the_approval_previews_set_add_and_remove_as_diffs_and_a_failing_call_nothing() {
    let mut ws = Ws::new();
    let approver = ws.asking();
    let original = "{\n  \"name\": \"app\",\n  \"tags\": [\"a\"]\n}\n";
    ws.write("f.json", original);
    for args in [
        op("set", Some("$.name"), Some(json!("\u{1b}[2Jtool"))),
        op("add", Some("$.version"), Some(json!(2))),
        op("remove", Some("$.tags"), None),
        op("set", Some("name"), Some(json!(1))),
        op("add", Some("$.name"), Some(json!(1))),
    ] {
        assert!(ws.call(TOOL, args).await.is_error);
    }
    assert_eq!(
        approver.take(),
        vec![
            Some(
                "--- a/f.json\n+++ b/f.json\n@@ -1,4 +1,4 @@\n {\n-  \"name\": \"app\",\n+  \"name\": \"\\u001b[2Jtool\",\n   \"tags\": [\"a\"]\n }\n"
                    .to_owned()
            ),
            Some(
                "--- a/f.json\n+++ b/f.json\n@@ -1,4 +1,7 @@\n {\n   \"name\": \"app\",\n-  \"tags\": [\"a\"]\n+  \"tags\": [\n+    \"a\"\n+  ],\n+  \"version\": 2\n }\n"
                    .to_owned()
            ),
            Some("--- a/f.json\n+++ b/f.json\n@@ -1,4 +1,3 @@\n {\n-  \"name\": \"app\",\n-  \"tags\": [\"a\"]\n+  \"name\": \"app\"\n }\n".to_owned()),
            // Not a JSONPath; a key that is already there.
            None,
            None,
        ]
    );
    assert_eq!(ws.read("f.json"), original);
    ws.write("f.json", b"\x00{}");
    assert!(ws.call(TOOL, op("set", Some("$.a"), Some(json!(1)))).await.is_error);
    assert_eq!(approver.take(), vec![None]);
}
