//! The outside check (docs/reference/providers.md#cross-checks): the third-party `@copilotkit/aimock` server, installed
//! by `scripts/install-test-deps.sh`, drives `tackle run` end to end over the OpenAI and the
//! Anthropic wire format, and its journal shows what Tackle sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tackle_testkit::Protocol;

/// A running aimock, killed on drop.
struct Aimock {
    child: Child,
    port: u16,
}

impl Drop for Aimock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn llmock() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let bin = root.join(".test-deps/npm/node_modules/.bin/llmock");
    assert!(bin.exists(), "aimock is not installed at {}: run scripts/install-test-deps.sh", bin.display());
    bin
}

impl Aimock {
    fn start(fixtures: &Value, dir: &Path, extra: &[&str]) -> Aimock {
        let path = dir.join("fixtures.json");
        std::fs::write(&path, fixtures.to_string()).unwrap();
        let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let child = Command::new(llmock())
            .args(["-p", &port.to_string(), "-h", "127.0.0.1", "-f"])
            .arg(&path)
            .args(["-c", "8", "--log-level", "warn"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let aimock = Aimock { child, port };
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(started.elapsed() < Duration::from_secs(20), "aimock did not start on port {port}");
            std::thread::sleep(Duration::from_millis(50));
        }
        aimock
    }

    fn base_url(&self, protocol: Protocol) -> String {
        match protocol {
            Protocol::OpenAi => format!("http://127.0.0.1:{}/v1", self.port),
            Protocol::Anthropic => format!("http://127.0.0.1:{}", self.port),
        }
    }

    /// The bodies of the requests aimock received.
    fn journal(&self) -> Vec<(String, Value)> {
        use std::io::{Read as _, Write as _};
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(stream, "GET /__aimock/journal HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        let (head, body) = response.split_once("\r\n\r\n").unwrap();
        let body = if head.to_ascii_lowercase().contains("transfer-encoding: chunked") {
            dechunk(body)
        } else {
            body.to_owned()
        };
        let entries: Value = serde_json::from_str(&body).unwrap();
        entries
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["path"].as_str().unwrap_or_default().to_owned(), e["body"].clone()))
            .collect()
    }
}

fn dechunk(body: &str) -> String {
    let mut out = String::new();
    let mut rest = body;
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let size = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.push_str(&tail[..size]);
        rest = &tail[size + 2..];
    }
    out
}

fn tackle(args: &[String]) -> std::process::Output {
    tackle_with_config(args, Path::new("/nonexistent-tackle-config"))
}

fn tackle_with_config(args: &[String], config_dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tackle"))
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env("TACKLE_CONFIG_DIR", config_dir)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn run(aimock: &Aimock, protocol: Protocol, workspace: &Path, task: &str, tools: &str) -> Value {
    run_with_config(aimock, protocol, workspace, task, tools, Path::new("/nonexistent-tackle-config"))
}

fn run_with_config(
    aimock: &Aimock,
    protocol: Protocol,
    workspace: &Path,
    task: &str,
    tools: &str,
    config: &Path,
) -> Value {
    let model = match protocol {
        Protocol::OpenAi => "openai/aimock",
        Protocol::Anthropic => "anthropic/aimock",
    };
    let args: Vec<String> = [
        "run",
        task,
        "--model",
        model,
        "--base-url",
        &aimock.base_url(protocol),
        "--workspace",
        &workspace.display().to_string(),
        "--tools",
        tools,
        "--permission-mode",
        "bypass",
        "--json",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let out = tackle_with_config(&args, config);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{protocol:?}: {stderr}");
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = tackle(&["replay".into(), result["trajectory"].as_str().unwrap().into(), "--check".into()]);
    assert_eq!(check.status.code(), Some(0), "{}", String::from_utf8_lossy(&check.stdout));
    result
}

/// Every request aimock saw keeps the history valid: each call answered once, no orphans,
/// Anthropic results first.
fn assert_history_valid(aimock: &Aimock) -> usize {
    let journal = aimock.journal();
    for (path, body) in &journal {
        let protocol = if path.ends_with("/messages") { Protocol::Anthropic } else { Protocol::OpenAi };
        let view = tackle_testkit::view(protocol, body);
        assert!(view.problems.is_empty(), "{path}: {:?}", view.problems);
    }
    journal.len()
}

#[test]
fn aimock_drives_tackle_run_over_both_wire_formats() {
    let fixtures = json!({"fixtures": [
        {"match": {"userMessage": "plan the change, then finish", "hasToolResult": false},
         "response": {"content": "Let me plan.", "toolCalls": [{"name": "sequentialthinking", "id": "call_plan_1",
            "arguments": {"thought": "read, edit, test", "next_thought_needed": false, "thought_number": 1, "total_thoughts": 1}}]}},
        {"match": {"toolCallId": "call_plan_1"},
         "response": {"content": "Planned.", "toolCalls": [{"name": "task_done", "id": "call_done_1", "arguments": {}}]}}
    ]});
    let dir = tempfile::tempdir().unwrap();
    let aimock = Aimock::start(&fixtures, dir.path(), &[]);
    for protocol in [Protocol::OpenAi, Protocol::Anthropic] {
        let workspace = tempfile::tempdir().unwrap();
        let result =
            run(&aimock, protocol, workspace.path(), "plan the change, then finish", "default,sequentialthinking");
        assert_eq!((result["status"].clone(), result["steps"].clone()), (json!("success"), json!(2)), "{protocol:?}");
    }
    assert_eq!(assert_history_valid(&aimock), 4);
}

#[test]
fn aimock_task_reads_edits_runs_a_command_and_finishes_over_both_wire_formats() {
    let fixtures = json!({"fixtures": [
        {"match": {"userMessage": "change the greeting in a.txt to goodbye", "hasToolResult": false},
         "response": {"content": "Let me read it.", "toolCalls": [{"name": "read_file", "id": "call_read_1", "arguments": {"file_path": "a.txt"}}]}},
        {"match": {"toolCallId": "call_read_1"},
         "response": {"content": "Now the edit.", "toolCalls": [{"name": "edit_file", "id": "call_edit_1",
            "arguments": {"file_path": "a.txt", "old_string": "hello", "new_string": "goodbye"}}]}},
        {"match": {"toolCallId": "call_edit_1"},
         "response": {"content": "Let me check.", "toolCalls": [{"name": "bash", "id": "call_check_1", "arguments": {"command": "grep -c goodbye a.txt && cat a.txt"}}]}},
        {"match": {"toolCallId": "call_check_1"},
         "response": {"content": "The greeting is now goodbye.", "toolCalls": [{"name": "task_done", "id": "call_done_1", "arguments": {}}]}}
    ]});
    let dir = tempfile::tempdir().unwrap();
    let aimock = Aimock::start(&fixtures, dir.path(), &[]);
    for protocol in [Protocol::OpenAi, Protocol::Anthropic] {
        let workspace = tempfile::tempdir().unwrap();
        std::fs::write(workspace.path().join("a.txt"), "hello world\n").unwrap();
        let result = run(&aimock, protocol, workspace.path(), "change the greeting in a.txt to goodbye", "default");
        assert_eq!((result["status"].clone(), result["steps"].clone()), (json!("success"), json!(4)), "{protocol:?}");
        assert_eq!(std::fs::read_to_string(workspace.path().join("a.txt")).unwrap(), "goodbye world\n");
        let trajectory = std::fs::read_to_string(result["trajectory"].as_str().unwrap()).unwrap();
        let outputs: Vec<Value> = trajectory
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|e| e["type"] == "tool_output")
            .collect();
        let answered: Vec<(&str, bool)> =
            outputs.iter().map(|e| (e["call_id"].as_str().unwrap(), e["is_error"].as_bool().unwrap())).collect();
        assert_eq!(
            answered,
            [("call_read_1", false), ("call_edit_1", false), ("call_check_1", false), ("call_done_1", false)],
            "{protocol:?}"
        );
        let command_output = outputs[2]["content"].as_str().unwrap();
        assert!(command_output.starts_with("1\ngoodbye world"), "{command_output}");
    }
    assert_eq!(assert_history_valid(&aimock), 8);
}

#[test]
fn aimock_chaos_is_absorbed_by_retries() {
    let fixtures = json!({"fixtures": [
        {"match": {"userMessage": "plan under chaos", "hasToolResult": false},
         "response": {"content": "Planning.", "toolCalls": [{"name": "sequentialthinking", "id": "call_plan_1",
            "arguments": {"thought": "x", "next_thought_needed": false, "thought_number": 1, "total_thoughts": 1}}]}},
        {"match": {"toolCallId": "call_plan_1"},
         "response": {"content": "Done.", "toolCalls": [{"name": "task_done", "id": "call_done_1", "arguments": {}}]}}
    ]});
    let dir = tempfile::tempdir().unwrap();
    // 429s with Retry-After, dropped connections and malformed bodies, on about a third of
    // the requests; enough retries that the run cannot plausibly fail (0.35^11).
    let aimock = Aimock::start(
        &fixtures,
        dir.path(),
        &["--chaos-ratelimit", "0.15", "--chaos-disconnect", "0.1", "--chaos-malformed", "0.1"],
    );
    let config = dir.path().join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "[providers.openai]\nmax_retries = 10\n[providers.anthropic]\nmax_retries = 10\n",
    )
    .unwrap();
    for protocol in [Protocol::OpenAi, Protocol::Anthropic] {
        let workspace = tempfile::tempdir().unwrap();
        let result = run_with_config(
            &aimock,
            protocol,
            workspace.path(),
            "plan under chaos",
            "default,sequentialthinking",
            &config,
        );
        assert_eq!(result["status"], "success", "{protocol:?}");
    }
    assert_history_valid(&aimock);
}
