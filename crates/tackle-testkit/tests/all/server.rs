//! The fake server itself: scripts parse from JSON, turns are served in order, expectations and
//! history invariants are enforced, and requests are recorded.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tackle_testkit::{FakeLlm, Protocol, Script, view};

async fn post(url: &str, body: &Value) -> (u16, String) {
    let url = url.to_owned();
    let body = body.to_string();
    tokio::task::spawn_blocking(move || {
        use std::io::{Read as _, Write as _};
        let rest = url.trim_start_matches("http://");
        let (host, path) = rest.split_once('/').unwrap();
        let mut stream = std::net::TcpStream::connect(host).unwrap();
        write!(
            stream,
            "POST /{path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let status = response[9..12].parse().unwrap();
        (status, response)
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn a_json_script_is_served_in_order_and_checked() {
    let script = Script::from_json(
        r#"{"turns":[
          {"expect":{"last_user_contains":"read a.txt"},
           "reply":{"text":"Let me read it.","tool_calls":[{"id":"call_1","name":"read_file","args":{"file_path":"a.txt"}}],
                    "chunk_chars":8,"finish":"tool_calls","usage":{"input":12,"output":9}}},
          {"expect":{"tool_result_for":"call_1","tool_result_contains":"hello"},
           "reply":{"text":"The file says hello."}},
          {"fault":{"status":429,"headers":{"retry-after":"1"}}}
        ]}"#,
    )
    .unwrap();
    let server = FakeLlm::start(script).await;
    let url = format!("{}/chat/completions", server.openai_base_url());
    let first = json!({"model": "m", "stream": false, "messages": [{"role": "user", "content": "read a.txt"}]});
    let (status, body) = post(&url, &first).await;
    assert_eq!(status, 200, "{body}");
    let (_, json_body) = body.split_once("\r\n\r\n").unwrap();
    let parsed: Value = serde_json::from_str(json_body).unwrap();
    assert_eq!(
        parsed["choices"][0]["message"]["tool_calls"],
        json!([{"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"file_path\":\"a.txt\"}"}}])
    );

    // A request that breaks the invariants: the call is not answered.
    let unanswered = json!({"model": "m", "messages": [
        {"role": "user", "content": "read a.txt"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]},
        {"role": "user", "content": "hello?"}]});
    let (status, body) = post(&url, &unanswered).await;
    assert_eq!(status, 400, "{body}");
    assert!(body.contains("call call_1 (read_file) has 0 results, expected 1"), "{body}");
    assert_eq!(server.failures().len(), 1);
    assert_eq!(server.requests().len(), 2);
    assert_eq!(server.remaining_turns(), 1);
}

#[tokio::test]
async fn unmet_expectations_answer_400_with_the_difference() {
    let script =
        Script::from_json(r#"{"turns":[{"expect":{"last_user_contains":"hello"},"reply":{"text":"hi"}}]}"#).unwrap();
    let server = FakeLlm::start(script).await;
    let url = format!("{}/v1/messages", server.anthropic_base_url());
    let (status, body) =
        post(&url, &json!({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "bye"}]})).await;
    assert_eq!(status, 400);
    assert!(body.contains(r#"turn 0: last user message should contain \"hello\", got \"bye\""#), "{body}");
    assert_eq!(server.failures(), vec![r#"turn 0: last user message should contain "hello", got "bye""#.to_owned()]);
}

#[test]
fn anthropic_results_must_come_first_and_orphans_are_found() {
    let body = json!({"messages": [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}]},
        {"role": "user", "content": [{"type": "text", "text": "note"}, {"type": "tool_result", "tool_use_id": "t1", "content": "ok"},
                                     {"type": "tool_result", "tool_use_id": "t9", "content": "?"}]}]});
    let problems = view(Protocol::Anthropic, &body).problems;
    assert_eq!(
        problems,
        vec![
            "message 2: a tool_result block follows another block".to_owned(),
            "message 2: a tool_result block follows another block".to_owned(),
            "message 2: result for t9 answers no call of the previous message".to_owned(),
        ]
    );
}
