//! The task board through its tools and its library API: dependencies and `ready`, the
//! refusals of docs/planning.md#tasks (unknown ids and dependencies, cycles, nothing to change, a stale
//! `expected_status`), a corrupt board moved aside and reported, and a hostile workspace
//! whose `.tackle` or `tasks.json` is a symlink.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::Ws;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tackle_tools::planning::tasks::{BoardError, TaskBoard, TaskStatus};

async fn task(ws: &Ws, tool: &str, args: Value) -> Value {
    serde_json::from_str(&ws.ok(tool, args).await).unwrap()
}

#[tokio::test]
async fn dependent_tasks_become_ready_in_order_and_persist_in_the_file() {
    let ws = Ws::new();
    assert_eq!(ws.ok("task_list", json!({})).await, "[]");
    assert!(!ws.exists(".tackle"), "a read creates nothing");
    let design = task(&ws, "task_create", json!({"title": "Design", "description": "Sketch it"})).await;
    let id = design["id"].as_str().unwrap().to_owned();
    assert_eq!(id.len(), 8);
    assert!(id.chars().all(|c| c.is_ascii_alphanumeric()));
    assert_eq!((design["status"].clone(), design["owner"].clone()), (json!("pending"), Value::Null));
    let build = task(&ws, "task_create", json!({"title": "Build", "depends_on": [id]})).await;
    let build_id = build["id"].as_str().unwrap().to_owned();

    let listed = task(&ws, "task_list", json!({})).await;
    let ready: Vec<(&str, bool)> =
        listed.as_array().unwrap().iter().map(|t| (t["title"].as_str().unwrap(), t["ready"] == true)).collect();
    assert_eq!(ready, [("Design", true), ("Build", false)]);

    task(&ws, "task_update", json!({"task_id": id, "status": "done"})).await;
    let listed = task(&ws, "task_list", json!({"status": "pending"})).await;
    assert_eq!(listed.as_array().unwrap().len(), 1);
    assert_eq!((listed[0]["id"].as_str(), listed[0]["ready"].clone()), (Some(build_id.as_str()), json!(true)));
    let got = task(&ws, "task_get", json!({"task_id": build_id})).await;
    assert_eq!(got["depends_on"], json!([id]));

    let file: Value = serde_json::from_str(&ws.read(".tackle/tasks.json")).unwrap();
    assert_eq!(file["version"], 1);
    let stored = &file["tasks"][&id];
    let mut keys: Vec<&str> = stored.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["created_at", "depends_on", "description", "id", "owner", "status", "title", "updated_at"]);
    assert_eq!(stored["status"], "done");
    // Nothing but the board and its lock in .tackle: no temporary file is left behind.
    assert_eq!(ws.names_in(".tackle"), ["tasks.json", "tasks.lock"]);
}

#[tokio::test]
async fn refusals_name_the_problem_and_change_nothing() {
    let ws = Ws::new();
    let a = task(&ws, "task_create", json!({"title": "A"})).await["id"].as_str().unwrap().to_owned();
    let b = task(&ws, "task_create", json!({"title": "B", "depends_on": [a]})).await["id"].as_str().unwrap().to_owned();
    let before = ws.read(".tackle/tasks.json");
    let cases = [
        ("task_get", json!({"task_id": "nope1234"}), "Unknown task id: nope1234".to_owned()),
        ("task_update", json!({"task_id": "nope1234", "status": "done"}), "Unknown task id: nope1234".to_owned()),
        ("task_create", json!({"title": "C", "depends_on": ["ghost"]}), "Unknown dependency task id: ghost".to_owned()),
        ("task_update", json!({"task_id": a, "depends_on": [b]}), format!("Cyclic task dependency detected at: {a}")),
        ("task_update", json!({"task_id": a, "depends_on": [a]}), format!("Cyclic task dependency detected at: {a}")),
        ("task_update", json!({"task_id": a}), "status or title is required (or depends_on)".to_owned()),
        (
            "task_update",
            json!({"task_id": a, "status": "in_progress", "expected_status": "done"}),
            format!("Task {a} status is pending, expected done"),
        ),
        ("task_create", json!({"title": "   "}), "title must not be empty".to_owned()),
    ];
    for (tool, args, message) in cases {
        assert_eq!(ws.err(tool, args.clone()).await, message, "{tool} {args}");
    }
    assert_eq!(ws.read(".tackle/tasks.json"), before);
    // A claim with the right expectation lands, with its owner; a second claim loses.
    let board = TaskBoard::open(&ws.root);
    let claimed = board.claim(&a, TaskStatus::Pending, "alice").unwrap();
    assert_eq!((claimed.status, claimed.owner.as_deref()), (TaskStatus::InProgress, Some("alice")));
    let lost = board.claim(&a, TaskStatus::Pending, "bob").unwrap_err();
    assert!(matches!(lost, BoardError::Conflict { .. }), "{lost}");
}

#[tokio::test]
async fn a_corrupt_board_is_moved_aside_and_reported_never_overwritten() {
    let ws = Ws::new();
    ws.write(".tackle/tasks.json", "{\"version\":1,\"tasks\":{\"x\": oops");
    let message = ws.err("task_create", json!({"title": "A"})).await;
    assert!(message.starts_with(".tackle/tasks.json is not a valid task board ("), "{message}");
    assert!(message.contains("it was moved to .tackle/tasks.json.bak-"), "{message}");
    let names = ws.names_in(".tackle");
    let backup = names.iter().find(|n| n.starts_with("tasks.json.bak-")).unwrap();
    assert_eq!(ws.read(&format!(".tackle/{backup}")), "{\"version\":1,\"tasks\":{\"x\": oops");
    assert!(!names.contains(&"tasks.json".to_owned()));
    // The next call starts a new board.
    task(&ws, "task_create", json!({"title": "A"})).await;
    assert_eq!(task(&ws, "task_list", json!({})).await.as_array().unwrap().len(), 1);

    // Valid JSON that is not a board (a dependency on a missing task) is moved aside too.
    ws.write(".tackle/tasks.json", r#"{"version":1,"tasks":{"a":{"id":"a","title":"t","status":"pending","depends_on":["zz"],"created_at":"","updated_at":""}}}"#);
    let message = ws.err("task_list", json!({})).await;
    assert!(message.contains("task a depends on zz, which is not on the board"), "{message}");
    // A read reports it and changes nothing; the next change moves it aside.
    assert!(message.contains("it was left as it is"), "{message}");
    let backups = |ws: &Ws| ws.names_in(".tackle").iter().filter(|n| n.starts_with("tasks.json.bak-")).count();
    assert_eq!(backups(&ws), 1);
    assert!(ws.read(".tackle/tasks.json").contains("\"zz\""));
    let message = ws.err("task_create", json!({"title": "B"})).await;
    assert!(message.contains("it was moved to"), "{message}");
    assert_eq!(backups(&ws), 2);
}

#[tokio::test]
async fn reading_the_board_creates_nothing() {
    let ws = Ws::new();
    std::fs::create_dir(ws.path(".tackle")).unwrap();
    assert_eq!(task(&ws, "task_list", json!({})).await, json!([]));
    assert!(ws.err("task_get", json!({"task_id": "nope1234"})).await.contains("Unknown task id"));
    assert!(ws.names_in(".tackle").is_empty(), "{:?}", ws.names_in(".tackle"));
}

#[cfg(unix)]
#[tokio::test]
async fn symlinks_in_a_hostile_workspace_are_refused_not_followed() {
    let ws = Ws::new();
    let outside = ws.outside();
    std::os::unix::fs::symlink(&outside, ws.path(".tackle")).unwrap();
    let message = ws.err("task_create", json!({"title": "A"})).await;
    assert!(message.contains("is a symlink or leads outside the workspace"), "{message}");
    assert!(std::fs::read_dir(&outside).unwrap().next().is_none(), "nothing was written outside");

    std::fs::remove_file(ws.path(".tackle")).unwrap();
    std::fs::create_dir(ws.path(".tackle")).unwrap();
    std::fs::write(outside.join("secret.json"), "{\"version\":1,\"tasks\":{}}").unwrap();
    std::os::unix::fs::symlink(outside.join("secret.json"), ws.path(".tackle/tasks.json")).unwrap();
    let message = ws.err("task_create", json!({"title": "A"})).await;
    assert_eq!(
        message,
        ".tackle/tasks.json is a symlink or leads outside the workspace; the task board refuses to follow it. \
         Remove it (the board lives in real files under .tackle/)."
    );
    assert_eq!(std::fs::read_to_string(outside.join("secret.json")).unwrap(), "{\"version\":1,\"tasks\":{}}");
    std::fs::remove_file(ws.path(".tackle/tasks.lock")).unwrap();
    std::os::unix::fs::symlink(outside.join("lock"), ws.path(".tackle/tasks.lock")).unwrap();
    ws.err("task_list", json!({})).await;
    assert!(!outside.join("lock").exists(), "the lock link was not followed to create a file outside");
}
