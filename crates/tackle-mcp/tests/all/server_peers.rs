//! Real MCP clients against the server library, served over streamable HTTP on 127.0.0.1
//! with test tools whose progress and cancellation the tests can observe: the official
//! Python SDK (`mcp==2.3.0`, legacy and auto modes) and the MCP Inspector CLI.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use pretty_assertions::assert_eq;
use serde_json::json;
use support::peers::{self, inspect, probe};
use support::{Probe, server_with};
use tackle_core::Executor;
use tackle_core::permission::PermissionMode;
use tackle_mcp::server::ServerOptions;
use tackle_policy::permission::ModePolicy;

async fn serve(options: ServerOptions) -> (String, Arc<Probe>, tokio::sync::oneshot::Sender<()>, tempfile::TempDir) {
    serve_with(options, Executor::default()).await
}

async fn serve_with(
    options: ServerOptions,
    executor: Executor,
) -> (String, Arc<Probe>, tokio::sync::oneshot::Sender<()>, tempfile::TempDir) {
    let probe = Arc::new(Probe::default());
    let dir = tempfile::tempdir().unwrap();
    let server = server_with(&probe, dir.path(), options, executor);
    let bound = server.bind_http("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let url = format!("http://{}/mcp", bound.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(bound.run(async move {
        let _ = stopped.await;
    }));
    (url, probe, stop, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_gets_progress_in_both_modes() {
    let python = require!(peers::python(), "the Python MCP SDK");
    let (url, _probe, _stop, _dir) = serve(ServerOptions::default()).await;
    for mode in ["legacy", "auto"] {
        let args = r#"{"steps": 4, "step_ms": 150}"#;
        let out = probe(
            &python,
            &["--mode", mode, "--no-list", "--url", &url, "--call", "slow", "--args", args, "--progress"],
        )
        .await;
        assert_eq!(out.code, 0, "{mode}: {out:?}");
        let doc = out.json();
        assert_eq!(doc["protocolVersion"], "2025-11-25", "{mode}");
        assert_eq!(doc["call"]["content"], json!([{"type": "text", "text": "done after 4 steps"}]));
        assert_eq!(doc["call"]["isError"], false);
        let progress: Vec<f64> =
            doc["progress"].as_array().unwrap().iter().map(|p| p["progress"].as_f64().unwrap()).collect();
        assert_eq!(progress, [1.0, 2.0, 3.0, 4.0], "{mode}");
        assert_eq!(doc["progress"][0]["total"], 4.0);
        assert_eq!(doc["progress"][0]["message"], "step 1");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_cancels_a_call_and_the_tool_stops() {
    let python = require!(peers::python(), "the Python MCP SDK");
    let (url, probe_state, _stop, _dir) = serve(ServerOptions::default()).await;
    let args = r#"{"steps": 300, "step_ms": 100}"#;
    let out = probe(
        &python,
        &[
            "--no-list",
            "--url",
            &url,
            "--call",
            "slow",
            "--args",
            args,
            "--cancel-after",
            "0.5",
            "--then-call",
            "echo",
            "--then-args",
            r#"{"text": "still here"}"#,
        ],
    )
    .await;
    assert_eq!(out.code, 0, "{out:?}");
    let doc = out.json();
    assert_eq!(doc["cancelled"], true);
    assert!(doc["cancel_seconds"].as_f64().unwrap() < 5.0);
    assert_eq!(doc["then"]["content"][0]["text"], "Echo: still here");
    assert!(probe_state.cancelled.load(Ordering::SeqCst), "the tool never saw the cancellation");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_python_sdk_follows_pages_and_reads_errors() {
    let python = require!(peers::python(), "the Python MCP SDK");
    let (url, _probe, _stop, _dir) = serve(ServerOptions { page_size: Some(2), ..ServerOptions::default() }).await;
    let out = probe(&python, &["--url", &url, "--call", "fail", "--fail-on-error"]).await;
    assert_eq!(out.code, 4, "{out:?}");
    let doc = out.json();
    assert_eq!(doc["pages"], 3);
    let names: Vec<&str> = doc["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["sequentialthinking", "task_done", "echo", "slow", "fail"]);
    assert_eq!(doc["call"]["isError"], true);
    assert_eq!(doc["call"]["content"][0]["text"], "it failed, as it always does");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inspector_lists_and_calls_over_http() {
    let inspector = require!(peers::inspector(), "the MCP Inspector");
    let (url, _probe, _stop, _dir) = serve(ServerOptions::default()).await;
    let out = inspect(&inspector, &[&url, "--method", "tools/list", "--format", "json", "--strict"]).await;
    assert_eq!(out.code, 0, "{out:?}");
    let tools = out.json()["result"]["tools"].as_array().unwrap().len();
    assert_eq!(tools, 5);
    for era in ["legacy", "auto"] {
        let out = inspect(
            &inspector,
            &[
                &url,
                "--protocol-era",
                era,
                "--method",
                "tools/call",
                "--tool-name",
                "echo",
                "--tool-args-json",
                r#"{"text": "hi"}"#,
                "--format",
                "json",
            ],
        )
        .await;
        assert_eq!(out.code, 0, "{era}: {out:?}");
        assert_eq!(out.json()["result"]["structuredContent"], json!({"echo": "hi"}));
    }
    let out = inspect(&inspector, &[&url, "--method", "tools/call", "--tool-name", "nope", "--format", "json"]).await;
    assert_eq!(out.code, 5, "{out:?}");
    assert!(out.stderr.contains("\"tool_not_found\""), "{}", out.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_approvals_on_the_clients_user_is_asked_through_elicitation() {
    let python = require!(peers::python(), "the Python MCP SDK");
    let executor = Executor::default().with_policy(Arc::new(ModePolicy::new(PermissionMode::Default)));
    let (url, _probe, _stop, _dir) =
        serve_with(ServerOptions { approvals: true, ..ServerOptions::default() }, executor).await;
    let slow = r#"{"steps": 1, "step_ms": 10}"#;
    let echo = r#"{"text": "read-only"}"#;
    let base = [
        "--no-list",
        "--url",
        url.as_str(),
        "--call",
        "slow",
        "--args",
        slow,
        "--then-call",
        "echo",
        "--then-args",
        echo,
    ];

    let out = probe(&python, &[&base[..], &["--elicit", "accept"]].concat()).await;
    assert_eq!(out.code, 0, "{out:?}");
    let doc = out.json();
    assert_eq!(doc["call"]["content"][0]["text"], "done after 1 steps");
    assert_eq!(doc["then"]["content"][0]["text"], "Echo: read-only");
    let prompts = doc["prompts"].as_array().unwrap();
    assert_eq!(prompts.len(), 1, "only the call that is not read-only asks: {prompts:?}");
    assert!(prompts[0].as_str().unwrap().starts_with("Allow the tool call slow {"), "{prompts:?}");

    let out = probe(&python, &[&base[..], &["--elicit", "decline"]].concat()).await;
    let doc = out.json();
    assert_eq!(doc["call"]["isError"], true);
    assert_eq!(doc["call"]["content"][0]["text"], "The user declined the slow call.");

    let out = probe(&python, &base).await;
    let doc = out.json();
    assert_eq!(doc["call"]["isError"], true);
    let text = doc["call"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("slow needs approval, and this MCP client cannot be asked"), "{text}");
    assert!(text.contains("--permission-mode bypass"), "{text}");
    assert_eq!(doc["then"]["isError"], false);
}
