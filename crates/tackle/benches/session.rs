//! The front door's own cost (issue #13 targets): building a session with the default tools and
//! no MCP servers (≤ 2 ms, and no sandbox probe before a shell tool is called), and
//! `TackleSession::call` of a trivial tool (≤ 10 µs over the tool's own time).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use criterion::{Criterion, criterion_group, criterion_main};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle::{Config, SessionBuilder, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

/// The input of the trivial tool.
#[derive(Deserialize, JsonSchema)]
struct NoopInput {
    /// Some text.
    text: String,
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

fn bench_session(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("tackle");
    group.bench_function("build the default session", |b| {
        b.to_async(&runtime).iter(|| async {
            let session = SessionBuilder::new(dir.path()).config(Config::default()).build().await.unwrap();
            session.close().await;
        });
    });
    let session =
        runtime.block_on(SessionBuilder::new(dir.path()).config(Config::default()).tool(Noop).build()).unwrap();
    group.bench_function("call a trivial tool", |b| {
        b.to_async(&runtime).iter(|| async {
            let output = session.call("noop", json!({"text": "hello"})).await;
            assert!(!output.is_error);
        });
    });
    group.finish();
    runtime.block_on(session.close());
}

criterion_group!(benches, bench_session);
criterion_main!(benches);
