//! Executor overhead: resolve + decode + validate + dispatch + budget of a trivial tool, and
//! one turn of 1,000 concurrency-safe calls (issue #2 targets: ≤ 10 µs per call; ≤ 5 ms of
//! scheduler overhead for the 1,000-call turn).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_core::{
    Executor, Registry, Tool, ToolCall, ToolContext, ToolError, ToolOutput, ToolSession, ToolSessionConfig, ToolSpec,
};
use tokio_util::sync::CancellationToken;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NoopInput {
    /// Some text.
    text: String,
    /// A number (coerced from a string in the bench).
    #[allow(dead_code)]
    count: Option<u32>,
}

struct Noop;

impl Tool for Noop {
    type Input = NoopInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("noop", "Does nothing.").read_only().concurrency_safe()
    }

    async fn call(&self, input: NoopInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(input.text))
    }
}

fn session(dir: &std::path::Path) -> ToolSession {
    let mut registry = Registry::new();
    registry.register(&["default"], || Noop);
    let selection = registry.select("default", "default").unwrap();
    ToolSession::new(ToolSessionConfig::new(dir), registry.instantiate(&selection))
}

fn bench_executor(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let session = session(dir.path());
    let executor = Executor::default();
    let cancel = CancellationToken::new();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();

    c.bench_function("one trivial call (resolve+validate+dispatch+budget)", |b| {
        b.to_async(&runtime).iter(|| {
            let call = ToolCall::from_text("c1", "noop", r#"{"text": "hello", "count": "3"}"#);
            executor.run(&session, call, &cancel)
        });
    });

    let calls: Vec<ToolCall> =
        (0..1000).map(|i| ToolCall::new(format!("c{i}"), "noop", json!({"text": "x"}))).collect();
    c.bench_function("one turn of 1000 concurrency-safe calls", |b| {
        b.to_async(&runtime).iter(|| executor.run_turn(&session, calls.clone(), &cancel));
    });
}

criterion_group!(benches, bench_executor);
criterion_main!(benches);
