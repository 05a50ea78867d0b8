//! The roll-forward journal of a multi-file `apply_patch` (docs/file-tools.md, "apply_patch
//! and crashes"): the state a Tackle killed at each point of a commit leaves behind is built
//! here with the real journal and real staged files, and the next session must end with
//! every file patched or none — and must not let a forged journal write anything the path
//! policy would refuse.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::Ws;
use pretty_assertions::assert_eq;
use serde_json::json;
use tackle_tools::fs::atomic::temp_name_for;
use tackle_tools::fs::journal::{DIR, Entry, Journal};
use tackle_tools::fs::ledger::content_hash;

/// One file of an interrupted patch: its path, old content and new content (`None`: absent).
struct Change {
    path: &'static str,
    before: Option<&'static str>,
    after: Option<&'static str>,
}

/// The journal and staged files of a patch making `changes`, as a commit writes them before
/// its first rename; the writer then "dies" (the journal's lock is released, the journal
/// stays). Returns the staged names (`None` for removals).
fn interrupted(ws: &Ws, changes: &[Change]) -> Vec<Option<String>> {
    let mut entries = Vec::new();
    let mut temps = Vec::new();
    for change in changes {
        let temp = change.after.map(|after| {
            let temp = temp_name_for(&ws.path(change.path)).into_string().unwrap();
            let staged = ws.path(change.path).with_file_name(&temp);
            std::fs::write(staged, after).unwrap();
            temp
        });
        entries.push(Entry {
            path: change.path.to_owned(),
            temp: temp.clone(),
            before: change.before.map(|b| content_hash(b.as_bytes())),
            after: change.after.map(|a| content_hash(a.as_bytes())),
        });
        temps.push(temp);
    }
    drop(Journal::begin(&ws.root, &entries).unwrap());
    temps
}

/// Does the rename of a staged file, as the commit would have.
fn rename(ws: &Ws, path: &str, temp: &str) {
    std::fs::rename(ws.path(path).with_file_name(temp), ws.path(path)).unwrap();
}

fn three_files(ws: &Ws) -> [Change; 3] {
    ws.write("a.txt", "a\n");
    ws.write("b.txt", "b\n");
    ws.write("gone.txt", "old\n");
    [
        Change { path: "a.txt", before: Some("a\n"), after: Some("A\n") },
        Change { path: "b.txt", before: Some("b\n"), after: Some("B\n") },
        Change { path: "gone.txt", before: Some("old\n"), after: None },
    ]
}

/// Every name in the workspace's top directory and in the journal directory.
fn leftovers(ws: &Ws) -> (Vec<String>, Vec<String>) {
    (ws.names_in(""), ws.names_in(DIR))
}

#[tokio::test]
async fn a_patch_killed_between_renames_is_completed_by_the_next_session() {
    let mut ws = Ws::new();
    let temps = interrupted(&ws, &three_files(&ws));
    rename(&ws, "a.txt", temps[0].as_deref().unwrap());
    assert_eq!((ws.read("a.txt"), ws.read("b.txt")), ("A\n".into(), "b\n".into()));
    ws.next_session();
    // Any file tool starts the session's file state; a read then sees the whole patch.
    assert_eq!(ws.ok("read_file", json!({"file_path": "b.txt"})).await, "     1\tB");
    assert_eq!((ws.read("a.txt"), ws.exists("gone.txt")), ("A\n".into(), false));
    assert_eq!(leftovers(&ws), (vec![".tackle".into(), "a.txt".into(), "b.txt".into()], vec![]));
}

#[tokio::test]
async fn a_patch_killed_before_its_first_rename_or_after_its_last_ends_consistent() {
    // Before the first rename, everything staged: rolled forward.
    let mut ws = Ws::new();
    interrupted(&ws, &three_files(&ws));
    ws.next_session();
    ws.ok("glob", json!({"pattern": "*"})).await;
    assert_eq!((ws.read("a.txt"), ws.read("b.txt"), ws.exists("gone.txt")), ("A\n".into(), "B\n".into(), false));
    assert_eq!(leftovers(&ws).1, Vec::<String>::new());

    // While staging (b's staged file is missing): the staged files go, nothing changes.
    let mut ws = Ws::new();
    let temps = interrupted(&ws, &three_files(&ws));
    std::fs::remove_file(ws.path(temps[1].as_deref().unwrap())).unwrap();
    ws.next_session();
    ws.ok("grep", json!({"pattern": "x"})).await;
    assert_eq!((ws.read("a.txt"), ws.read("b.txt"), ws.read("gone.txt")), ("a\n".into(), "b\n".into(), "old\n".into()));
    assert_eq!(leftovers(&ws), (vec![".tackle".into(), "a.txt".into(), "b.txt".into(), "gone.txt".into()], vec![]));

    // After every rename and removal, before the journal was removed: only the journal goes.
    let mut ws = Ws::new();
    let temps = interrupted(&ws, &three_files(&ws));
    rename(&ws, "a.txt", temps[0].as_deref().unwrap());
    rename(&ws, "b.txt", temps[1].as_deref().unwrap());
    std::fs::remove_file(ws.path("gone.txt")).unwrap();
    ws.next_session();
    ws.ok("read_file", json!({"file_path": "a.txt"})).await;
    assert_eq!((ws.read("a.txt"), ws.read("b.txt")), ("A\n".into(), "B\n".into()));
    assert_eq!(leftovers(&ws), (vec![".tackle".into(), "a.txt".into(), "b.txt".into()], vec![]));
}

#[tokio::test]
async fn a_file_changed_since_the_crash_stops_the_completion_and_nothing_is_touched() {
    let mut ws = Ws::new();
    let temps = interrupted(&ws, &three_files(&ws));
    rename(&ws, "a.txt", temps[0].as_deref().unwrap());
    ws.write("b.txt", "edited by hand\n");
    ws.next_session();
    ws.ok("read_file", json!({"file_path": "a.txt"})).await;
    assert_eq!(
        (ws.read("a.txt"), ws.read("b.txt"), ws.read("gone.txt")),
        ("A\n".into(), "edited by hand\n".into(), "old\n".into())
    );
    // The journal is dealt with once (its warning said what to check).
    assert_eq!(leftovers(&ws).1, Vec::<String>::new());
}

#[tokio::test]
async fn a_live_writers_journal_is_left_alone() {
    let mut ws = Ws::new();
    ws.write("a.txt", "a\n");
    ws.write("b.txt", "b\n");
    let changes = [
        Change { path: "a.txt", before: Some("a\n"), after: Some("A\n") },
        Change { path: "b.txt", before: Some("b\n"), after: Some("B\n") },
    ];
    let entries: Vec<Entry> = changes
        .iter()
        .map(|c| Entry {
            path: c.path.into(),
            temp: Some(temp_name_for(&ws.path(c.path)).into_string().unwrap()),
            before: c.before.map(|b| content_hash(b.as_bytes())),
            after: c.after.map(|a| content_hash(a.as_bytes())),
        })
        .collect();
    for (entry, change) in entries.iter().zip(&changes) {
        std::fs::write(ws.path(entry.temp.as_deref().unwrap()), change.after.unwrap()).unwrap();
    }
    let live = Journal::begin(&ws.root, &entries).unwrap();
    ws.next_session();
    ws.ok("read_file", json!({"file_path": "a.txt"})).await;
    assert_eq!((ws.read("a.txt"), ws.read("b.txt")), ("a\n".into(), "b\n".into()));
    assert_eq!(leftovers(&ws).1.len(), 1);
    live.finish().unwrap();
    assert_eq!(leftovers(&ws).1, Vec::<String>::new());
}

#[tokio::test]
async fn a_forged_journal_writes_nothing_the_path_policy_refuses() {
    let mut ws = Ws::new();
    let outside = ws.outside();
    std::fs::write(outside.join("victim.txt"), "victim\n").unwrap();
    ws.write(".git/config", "[core]\n");
    ws.write("plain.txt", "plain\n");
    ws.write("evil", "[core]\n\tfsmonitor = evil\n");
    let forged = |path: &str, temp: Option<&str>, before: &str, after: &str| Entry {
        path: path.to_owned(),
        temp: temp.map(str::to_owned),
        before: Some(content_hash(before.as_bytes())),
        after: Some(content_hash(after.as_bytes())),
    };
    let temp = temp_name_for(&ws.path(".git/config")).into_string().unwrap();
    ws.write(&format!(".git/{temp}"), "[core]\n\tfsmonitor = evil\n");
    let journals = [
        // Into a protected directory.
        vec![forged(".git/config", Some(&temp), "[core]\n", "[core]\n\tfsmonitor = evil\n")],
        // Outside the workspace.
        vec![Entry {
            path: "../outside/victim.txt".into(),
            temp: None,
            before: Some(content_hash(b"victim\n")),
            after: None,
        }],
        // A "staged file" that is any file of the workspace.
        vec![forged("plain.txt", Some("evil"), "plain\n", "[core]\n\tfsmonitor = evil\n")],
    ];
    for entries in journals {
        drop(Journal::begin(&ws.root, &entries).unwrap());
        ws.next_session();
        ws.ok("read_file", json!({"file_path": "plain.txt"})).await;
        assert_eq!(leftovers(&ws).1, Vec::<String>::new());
    }
    assert_eq!(ws.read(".git/config"), "[core]\n");
    assert_eq!(std::fs::read_to_string(outside.join("victim.txt")).unwrap(), "victim\n");
    assert_eq!((ws.read("plain.txt"), ws.read("evil")), ("plain\n".into(), "[core]\n\tfsmonitor = evil\n".into()));
}

#[tokio::test]
async fn a_multi_file_patch_leaves_no_journal_and_a_single_file_one_writes_none() {
    let ws = Ws::one_shot();
    ws.write("a.txt", "a\n");
    ws.write("b.txt", "b\n");
    let patch = "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Update File: b.txt\n-b\n+B\n*** End Patch";
    ws.ok("apply_patch", json!({"input": patch})).await;
    assert_eq!((ws.read("a.txt"), ws.read("b.txt")), ("A\n".into(), "B\n".into()));
    assert_eq!(leftovers(&ws), (vec![".tackle".into(), "a.txt".into(), "b.txt".into()], vec![]));
    let ws = Ws::one_shot();
    ws.write("a.txt", "a\n");
    ws.ok("apply_patch", json!({"input": "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** End Patch"})).await;
    assert_eq!(ws.names_in(""), ["a.txt"]);
}
