//! The server over a stdio-like pipe, byte for byte: the handshake and its versions, bad
//! input of every kind (the server keeps serving), calls through the executor, progress,
//! cancellation, a client that leaves mid-call, the scheduler and its arrival order, and
//! request ids reused while in flight.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::{Probe, RawClient, connect, server};
use tackle_mcp::server::ServerOptions;

async fn started(options: ServerOptions) -> (RawClient, Arc<Probe>, tempfile::TempDir, tackle_mcp::server::McpServer) {
    let probe = Arc::new(Probe::default());
    let dir = tempfile::tempdir().unwrap();
    let server = server(&probe, dir.path(), options);
    let (client, _task) = connect(&server);
    (client, probe, dir, server)
}

/// The server still answers: a ping gets its empty result.
async fn assert_alive(client: &mut RawClient, id: i64) {
    let (response, _) = client.request(id, "ping", json!({})).await;
    assert_eq!(response, json!({"jsonrpc": "2.0", "id": id, "result": {}}));
}

#[tokio::test]
async fn initialize_echoes_supported_versions_and_offers_the_newest_otherwise() {
    for (asked, answered) in [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
    ] {
        let (mut client, _probe, dir, _server) = started(ServerOptions::default()).await;
        let result = client.initialize(asked).await;
        let workspace = dir.path().display();
        assert_eq!(
            result,
            json!({
                "protocolVersion": answered,
                "capabilities": {"tools": {"listChanged": true}, "logging": {}},
                "serverInfo": {"name": "tackle", "version": env!("CARGO_PKG_VERSION")},
                "instructions": format!("Tackle's tools, working in the workspace {workspace}. Paths may be relative to the workspace root, or absolute inside it.")
            }),
            "asked {asked}"
        );
    }
}

#[tokio::test]
async fn the_discover_probe_gets_method_not_found_and_initialize_still_works() {
    let (mut client, _probe, _dir, _server) = started(ServerOptions::default()).await;
    let meta = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "x", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}});
    let (response, _) = client.request(1, "server/discover", meta.clone()).await;
    assert_eq!(response["error"]["code"], -32601);
    let (response, _) = client.request(2, "tools/list", meta).await;
    assert_eq!(response["error"]["code"], -32601, "{response}");
    assert_eq!(client.initialize("2025-11-25").await["protocolVersion"], "2025-11-25");
    let (response, _) = client.request(3, "server/discover", json!({})).await;
    assert_eq!(response["error"]["code"], -32601);
    assert_alive(&mut client, 4).await;
}

#[tokio::test]
async fn bad_input_gets_a_clear_error_and_the_server_keeps_serving() {
    let (mut client, _probe, _dir, _server) = started(ServerOptions::default()).await;
    client.initialize("2025-11-25").await;
    let cases: Vec<(&str, Value)> = vec![
        ("{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ", json!({"id": null, "code": -32700})),
        ("[1, 2]", json!({"id": null, "code": -32600})),
        ("\"hello\"", json!({"id": null, "code": -32600})),
        (r#"{"jsonrpc": "2.0", "id": 5, "method": "prompts/list"}"#, json!({"id": 5, "code": -32601})),
        (r#"{"jsonrpc": "2.0", "id": 6, "method": "no/such/method", "params": {}}"#, json!({"id": 6, "code": -32601})),
        (
            r#"{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"arguments": {}}}"#,
            json!({"id": 7, "code": -32602}),
        ),
        (
            r#"{"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {"cursor": "bm90LWEtbnVtYmVy"}}"#,
            json!({"id": 8, "code": -32602}),
        ),
    ];
    for (index, (line, expected)) in cases.into_iter().enumerate() {
        client.send_raw(line).await;
        let reply = client.recv().await;
        assert_eq!(json!({"id": reply["id"], "code": reply["error"]["code"]}), expected, "{line} → {reply}");
        assert!(reply["error"]["message"].as_str().is_some_and(|m| !m.is_empty()));
        assert_alive(&mut client, 100 + i64::try_from(index).unwrap()).await;
    }
    // A notification nobody knows is ignored.
    client.send_raw(r#"{"jsonrpc": "2.0", "method": "notifications/whatever"}"#).await;
    assert_alive(&mut client, 200).await;
    // A line over 16 MiB is discarded unread (even a valid request) and refused with -32600.
    let padding = "x".repeat(16 * 1024 * 1024);
    client
        .send_raw(&format!(r#"{{"jsonrpc": "2.0", "id": 300, "method": "ping", "params": {{"pad": "{padding}"}}}}"#))
        .await;
    let reply = client.recv().await;
    assert_eq!(
        json!({"id": reply["id"], "code": reply["error"]["code"]}),
        json!({"id": null, "code": -32600}),
        "{reply}"
    );
    assert!(reply["error"]["message"].as_str().unwrap().contains("longer than 16777216 bytes"), "{reply}");
    assert_alive(&mut client, 201).await;
}

#[tokio::test]
async fn an_unknown_tool_is_the_specs_invalid_params_error_with_the_available_tools() {
    let (mut client, _probe, _dir, _server) = started(ServerOptions::default()).await;
    client.initialize("2025-11-25").await;
    let (response, _) = client.request(1, "tools/call", json!({"name": "nope", "arguments": {}})).await;
    let available = json!(["sequentialthinking", "task_done", "echo", "slow", "fail"]);
    assert_eq!(
        response,
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Unknown tool: nope", "data": {"available": available}}})
    );
    assert_alive(&mut client, 2).await;
}

#[tokio::test]
async fn calls_go_through_the_executor_and_every_failure_is_a_result() {
    let (mut client, _probe, _dir, _server) = started(ServerOptions::default()).await;
    client.initialize("2025-11-25").await;
    // An alias-free call by a normalized name resolves like any other front end's.
    let (response, _) = client.request(1, "tools/call", json!({"name": "Echo", "arguments": {"text": "hi"}})).await;
    let result = &response["result"];
    assert_eq!(result["content"], json!([{"type": "text", "text": "Echo: hi"}]));
    assert_eq!(result["structuredContent"], json!({"echo": "hi"}));
    assert_eq!(result["isError"], false);
    assert_eq!(result["_meta"]["tackle/truncated"], false);
    assert!(result["_meta"]["tackle/duration_ms"].is_u64());

    let (response, _) = client.request(2, "tools/call", json!({"name": "echo", "arguments": {"text": 5}})).await;
    assert_eq!(
        response["result"],
        json!({"content": [{"type": "text", "text": "Invalid parameters for tool 'echo': text should be string"}],
               "isError": true, "_meta": response["result"]["_meta"]})
    );
    let (response, _) =
        client.request(3, "tools/call", json!({"name": "echo", "arguments": {"text": "a", "extra": 1}})).await;
    assert_eq!(response["result"]["isError"], true);
    assert_eq!(
        response["result"]["content"][0]["text"],
        "Invalid parameters for tool 'echo': unexpected parameter extra"
    );
    let (response, _) = client.request(4, "tools/call", json!({"name": "fail"})).await;
    assert_eq!(response["result"]["isError"], true);
    assert_eq!(response["result"]["content"][0]["text"], "it failed, as it always does");
    assert!(response["result"].get("structuredContent").is_none());
}

#[tokio::test]
async fn progress_is_strictly_increasing_rate_limited_and_never_after_the_result() {
    let (mut client, _probe, _dir, _server) = started(ServerOptions::default()).await;
    client.initialize("2025-11-25").await;
    // 12 steps of 20 ms: the tool reports 12 times in ~240 ms, faster than 10 a second.
    let params = json!({"name": "slow", "arguments": {"steps": 12, "step_ms": 20}, "_meta": {"progressToken": "tok"}});
    let started = Instant::now();
    let (response, notes) = client.request(1, "tools/call", params).await;
    let elapsed = started.elapsed();
    assert_eq!(response["result"]["content"][0]["text"], "done after 12 steps");
    assert!(!notes.is_empty(), "no progress at all");
    let values: Vec<f64> = notes
        .iter()
        .map(|note| {
            assert_eq!(note["method"], "notifications/progress");
            assert_eq!(note["params"]["progressToken"], "tok");
            assert_eq!(note["params"]["total"], 12.0);
            note["params"]["progress"].as_f64().unwrap()
        })
        .collect();
    assert!(values.windows(2).all(|w| w[0] < w[1]), "not strictly increasing: {values:?}");
    let budget = (elapsed.as_secs_f64() * 10.0).ceil() as usize + 1;
    assert!(values.len() <= budget, "{} notifications in {elapsed:?}", values.len());
    assert!(values.len() < 12, "no rate limit: {values:?}");
    // Nothing follows the result.
    assert_eq!(client.recv_within(Duration::from_millis(300)).await, None);
    // Without a token there are no notifications.
    let (_, notes) =
        client.request(2, "tools/call", json!({"name": "slow", "arguments": {"steps": 3, "step_ms": 10}})).await;
    assert_eq!(notes, Vec::<Value>::new());
}

#[tokio::test]
async fn a_cancelled_call_gets_no_response_and_its_tool_is_stopped() {
    let (mut client, probe, _dir, _server) = started(ServerOptions::default()).await;
    client.initialize("2025-11-25").await;
    client.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow", "arguments": {"steps": 300, "step_ms": 100}}})).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "reason": "user"}})).await;
    // Unknown and finished ids are ignored.
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}})).await;
    let deadline = Instant::now() + Duration::from_secs(3);
    while !probe.cancelled.load(Ordering::SeqCst) {
        assert!(Instant::now() < deadline, "the tool never saw the cancellation");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The next message is the ping's answer: request 1 is never answered.
    let (response, notes) = client.request(2, "ping", json!({})).await;
    assert_eq!(response["result"], json!({}));
    assert_eq!(notes, Vec::<Value>::new());
    assert_eq!(client.recv_within(Duration::from_millis(500)).await, None);
}

#[tokio::test]
async fn a_client_that_leaves_mid_call_ends_the_session_and_closes_its_tools() {
    let probe = Arc::new(Probe::default());
    let dir = tempfile::tempdir().unwrap();
    let server = server(&probe, dir.path(), ServerOptions::default());
    let (mut client, task) = connect(&server);
    client.initialize("2025-11-25").await;
    client.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "slow", "arguments": {"steps": 300, "step_ms": 100}}})).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(server.live_sessions(), 1);
    client.close().await;
    tokio::time::timeout(Duration::from_secs(10), task).await.expect("the server did not stop").unwrap().unwrap();
    assert_eq!(probe.closed.load(Ordering::SeqCst), 1, "the session's tools were not closed once");
    let deadline = Instant::now() + Duration::from_secs(6);
    while !probe.cancelled.load(Ordering::SeqCst) {
        assert!(Instant::now() < deadline, "the running call was not cancelled");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn concurrent_calls_share_the_scheduler_of_one_turn() {
    let (mut client, probe, _dir, _server) = started(ServerOptions::default()).await;
    client.initialize("2025-11-25").await;
    // Three unsafe calls sent at once never overlap.
    for id in 1..=3 {
        client.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "slow", "arguments": {"steps": 2, "step_ms": 30}}})).await;
    }
    let mut answered = Vec::new();
    for _ in 0..3 {
        answered.push(client.recv().await["id"].as_i64().unwrap());
    }
    answered.sort_unstable();
    assert_eq!(answered, [1, 2, 3]);
    assert_eq!(probe.max_running.load(Ordering::SeqCst), 1);
    // Safe calls run together (many echoes answer quickly, whatever their order).
    for id in 10..30 {
        client.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": id.to_string()}}})).await;
    }
    for _ in 10..30 {
        let reply = client.recv().await;
        assert_eq!(reply["result"]["content"][0]["text"], format!("Echo: {}", reply["id"]));
    }
}

/// A `tools/call` of `slow` labelled `label`.
fn slow_call(id: Value, label: &str, steps: u32, step_ms: u64, safe: bool) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "slow", "arguments": {"steps": steps, "step_ms": step_ms, "label": label, "safe": safe}}})
}

// Multi-threaded, as `tackle mcp serve` runs: there rmcp's one task per request may start in
// any order (the bug this catches answered most pipelined pairs the wrong way round).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsafe_calls_run_in_arrival_order_and_safe_calls_still_share() {
    for run in 0..6 {
        let (mut client, probe, _dir, _server) = started(ServerOptions::default()).await;
        client.initialize("2025-11-25").await;
        let labels: Vec<String> = (1..=6).map(|n| format!("call {n}")).collect();
        for (id, label) in (1..).zip(&labels) {
            client.send(slow_call(json!(id), label, 1, 5, false)).await;
        }
        let mut answered = Vec::new();
        for _ in 0..labels.len() {
            answered.push(client.recv().await["id"].as_i64().unwrap());
        }
        assert_eq!(*probe.started.lock().unwrap(), labels, "run {run}: unsafe calls started out of order");
        assert_eq!(answered, [1, 2, 3, 4, 5, 6], "run {run}");
        assert_eq!(probe.max_running.load(Ordering::SeqCst), 1);
    }
    // Safe calls sent together overlap; an unsafe one between them waits for the first ones,
    // and the last ones wait for it.
    let (mut client, probe, _dir, _server) = started(ServerOptions::default()).await;
    client.initialize("2025-11-25").await;
    for (id, label, safe) in [(1, "safe 1", true), (2, "safe 2", true), (3, "alone", false), (4, "safe 3", true)] {
        client.send(slow_call(json!(id), label, 3, 40, safe)).await;
    }
    for _ in 0..4 {
        client.recv().await;
    }
    let started = probe.started.lock().unwrap().clone();
    assert_eq!(started[2..], ["alone", "safe 3"]);
    assert_eq!(probe.max_running.load(Ordering::SeqCst), 2, "the first two safe calls did not share");
}

#[tokio::test]
async fn a_request_reusing_an_id_in_flight_is_refused_and_the_first_still_answers() {
    let (mut client, probe, _dir, _server) = started(ServerOptions::default()).await;
    client.initialize("2025-11-25").await;
    client.send(slow_call(json!(1), "first", 3, 100, false)).await;
    client.send(slow_call(json!(1), "second", 1, 1, false)).await;
    let refusal = client.recv().await;
    assert_eq!(refusal["id"], 1);
    assert_eq!(refusal["error"]["code"], -32600);
    assert!(refusal["error"]["message"].as_str().unwrap().contains("has not been answered yet"), "{refusal}");
    let answer = client.recv().await;
    assert_eq!((&answer["id"], &answer["result"]["content"][0]["text"]), (&json!(1), &json!("done after 3 steps")));
    assert_eq!(*probe.started.lock().unwrap(), ["first"], "the refused request never ran");
    // Answered, the id is free again; string ids are kept as they came.
    let (again, _) = client.request(1, "tools/call", slow_call(json!(1), "third", 1, 1, false)["params"].clone()).await;
    assert_eq!(again["result"]["isError"], false);
    client.send(slow_call(json!("x"), "fourth", 1, 1, false)).await;
    assert_eq!(client.recv().await["id"], "x");
    // A cancelled request frees its id at once, and its late answer never comes.
    client.send(slow_call(json!("c"), "cancelled", 100, 20, false)).await;
    client.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "c"}})).await;
    client.send(slow_call(json!("c"), "after", 1, 1, false)).await;
    let after = client.recv().await;
    assert_eq!((&after["id"], &after["result"]["content"][0]["text"]), (&json!("c"), &json!("done after 1 steps")));
    assert_eq!(client.recv_within(Duration::from_millis(300)).await, None);
}

#[tokio::test]
async fn pages_of_two_follow_an_opaque_cursor() {
    let (mut client, _probe, _dir, _server) =
        started(ServerOptions { page_size: Some(2), ..ServerOptions::default() }).await;
    client.initialize("2025-11-25").await;
    let mut names = Vec::new();
    let mut cursor = Value::Null;
    for id in 1..10 {
        let params = if cursor.is_null() { json!({}) } else { json!({"cursor": cursor}) };
        let (response, _) = client.request(id, "tools/list", params).await;
        let page = &response["result"];
        assert!(page["tools"].as_array().unwrap().len() <= 2);
        names.extend(page["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()));
        cursor = page.get("nextCursor").cloned().unwrap_or(Value::Null);
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(names, ["sequentialthinking", "task_done", "echo", "slow", "fail"]);
}

#[tokio::test]
async fn tools_list_shows_schemas_annotations_and_output_schemas() {
    let (mut client, _probe, _dir, _server) = started(ServerOptions::default()).await;
    client.initialize("2025-11-25").await;
    let (response, _) = client.request(1, "tools/list", json!({})).await;
    let tools = response["result"]["tools"].as_array().unwrap();
    let echo = tools.iter().find(|t| t["name"] == "echo").unwrap();
    assert_eq!(
        echo,
        &json!({
            "name": "echo",
            "title": "echo",
            "description": "Echo the text back.",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string", "description": "The text to echo."}},
                            "required": ["text"], "additionalProperties": false},
            "annotations": {"title": "echo", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false}
        })
    );
    let done = tools.iter().find(|t| t["name"] == "task_done").unwrap();
    assert_eq!(done["inputSchema"], json!({"type": "object", "additionalProperties": false}));
    let thinking = tools.iter().find(|t| t["name"] == "sequentialthinking").unwrap();
    assert_eq!(
        thinking["outputSchema"]["required"],
        json!(["thought_number", "total_thoughts", "next_thought_needed", "branches", "thought_history_length"])
    );
    assert!(tools.iter().filter(|t| t["name"] != "sequentialthinking").all(|t| t.get("outputSchema").is_none()));
}
