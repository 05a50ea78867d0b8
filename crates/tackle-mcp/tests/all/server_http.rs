//! The server over real streamable HTTP on 127.0.0.1: sessions and their ids, the status
//! codes of docs/mcp.md#transports, DNS-rebinding protection, version headers, one tool session
//! per `Mcp-Session-Id`, idle expiry, and a shutdown that closes every session's tools. The
//! bounds (the session cap, the token, reused ids, arrival order) are in `server_http_bounds.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use pretty_assertions::assert_eq;
use reqwest::StatusCode;
use serde_json::{Value, json};
use support::http::{start, wait_for};
use tackle_mcp::server::ServerOptions;

#[tokio::test]
async fn sessions_have_random_hex_ids_and_the_status_codes_of_the_spec() {
    let server = start(ServerOptions::default()).await;
    let session = server.initialize().await;
    assert_eq!(session.len(), 32, "{session}");
    assert!(session.chars().all(|c| c.is_ascii_hexdigit()));
    assert_ne!(server.initialize().await, session);

    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    let reply = server.post(Some(&session), &list, &[]).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(reply.messages.last().unwrap()["result"]["tools"].as_array().unwrap().len(), 5);
    assert_eq!(server.post(None, &list, &[]).await.status, StatusCode::BAD_REQUEST);
    assert_eq!(server.post(Some("0123456789abcdef0123456789abcdef"), &list, &[]).await.status, StatusCode::NOT_FOUND);

    let delete = server.http.delete(&server.url).header("mcp-session-id", &session).send().await.unwrap();
    assert!(delete.status() == StatusCode::NO_CONTENT, "{}", delete.status());
    assert_eq!(server.post(Some(&session), &list, &[]).await.status, StatusCode::NOT_FOUND);
    let probe = Arc::clone(&server.probe);
    wait_for("the deleted session's tools to close", || probe.closed.load(Ordering::SeqCst) == 1).await;
    server.stop().await;
}

#[tokio::test]
async fn foreign_origins_and_hosts_are_refused() {
    let server = start(ServerOptions::default()).await;
    let session = server.initialize().await;
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
    .to_string();
    let unknown_method = json!({"jsonrpc": "2.0", "id": 1, "method": "foo/bar"}).to_string();
    let discover = json!({"jsonrpc": "2.0", "id": 2, "method": "server/discover"}).to_string();
    let list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).to_string();
    let notification = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    // Handed to rmcp, answered by the gate (a reply, or a dropped message), and unreadable.
    for body in [
        init.as_str(),
        list.as_str(),
        unknown_method.as_str(),
        discover.as_str(),
        "{bad",
        "[]",
        r#"{"jsonrpc":"2.0","method":"x","params":5}"#,
        notification.as_str(),
    ] {
        for (name, value) in
            [("origin", "http://evil.com"), ("host", "evil.com"), ("origin", "null"), ("host", "127.0.0.1")]
        {
            for session in [None, Some(session.as_str())] {
                let reply = server.post(session, body, &[(name, value)]).await;
                assert_eq!(
                    reply.status,
                    StatusCode::FORBIDDEN,
                    "{name}: {value} with {body} ({session:?}): {}",
                    reply.text
                );
                assert!(reply.messages.is_empty(), "nothing of the body was read: {}", reply.text);
            }
        }
    }
    let get = server
        .http
        .get(&server.url)
        .header("host", "evil.com")
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(get.status(), StatusCode::FORBIDDEN);
    let delete = server
        .http
        .delete(&server.url)
        .header("origin", "http://evil.com")
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(delete.status(), StatusCode::FORBIDDEN);
    let reply = server.post(None, &init, &[("origin", "http://localhost:5173")]).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.text);
    let reply = server.post(Some(&session), &unknown_method, &[("origin", "http://127.0.0.1:5173")]).await;
    assert_eq!((reply.status, reply.messages[0]["error"]["code"].clone()), (StatusCode::OK, json!(-32601)));
    server.stop().await;
}

#[tokio::test]
async fn messages_the_gate_answers_still_need_a_live_session() {
    let server = start(ServerOptions::default()).await;
    let session = server.initialize().await;
    let ended = server.initialize().await;
    let delete = server.http.delete(&server.url).header("mcp-session-id", &ended).send().await.unwrap();
    assert_eq!(delete.status(), StatusCode::NO_CONTENT);
    let unknown_method = json!({"jsonrpc": "2.0", "id": 1, "method": "foo/bar"}).to_string();
    let bad_params = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": 5}}).to_string();
    let bad_notification = r#"{"jsonrpc":"2.0","method":"x","params":5}"#;
    for body in [unknown_method.as_str(), bad_params.as_str(), "{bad", "[]", bad_notification] {
        assert_eq!(server.post(None, body, &[]).await.status, StatusCode::BAD_REQUEST, "{body} without a session");
        for gone in ["0123456789abcdef0123456789abcdef", ended.as_str()] {
            let reply = server.post(Some(gone), body, &[]).await;
            assert_eq!(reply.status, StatusCode::NOT_FOUND, "{body} in session {gone}: {}", reply.text);
        }
    }
    let reply = server.post(Some(&session), &unknown_method, &[]).await;
    assert_eq!((reply.status, reply.messages[0]["error"]["code"].clone()), (StatusCode::OK, json!(-32601)));
    let reply = server.post(Some(&session), "{bad", &[]).await;
    assert_eq!((reply.status, reply.messages[0]["error"]["code"].clone()), (StatusCode::BAD_REQUEST, json!(-32700)));
    assert_eq!(server.post(Some(&session), bad_notification, &[]).await.status, StatusCode::ACCEPTED);

    // What may open a session is answered without one (or with a stale one).
    let discover = json!({"jsonrpc": "2.0", "id": 9, "method": "server/discover"}).to_string();
    let bad_init = json!({"jsonrpc": "2.0", "id": 8, "method": "initialize", "params": 5}).to_string();
    let era = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}})
    .to_string();
    for (body, code) in [(&discover, -32601), (&bad_init, -32602), (&era, -32601)] {
        for session in [None, Some(ended.as_str())] {
            let reply = server.post(session, body, &[]).await;
            assert_eq!(reply.messages[0]["error"]["code"], code, "{body} ({session:?}): {}", reply.text);
        }
    }

    // DELETE of an unknown or ended session is a 404, without one a 400.
    for gone in ["0123456789abcdef0123456789abcdef", ended.as_str()] {
        let delete = server.http.delete(&server.url).header("mcp-session-id", gone).send().await.unwrap();
        assert_eq!(delete.status(), StatusCode::NOT_FOUND, "{gone}");
    }
    assert_eq!(server.http.delete(&server.url).send().await.unwrap().status(), StatusCode::BAD_REQUEST);
    server.stop().await;
}

#[tokio::test]
async fn unsupported_versions_bad_json_and_discovery_probes_get_clear_answers() {
    let server = start(ServerOptions::default()).await;
    let session = server.initialize().await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    for version in ["2099-01-01", "2026-07-28", "garbage"] {
        let reply = server.post(Some(&session), &list, &[("mcp-protocol-version", version)]).await;
        assert_eq!(reply.status, StatusCode::BAD_REQUEST, "{version}");
        assert!(reply.text.contains("Unsupported MCP-Protocol-Version"), "{}", reply.text);
    }
    let reply = server.post(Some(&session), &list, &[("mcp-protocol-version", "2025-06-18")]).await;
    assert_eq!(reply.status, StatusCode::OK);

    let reply = server.post(Some(&session), "{oops", &[]).await;
    assert_eq!(reply.status, StatusCode::BAD_REQUEST);
    assert_eq!(reply.messages[0]["error"]["code"], -32700);

    let discover = json!({"jsonrpc": "2.0", "id": 9, "method": "server/discover",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
    let reply = server.post(None, &discover.to_string(), &[("mcp-protocol-version", "2026-07-28")]).await;
    assert_eq!(reply.status, StatusCode::OK);
    assert_eq!(
        reply.messages,
        vec![
            json!({"jsonrpc": "2.0", "id": 9, "error": {"code": -32601, "message": "Method not found: server/discover"}})
        ]
    );

    let unknown = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "nope"}});
    let reply = server.post(Some(&session), &unknown.to_string(), &[]).await;
    let error = &reply.messages.last().unwrap()["error"];
    assert_eq!(error["code"], -32602);
    assert_eq!(error["message"], "Unknown tool: nope");
    server.stop().await;
}

#[tokio::test]
async fn each_http_session_has_its_own_tool_session() {
    let server = start(ServerOptions::default()).await;
    let (a, b) = (server.initialize().await, server.initialize().await);
    let thought =
        |n: u32| json!({"thought": "t", "next_thought_needed": true, "thought_number": n, "total_thoughts": 3});
    server.call(&a, 1, "sequentialthinking", thought(1)).await;
    let second = server.call(&a, 2, "sequentialthinking", thought(2)).await;
    assert_eq!(second["result"]["structuredContent"]["thought_history_length"], 2);
    let other = server.call(&b, 1, "sequentialthinking", thought(1)).await;
    assert_eq!(other["result"]["structuredContent"]["thought_history_length"], 1);
    let probe = server.stop().await;
    assert_eq!(probe.closed.load(Ordering::SeqCst), 2, "shutdown must close both sessions' tools");
}

#[tokio::test]
async fn progress_precedes_the_result_on_the_event_stream() {
    let server = start(ServerOptions::default()).await;
    let session = server.initialize().await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "slow", "arguments": {"steps": 3, "step_ms": 150}, "_meta": {"progressToken": 5}}});
    let reply = server.post(Some(&session), &body.to_string(), &[]).await;
    let methods: Vec<Value> =
        reply.messages.iter().map(|m| m.get("method").cloned().unwrap_or_else(|| json!("result"))).collect();
    assert_eq!(methods.last().unwrap(), "result");
    assert_eq!(methods.iter().filter(|m| *m == "notifications/progress").count(), 3, "{}", reply.text);
    server.stop().await;
}

#[tokio::test]
async fn idle_sessions_end_and_close_their_tools() {
    let server = start(ServerOptions { idle_timeout: Duration::from_millis(300), ..ServerOptions::default() }).await;
    let session = server.initialize().await;
    let probe = Arc::clone(&server.probe);
    wait_for("the idle session to close", || probe.closed.load(Ordering::SeqCst) == 1).await;
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string();
    assert_eq!(server.post(Some(&session), &list, &[]).await.status, StatusCode::NOT_FOUND);
    server.stop().await;
}
