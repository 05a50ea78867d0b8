//! The client against a fake stdio server that misbehaves on purpose: names that are too long
//! or collide, `$ref`/`anyOf` schemas, task-only tools, pages and cursor loops, banners, a
//! server that never answers, one that fails every call, one that crashes, progress,
//! timeouts, cancellation and list changes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::client::{Imported, call_in, fake, import_in};
use tackle_core::ErrorKind;
use tackle_core::schema::{Dialect, render_tool};
use tokio_util::sync::CancellationToken;

async fn import(flags: &[&str]) -> Imported {
    let workspace = tempfile::tempdir().unwrap();
    let config = fake(workspace.path(), flags);
    import_in(workspace, vec![config]).await
}

fn recorded(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_and_colliding_names_are_valid_unique_and_call_the_raw_names() {
    let imported = import(&["--long-names"]).await;
    assert!(imported.notices.is_empty(), "{:?}", imported.notices);
    let names = imported.names();
    assert_eq!(names.len(), 9, "{names:?}");
    for name in &names {
        assert!(name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'), "{name}");
    }
    let unique: std::collections::HashSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), names.len());
    assert_eq!(
        &names[..5],
        ["mcp__fake__echo", "mcp__fake__slow", "mcp__fake__toggle", "mcp__fake__image", "mcp__fake__a_b"]
    );
    let hashed = &names[5];
    assert!(hashed.starts_with("mcp__fake__a_b_") && hashed.len() == "mcp__fake__a_b_".len() + 12, "{hashed}");
    let (output, _) = imported.call("mcp__fake__a_b", json!({})).await;
    assert_eq!(output.text_content(), "called a.b with {}");
    let (output, _) = imported.call(hashed, json!({})).await;
    assert_eq!(output.text_content(), "called a/b with {}");
    let long = &names[6];
    assert_eq!(long.len(), 64);
    let (output, _) = imported.call(long, json!({"k": 1})).await;
    assert_eq!(output.text_content(), format!("called {}0.tool with {{\"k\": 1}}", "very.long/".repeat(19)));
    imported.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ref_and_any_of_schemas_are_sanitized_and_arguments_validated() {
    let imported = import(&["--ref-schema"]).await;
    let entry = imported.registry.get("mcp__fake__refs").unwrap();
    assert_eq!(
        entry.spec.input_schema,
        json!({
            "type": "object",
            "properties": {
                "point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]},
                "mode": {"type": "string", "enum": ["fast", "slow"]}
            },
            "required": ["point"]
        })
    );
    let (output, _) = imported.call("mcp__fake__refs", json!({"mode": "fast"})).await;
    assert!(output.is_error && output.meta.rejected);
    assert_eq!(output.text_content(), "No point provided for the mcp__fake__refs tool");
    let (output, _) = imported.call("mcp__fake__refs", json!({"point": {"x": "one"}})).await;
    assert!(output.is_error && output.meta.rejected, "{}", output.text_content());
    let (output, _) = imported.call("mcp__fake__refs", json!({"point": {"x": 1}, "mode": "slow"})).await;
    assert!(!output.is_error, "{}", output.text_content());
    assert_eq!(output.text_content(), r#"called refs with {"mode": "slow", "point": {"x": 1}}"#);
    imported.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_schemas_are_imported_bounded_and_every_call_is_answered() {
    let imported = import(&["--hostile-schemas"]).await;
    // Each cut or uncompiled schema is a notice for the person, once, naming its tool.
    let about: Vec<&str> = imported.notices.iter().map(|n| n.split(" nests ").next().unwrap()).collect();
    assert_eq!(imported.notices.len(), 4, "{:?}", imported.notices);
    for (notice, name) in about.iter().zip(["deep", "bomb", "loop", "pattern"]) {
        assert!(notice.starts_with(&format!("MCP server 'fake': the input schema of tool '{name}'")), "{notice}");
    }
    assert!(imported.notices.iter().all(|n| n.chars().count() < 400), "{:?}", imported.notices);
    for name in ["deep", "bomb", "loop", "pattern"] {
        let entry = imported.registry.get(&format!("mcp__fake__{name}")).unwrap();
        // What the model is shown stays small, whatever the server listed.
        assert!(entry.spec.input_schema.to_string().len() < 2_000_000, "{name}");
        for dialect in [Dialect::OpenAi, Dialect::OpenAiStrict, Dialect::Anthropic, Dialect::Gemini, Dialect::Mcp] {
            render_tool(&entry.spec, dialect);
        }
    }
    let deep =
        |depth: usize| serde_json::from_str::<Value>(&format!("{}\"x\"{}", "[".repeat(depth), "]".repeat(depth)));
    for (name, args) in [
        ("deep", json!({"v": deep(100).unwrap()})),
        ("deep", json!({"v": deep(3).unwrap()})),
        ("bomb", json!({"v": {"a": {"b": {}}}})),
        ("loop", json!({"v": 1})),
        ("pattern", json!({"v": "x"})),
    ] {
        let (output, _) = imported.call(&format!("mcp__fake__{name}"), args.clone()).await;
        assert!(!output.text_content().is_empty(), "{name} {args}");
    }
    // The deep schema is checked (by the sanitized schema, cut at 64 levels): a string where
    // the schema wants an array is refused before the server sees it.
    let (output, _) = imported.call("mcp__fake__deep", json!({"v": "x"})).await;
    assert!(output.is_error && output.meta.rejected, "{}", output.text_content());
    imported.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_only_tools_are_skipped_and_pages_are_followed() {
    let imported = import(&["--task-tool", "--page-size", "2", "--stdout-banner"]).await;
    assert_eq!(
        imported.notices,
        [
            "MCP server 'fake': tool 'research' can only run as an MCP task, which Tackle does not support yet; it was skipped."
        ]
    );
    assert_eq!(imported.names(), ["mcp__fake__echo", "mcp__fake__slow", "mcp__fake__toggle", "mcp__fake__image"]);
    // The stderr banner went to the server's log, not into any error.
    let log = imported.workspace.path().join(".tackle/logs/mcp-fake.log");
    assert!(std::fs::read_to_string(log).unwrap().contains("fake server: a banner on stderr"));
    imported.hub.shutdown().await;

    let looping = import(&["--cursor-loop"]).await;
    assert_eq!(looping.names().len(), 4, "the first page is kept, the loop is cut");
    assert_eq!(
        looping.notices,
        ["MCP server 'fake': tools/list repeated the cursor 'again'; the listing stopped there."]
    );
    looping.hub.shutdown().await;

    let endless = import(&["--endless-pages"]).await;
    assert_eq!(endless.names().len(), 100, "one tool per page, 100 pages");
    assert_eq!(endless.names()[99], "mcp__fake__page99");
    assert_eq!(
        endless.notices,
        ["MCP server 'fake': tools/list had more pages after 100; only the tools of the first 100 were imported."]
    );
    endless.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_fails_every_call_gives_errors_and_the_loop_goes_on() {
    let imported = import(&["--fail-calls"]).await;
    let session = imported.session();
    for _ in 0..3 {
        let (output, _) = call_in(&session, "mcp__fake__echo", json!({"text": "x"}), &CancellationToken::new()).await;
        assert!(output.is_error);
        assert!(!output.meta.rejected);
        assert_eq!(output.text_content(), "MCP error -32603: backend down");
    }
    imported.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_initializes_is_left_out_and_killed() {
    let workspace = tempfile::tempdir().unwrap();
    let mut config = fake(workspace.path(), &["--never-initialize"]);
    config.startup_timeout = Duration::from_millis(800);
    let started = Instant::now();
    let imported = import_in(workspace, vec![config]).await;
    assert!(started.elapsed() < Duration::from_secs(8), "{:?}", started.elapsed());
    assert_eq!(imported.notices, ["MCP server 'fake' was left out: it did not start within 800 ms"]);
    assert!(imported.names().is_empty());
    imported.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_binary_is_a_startup_notice_not_a_crash() {
    let workspace = tempfile::tempdir().unwrap();
    let config = support::client::stdio("ghost", "/nonexistent/mcp-server", &[], workspace.path());
    let imported = import_in(workspace, vec![config]).await;
    assert_eq!(imported.notices.len(), 1);
    assert!(
        imported.notices[0].starts_with("MCP server 'ghost' was left out: cannot start '/nonexistent/mcp-server':"),
        "{:?}",
        imported.notices
    );
    assert!(imported.names().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_is_never_answered_times_out_and_is_cancelled_on_the_server() {
    let workspace = tempfile::tempdir().unwrap();
    let record = workspace.path().join("record.jsonl");
    let mut config = fake(workspace.path(), &["--never-answer-calls", "--record", record.to_str().unwrap()]);
    config.call_timeout = Duration::from_millis(500);
    let imported = import_in(workspace, vec![config]).await;
    let started = Instant::now();
    let (output, _) = imported.call("mcp__fake__echo", json!({"text": "x"})).await;
    assert!(started.elapsed() < Duration::from_secs(4), "{:?}", started.elapsed());
    assert!(output.is_error);
    assert_eq!(output.meta.error_kind, Some(ErrorKind::Timeout));
    assert_eq!(output.text_content(), "MCP tool echo timed out after 500 ms (server fake).");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let cancels: Vec<Value> =
        recorded(&record).into_iter().filter(|m| m["method"] == "notifications/cancelled").collect();
    assert_eq!(cancels.len(), 1, "{cancels:?}");
    imported.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_arrives_and_restarts_the_call_timeout() {
    let workspace = tempfile::tempdir().unwrap();
    let mut config = fake(workspace.path(), &[]);
    config.call_timeout = Duration::from_millis(700);
    let imported = import_in(workspace, vec![config]).await;
    // 2 s in 8 steps: longer than the timeout, but progress every 250 ms keeps it alive.
    let (output, progress) = imported.call("mcp__fake__slow", json!({"seconds": 2, "steps": 8})).await;
    assert!(!output.is_error, "{}", output.text_content());
    assert_eq!(output.text_content(), "slept in 8 steps");
    let values: Vec<f64> = progress.iter().map(|p| p.progress).collect();
    assert_eq!(values, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
    assert_eq!(progress[0].total, Some(8.0));
    assert_eq!(progress[0].message.as_deref(), Some("step 1"));
    // Without progress, the same length times out.
    let (output, _) = imported.call("mcp__fake__slow", json!({"seconds": 2, "steps": 1})).await;
    assert_eq!(output.text_content(), "MCP tool slow timed out after 700 ms (server fake).");
    imported.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_cancel_reaches_the_server_and_answers_at_once() {
    let workspace = tempfile::tempdir().unwrap();
    let record = workspace.path().join("record.jsonl");
    let config = fake(workspace.path(), &["--record", record.to_str().unwrap()]);
    let imported = import_in(workspace, vec![config]).await;
    let session = imported.session();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let (output, _) = call_in(&session, "mcp__fake__slow", json!({"seconds": 10}), &cancel).await;
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    assert!(output.is_error);
    assert_eq!(output.text_content(), "MCP tool slow was cancelled.");
    assert_eq!(output.meta.error_kind, Some(ErrorKind::Cancelled));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(recorded(&record).iter().any(|m| m["method"] == "notifications/cancelled"));
    imported.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_fails_calls_in_flight_and_the_next_call_restarts_the_server() {
    let imported = import(&["--crash-on", "toggle"]).await;
    let session = imported.session();
    let cancel = CancellationToken::new();
    let in_flight = call_in(&session, "mcp__fake__slow", json!({"seconds": 5}), &cancel);
    let crash = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        call_in(&session, "mcp__fake__toggle", json!({}), &cancel).await
    };
    let ((slow, _), (toggle, _)) = tokio::join!(in_flight, crash);
    let message = "MCP server fake exited unexpectedly (exit status 3); it will be restarted on the next call.";
    assert_eq!(toggle.text_content(), message);
    assert_eq!(slow.text_content(), message);
    assert!(slow.is_error && toggle.is_error);
    let connection = imported.hub.connection("fake").unwrap();
    let started = Instant::now();
    let (echo, _) = call_in(&session, "mcp__fake__echo", json!({"text": "back"}), &cancel).await;
    assert!(started.elapsed() >= Duration::from_millis(900), "restarted without backoff: {:?}", started.elapsed());
    assert_eq!(echo.text_content(), "Echo: back");
    assert!(connection.pid().await.is_some());
    imported.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_failures_within_five_minutes_mark_the_server_failed() {
    let imported = import(&["--crash-on", "echo"]).await;
    let crash = "MCP server fake exited unexpectedly (exit status 3); it will be restarted on the next call.";
    for _ in 0..3 {
        let (output, _) = imported.call("mcp__fake__echo", json!({"text": "x"})).await;
        assert_eq!(output.text_content(), crash);
    }
    let started = Instant::now();
    let (output, _) = imported.call("mcp__fake__echo", json!({"text": "x"})).await;
    assert_eq!(output.text_content(), "MCP server fake is unavailable: exit status 3");
    assert!(started.elapsed() < Duration::from_millis(500), "a failed server answers at once");
    imported.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changes_update_the_session_between_turns_with_a_notification() {
    let imported = import(&[]).await;
    let mut session = imported.session();
    let cancel = CancellationToken::new();
    assert!(imported.hub.refresh().await.is_empty(), "nothing changed yet");
    let (output, _) = call_in(&session, "mcp__fake__toggle", json!({}), &cancel).await;
    assert_eq!(output.text_content(), "toggled");
    tokio::time::sleep(Duration::from_millis(200)).await;
    let changes = imported.hub.refresh().await;
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].to_string(), "MCP server fake changed its tools: added mcp__fake__added; removed none.");
    imported.hub.update_session(&mut session, &changes, &|_| true);
    let (output, _) = call_in(&session, "mcp__fake__added", json!({}), &cancel).await;
    assert_eq!(output.text_content(), "called added with {}");
    let notes = session.state().get::<tackle_core::Notifications>().drain();
    assert_eq!(notes, ["MCP server fake changed its tools: added mcp__fake__added; removed none."]);

    call_in(&session, "mcp__fake__toggle", json!({}), &cancel).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let changes = imported.hub.refresh().await;
    assert_eq!(changes[0].to_string(), "MCP server fake changed its tools: added none; removed mcp__fake__added.");
    imported.hub.update_session(&mut session, &changes, &|_| true);
    let (output, _) = call_in(&session, "mcp__fake__added", json!({}), &cancel).await;
    assert!(output.is_error && output.meta.rejected);
    assert!(output.text_content().starts_with("Tool 'mcp__fake__added' not found"), "{}", output.text_content());
    imported.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_session_sharing_the_hub_catches_up_on_its_own_whichever_relisted() {
    let imported = import(&[]).await;
    let (mut parent, mut child) = (imported.session(), imported.session());
    let cancel = CancellationToken::new();
    call_in(&child, "mcp__fake__toggle", json!({}), &cancel).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let changes = imported.hub.refresh().await;
    assert_eq!(changes.len(), 1);
    let notes = |session: &tackle_core::ToolSession| session.state().get::<tackle_core::Notifications>().drain();
    // The child's rule refuses the new tool: it stays out, and is no news to the child.
    assert!(imported.hub.catch_up(&mut child, &|_| false));
    assert!(child.tools().resolve("mcp__fake__added").is_none());
    assert_eq!(notes(&child), Vec::<String>::new());
    // The parent made no refresh of its own, and still takes the change up.
    assert!(imported.hub.catch_up(&mut parent, &|_| true));
    assert!(parent.tools().resolve("mcp__fake__added").is_some());
    assert_eq!(notes(&parent), ["MCP server fake changed its tools: added mcp__fake__added; removed none."]);
    assert!(!imported.hub.catch_up(&mut parent, &|_| true), "nothing is left to take up");
    // A change taken up twice adds nothing twice and says nothing again.
    let before = parent.tools().len();
    imported.hub.update_session(&mut parent, &changes, &|_| true);
    assert_eq!(parent.tools().len(), before);
    assert_eq!(notes(&parent), Vec::<String>::new());
    imported.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_map_images_and_server_side_errors() {
    let imported = import(&[]).await;
    let (output, _) = imported.call("mcp__fake__image", json!({})).await;
    assert_eq!(output.text_content(), "[image: image/png, 8 bytes]");
    let (output, _) = imported.call("mcp__fake__echo", json!({"text": "hi"})).await;
    assert_eq!(
        (output.text_content(), output.structured.clone()),
        ("Echo: hi".to_owned(), Some(json!({"echo": "hi"})))
    );
    // A name the server does not know: its isError result is an error.
    let session = imported.session();
    let ctx = session.context("c9", "mcp__fake__nope", CancellationToken::new());
    let connection = imported.hub.connection("fake").unwrap();
    let output = connection.call("nope", json!({}), &ctx).await.unwrap();
    assert!(output.is_error);
    assert_eq!(output.text_content(), "MCP error -32602: Tool nope not found");
    imported.hub.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_the_server_process() {
    let imported = import(&[]).await;
    let pid = imported.hub.connection("fake").unwrap().pid().await.unwrap();
    let alive = || std::path::Path::new(&format!("/proc/{pid}")).exists();
    assert!(alive());
    imported.hub.shutdown().await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive() && std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z ")) {
        assert!(Instant::now() < deadline, "the server process is still running");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
