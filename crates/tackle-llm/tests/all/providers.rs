//! Both wire protocols against the scripted fake server over real HTTP on 127.0.0.1:
//! streamed and whole responses, parallel calls, retries, every error class, and streams
//! that break.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;
use tackle_llm::{
    ChatRequest, Completion, ErrorClass, FinishReason, LlmClient, LlmError, LlmEvent, Message, NativeCall,
    ProviderConfig, ProviderKind, Usage,
};
use tackle_testkit::{Expect, FakeLlm, Fault, Protocol, Reply, Script, Turn};

const BOTH: [(ProviderKind, Protocol); 2] =
    [(ProviderKind::OpenAi, Protocol::OpenAi), (ProviderKind::Anthropic, Protocol::Anthropic)];

fn config(kind: ProviderKind, server: &FakeLlm, protocol: Protocol) -> ProviderConfig {
    let mut config = ProviderConfig::new(kind, "fake-model");
    config.base_url = server.base_url(protocol);
    config.api_key = Some("sk-test".into());
    config.retry.base = Duration::from_millis(5);
    config
}

async fn complete(config: ProviderConfig) -> (Result<Completion, LlmError>, Vec<LlmEvent>) {
    let client = LlmClient::new(config).unwrap();
    let messages = [Message::user_text("read a.txt")];
    let request = ChatRequest { system: "You are a test.", messages: &messages, tools: &[] };
    let mut events = Vec::new();
    let result = client.complete(&request, &mut |event| events.push(event)).await;
    (result, events)
}

fn call(id: &str, name: &str, arguments: &str) -> NativeCall {
    NativeCall { id: id.into(), name: name.into(), arguments: arguments.into() }
}

fn two_calls() -> Reply {
    Reply::text("Let me read both.")
        .call("call_1", "read_file", json!({"file_path": "a.txt"}))
        .call("call_2", "read_file", json!({"file_path": "b.txt", "limit": 10}))
        .chunk_chars(3)
        .usage(12, 9)
}

#[tokio::test]
async fn both_providers_streamed_and_whole_assemble_parallel_calls() {
    for (kind, protocol) in BOTH {
        for stream in [true, false] {
            let expect = Expect { stream: Some(stream), ..Expect::last_user_contains("read a.txt") };
            let server = FakeLlm::start(Script::new([Turn::reply(two_calls()).expect(expect)])).await;
            let mut config = config(kind, &server, protocol);
            config.stream = stream;
            let (result, events) = complete(config).await;
            let completion = result.unwrap_or_else(|e| panic!("{kind:?} stream={stream}: {e}"));
            assert_eq!(completion.message.text, "Let me read both.");
            assert_eq!(
                completion.message.tool_calls,
                vec![
                    call("call_1", "read_file", r#"{"file_path":"a.txt"}"#),
                    call("call_2", "read_file", r#"{"file_path":"b.txt","limit":10}"#)
                ]
            );
            assert_eq!(completion.finish, FinishReason::ToolCalls);
            assert_eq!(completion.usage, Usage { input_tokens: 12, output_tokens: 9, ..Usage::default() });
            let shown: String = events
                .iter()
                .filter_map(|e| match e {
                    LlmEvent::Text(t) => Some(t.as_str()),
                    _ => None,
                })
                .collect();
            assert_eq!(shown, "Let me read both.");
            if stream {
                assert!(events.len() > 3, "text should stream in pieces: {events:?}");
            }
            server.assert_clean();
            let request = &server.requests()[0];
            match kind {
                ProviderKind::OpenAi => {
                    assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
                    assert_eq!(request.path, "/v1/chat/completions");
                }
                ProviderKind::Anthropic => {
                    assert_eq!(request.header("x-api-key"), Some("sk-test"));
                    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
                    assert_eq!(request.body["max_tokens"], 8192);
                }
            }
        }
    }
}

#[tokio::test]
async fn retry_after_is_honoured_and_reported() {
    for (kind, protocol) in BOTH {
        let script = Script::new([
            Turn::fault(Fault::status(429).header("retry-after-ms", "40")),
            Turn::fault(Fault::status(503)),
            Turn::reply(Reply::text("ok")),
        ]);
        let server = FakeLlm::start(script).await;
        let started = std::time::Instant::now();
        let (result, events) = complete(config(kind, &server, protocol)).await;
        assert_eq!(result.unwrap().message.text, "ok");
        assert!(started.elapsed() >= Duration::from_millis(40));
        let retries: Vec<(u32, ErrorClass, Option<u16>)> = events
            .iter()
            .filter_map(|e| match e {
                LlmEvent::Retry { attempt, error_class, status, .. } => Some((*attempt, *error_class, *status)),
                _ => None,
            })
            .collect();
        assert_eq!(retries, vec![(1, ErrorClass::RateLimit, Some(429)), (2, ErrorClass::Server, Some(503))]);
        let first_delay = events.iter().find_map(|e| match e {
            LlmEvent::Retry { delay_ms, .. } => Some(*delay_ms),
            _ => None,
        });
        assert_eq!(first_delay, Some(40));
        assert_eq!(server.requests().len(), 3);
    }
}

#[tokio::test]
async fn retry_after_in_seconds_is_waited_for() {
    let server = FakeLlm::start(Script::new([
        Turn::fault(Fault::status(429).header("retry-after", "1")),
        Turn::reply(Reply::text("ok")),
    ]))
    .await;
    let started = std::time::Instant::now();
    let (result, _) = complete(config(ProviderKind::OpenAi, &server, Protocol::OpenAi)).await;
    assert_eq!(result.unwrap().message.text, "ok");
    assert!(started.elapsed() >= Duration::from_secs(1));
}

#[tokio::test]
async fn a_429_storm_ends_with_the_last_retry_after() {
    let storm = Turn::fault(
        Fault::status(429)
            .header("retry-after-ms", "10")
            .body(r#"{"error":{"message":"Rate limit reached for requests"}}"#),
    );
    let server = FakeLlm::start(Script::new([storm]).repeat_last()).await;
    let (result, events) = complete(config(ProviderKind::OpenAi, &server, Protocol::OpenAi)).await;
    let err = result.unwrap_err();
    assert_eq!(err.class, ErrorClass::RateLimit);
    assert_eq!(
        err.message,
        "rate limited by openai (HTTP 429) after 5 attempts; the last Retry-After was 0.01 s: Rate limit reached for requests. Wait and run again, or raise [providers.openai] max_retries."
    );
    assert_eq!(server.requests().len(), 5);
    assert_eq!(events.iter().filter(|e| matches!(e, LlmEvent::Retry { .. })).count(), 4);
}

#[tokio::test]
async fn errors_that_are_not_retried() {
    let cases = [
        (Fault::status(401), ErrorClass::Auth, "authentication failed for anthropic: check ANTHROPIC_API_KEY".to_owned()),
        (
            Fault::status(400).body(r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 250000 tokens > 200000 maximum"}}"#),
            ErrorClass::ContextLength,
            "the conversation is too long for fake-model's context window: prompt is too long: 250000 tokens > 200000 maximum. Start a new run with a narrower task.".to_owned(),
        ),
        (
            Fault::status(400).body(r#"{"type":"error","error":{"type":"invalid_request_error","message":"tools.0: unknown field"}}"#),
            ErrorClass::BadRequest,
            "anthropic rejected the request (HTTP 400) at {url}: tools.0: unknown field".to_owned(),
        ),
        (
            Fault::status(503).header("x-should-retry", "false"),
            ErrorClass::Server,
            "anthropic had a server error (HTTP 503) at {url}: injected HTTP 503. Try again later.".to_owned(),
        ),
        (
            Fault::status(429).header("retry-after", "500"),
            ErrorClass::RateLimit,
            "rate limited by anthropic (HTTP 429); the last Retry-After was 500 s: injected HTTP 429. Wait and run again, or raise [providers.anthropic] max_retries.".to_owned(),
        ),
    ];
    for (fault, class, message) in cases {
        let server = FakeLlm::start(Script::new([Turn::fault(fault), Turn::reply(Reply::text("never"))])).await;
        let (result, _) = complete(config(ProviderKind::Anthropic, &server, Protocol::Anthropic)).await;
        let err = result.unwrap_err();
        let message = message.replace("{url}", &format!("{}/v1/messages", server.anthropic_base_url()));
        assert_eq!((err.class, err.message), (class, message));
        assert_eq!(server.requests().len(), 1, "{class:?} must not be retried");
    }
}

#[tokio::test]
async fn broken_streams_restart_from_scratch() {
    let faults = [Fault::disconnect_after(6), Fault::malformed_after(4), Fault::error_after(3, "overloaded_error")];
    for (kind, protocol) in BOTH {
        for fault in faults.clone() {
            let script = Script::new([Turn::reply(two_calls()).with_fault(fault.clone()), Turn::reply(two_calls())]);
            let server = FakeLlm::start(script).await;
            let (result, events) = complete(config(kind, &server, protocol)).await;
            let completion = result.unwrap_or_else(|e| panic!("{kind:?} {fault:?}: {e}"));
            assert_eq!(completion.message.tool_calls.len(), 2, "{kind:?} {fault:?}");
            assert!(events.contains(&LlmEvent::Restart), "{kind:?} {fault:?}: {events:?}");
            server.assert_clean();
        }
    }
}

#[tokio::test]
async fn a_stream_cut_three_times_is_an_error() {
    let cut = Turn::reply(two_calls()).with_fault(Fault::disconnect_after(8));
    let server = FakeLlm::start(Script::new([cut]).repeat_last()).await;
    let (result, _) = complete(config(ProviderKind::OpenAi, &server, Protocol::OpenAi)).await;
    let err = result.unwrap_err();
    assert_eq!(err.class, ErrorClass::Transport);
    assert!(err.message.starts_with("cannot talk to openai at http://127.0.0.1:"), "{}", err.message);
    assert!(err.message.contains("after 3 attempts"), "{}", err.message);
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn a_silent_stream_times_out() {
    let slow =
        Turn::reply(Reply::text("slow")).with_fault(Fault { delay_between_chunks_ms: Some(400), ..Fault::default() });
    let server = FakeLlm::start(Script::new([slow]).repeat_last()).await;
    let mut config = config(ProviderKind::Anthropic, &server, Protocol::Anthropic);
    config.stream_idle_timeout = Duration::from_millis(100);
    config.retry.max_retries = 0;
    let (result, _) = complete(config).await;
    let err = result.unwrap_err();
    assert_eq!(err.class, ErrorClass::Timeout);
    assert!(err.message.contains("no data within 0.1 s"), "{}", err.message);
}

#[tokio::test]
async fn an_unreachable_endpoint_is_a_transport_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let mut config = ProviderConfig::new(ProviderKind::OpenAi, "m");
    config.base_url = format!("http://127.0.0.1:{port}/v1");
    config.retry.max_retries = 1;
    config.retry.base = Duration::from_millis(5);
    let (result, events) = complete(config).await;
    let err = result.unwrap_err();
    assert_eq!(err.class, ErrorClass::Transport);
    assert!(err.message.contains("after 2 attempts"), "{}", err.message);
    assert_eq!(events.len(), 1);
}

#[tokio::test]
async fn anthropic_gets_provider_defined_tool_types() {
    let bash = tackle_core::ToolSpec::new("bash", "run").input_schema(json!({"type": "object", "properties": {}}));
    let other =
        tackle_core::ToolSpec::new("read_file", "read").input_schema(json!({"type": "object", "properties": {}}));
    let mut config = ProviderConfig::new(ProviderKind::Anthropic, "m");
    let client = LlmClient::new(config.clone()).unwrap();
    assert_eq!(
        client.render_tools([&bash, &other]).tools,
        vec![
            json!({"type": "bash_20250124", "name": "bash"}),
            json!({"name": "read_file", "description": "read", "input_schema": {"type": "object", "properties": {}}})
        ]
    );
    config.native_tools = false;
    let client = LlmClient::new(config).unwrap();
    assert_eq!(client.render_tools([&bash]).tools[0]["input_schema"], json!({"type": "object", "properties": {}}));
}

/// A server on 127.0.0.1 that answers every request with `body` as an event stream, written in
/// `pieces` of at most that many bytes (flushed one by one), then closes the connection.
async fn raw_event_stream(body: Vec<u8>, piece: usize) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let requests = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = requests.clone();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let body = body.clone();
            tokio::spawn(async move {
                // Read the request head and its body (small, sent at once by reqwest).
                let mut request = vec![0; 64 * 1024];
                let _ = socket.read(&mut request).await;
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
                socket.write_all(head.as_bytes()).await.unwrap();
                for chunk in body.chunks(piece) {
                    if socket.write_all(chunk).await.is_err() {
                        return;
                    }
                    let _ = socket.flush().await;
                    tokio::task::yield_now().await;
                }
                let _ = socket.shutdown().await;
            });
        }
    });
    (url, requests)
}

#[tokio::test]
async fn hostile_but_valid_event_streams_are_read() {
    // Anthropic's events as an unusual server might send them: a byte-order mark, CRLF and
    // lone CR endings, comments, `retry:`/`id:`, lines the standard ignores, a payload with
    // multi-byte characters cut across writes of 3 bytes.
    let text = "\u{feff}: hello\r\nretry: 3000\r\nevent: message_start\r\nid: 1\r\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":7}}}\r\n\r\n\
        garbage line\nfoo: bar\nretry: soon\r\revent: content_block_start\rdata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\r\r\
        event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"héllo 日本\"}}\n\n\
        : keep-alive\n\n\
        event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":3}}\n\n\
        event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    let (url, requests) = raw_event_stream(text.as_bytes().to_vec(), 3).await;
    let mut config = ProviderConfig::new(ProviderKind::Anthropic, "m");
    config.base_url = url;
    config.api_key = Some("sk-test".into());
    let (result, _) = complete(config).await;
    let completion = result.unwrap();
    assert_eq!(completion.message.text, "héllo 日本");
    assert_eq!(completion.finish, FinishReason::Stop);
    assert_eq!(completion.usage, Usage { input_tokens: 7, output_tokens: 3, ..Usage::default() });
    assert_eq!(requests.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_line_that_never_ends_is_refused_and_a_stream_cut_mid_event_is_incomplete() {
    let start = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n";
    let huge = format!("{start}data: {}", "x".repeat(tackle_llm::sse::MAX_LINE));
    // The finish reason arrives, but the connection closes before its blank line.
    let cut = format!("{start}data: {{\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":\"stop\"}}]}}\n");
    for (body, detail) in [
        (huge, "the provider sent a line longer than 16777216 bytes in its event stream"),
        (cut, "the stream from openai ended before the response was complete (connection closed)"),
    ] {
        let (url, requests) = raw_event_stream(body.into_bytes(), 1 << 20).await;
        let mut config = ProviderConfig::new(ProviderKind::OpenAi, "m");
        config.base_url = format!("{url}/v1");
        config.retry.base = Duration::from_millis(5);
        let (result, events) = complete(config).await;
        let err = result.unwrap_err();
        assert_eq!(err.class, ErrorClass::Transport);
        assert!(err.message.contains(detail), "{}", err.message);
        assert!(err.message.contains("after 3 attempts"), "{}", err.message);
        assert_eq!(requests.load(std::sync::atomic::Ordering::SeqCst), 3);
        assert_eq!(events.iter().filter(|e| **e == LlmEvent::Restart).count(), 2, "{events:?}");
    }
}
