//! `tackle run --output-schema FILE` through the real binary against the scripted model server,
//! on both wires (issue 28, point 6): the schema reaches the system prompt, a matching answer
//! is the result's `output`, a mismatch is sent back once and a second one ends the run
//! `schema_mismatch` (exit 1), an incomplete run is not checked, a bad schema file is a usage
//! error before any request, and hostile answers give bounded messages.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tackle_testkit::{Expect, FakeLlm, Protocol, Reply, Script, Turn};

use super::run_cli::tackle;

const SCHEMA: &str = r#"{
  "type": "object",
  "properties": {"count": {"type": "integer"}, "files": {"type": "array", "items": {"type": "string"}}},
  "required": ["count", "files"],
  "additionalProperties": false
}"#;

const PROTOCOLS: [Protocol; 2] = [Protocol::OpenAi, Protocol::Anthropic];

/// A workspace with `schema.json` holding `schema`.
fn workspace(schema: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("schema.json"), schema).unwrap();
    dir
}

fn args(server: &FakeLlm, protocol: Protocol, workspace: &Path, extra: &[&str]) -> Vec<String> {
    let model = match protocol {
        Protocol::OpenAi => "openai/fake",
        Protocol::Anthropic => "anthropic/fake",
    };
    let mut args: Vec<String> = ["run", "count the files", "--model", model, "--base-url"]
        .iter()
        .map(|s| (*s).to_owned())
        .chain([server.base_url(protocol), "--workspace".to_owned(), workspace.display().to_string()])
        .chain(["--output-schema".to_owned(), workspace.join("schema.json").display().to_string()])
        .collect();
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args
}

/// The one JSON object `--output-schema` prints (it implies `--json`).
fn printed(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|err| {
        panic!("stdout is not one JSON object ({err}):\n{}", String::from_utf8_lossy(&out.stdout))
    })
}

fn told_the_schema() -> Expect {
    Expect {
        system_contains: Some("\"additionalProperties\": false".to_owned()),
        ..Expect::last_user_contains("count the files")
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_matching_answer_is_the_output_fenced_or_bare_or_with_task_done() {
    let answers = [
        Reply::text("```json\n{\"count\": 2, \"files\": [\"a\", \"b\"]}\n```"),
        Reply::text("{\"count\": 2, \"files\": [\"a\", \"b\"]}"),
        Reply::text("{\"count\": 2, \"files\": [\"a\", \"b\"]}").call("d1", "task_done", json!({})),
    ];
    for protocol in PROTOCOLS {
        for answer in answers.clone() {
            let server = FakeLlm::start(Script::new([Turn::reply(answer).expect(told_the_schema())])).await;
            let dir = workspace(SCHEMA);
            let out = tackle(args(&server, protocol, dir.path(), &[]), vec![]).await;
            assert_eq!(out.status.code(), Some(0), "{protocol:?}: {}", String::from_utf8_lossy(&out.stderr));
            server.assert_clean();
            let result = printed(&out);
            assert_eq!(result["status"], "success");
            assert_eq!(result["output"], json!({"count": 2, "files": ["a", "b"]}), "{protocol:?}");
            assert_eq!(server.requests().len(), 1);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_text_call_format_takes_a_fenced_answer_and_still_runs_its_calls() {
    // The markdown format's calls are fenced blocks too: a ```json answer is not a call, and a
    // reply with a call is not the final answer.
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("Counting.\n```bash\nls\n```\n")).expect(told_the_schema()),
        Turn::reply(Reply::text("```json\n{\"count\": 1, \"files\": [\"schema.json\"]}\n```"))
            .expect(Expect::last_user_contains("schema.json")),
    ]))
    .await;
    let dir = workspace(SCHEMA);
    let out = tackle(
        args(&server, Protocol::OpenAi, dir.path(), &["--call-format", "markdown", "--allow", "Bash(ls)"]),
        vec![],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    server.assert_clean();
    assert_eq!(printed(&out)["output"], json!({"count": 1, "files": ["schema.json"]}));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_mismatch_is_sent_back_once_and_the_corrected_answer_is_the_output() {
    for protocol in PROTOCOLS {
        // Prose instead of JSON.
        let server = FakeLlm::start(Script::new([
            Turn::reply(Reply::text("There are 2 files: a and b.")).expect(told_the_schema()),
            Turn::reply(Reply::text("{\"count\": 2, \"files\": [\"a\", \"b\"]}"))
                .expect(Expect::last_user_contains("the answer is not one JSON value")),
        ]))
        .await;
        let dir = workspace(SCHEMA);
        let out = tackle(args(&server, protocol, dir.path(), &[]), vec![]).await;
        assert_eq!(out.status.code(), Some(0), "{protocol:?}: {}", String::from_utf8_lossy(&out.stderr));
        server.assert_clean();
        assert_eq!(printed(&out)["output"], json!({"count": 2, "files": ["a", "b"]}));

        // JSON of the wrong shape; the correction comes fenced.
        let server = FakeLlm::start(Script::new([
            Turn::reply(Reply::text("{\"count\": \"2\", \"files\": [\"a\", \"b\"], \"extra\": 1}"))
                .expect(told_the_schema()),
            Turn::reply(Reply::text("```json\n{\"count\": 2, \"files\": [\"a\", \"b\"]}\n```"))
                .expect(Expect::last_user_contains("does not match the required output schema")),
        ]))
        .await;
        let out = tackle(args(&server, protocol, dir.path(), &[]), vec![]).await;
        assert_eq!(out.status.code(), Some(0), "{protocol:?}: {}", String::from_utf8_lossy(&out.stderr));
        server.assert_clean();
        let feedback = last_user_text(&server, 1);
        assert!(feedback.contains("at /count") && feedback.contains("extra"), "{feedback}");
        let result = printed(&out);
        assert_eq!(result["status"], "success");
        assert_eq!(result["output"], json!({"count": 2, "files": ["a", "b"]}));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn two_mismatches_end_the_run_schema_mismatch_with_exit_1() {
    for protocol in PROTOCOLS {
        let server = FakeLlm::start(Script::new([
            Turn::reply(Reply::text("{\"count\": 1}")).expect(told_the_schema()),
            Turn::reply(Reply::text("[1, 2]")).expect(Expect::last_user_contains("\"files\" is a required property")),
        ]))
        .await;
        let dir = workspace(SCHEMA);
        let out = tackle(args(&server, protocol, dir.path(), &[]), vec![]).await;
        assert_eq!(out.status.code(), Some(1), "{protocol:?}: {}", String::from_utf8_lossy(&out.stderr));
        server.assert_clean();
        let result = printed(&out);
        assert_eq!(result["status"], "error");
        assert_eq!(result["error"]["kind"], "schema_mismatch");
        let message = result["error"]["message"].as_str().unwrap();
        assert!(message.contains("[1,2] is not of type \"object\""), "{message}");
        assert!(result.get("output").is_none() && result["answer"].is_null(), "{result}");
        // The trajectory records the stop and checks.
        let trajectory = result["trajectory"].as_str().unwrap();
        let recorded = std::fs::read_to_string(trajectory).unwrap();
        assert!(recorded.contains("\"kind\":\"schema_mismatch\""), "{recorded}");
        let check = tackle(vec!["replay".into(), trajectory.to_owned(), "--check".into()], vec![]).await;
        assert_eq!(check.status.code(), Some(0), "{}", String::from_utf8_lossy(&check.stdout));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_answer_after_denied_calls_is_incomplete_and_not_checked() {
    for protocol in PROTOCOLS {
        let server = FakeLlm::start(Script::new([
            Turn::reply(Reply::text("Writing.").call(
                "w1",
                "write_file",
                json!({"file_path": "a.txt", "content": "x"}),
            ))
            .expect(told_the_schema()),
            // Neither JSON nor matching: still no correction is asked for.
            Turn::reply(Reply::text("I could not write a.txt.")).expect(Expect::result("w1", "needs permission")),
        ]))
        .await;
        let dir = workspace(SCHEMA);
        let out = tackle(args(&server, protocol, dir.path(), &["--permission-mode", "dont-ask"]), vec![]).await;
        assert_eq!(out.status.code(), Some(1), "{protocol:?}: {}", String::from_utf8_lossy(&out.stderr));
        server.assert_clean();
        assert_eq!(server.requests().len(), 2);
        let result = printed(&out);
        assert_eq!(
            (result["status"].clone(), result["error"]["kind"].clone()),
            (json!("incomplete"), json!("incomplete"))
        );
        assert!(result.get("output").is_none(), "{result}");

        // A matching answer after a denial is incomplete too, with no output.
        let server = FakeLlm::start(Script::new([
            Turn::reply(Reply::text("Writing.").call(
                "w1",
                "write_file",
                json!({"file_path": "a.txt", "content": "x"}),
            )),
            Turn::reply(Reply::text("{\"count\": 0, \"files\": []}")),
        ]))
        .await;
        let out = tackle(args(&server, protocol, dir.path(), &["--permission-mode", "dont-ask"]), vec![]).await;
        assert_eq!(out.status.code(), Some(1), "{protocol:?}: {}", String::from_utf8_lossy(&out.stderr));
        let result = printed(&out);
        assert_eq!(result["status"], "incomplete");
        assert!(result.get("output").is_none(), "{result}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_schema_file_is_a_usage_error_naming_it_before_any_request() {
    let cases: [(&str, Option<&str>, &str); 6] = [
        ("not json", Some("{\"type\": "), "not JSON"),
        ("not a schema", Some("{\"type\": \"nonsense\"}"), "is not a valid JSON Schema"),
        ("a number", Some("42"), "is not a valid JSON Schema"),
        ("a remote reference", Some("{\"$ref\": \"http://127.0.0.1:9/s.json\"}"), "is not a valid JSON Schema"),
        ("too deep", None, "nests"),
        ("missing", Some(""), "cannot read it"),
    ];
    let deep = format!("{}{}", "{\"items\": ".repeat(100), "{}".to_owned() + &"}".repeat(100));
    for (what, schema, expected) in cases {
        let server = FakeLlm::start(Script::new([])).await;
        let dir = workspace(schema.unwrap_or(&deep));
        if what == "missing" {
            std::fs::remove_file(dir.path().join("schema.json")).unwrap();
        }
        let out = tackle(args(&server, Protocol::OpenAi, dir.path(), &[]), vec![]).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {stderr}");
        let named = format!("--output-schema {}", dir.path().join("schema.json").display());
        assert!(stderr.contains(&named) && stderr.contains(expected), "{what}: {stderr}");
        assert!(server.requests().is_empty(), "{what}");
        assert!(out.stdout.is_empty(), "{what}");
    }
    // A file larger than the cap is not read whole.
    let server = FakeLlm::start(Script::new([])).await;
    let dir = workspace(&format!("{{\"description\": \"{}\"}}", "x".repeat(2 * 1024 * 1024)));
    let out = tackle(args(&server, Protocol::OpenAi, dir.path(), &[]), vec![]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("larger than"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_answers_give_bounded_feedback_and_results() {
    for protocol in PROTOCOLS {
        let huge = format!("{{\"count\": \"{}\", \"files\": []}}", "9".repeat(200_000));
        let many: Vec<u32> = (0..5_000).collect();
        let server = FakeLlm::start(Script::new([
            Turn::reply(Reply::text(huge)),
            Turn::reply(Reply::text(json!({"count": 1, "files": many}).to_string()))
                .expect(Expect::last_user_contains("[...]")),
        ]))
        .await;
        let dir = workspace(SCHEMA);
        let out = tackle(args(&server, protocol, dir.path(), &[]), vec![]).await;
        assert_eq!(out.status.code(), Some(1), "{protocol:?}: {}", String::from_utf8_lossy(&out.stderr));
        server.assert_clean();
        let feedback = last_user_text(&server, 1);
        assert!(feedback.len() < 2_000, "{} bytes of feedback", feedback.len());
        let result = printed(&out);
        assert_eq!(result["error"]["kind"], "schema_mismatch");
        let message = result["error"]["message"].as_str().unwrap();
        assert!(message.len() < 5_000 && message.ends_with("- ... and 4990 more"), "{message}");

        // Nesting past the JSON reader's limit is a mismatch, not a crash.
        let deep = format!("{}{}", "[".repeat(2_000), "]".repeat(2_000));
        let server = FakeLlm::start(Script::new([
            Turn::reply(Reply::text(deep.clone())),
            Turn::reply(Reply::text(deep)).expect(Expect::last_user_contains("nested deeper than")),
        ]))
        .await;
        let out = tackle(args(&server, protocol, dir.path(), &[]), vec![]).await;
        assert_eq!(out.status.code(), Some(1), "{protocol:?}: {}", String::from_utf8_lossy(&out.stderr));
        server.assert_clean();
        assert_eq!(printed(&out)["error"]["kind"], "schema_mismatch");
    }
}

/// The text of the last user message of request `index`, on either wire.
fn last_user_text(server: &FakeLlm, index: usize) -> String {
    let body = &server.requests()[index].body;
    let messages = body["messages"].as_array().unwrap();
    let last = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    match &last["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n"),
        other => panic!("unexpected content {other}"),
    }
}
