//! The three examples of `crates/tackle/examples`, run as the programs they are (cargo builds
//! them with the tests): the typed tool beside the built-ins, the agent against the scripted
//! fake LLM server, and the MCP server spoken to over stdio.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tackle_testkit::{Expect, FakeLlm, Reply, Script, Turn};

/// An example program, built beside this test binary (`target/<profile>/examples/NAME`).
fn example(name: &str) -> Command {
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let path: PathBuf = profile_dir.join("examples").join(name);
    assert!(path.exists(), "{} is not built; run the tests with cargo test or cargo nextest", path.display());
    let mut command = Command::new(path);
    command.env("TACKLE_CONFIG_DIR", "/nonexistent-tackle-config").env_remove("OPENAI_API_KEY");
    command
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README.md"), "one two three\nfour\n").unwrap();
    dir
}

#[test]
fn custom_tool_runs_beside_read_file() {
    let dir = workspace();
    let out = example("custom_tool").arg(dir.path()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines[0], "[1] 4 words in README.md");
    assert!(lines[1].starts_with("[2] ") && stdout.contains("one two three"), "{stdout}");
}

#[tokio::test(flavor = "multi_thread")]
async fn agent_runs_against_an_openai_compatible_server() {
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("Writing.").call(
            "w",
            "write_file",
            json!({"file_path": "notes.txt", "content": "done\n"}),
        ))
        .expect(Expect::last_user_contains("write the notes")),
        Turn::reply(Reply::text("Written.").call("d", "task_done", json!({}))).expect(Expect::result("w", "notes.txt")),
    ]))
    .await;
    let dir = workspace();
    let base_url = server.openai_base_url();
    let path = dir.path().to_owned();
    let out = tokio::task::spawn_blocking(move || {
        example("agent")
            .args(["--base-url", &base_url, "--model", "fake", "write the notes"])
            .arg(&path)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.starts_with("success after 2 steps"), "{stdout}");
    server.assert_clean();
    assert_eq!(std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(), "done\n");
}

#[test]
fn mcp_server_answers_over_stdio() {
    let dir = workspace();
    let mut child = example("mcp_server")
        .arg(dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    let mut receive = || -> Value {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap()
    };
    send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}));
    let init = receive();
    assert_eq!(init["result"]["protocolVersion"], json!("2025-06-18"), "{init}");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut ask = |message: Value| -> Value {
        send(message);
        receive()
    };
    let tools = ask(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let names: Vec<&str> =
        tools["result"]["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["read_file", "glob", "grep"]);
    let read = ask(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "read_file", "arguments": {"file_path": "README.md"}}}));
    assert_eq!(read["result"]["isError"], json!(false), "{read}");
    assert!(read["result"]["content"][0]["text"].as_str().unwrap().contains("one two three"), "{read}");
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
}
