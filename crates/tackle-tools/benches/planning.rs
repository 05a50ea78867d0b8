//! Planning tools' targets (issue #16): `tool_search` over 2,000 deferred tools ≤ 1 ms per
//! query, and `task_update` with the board's lock (lock, re-read, atomic write) ≤ 2 ms.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use tackle_core::ToolSpec;
use tackle_tools::planning::tasks::{TaskBoard, TaskChange, TaskStatus};
use tackle_tools::planning::tool_search::SearchIndex;

const VERBS: [&str; 8] = ["list", "create", "delete", "update", "get", "search", "export", "sync"];
const THINGS: [&str; 10] = ["issue", "commit", "file", "message", "event", "table", "page", "user", "invoice", "build"];

/// 2,000 tools as 50 MCP servers of 40 tools would name and describe them.
fn catalog() -> Vec<ToolSpec> {
    (0..2_000)
        .map(|i| {
            let (verb, thing) = (VERBS[i % VERBS.len()], THINGS[(i / VERBS.len()) % THINGS.len()]);
            ToolSpec::new(
                format!("mcp__server{}__{verb}_{thing}_{i}", i / 40),
                format!("{verb} the {thing} records of server {} and return them as a list with their ids", i / 40),
            )
            .search_hint(format!("{verb} {thing}s"))
        })
        .collect()
}

fn bench_planning(c: &mut Criterion) {
    let specs = catalog();
    c.bench_function("tool_search_index_2000", |b| b.iter(|| SearchIndex::new(&specs)));
    let index = SearchIndex::new(&specs);
    assert!(!index.search("export invoices", 5).is_empty());
    c.bench_function("tool_search_query_2000", |b| b.iter(|| index.search("export the invoice records", 5)));

    let dir = tempfile::tempdir().unwrap();
    let board = TaskBoard::open(dir.path().canonicalize().unwrap());
    let ids: Vec<String> = (0..50).map(|i| board.create(&format!("task {i}"), "", &[]).unwrap().id).collect();
    let mut flip = false;
    c.bench_function("task_update_locked_50_tasks", |b| {
        b.iter(|| {
            flip = !flip;
            let status = if flip { TaskStatus::InProgress } else { TaskStatus::Pending };
            board.update(&ids[7], &TaskChange { status: Some(status), ..TaskChange::default() }).unwrap()
        });
    });
}

criterion_group!(benches, bench_planning);
criterion_main!(benches);
