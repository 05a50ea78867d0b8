//! Calls as a model in OpenAI's strict mode sends them: every property present, the optional
//! ones `null`. For every file and search tool such a call must do exactly what the same call
//! without those properties does (docs/reference/tools.md#names-and-aliases: optional means absent or null).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::Ws;
use pretty_assertions::assert_eq;
use serde_json::{Map, Value, json};

/// `args` with every property the strict schema lists and `args` lacks set to null.
fn strict_form(ws: &Ws, tool: &str, args: &Value) -> Value {
    let spec = ws.session.tools().resolve(tool).unwrap().spec().clone();
    let strict = tackle_core::schema::strict_schema(&spec.input_schema);
    assert!(tackle_core::schema::strict_violations(&strict.schema).is_empty(), "{tool}");
    let mut full: Map<String, Value> = args.as_object().unwrap().clone();
    for name in strict.schema["properties"].as_object().unwrap().keys() {
        full.entry(name.clone()).or_insert(Value::Null);
    }
    Value::Object(full)
}

#[tokio::test]
async fn null_optionals_behave_as_absent_for_every_file_tool() {
    let calls = [
        ("str_replace_based_edit_tool", json!({"command": "view", "path": "a.txt"})),
        ("read_file", json!({"file_path": "a.txt"})),
        ("glob", json!({"pattern": "**/*.txt"})),
        ("grep", json!({"pattern": "line"})),
        ("json_edit_tool", json!({"operation": "view", "file_path": "d.json"})),
        ("edit_file", json!({"file_path": "a.txt", "old_string": "line 2", "new_string": "LINE 2"})),
        (
            "str_replace_based_edit_tool",
            json!({"command": "str_replace", "path": "a.txt", "old_str": "line 3", "new_str": "LINE 3"}),
        ),
    ];
    for (tool, args) in calls {
        let (plain, strict) = (Ws::one_shot(), Ws::one_shot());
        for ws in [&plain, &strict] {
            ws.write("a.txt", "line 1\nline 2\nline 3\n");
            ws.write("d.json", "{\"k\": [1, 2]}\n");
        }
        let expected = plain.call(tool, args.clone()).await;
        let nulls = strict_form(&strict, tool, &args);
        let got = strict.call(tool, nulls.clone()).await;
        assert_eq!((got.is_error, got.text_content()), (expected.is_error, expected.text_content()), "{tool} {nulls}");
        assert!(!got.is_error, "{tool}: {}", got.text_content());
        assert_eq!(strict.read("a.txt"), plain.read("a.txt"), "{tool}");
    }
}
