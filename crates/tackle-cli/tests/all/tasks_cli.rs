//! The task board across processes: two `tackle tools batch` processes change the board 200
//! times each at the same time, and every change lands (the lock, the re-read and the atomic
//! write); `tackle tasks list|show` print it.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::process::{Command, Stdio};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

const TACKLE: &str = env!("CARGO_BIN_EXE_tackle");
const PER_PROCESS: usize = 200;

fn tackle(workspace: &std::path::Path, args: &[&str]) -> Command {
    let mut command = Command::new(TACKLE);
    command.args(args).current_dir(workspace).env("TACKLE_CONFIG_DIR", "/nonexistent-tackle-config");
    command
}

#[test]
fn two_batch_processes_updating_at_once_lose_no_update() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path();
    // Each process creates its tasks and moves each one it created to in_progress: 2 × 200
    // changes of the board, interleaved between the processes.
    let children: Vec<_> = ["a", "b"]
        .iter()
        .map(|name| {
            let mut child = tackle(workspace, &["tools", "batch", "--tools", "task_create,task_update"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let mut lines = String::new();
            for i in 0..PER_PROCESS / 2 {
                lines.push_str(&format!(
                    "{}\n",
                    json!({"name": "task_create", "args": {"title": format!("{name}-{i}")}})
                ));
            }
            let mut stdin = child.stdin.take().unwrap();
            // The updates need the ids, so they are sent after the creations answered; both
            // processes still run their creations at the same time.
            stdin.write_all(lines.as_bytes()).unwrap();
            (child, stdin)
        })
        .collect();
    let mut outputs = Vec::new();
    for (child, stdin) in children {
        drop(stdin);
        outputs.push(child.wait_with_output().unwrap());
    }
    let mut ids: Vec<Vec<String>> = Vec::new();
    for out in &outputs {
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let mine: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|line| {
                let result: Value = serde_json::from_str(line).unwrap();
                assert_eq!(result["is_error"], false, "{line}");
                result["structured"]["id"].as_str().unwrap().to_owned()
            })
            .collect();
        assert_eq!(mine.len(), PER_PROCESS / 2);
        ids.push(mine);
    }
    // Second round: each process updates the tasks of the other, at the same time.
    let children: Vec<_> = ids
        .iter()
        .rev()
        .map(|theirs| {
            let mut child = tackle(workspace, &["tools", "batch", "--tools", "task_update"])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let lines: String = theirs
                .iter()
                .map(|id| {
                    format!(
                        "{}\n",
                        json!({"name": "task_update", "args": {"task_id": id, "status": "in_progress", "expected_status": "pending"}})
                    )
                })
                .collect();
            child.stdin.take().unwrap().write_all(lines.as_bytes()).unwrap();
            child
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let answered =
            String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.contains("\"is_error\":false")).count();
        assert_eq!(answered, PER_PROCESS / 2);
    }

    let out = tackle(workspace, &["tasks", "list", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let listed: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed.len(), PER_PROCESS, "every creation landed");
    let moved = listed.iter().filter(|t| t["status"] == "in_progress").count();
    assert_eq!(moved, PER_PROCESS, "every update landed");
    let mut created: Vec<&str> = listed.iter().map(|t| t["created_at"].as_str().unwrap()).collect();
    let in_order = created.clone();
    created.sort_unstable();
    created.dedup();
    assert_eq!(created, in_order, "created_at is unique and the listing is in creation order");
}

#[test]
fn tasks_list_and_show_print_the_board() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path();
    let out = tackle(workspace, &["tasks", "list"]).output().unwrap();
    assert_eq!(
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned()),
        (Some(0), "No tasks.\n".to_owned())
    );
    let created = tackle(
        workspace,
        &["tools", "call", "task_create", r#"{"title": "Write docs", "description": "All of them"}"#, "--json"],
    )
    .output()
    .unwrap();
    let created: Value = serde_json::from_slice(&created.stdout).unwrap();
    let id = created["structured"]["id"].as_str().unwrap().to_owned();
    let args = json!({"title": "Review", "depends_on": [id]}).to_string();
    let review = tackle(workspace, &["tools", "call", "task_create", &args, "--json"]).output().unwrap();
    let review: Value = serde_json::from_slice(&review.stdout).unwrap();
    let review_id = review["structured"]["id"].as_str().unwrap().to_owned();

    let out = tackle(workspace, &["tasks", "list"]).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{id}  ready        Write docs\n{review_id}  pending      Review  after {id}\n")
    );
    let out = tackle(workspace, &["tasks", "show", &id]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with(&format!("{id}  Write docs\nstatus: pending\ncreated: ")), "{text}");
    assert!(text.ends_with("\nAll of them\n"), "{text}");
    let out = tackle(workspace, &["tasks", "show", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Unknown task id: nope"));
    let out = tackle(workspace, &["tasks", "list", "--status", "finished"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}
