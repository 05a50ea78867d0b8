//! The client against real MCP servers (docs/mcp.md#tests): server-everything over stdio and
//! streamable HTTP, server-filesystem, mcp-server-git and mcp-server-time. Names, calls,
//! structured results, errors, progress, a server killed mid-call and restarted, task-only
//! tools skipped.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;
use support::client::{Imported, import_in, stdio};
use support::peers::{self, repo_root};
use tackle_mcp::client::config::{Endpoint, ServerConfig};
use tokio_util::sync::CancellationToken;

fn everything() -> Option<PathBuf> {
    peers::npm_file("@modelcontextprotocol/server-everything/dist/index.js")
}

fn venv_bin(name: &str) -> Option<PathBuf> {
    let path = repo_root().join(".venv-mcp/bin").join(name);
    path.exists().then_some(path)
}

fn names_of(names: &[String], server: &str) -> Vec<String> {
    let prefix = format!("mcp__{server}__");
    names.iter().filter(|n| n.starts_with(&prefix)).map(|n| n[prefix.len()..].to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn all_four_servers_import_with_the_expected_names() {
    let everything = require!(everything(), "server-everything");
    let filesystem =
        require!(peers::npm_file("@modelcontextprotocol/server-filesystem/dist/index.js"), "server-filesystem");
    let git = require!(venv_bin("mcp-server-git"), "mcp-server-git");
    let time = require!(venv_bin("mcp-server-time"), "mcp-server-time");
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().to_path_buf();
    std::fs::write(ws.join("notes.txt"), "filesystem peer\n").unwrap();
    let init = std::process::Command::new("git").args(["init", "-q", "-b", "main"]).current_dir(&ws).status().unwrap();
    assert!(init.success());
    let configs = vec![
        stdio("everything", "node", &[everything.to_str().unwrap(), "stdio"], &ws),
        stdio("filesystem", "node", &[filesystem.to_str().unwrap(), ws.to_str().unwrap()], &ws),
        stdio("git", git.to_str().unwrap(), &["--repository", ws.to_str().unwrap()], &ws),
        stdio("time", time.to_str().unwrap(), &["--local-timezone", "UTC"], &ws),
    ];
    let imported = import_in(workspace, configs).await;
    assert_eq!(
        imported.notices,
        [
            "MCP server 'everything': tool 'simulate-research-query' can only run as an MCP task, which Tackle does not support yet; it was skipped."
        ]
    );
    let names = imported.names();
    assert_eq!(
        names_of(&names, "everything"),
        [
            "echo",
            "get-annotated-message",
            "get-env",
            "get-resource-links",
            "get-resource-reference",
            "get-structured-content",
            "get-sum",
            "get-tiny-image",
            "gzip-file-as-resource",
            "toggle-simulated-logging",
            "toggle-subscriber-updates",
            "trigger-long-running-operation",
            // Offered to clients that declare elicitation, as Tackle does.
            "trigger-elicitation-request"
        ]
    );
    assert!(names.contains(&"mcp__everything__get-sum".to_owned()), "a dash stays");
    assert_eq!(names_of(&names, "filesystem").len(), 14);
    assert!(names_of(&names, "filesystem").contains(&"read_text_file".to_owned()));
    assert_eq!(names_of(&names, "git").len(), 12);
    assert!(names_of(&names, "git").iter().all(|n| n.starts_with("git_")));
    assert_eq!(names_of(&names, "time"), ["get_current_time", "convert_time"]);
    // Untrusted servers' read-only hints do not make their tools read-only.
    assert!(!imported.registry.get("mcp__filesystem__read_text_file").unwrap().spec.annotations.read_only);

    let (output, _) = imported.call("mcp__everything__echo", json!({"message": "hi"})).await;
    assert_eq!((output.is_error, output.text_content()), (false, "Echo: hi".to_owned()));
    // Nobody to ask: the form is declined (the hub's default).
    let (output, _) = imported.call("mcp__everything__trigger-elicitation-request", json!({})).await;
    assert!(output.text_content().to_lowercase().contains("decline"), "{}", output.text_content());
    let (output, _) = imported.call("mcp__everything__get-sum", json!({"a": 2, "b": 3})).await;
    assert!(output.text_content().contains('5'), "{}", output.text_content());
    let (output, _) = imported.call("mcp__everything__get-sum", json!({"a": "x", "b": 3})).await;
    assert!(output.is_error && output.meta.rejected, "Tackle's own validation catches it first");
    let (output, _) = imported.call("mcp__everything__get-structured-content", json!({"location": "New York"})).await;
    assert!(!output.is_error, "{}", output.text_content());
    assert!(output.structured.as_ref().is_some_and(|s| s.get("temperature").is_some()), "{:?}", output.structured);
    let (output, _) = imported.call("mcp__everything__get-tiny-image", json!({})).await;
    assert!(output.text_content().contains("[image: image/png, "), "{}", output.text_content());

    let ctx_session = imported.session();
    let ctx = ctx_session.context("c1", "x", CancellationToken::new());
    let output = imported.hub.connection("everything").unwrap().call("nope", json!({}), &ctx).await.unwrap();
    assert!(output.is_error);
    assert!(output.text_content().contains("nope"), "{}", output.text_content());

    let (output, _) = imported.call("mcp__filesystem__read_text_file", json!({"path": ws.join("notes.txt")})).await;
    assert_eq!((output.is_error, output.text_content()), (false, "filesystem peer\n".to_owned()));
    assert_eq!(output.structured, Some(json!({"content": "filesystem peer\n"})));
    let (output, _) = imported.call("mcp__filesystem__read_text_file", json!({"path": "/etc/hostname"})).await;
    assert!(output.is_error, "outside the allowed directory: {}", output.text_content());

    let (output, _) = imported.call("mcp__git__git_status", json!({"repo_path": ws})).await;
    assert!(!output.is_error && output.text_content().contains("On branch main"), "{}", output.text_content());

    let (output, _) = imported.call("mcp__time__get_current_time", json!({"timezone": "UTC"})).await;
    assert!(!output.is_error, "{}", output.text_content());
    assert_eq!(output.structured.as_ref().unwrap()["timezone"], "UTC");
    imported.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_reports_progress_and_survives_being_killed_mid_call() {
    let everything = require!(everything(), "server-everything");
    let workspace = tempfile::tempdir().unwrap();
    let config = stdio("everything", "node", &[everything.to_str().unwrap(), "stdio"], workspace.path());
    let imported = import_in(workspace, vec![config]).await;
    let (output, progress) =
        imported.call("mcp__everything__trigger-long-running-operation", json!({"duration": 2, "steps": 4})).await;
    assert!(!output.is_error, "{}", output.text_content());
    let seen: Vec<(f64, Option<f64>)> = progress.iter().map(|p| (p.progress, p.total)).collect();
    assert_eq!(seen, [(1.0, Some(4.0)), (2.0, Some(4.0)), (3.0, Some(4.0)), (4.0, Some(4.0))]);

    let connection = imported.hub.connection("everything").unwrap();
    let pid = connection.pid().await.unwrap();
    let session = imported.session();
    let cancel = CancellationToken::new();
    let long = support::client::call_in(
        &session,
        "mcp__everything__trigger-long-running-operation",
        json!({"duration": 10, "steps": 10}),
        &cancel,
    );
    let kill = async {
        tokio::time::sleep(Duration::from_millis(700)).await;
        let killed = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status().unwrap();
        assert!(killed.success());
    };
    let ((output, _), ()) = tokio::join!(long, kill);
    assert!(output.is_error);
    assert_eq!(
        output.text_content(),
        "MCP server everything exited unexpectedly (killed by signal 9); it will be restarted on the next call."
    );
    let (output, _) = imported.call("mcp__everything__echo", json!({"message": "again"})).await;
    assert_eq!(output.text_content(), "Echo: again");
    assert_ne!(connection.pid().await.unwrap(), pid, "a new process");
    imported.hub.shutdown().await;
}

/// server-everything's streamable HTTP server on a free loopback port, forced onto
/// 127.0.0.1 by the preload; killed on drop.
struct HttpEverything {
    child: tokio::process::Child,
    url: String,
}

async fn http_everything(script: &std::path::Path) -> HttpEverything {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    http_everything_on(script, port).await
}

/// server-everything over HTTP on a free port, imported as `ev` (30 s call timeout), with one
/// echo call that works; also the port, to start it again on the same URL.
async fn imported_http_everything(script: &std::path::Path) -> (HttpEverything, u16, Imported) {
    let server = http_everything(script).await;
    let port: u16 = server.url.rsplit(':').next().unwrap().trim_end_matches("/mcp").parse().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let mut config: ServerConfig = stdio("ev", "unused", &[], workspace.path());
    config.endpoint =
        Endpoint::Http { url: server.url.clone(), headers: Default::default(), oauth: Default::default() };
    config.call_timeout = Duration::from_secs(30);
    let imported = import_in(workspace, vec![config]).await;
    let (output, _) = imported.call("mcp__ev__echo", json!({"message": "before"})).await;
    assert_eq!(output.text_content(), "Echo: before");
    (server, port, imported)
}

async fn http_everything_on(script: &std::path::Path, port: u16) -> HttpEverything {
    let preload = repo_root().join("crates/tackle-mcp/tests/peers/loopback.cjs");
    let child = tokio::process::Command::new("node")
        .arg("--require")
        .arg(&preload)
        .arg(script)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        assert!(std::time::Instant::now() < deadline, "server-everything did not listen on {port}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    HttpEverything { child, url: format!("http://127.0.0.1:{port}/mcp") }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_streamable_http() {
    let script = require!(everything(), "server-everything");
    let server = http_everything(&script).await;
    let workspace = tempfile::tempdir().unwrap();
    let mut config: ServerConfig = stdio("everything", "unused", &[], workspace.path());
    config.endpoint = Endpoint::Http {
        url: server.url.clone(),
        headers: [("X-Test".to_owned(), "1".to_owned())].into(),
        oauth: Default::default(),
    };
    let imported = import_in(workspace, vec![config]).await;
    assert_eq!(
        imported.notices,
        [
            "MCP server 'everything': tool 'simulate-research-query' can only run as an MCP task, which Tackle does not support yet; it was skipped."
        ]
    );
    // 12, and trigger-elicitation-request (Tackle declares elicitation).
    assert_eq!(names_of(&imported.names(), "everything").len(), 13);
    let (output, _) = imported.call("mcp__everything__echo", json!({"message": "over http"})).await;
    assert_eq!(output.text_content(), "Echo: over http");
    let (output, progress) =
        imported.call("mcp__everything__trigger-long-running-operation", json!({"duration": 1, "steps": 4})).await;
    assert!(!output.is_error, "{}", output.text_content());
    assert_eq!(progress.iter().map(|p| p.progress).collect::<Vec<_>>(), [1.0, 2.0, 3.0, 4.0]);
    imported.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_killed_mid_call_is_a_crash_and_one_back_on_the_same_url_is_reconnected() {
    let script = require!(everything(), "server-everything");
    let (mut server, port, imported) = imported_http_everything(&script).await;

    let session = imported.session();
    let cancel = CancellationToken::new();
    let long = support::client::call_in(
        &session,
        "mcp__ev__trigger-long-running-operation",
        json!({"duration": 20, "steps": 20}),
        &cancel,
    );
    let started = std::time::Instant::now();
    let kill = async {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        server.child.kill().await.unwrap();
    };
    let ((output, _), ()) = tokio::join!(long, kill);
    let took = started.elapsed();
    assert!(output.is_error);
    let text = output.text_content();
    assert!(
        text.starts_with("MCP server ev exited unexpectedly (")
            && text.ends_with("); it will be restarted on the next call."),
        "{text}"
    );
    assert!(!text.contains("rmcp::") && !text.contains("WorkerTransport"), "no Rust types: {text}");
    assert!(took < Duration::from_secs(10), "the crash must end the call promptly, not at its timeout: {took:?}");

    // Still down: the next call reconnects, fails, and says why in words.
    let (output, _) = imported.call("mcp__ev__echo", json!({"message": "down"})).await;
    let text = output.text_content();
    assert!(output.is_error && text.starts_with("MCP server ev "), "{text}");
    assert!(text.contains("connection refused"), "{text}");
    assert!(!text.contains("rmcp::") && !text.contains("WorkerTransport"), "no Rust types: {text}");

    // Back on the same URL: the next call reconnects with a new session.
    let _server = http_everything_on(&script, port).await;
    let (output, _) = imported.call("mcp__ev__echo", json!({"message": "after"})).await;
    assert_eq!(output.text_content(), "Echo: after");
    imported.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_server_restarted_between_calls_never_leaves_a_call_waiting() {
    let script = require!(everything(), "server-everything");
    let (mut server, port, imported) = imported_http_everything(&script).await;

    // Killed and back between two calls: the old session is gone, and a call never waits for
    // its timeout; at worst one call gets the crash message, and the next one works.
    server.child.kill().await.unwrap();
    let _server = http_everything_on(&script, port).await;
    let mut answers = Vec::new();
    for attempt in 0..2 {
        let started = std::time::Instant::now();
        let (output, _) = imported.call("mcp__ev__echo", json!({"message": attempt.to_string()})).await;
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}: {}", started.elapsed(), output.text_content());
        answers.push(output.text_content());
    }
    // The old session is unknown to the new process: at worst one call gets the crash
    // message, and the next one works in a new session.
    assert!(answers[0] == "Echo: 0" || answers[1] == "Echo: 1", "{answers:?}");
    imported.hub.shutdown().await;
}
