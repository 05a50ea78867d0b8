//! The bounds of the HTTP server, each against the attack it stops (docs/mcp.md, "Bounds"):
//! a flood of sessions stays within the cap (the session idle the longest goes first; with
//! none idle, `initialize` gets a clear `503`), a busy session does not expire, the bearer
//! token, a request reusing an id in flight, and unsafe calls kept in arrival order.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::sync::atomic::Ordering;
use std::time::Duration;

use pretty_assertions::assert_eq;
use reqwest::StatusCode;
use serde_json::{Value, json};
use support::http::{Reply, initialize_body, start, wait_for};
use tackle_mcp::server::{AuthToken, ServerOptions};

fn tools_list() -> String {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string()
}

fn slow_call(id: Value, label: &str, steps: u32, step_ms: u64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "slow", "arguments": {"steps": steps, "step_ms": step_ms, "label": label}}})
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_sessions_stay_within_a_cap_of_sixteen() {
    let server = start(ServerOptions { max_sessions: 16, ..ServerOptions::default() }).await;
    let mut sessions = Vec::new();
    for _ in 0..200 {
        sessions.push(server.initialize().await);
    }
    // Each new session ended the one idle the longest: only the last sixteen are left.
    for (n, session) in sessions.iter().enumerate() {
        let status = server.post(Some(session), &tools_list(), &[]).await.status;
        let expected = if n < 184 { StatusCode::NOT_FOUND } else { StatusCode::OK };
        assert_eq!(status, expected, "session {n}");
    }
    let probe = std::sync::Arc::clone(&server.probe);
    wait_for("the ended sessions' tools to close", || probe.closed.load(Ordering::SeqCst) == 184).await;
    assert_eq!(server.server.live_sessions(), 16);
    let probe = server.stop().await;
    assert_eq!(probe.closed.load(Ordering::SeqCst), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_every_session_is_busy_initialize_gets_a_clear_503() {
    let server = start(ServerOptions { max_sessions: 2, ..ServerOptions::default() }).await;
    let (a, b) = (server.initialize().await, server.initialize().await);
    let long = server.send(Some(&a), &slow_call(json!(1), "a", 6, 100), &[]).await;
    let short = server.send(Some(&b), &slow_call(json!(1), "b", 2, 100), &[]).await;
    let refused = server.post(None, &initialize_body(), &[]).await;
    assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(refused.messages[0]["id"], 0);
    assert_eq!(refused.messages[0]["error"]["code"], -32000);
    let message = refused.messages[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("all 2 sessions are in use and none is idle") && message.contains("--max-sessions"));
    // Once b's call is answered, b is idle and makes room; a, still busy, stays.
    assert_eq!(Reply::read(short).await.answer(&json!(1))["result"]["isError"], false);
    let c = server.initialize().await;
    assert_eq!(server.post(Some(&b), &tools_list(), &[]).await.status, StatusCode::NOT_FOUND);
    assert_eq!(Reply::read(long).await.answer(&json!(1))["result"]["content"][0]["text"], "done after 6 steps");
    for session in [&a, &c] {
        assert_eq!(server.post(Some(session), &tools_list(), &[]).await.status, StatusCode::OK);
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_busy_with_a_long_call_does_not_expire_and_then_does() {
    let server = start(ServerOptions { idle_timeout: Duration::from_millis(200), ..ServerOptions::default() }).await;
    let session = server.initialize().await;
    // Four times the idle timeout without a message either way.
    let answer = server.call(&session, 1, "slow", json!({"steps": 4, "step_ms": 200})).await;
    assert_eq!(answer["result"]["content"][0]["text"], "done after 4 steps");
    let probe = std::sync::Arc::clone(&server.probe);
    wait_for("the idle session to end", || probe.closed.load(Ordering::SeqCst) == 1).await;
    assert_eq!(server.post(Some(&session), &tools_list(), &[]).await.status, StatusCode::NOT_FOUND);
    server.stop().await;
}

#[tokio::test]
async fn with_a_token_every_request_needs_it() {
    let token = "tackle-test-token-0123456789";
    let server =
        start(ServerOptions { auth_token: Some(AuthToken::new(token).unwrap()), ..ServerOptions::default() }).await;
    let right = format!("Bearer {token}");
    for (what, headers) in [
        ("no token", vec![]),
        ("a wrong token", vec![("authorization", "Bearer tackle-test-token-012345678")]),
        ("another scheme", vec![("authorization", "Basic dGFja2xl")]),
    ] {
        let reply = server.post(None, &initialize_body(), &headers).await;
        assert_eq!(reply.status, StatusCode::UNAUTHORIZED, "{what}");
        assert_eq!(reply.headers["www-authenticate"], "Bearer", "{what}");
        assert!(
            reply.session.is_none() && reply.text.contains("Authorization: Bearer TOKEN"),
            "{what}: {}",
            reply.text
        );
        assert!(!reply.text.contains(token), "{what}: the answer shows the token");
    }
    let session = server.initialize_with(&[("authorization", &right)]).await;
    let reply = server.post(Some(&session), &tools_list(), &[("authorization", &right)]).await;
    assert_eq!(reply.status, StatusCode::OK);
    // A live session id is not a way in, on any method.
    assert_eq!(server.post(Some(&session), &tools_list(), &[]).await.status, StatusCode::UNAUTHORIZED);
    let get = server.http.get(&server.url).header("mcp-session-id", &session).send().await.unwrap();
    assert_eq!(get.status(), StatusCode::UNAUTHORIZED);
    let delete = server.http.delete(&server.url).header("mcp-session-id", &session).send().await.unwrap();
    assert_eq!(delete.status(), StatusCode::UNAUTHORIZED);
    // The DNS-rebinding check still comes first.
    let foreign =
        server.post(None, &initialize_body(), &[("authorization", &right), ("origin", "http://evil.com")]).await;
    assert_eq!(foreign.status, StatusCode::FORBIDDEN);
    let delete =
        server.http.delete(&server.url).header("mcp-session-id", &session).header("authorization", &right).send();
    assert_eq!(delete.await.unwrap().status(), StatusCode::NO_CONTENT);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_reusing_an_id_in_flight_is_refused_and_the_first_still_answers() {
    let server = start(ServerOptions::default()).await;
    let session = server.initialize().await;
    let first = server.send(Some(&session), &slow_call(json!(7), "first", 3, 100), &[]).await;
    let second = server.post(Some(&session), &slow_call(json!(7), "second", 1, 1), &[]).await;
    assert_eq!(second.status, StatusCode::OK);
    let refusal = second.answer(&json!(7));
    assert_eq!(refusal["error"]["code"], -32600, "{}", second.text);
    assert!(refusal["error"]["message"].as_str().unwrap().contains("has not been answered yet"));
    let first = Reply::read(first).await;
    assert_eq!(first.answer(&json!(7))["result"]["content"][0]["text"], "done after 3 steps");
    assert_eq!(*server.probe.started.lock().unwrap(), ["first"], "the refused request never ran");
    let again = server.post(Some(&session), &slow_call(json!(7), "third", 1, 1), &[]).await;
    assert_eq!(again.answer(&json!(7))["result"]["isError"], false, "answered, the id is free again");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsafe_calls_run_in_arrival_order() {
    let server = start(ServerOptions::default()).await;
    for run in 0..4 {
        let session = server.initialize().await;
        let labels: Vec<String> = (1..=5).map(|n| format!("run {run} call {n}")).collect();
        // Each POST is sent once the previous one has reached the session (its headers came).
        let mut pending = Vec::new();
        for (id, label) in (1..).zip(&labels) {
            pending.push(server.send(Some(&session), &slow_call(json!(id), label, 1, 5), &[]).await);
        }
        for response in pending {
            assert_eq!(Reply::read(response).await.status, StatusCode::OK);
        }
        let started = server.probe.started.lock().unwrap().split_off(0);
        assert_eq!(started, labels, "run {run}: unsafe calls started out of order");
    }
    assert_eq!(server.probe.max_running.load(Ordering::SeqCst), 1);
    server.stop().await;
}
