//! The official Python SDKs (`openai`, `anthropic`, installed by
//! `scripts/install-test-deps.sh` into `.venv-llm`) read the same fake-server streams as
//! Tackle; the calls they assemble (id, name, parsed arguments) and the finish reason must
//! equal Tackle's (docs/reference/providers.md#cross-checks).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tackle_llm::{ChatRequest, LlmClient, Message, ProviderConfig, ProviderKind};
use tackle_testkit::{FakeLlm, Protocol, Reply, Script, Turn};

fn python() -> std::path::PathBuf {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv-llm/bin/python");
    assert!(bin.exists(), "the SDK oracle is not installed at {}: run scripts/install-test-deps.sh", bin.display());
    bin
}

/// Runs every job through the SDKs in one Python process.
async fn sdk(jobs: &[Value]) -> Vec<Value> {
    use tokio::io::AsyncWriteExt as _;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oracle/sdk_assemble.py");
    let mut child = tokio::process::Command::new(python())
        .arg(script)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(Value::Array(jobs.to_vec()).to_string().as_bytes()).await.unwrap();
    drop(stdin);
    let out = child.wait_with_output().await.unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

async fn tackle(protocol: Protocol, base_url: String, stream: bool) -> Value {
    let kind = if protocol == Protocol::OpenAi { ProviderKind::OpenAi } else { ProviderKind::Anthropic };
    let mut config = ProviderConfig::new(kind, "fake");
    config.base_url = base_url;
    config.api_key = Some("sk-test".into());
    config.stream = stream;
    let client = LlmClient::new(config).unwrap();
    let messages = [Message::user_text("go")];
    let completion =
        client.complete(&ChatRequest { system: "", messages: &messages, tools: &[] }, &mut |_| {}).await.unwrap();
    let calls: Vec<Value> = completion
        .message
        .tool_calls
        .iter()
        .map(|c| json!({"id": c.id, "name": c.name, "args": serde_json::from_str::<Value>(&c.arguments).unwrap()}))
        .collect();
    json!({"text": completion.message.text, "calls": calls, "finish": completion.finish.name()})
}

#[tokio::test]
async fn the_official_sdks_assemble_what_tackle_assembles() {
    let fixtures = [
        Reply::text("Let me read both.")
            .call("call_1", "read_file", json!({"file_path": "a.txt"}))
            .call("call_2", "read_file", json!({"file_path": "b.txt", "limit": 10}))
            .chunk_chars(3),
        Reply::text("")
            .call("call_x", "read_file", json!({"file_path": "日本/é.txt", "nested": {"k": [1, 2]}}))
            .chunk_chars(1),
        Reply::text("").call("call_y", "task_done", json!({})).chunk_chars(100),
        Reply::text("Just text, no calls.").chunk_chars(4),
        Reply::text("Cut short").finish("length"),
    ];
    let mut servers = Vec::new();
    let mut jobs = Vec::new();
    for reply in &fixtures {
        for protocol in [Protocol::OpenAi, Protocol::Anthropic] {
            for stream in [true, false] {
                let server =
                    FakeLlm::start(Script::new([Turn::reply(reply.clone()), Turn::reply(reply.clone())])).await;
                let name = if protocol == Protocol::OpenAi { "openai" } else { "anthropic" };
                jobs.push(json!({"protocol": name, "base_url": server.base_url(protocol), "stream": stream}));
                servers.push((server, protocol, stream, reply));
            }
        }
    }
    let expected = sdk(&jobs).await;
    for ((server, protocol, stream, reply), expected) in servers.iter().zip(expected) {
        let got = tackle(*protocol, server.base_url(*protocol), *stream).await;
        assert_eq!(got, expected, "{protocol:?} stream={stream} {reply:?}");
    }
}
