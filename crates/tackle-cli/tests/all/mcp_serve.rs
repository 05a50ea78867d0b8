//! `tackle mcp serve`, the real binary, against real MCP clients: the official Python SDK
//! (legacy and auto modes) and the MCP Inspector CLI, over stdio and streamable HTTP; plus
//! the command's own contract (usage errors, the default tool list, exit on end of input).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::peers;
use crate::support::serve;

use std::io::Write as _;
use std::process::{Command, Stdio};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use serve::{HttpServe, TACKLE};

fn thought() -> String {
    json!({"thought": "plan", "next_thought_needed": false, "thought_number": 1, "total_thoughts": 1}).to_string()
}

fn names(doc: &Value) -> Vec<&str> {
    doc["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_lists_and_calls_over_stdio_in_both_modes() {
    let python = require!(peers::python(), "the Python MCP SDK");
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().to_str().unwrap();
    for mode in ["legacy", "auto"] {
        let args = thought();
        let out = peers::probe(
            &python,
            &[
                "--mode",
                mode,
                "--call",
                "sequentialthinking",
                "--args",
                &args,
                "--stdio",
                TACKLE,
                "mcp",
                "serve",
                "--workspace",
                ws,
                "--tools",
                "sequentialthinking,task_done",
                "--page-size",
                "1",
            ],
        )
        .await;
        assert_eq!(out.code, 0, "{mode}: {out:?}");
        let doc = out.json();
        assert_eq!(doc["protocolVersion"], "2025-11-25");
        assert_eq!(doc["serverInfo"], json!({"name": "tackle", "version": env!("CARGO_PKG_VERSION")}));
        assert!(doc["instructions"].as_str().unwrap().contains(ws));
        assert_eq!(doc["pages"], 2);
        assert_eq!(names(&doc), ["sequentialthinking", "task_done"]);
        let thinking = &doc["tools"][0];
        assert_eq!(
            thinking["annotations"],
            json!({"title": "Sequential thinking", "readOnlyHint": true, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false})
        );
        assert_eq!(
            thinking["inputSchema"]["required"],
            json!(["thought", "next_thought_needed", "thought_number", "total_thoughts"])
        );
        // The SDK validated structuredContent against outputSchema before returning it.
        assert_eq!(
            doc["call"]["structuredContent"],
            json!({"thought_number": 1, "total_thoughts": 1, "next_thought_needed": false, "branches": [], "thought_history_length": 1})
        );
        assert_eq!(doc["call"]["isError"], false);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_over_http_in_both_modes_and_the_unknown_tool_error() {
    let python = require!(peers::python(), "the Python MCP SDK");
    let workspace = tempfile::tempdir().unwrap();
    let serve = HttpServe::start(workspace.path(), &["--tools", "sequentialthinking,task_done"]);
    for mode in ["legacy", "auto"] {
        let args = thought();
        let out = peers::probe(
            &python,
            &["--mode", mode, "--url", &serve.url, "--call", "sequentialthinking", "--args", &args],
        )
        .await;
        assert_eq!(out.code, 0, "{mode}: {out:?}");
        let doc = out.json();
        assert_eq!(doc["protocolVersion"], "2025-11-25");
        assert_eq!(names(&doc), ["sequentialthinking", "task_done"]);
        assert_eq!(doc["call"]["structuredContent"]["thought_history_length"], 1, "each connection is a new session");
        assert!(!out.stderr.contains("Session termination failed"), "{}", out.stderr);
    }
    let out = peers::probe(&python, &["--no-list", "--url", &serve.url, "--call", "nope"]).await;
    assert_eq!(out.code, 2, "{out:?}");
    assert_eq!(
        out.json(),
        json!({"error": {"code": -32602, "message": "Unknown tool: nope", "data": {"available": ["sequentialthinking", "task_done"]}}})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inspector_lists_and_calls_over_stdio_and_http() {
    let inspector = require!(peers::inspector(), "the MCP Inspector");
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().to_str().unwrap();
    let stdio = [TACKLE, "mcp", "serve", "--workspace", ws, "--tools", "sequentialthinking,task_done"];
    let out =
        peers::inspect(&inspector, &[&stdio[..], &["--method", "tools/list", "--format", "json", "--strict"]].concat())
            .await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.json()["result"]["tools"].as_array().unwrap().len(), 2);
    let args = thought();
    let call =
        ["--method", "tools/call", "--tool-name", "sequentialthinking", "--tool-args-json", &args, "--format", "json"];
    let out = peers::inspect(&inspector, &[&stdio[..], &call[..]].concat()).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.json()["result"]["structuredContent"]["thought_number"], 1);

    let serve = HttpServe::start(workspace.path(), &["--tools", "sequentialthinking,task_done"]);
    let out = peers::inspect(&inspector, &[&[serve.url.as_str()][..], &call[..]].concat()).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.json()["result"]["isError"], false);
    let out = peers::inspect(&inspector, &[serve.url.as_str(), "--method", "tools/call", "--tool-name", "nope"]).await;
    assert_eq!(out.code, 5, "{out:?}");
    assert!(out.stderr.contains("tool_not_found"), "{}", out.stderr);
}

#[test]
fn a_non_loopback_address_is_a_usage_error() {
    for addr in ["0.0.0.0:8080", "10.1.2.3:80", "example.com:80", "nonsense"] {
        let out = Command::new(TACKLE).args(["mcp", "serve", "--http", addr]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{addr}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("--http takes a loopback address"), "{stderr}");
    }
    let out = Command::new(TACKLE).args(["mcp", "serve", "--permission-mode", "yolo"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = Command::new(TACKLE).args(["mcp", "serve", "--page-size", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Talks to `tackle mcp serve` over its stdio with raw lines.
fn stdio_session(args: &[&str], lines: &[Value]) -> (Vec<Value>, i32) {
    let workspace = tempfile::tempdir().unwrap();
    let mut child = Command::new(TACKLE)
        .args(["mcp", "serve", "--workspace"])
        .arg(workspace.path())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let messages = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|err| panic!("stdout carries a non-JSON line ({err}): {line}"))
        })
        .collect();
    (messages, out.status.code().unwrap())
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
}

#[test]
fn end_of_input_ends_the_server_with_exit_0_and_stdout_carries_only_json_rpc() {
    let (messages, code) = stdio_session(
        &["--tools", "sequentialthinking,task_done"],
        &[initialize(), json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})],
    );
    assert_eq!(code, 0);
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(messages[1]["result"]["tools"].as_array().unwrap().len(), 2);
}

#[test]
fn the_default_tool_list_leaves_out_loop_control_tools() {
    let (messages, code) =
        stdio_session(&[], &[initialize(), json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})]);
    assert_eq!(code, 0);
    let names: Vec<&str> =
        messages[1]["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(
        !names.iter().any(|n| ["task_done", "sequentialthinking", "tool_search", "subagent"].contains(n)),
        "{names:?}"
    );
    // Named explicitly, a loop-control tool is served.
    let (messages, _) = stdio_session(
        &["--tools", "sequentialthinking"],
        &[initialize(), json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})],
    );
    assert_eq!(messages[1]["result"]["tools"][0]["name"], "sequentialthinking");
    // An unknown name is a usage error.
    let out = Command::new(TACKLE).args(["mcp", "serve", "--tools", "no_such_tool"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn plus_and_minus_entries_adjust_the_default_tool_list() {
    let list = |args: &[&str]| {
        let (messages, code) =
            stdio_session(args, &[initialize(), json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})]);
        assert_eq!(code, 0);
        messages[1]["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    };
    let default = list(&[]);
    assert!(!default.contains(&"apply_patch".to_owned()) && default.contains(&"bash".to_owned()), "{default:?}");
    let adjusted = list(&["--tools", "+apply_patch,-bash"]);
    let mut expected: Vec<String> = default.iter().filter(|name| *name != "bash").cloned().collect();
    expected.push("apply_patch".to_owned());
    let mut sorted = adjusted;
    sorted.sort();
    expected.sort();
    assert_eq!(sorted, expected);
}

#[test]
fn every_built_in_is_listed_with_all_annotations_and_a_closed_world() {
    let (messages, code) =
        stdio_session(&["--tools", "all"], &[initialize(), json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})]);
    assert_eq!(code, 0);
    let tools = messages[1]["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for expected in ["bash", "background_run", "read_file", "str_replace_based_edit_tool", "task_done"] {
        assert!(names.contains(&expected), "{expected} missing from {names:?}");
    }
    for tool in tools {
        let annotations = &tool["annotations"];
        for hint in ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] {
            assert!(annotations[hint].is_boolean(), "{}: {hint} in {annotations}", tool["name"]);
        }
        // docs/mcp.md#tools: true for the tools that reach the internet, false for every other
        // built-in, bash included.
        let open = matches!(tool["name"].as_str(), Some("web_fetch" | "web_search"));
        assert_eq!(annotations["openWorldHint"], open, "{}", tool["name"]);
        assert_eq!(annotations["title"], tool["title"], "{}", tool["name"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_tools_work_through_the_python_sdk_and_the_inspector_on_both_transports() {
    let python = require!(peers::python(), "the Python MCP SDK");
    let inspector = require!(peers::inspector(), "the MCP Inspector");
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().to_str().unwrap();
    std::fs::write(workspace.path().join("a.txt"), "hello\n").unwrap();
    // The server as a command (the Python probe takes it after `--stdio`, the Inspector as is).
    let stdio = [TACKLE, "mcp", "serve", "--workspace", ws];

    // stdio, legacy: read_file.
    let read = json!({"file_path": "a.txt"}).to_string();
    let out = peers::probe(
        &python,
        &[&["--no-list", "--call", "read_file", "--args", &read, "--stdio"][..], &stdio].concat(),
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    let doc = out.json();
    assert_eq!(doc["call"]["isError"], false);
    assert_eq!(doc["call"]["content"][0]["text"], "     1\thello");

    // HTTP, auto: view then str_replace in one session (read-before-edit holds per session).
    let serve = HttpServe::start(workspace.path(), &[]);
    let view = json!({"command": "view", "path": "a.txt"}).to_string();
    let replace = json!({"command": "str_replace", "path": "a.txt", "old_str": "hello", "new_str": "bye"}).to_string();
    let out = peers::probe(
        &python,
        &[
            "--mode",
            "auto",
            "--no-list",
            "--url",
            &serve.url,
            "--call",
            "str_replace_based_edit_tool",
            "--args",
            &view,
            "--then-call",
            "str_replace_based_edit_tool",
            "--then-args",
            &replace,
        ],
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    let doc = out.json();
    assert_eq!(doc["call"]["isError"], false, "{doc}");
    assert_eq!(doc["then"]["isError"], false, "{doc}");
    assert_eq!(std::fs::read_to_string(workspace.path().join("a.txt")).unwrap(), "bye\n");

    // grep, over stdio in auto mode: structured output becomes structuredContent.
    let grep = json!({"pattern": "by."}).to_string();
    let out = peers::probe(
        &python,
        &[&["--mode", "auto", "--no-list", "--call", "grep", "--args", &grep, "--stdio"][..], &stdio].concat(),
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    let doc = out.json();
    assert_eq!(doc["call"]["isError"], false);
    assert_eq!(doc["call"]["content"][0]["text"], "Found 1 files\na.txt");
    assert_eq!(
        doc["call"]["structuredContent"],
        json!({"mode": "files_with_matches", "filenames": ["a.txt"], "num_files": 1})
    );

    // A path outside the workspace is refused as a tool error, not a protocol error.
    let outside = json!({"file_path": "/etc/passwd"}).to_string();
    let out =
        peers::probe(&python, &["--no-list", "--url", &serve.url, "--call", "read_file", "--args", &outside]).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.json()["call"]["isError"], true);

    // The Inspector, as the spec writes it, on both transports.
    let call =
        ["--method", "tools/call", "--tool-name", "read_file", "--tool-arg", "file_path=a.txt", "--format", "json"];
    for (n, target) in [&stdio[..], &[serve.url.as_str()][..]].into_iter().enumerate() {
        let out = peers::inspect(&inspector, &[target, &call[..]].concat()).await;
        assert_eq!(out.code, 0, "{out:?}");
        let result = &out.json()["result"];
        assert_eq!(result["isError"], false);
        assert_eq!(result["content"][0]["text"], "     1\tbye");

        // The editor too: each Inspector call is a session of its own, so `create` (which
        // needs no earlier view).
        let path = format!("path=made-{n}.txt");
        let create = [
            "--method",
            "tools/call",
            "--tool-name",
            "str_replace_based_edit_tool",
            "--tool-arg",
            "command=create",
            "--tool-arg",
            &path,
            "--tool-arg",
            "file_text=made by the Inspector",
            "--format",
            "json",
        ];
        let out = peers::inspect(&inspector, &[target, &create[..]].concat()).await;
        assert_eq!(out.code, 0, "{out:?}");
        assert_eq!(out.json()["result"]["isError"], false, "{out:?}");
        let made = std::fs::read_to_string(workspace.path().join(format!("made-{n}.txt"))).unwrap();
        assert_eq!(made, "made by the Inspector");
    }

    // The Python SDK over stdio (legacy): view then str_replace in one session.
    let replace = json!({"command": "str_replace", "path": "a.txt", "old_str": "bye", "new_str": "ciao"}).to_string();
    let edit = "str_replace_based_edit_tool";
    let calls = ["--no-list", "--call", edit, "--args", &view, "--then-call", edit, "--then-args", &replace, "--stdio"];
    let out = peers::probe(&python, &[&calls[..], &stdio].concat()).await;
    assert_eq!(out.code, 0, "{out:?}");
    let doc = out.json();
    assert_eq!(doc["then"]["isError"], false, "{doc}");
    assert_eq!(std::fs::read_to_string(workspace.path().join("a.txt")).unwrap(), "ciao\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_through_the_python_sdk_and_the_inspector_with_progress() {
    let python = require!(peers::python(), "the Python MCP SDK");
    let inspector = require!(peers::inspector(), "the MCP Inspector");
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().canonicalize().unwrap();
    let ws = ws.to_str().unwrap();
    let serve = HttpServe::start(workspace.path(), &[]);
    let stdio = [TACKLE, "mcp", "serve", "--workspace", ws];
    let looped = json!({"command": "for i in 1 2 3; do echo $i; sleep 0.3; done"}).to_string();
    for (mode, target) in [("legacy", vec!["--stdio"]), ("auto", vec!["--url", serve.url.as_str()])] {
        let target: Vec<&str> = if target[0] == "--stdio" { [&target[..], &stdio[..]].concat() } else { target };
        let args = [&["--mode", mode, "--no-list", "--call", "bash", "--args", &looped, "--progress"][..], &target[..]]
            .concat();
        let out = peers::probe(&python, &args).await;
        assert_eq!(out.code, 0, "{mode}: {out:?}");
        let doc = out.json();
        assert_eq!(doc["call"]["isError"], false);
        assert_eq!(doc["call"]["content"][0]["text"], "1\n2\n3");
        assert_eq!(doc["call"]["structuredContent"]["exit_code"], 0);
        assert_eq!(doc["call"]["structuredContent"]["stdout"], "1\n2\n3");
        let progress: Vec<f64> =
            doc["progress"].as_array().unwrap().iter().map(|p| p["progress"].as_f64().unwrap()).collect();
        assert!(!progress.is_empty(), "{mode}: no progress");
        assert!(progress.windows(2).all(|w| w[0] < w[1]), "{mode}: {progress:?}");
        assert!(
            doc["progress"]
                .as_array()
                .unwrap()
                .iter()
                .all(|p| p["message"].as_str().is_some_and(|m| m.chars().count() <= 200))
        );
    }
    // A failing command is a result with isError, not a protocol error.
    let failing = json!({"command": "echo oops >&2; exit 3"}).to_string();
    let out = peers::probe(&python, &["--no-list", "--url", &serve.url, "--call", "bash", "--args", &failing]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let doc = out.json();
    assert_eq!(doc["call"]["isError"], true);
    assert_eq!(doc["call"]["_meta"]["tackle/exit_code"], 3);

    let pwd = [
        "--method",
        "tools/call",
        "--tool-name",
        "bash",
        "--tool-args-json",
        r#"{"command":"pwd"}"#,
        "--format",
        "json",
    ];
    for target in [&stdio[..], &[serve.url.as_str()][..]] {
        let out = peers::inspect(&inspector, &[target, &pwd[..]].concat()).await;
        assert_eq!(out.code, 0, "{out:?}");
        let result = &out.json()["result"];
        assert_eq!(result["isError"], false);
        assert_eq!(result["content"][0]["text"], ws);
    }
}

fn sleepers(marker: &str) -> usize {
    let out = Command::new("ps").args(["-eo", "args"]).output().unwrap();
    String::from_utf8_lossy(&out.stdout).lines().filter(|line| line.trim() == format!("sleep {marker}")).count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_sleep_gets_no_response_and_its_process_is_gone() {
    let python = require!(peers::python(), "the Python MCP SDK");
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().to_str().unwrap();
    let serve = HttpServe::start(workspace.path(), &[]);
    for (index, target) in
        [vec!["--url", serve.url.as_str()], vec!["--stdio", TACKLE, "mcp", "serve", "--workspace", ws]]
            .into_iter()
            .enumerate()
    {
        // A duration no other test uses, so the process can be found.
        let marker = format!("30.{}{}", std::process::id() % 1000, index);
        let sleep = json!({"command": format!("sleep {marker}")}).to_string();
        let after = json!({"command": "echo still serving"}).to_string();
        let args = [
            &[
                "--no-list",
                "--call",
                "bash",
                "--args",
                &sleep,
                "--cancel-after",
                "1",
                "--then-call",
                "bash",
                "--then-args",
                &after,
            ][..],
            &target[..],
        ]
        .concat();
        let out = peers::probe(&python, &args).await;
        assert_eq!(out.code, 0, "{out:?}");
        let doc = out.json();
        assert_eq!(doc["cancelled"], true, "the call was answered: {doc}");
        assert_eq!(doc["then"]["content"][0]["text"], "still serving");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(8);
        while sleepers(&marker) > 0 {
            assert!(std::time::Instant::now() < deadline, "sleep {marker} is still running");
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cd_in_one_http_session_is_invisible_to_another() {
    let python = require!(peers::python(), "the Python MCP SDK");
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().canonicalize().unwrap();
    std::fs::create_dir(ws.join("sub")).unwrap();
    let serve = HttpServe::start(&ws, &[]);
    let cd = json!({"command": "cd sub"}).to_string();
    let slow_pwd = json!({"command": "sleep 1; pwd"}).to_string();
    let pwd = json!({"command": "sleep 0.3; pwd"}).to_string();
    let a_args = [
        "--no-list",
        "--url",
        &serve.url,
        "--call",
        "bash",
        "--args",
        &cd,
        "--then-call",
        "bash",
        "--then-args",
        &slow_pwd,
    ];
    let b_args = ["--no-list", "--url", &serve.url, "--call", "bash", "--args", &pwd];
    let (a, b) = tokio::join!(peers::probe(&python, &a_args), peers::probe(&python, &b_args));
    assert_eq!(a.json()["then"]["content"][0]["text"], ws.join("sub").to_str().unwrap(), "{a:?}");
    assert_eq!(b.json()["call"]["content"][0]["text"], ws.to_str().unwrap(), "{b:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_file_of_an_image_is_image_content_for_the_python_sdk() {
    use base64::Engine as _;
    let python = require!(peers::python(), "the Python MCP SDK");
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().to_str().unwrap();
    let image = image::RgbImage::from_fn(3000, 2000, |x, y| image::Rgb([(x % 256) as u8, (y % 256) as u8, 90]));
    image::DynamicImage::from(image).save(workspace.path().join("shot.png")).unwrap();
    let read = json!({"file_path": "shot.png"}).to_string();
    let out = peers::probe(
        &python,
        &["--no-list", "--call", "read_file", "--args", &read, "--stdio", TACKLE, "mcp", "serve", "--workspace", ws],
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    let doc = out.json();
    let content = doc["call"]["content"].as_array().unwrap();
    assert_eq!(doc["call"]["isError"], false, "{doc}");
    assert_eq!(content.len(), 2, "{doc}");
    let line = content[0]["text"].as_str().unwrap();
    assert!(line.starts_with("shot.png: image/png 3000×2000, shown at 1313×875 (image/png, "), "{line}");
    // The SDK parsed the second part as ImageContent.
    assert_eq!((content[1]["type"].as_str(), content[1]["mimeType"].as_str()), (Some("image"), Some("image/png")));
    let bytes = base64::engine::general_purpose::STANDARD.decode(content[1]["data"].as_str().unwrap()).unwrap();
    let shown = image::load_from_memory(&bytes).unwrap();
    assert_eq!((shown.width(), shown.height()), (1313, 875));
}
