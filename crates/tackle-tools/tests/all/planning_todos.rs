//! `todo_write` / `todo_read` through the executor: whole-list replacement, the rendering and
//! its counts, the note for two items in progress, clearing, and refusals of bad items.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::Ws;
use pretty_assertions::assert_eq;
use serde_json::json;
use tackle_core::{TodoList, TodoStatus};

#[tokio::test]
async fn every_write_replaces_the_whole_list_and_read_shows_it() {
    let ws = Ws::new();
    assert_eq!(ws.ok("todo_read", json!({})).await, "No todos.");
    let first = ws
        .ok(
            "TodoWrite",
            json!({"todos": [
                {"content": "Read the code", "status": "completed", "activeForm": "Reading the code"},
                {"content": "Fix the bug", "status": "in_progress", "activeForm": "Fixing the bug"},
                {"content": "Run the tests", "status": "pending", "activeForm": "Running the tests", "id": "t3"}
            ]}),
        )
        .await;
    assert_eq!(
        first,
        "Todo list updated (3 items: 1 completed, 1 in progress, 1 pending):\n[x] Read the code\n[~] Fix the bug\n[ ] Run the tests"
    );
    let list = ws.session.state().get::<TodoList>();
    let (version, items) = list.snapshot();
    assert_eq!((version, items[1].label(), items[2].id.as_deref()), (1, "Fixing the bug", Some("t3")));

    // A shorter list replaces the longer one; two items in progress get the note.
    let second = ws
        .ok(
            "todo_write",
            json!({"todos": [{"content": "Fix the bug", "status": "in_progress"}, {"content": "Docs", "status": "in_progress"}]}),
        )
        .await;
    assert!(second.ends_with("Note: 2 items are in progress; keep one at a time."), "{second}");
    assert_eq!(list.items().len(), 2);
    assert_eq!(list.items()[1].status, TodoStatus::InProgress);
    assert_eq!(
        ws.ok("TodoRead", json!({})).await,
        "Todo list (2 items: 0 completed, 2 in progress, 0 pending):\n[~] Fix the bug\n[~] Docs\n\
         Note: 2 items are in progress; keep one at a time."
    );

    // An empty array clears it.
    ws.ok("todo_write", json!({"todos": []})).await;
    assert_eq!(ws.ok("todo_read", json!({})).await, "No todos.");
    assert_eq!(list.snapshot().0, 3);
}

#[tokio::test]
async fn bad_items_are_refused_and_the_list_is_left_as_it_was() {
    let ws = Ws::new();
    ws.ok("todo_write", json!({"todos": [{"content": "Keep me", "status": "pending"}]})).await;
    let blank = ws.err("todo_write", json!({"todos": [{"content": "  ", "status": "pending"}]})).await;
    assert_eq!(blank, "Invalid parameters for tool 'todo_write': todos[0].content must not be empty");
    let status = ws.err("todo_write", json!({"todos": [{"content": "x", "status": "done"}]})).await;
    assert!(status.contains("todos[0].status must be one of"), "{status}");
    let extra =
        ws.err("todo_write", json!({"todos": [{"content": "x", "status": "pending", "priority": "high"}]})).await;
    assert!(extra.contains("unexpected parameter"), "{extra}");
    let many: Vec<_> = (0..201).map(|i| json!({"content": format!("item {i}"), "status": "pending"})).collect();
    ws.err("todo_write", json!({"todos": many})).await;
    assert_eq!(
        ws.ok("todo_read", json!({})).await,
        "Todo list (1 items: 0 completed, 0 in progress, 1 pending):\n[ ] Keep me"
    );
}
