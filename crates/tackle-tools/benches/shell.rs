//! The persistent shell through the executor: one `echo hi` round trip in a warm session
//! (issue #4 target: ≤ 0.5 ms per call), and a command printing 100 MB (target: ≤ 0.4 s with
//! bounded memory). `bench/shell_echo.sh` and `bench/shell_output.sh` measure the same through
//! the `tackle` binary, side by side with spawning a shell per call.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tackle_core::{Executor, ToolCall, ToolSession, ToolSessionConfig};
use tokio_util::sync::CancellationToken;

fn bench_shell(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let registry = tackle_tools::builtin_registry();
    let selection = registry.select("bash", "all").unwrap();
    let session =
        ToolSession::new(ToolSessionConfig::new(dir.path().canonicalize().unwrap()), registry.instantiate(&selection));
    let executor = Executor::default();
    let cancel = CancellationToken::new();
    let run = |command: &str| {
        let call = ToolCall::new("bench", "bash", json!({ "command": command }));
        runtime.block_on(executor.run(&session, call, &cancel))
    };
    assert_eq!(run("echo warm").text_content(), "warm");

    c.bench_function("bash_echo_round_trip", |b| b.iter(|| run("echo hi")));

    let mut group = c.benchmark_group("bash_large_output");
    group.sample_size(10).measurement_time(Duration::from_secs(5));
    group.bench_function("100MB", |b| {
        b.iter(|| assert!(run("yes | head -c 100000000").meta.truncated));
    });
    group.finish();
    runtime.block_on(session.close());
}

criterion_group!(benches, bench_shell);
criterion_main!(benches);
