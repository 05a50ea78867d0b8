//! Input that crashed the process (issue 12, point 3), through the real binary: the JSONPaths
//! that overflowed the stack get an `is_error` answer from `tools call`, an `mcp serve --http`
//! session that sends them (and arguments nested past the JSON limit) leaves the server and
//! another session working, and a closed stderr never turns a diagnostic into an abort.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::serve;

use serve::{HttpServe, TACKLE};

/// The three JSONPaths that overflowed the stack (exit 134) before the bounds.
fn attack_paths() -> [String; 3] {
    [
        format!("$[?{}@.a{}]", "(".repeat(1000), ")".repeat(1000)),
        format!("${}.a{}", "[?@".repeat(600), "]".repeat(600)),
        format!("$[?{}@.a{} == 1]", "length(".repeat(100_000), ")".repeat(100_000)),
    ]
}

fn view(path: &str) -> Value {
    json!({"operation": "view", "file_path": "f.json", "json_path": path})
}

/// `tackle tools call NAME --json -` with `args` on stdin (the longest path is over the 128 KiB
/// an argv string may hold).
fn call(workspace: &std::path::Path, name: &str, args: &Value) -> (Option<i32>, Value) {
    let mut child = Command::new(TACKLE)
        .args(["tools", "call", name, "-", "--json", "--workspace"])
        .arg(workspace)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(args.to_string().as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let answer = serde_json::from_str(&stdout).unwrap_or_else(|err| {
        panic!("{err}: status {:?}, stdout {stdout}, stderr {}", out.status, String::from_utf8_lossy(&out.stderr))
    });
    (out.status.code(), answer)
}

#[test]
fn tools_call_answers_the_jsonpath_attacks_with_an_error() {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("f.json"), "{\"a\": 1}\n").unwrap();
    let [parens, filters, calls] = attack_paths();
    for (path, expected) in [
        (parens, "1001 levels deep; json_edit_tool accepts at most 32"),
        (filters, "600 levels deep; json_edit_tool accepts at most 32"),
        (calls, "bytes long; json_edit_tool accepts at most 4096"),
    ] {
        let (code, answer) = call(workspace.path(), "json_edit_tool", &view(&path));
        assert_eq!(code, Some(1), "{answer}");
        assert_eq!(answer["is_error"], true, "{answer}");
        assert!(answer["output"].as_str().unwrap().contains(expected), "{answer}");
    }
    let (code, answer) = call(workspace.path(), "json_edit_tool", &view("$.a"));
    assert_eq!((code, &answer["output"]), (Some(0), &json!("JSONPath '$.a' matches:\n1")));
}

/// The answer to request `id` of `session` for a `json_edit_tool` call (`raw_args` is the
/// arguments' JSON text, sent as is).
fn edit_call(serve: &HttpServe, session: &str, id: i64, raw_args: &str) -> Value {
    let body = format!(
        r#"{{"jsonrpc": "2.0", "id": {id}, "method": "tools/call", "params": {{"name": "json_edit_tool", "arguments": {raw_args}}}}}"#
    );
    let (_, _, answer) = serve.post(&[("Mcp-Session-Id", session)], &body);
    HttpServe::messages(&answer)
        .into_iter()
        .find(|m| m["id"] == json!(id) || m.get("error").is_some())
        .expect("no answer")
}

#[test]
fn an_mcp_session_sending_the_attacks_leaves_the_server_and_other_sessions_working() {
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("f.json"), "{\"a\": 1}\n").unwrap();
    let mut serve = HttpServe::start(workspace.path(), &["--tools", "json_edit_tool"]);
    let (attacker, bystander) = (serve.open_session(&[]), serve.open_session(&[]));
    let text = |answer: &Value| answer["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();

    let mut id = 1;
    for path in attack_paths() {
        let answer = edit_call(&serve, &attacker, id, &view(&path).to_string());
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        assert!(text(&answer).contains("json_edit_tool accepts at most"), "{answer}");
        id += 1;
    }
    // Arguments nested past the JSON limit are refused whole (a JSON-RPC error), within it the
    // tool's own schema check answers.
    let deep = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let answer = edit_call(&serve, &attacker, id, &format!(r#"{{"operation": "view", "file_path": {}}}"#, deep(2000)));
    let error = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(error.starts_with("Parse error: arrays and objects nested deeper than 127 levels"), "{answer}");
    id += 1;
    let answer = edit_call(&serve, &attacker, id, &format!(r#"{{"operation": "view", "file_path": {}}}"#, deep(100)));
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(serve.child.try_wait().unwrap().is_none(), "the server died");

    let answer = edit_call(&serve, &bystander, 1, &view("$.a").to_string());
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert_eq!(text(&answer), "JSONPath '$.a' matches:\n1");
    let answer = edit_call(&serve, &attacker, id + 1, &view("$.a").to_string());
    assert_eq!(text(&answer), "JSONPath '$.a' matches:\n1", "the attacker's own session goes on too");
}

/// A pipe whose read end is already closed: every write to it fails with EPIPE.
fn closed_pipe() -> std::io::PipeWriter {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    writer
}

#[test]
fn a_closed_stderr_loses_the_message_not_the_process() {
    // The pipeline of the issue (its reader may still be open when tackle writes; the next
    // runs close stderr for sure).
    let out = Command::new("bash")
        .args(["-c", r#""$0" tools call x '{}' 2>&1 | (exec 0<&-; true); exit "${PIPESTATUS[0]}""#, TACKLE])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");

    // An unknown tool: the refusal goes to stderr, the exit code stays the contract's.
    let status = Command::new(TACKLE)
        .args(["tools", "call", "x", "{}"])
        .stdout(closed_pipe())
        .stderr(closed_pipe())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(2), "{status:?}");

    // A successful call that logs at debug level: the log is lost, the answer is not.
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("f.json"), "{\"a\": 1}\n").unwrap();
    let out = Command::new(TACKLE)
        .args(["tools", "call", "json_edit_tool", &view("$.a").to_string(), "--workspace"])
        .arg(workspace.path())
        .env("TACKLE_LOG", "debug")
        .stderr(closed_pipe())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "JSONPath '$.a' matches:\n1\n");

    // A usage error from the argument parser.
    let status = Command::new(TACKLE).arg("--no-such-flag").stderr(closed_pipe()).status().unwrap();
    assert_eq!(status.code(), Some(2), "{status:?}");
}
