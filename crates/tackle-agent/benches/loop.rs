//! Loop overhead per step (issue 6 target: ≤ 1 ms per step, excluding model and tool time).
//!
//! Two measurements over the same fake server (loopback HTTP, streamed replies):
//! - `loop/20_steps`: a whole 20-step run (each reply one trivial read-only call), trajectory
//!   written;
//! - `client/20_requests`: the same 20 requests, with the same growing history, sent by the
//!   client alone.
//!
//! - `loop_own_time/20_steps`: the loop's own share of a 20-step run, measured directly: the
//!   whole run minus the time from each request's start to its complete reply (the client and
//!   the model) and minus each tool's run time (the executor's admission, scheduling and
//!   output budget stay counted).
//!
//! Divide by 20 for the per-step figure; `(loop - client) / 20` is a cross-check.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_agent::{AgentConfig, AgentEvent, AgentParts, Observer, Trajectory};
use tackle_core::permission::{AutoApprover, PermissionMode};
use tackle_core::{
    ExecEvent, Executor, ExecutorConfig, Registry, Tool, ToolContext, ToolError, ToolOutput, ToolSession,
    ToolSessionConfig, ToolSpec,
};
use tackle_llm::{
    AssistantMessage, ChatRequest, LlmClient, Message, NativeCall, ProviderConfig, ProviderKind, ToolResult, UserPart,
};
use tackle_policy::permission::ModePolicy;
use tackle_testkit::{FakeLlm, Reply, Script, Turn};
use tokio_util::sync::CancellationToken;

const STEPS: u32 = 20;

#[derive(Debug, Deserialize, JsonSchema)]
struct EchoInput {
    /// The text.
    text: String,
}

struct Echo;

impl Tool for Echo {
    type Input = EchoInput;
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("echo", "Echo the text.").read_only().concurrency_safe()
    }
    async fn call(&self, input: EchoInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(input.text))
    }
}

fn reply() -> Reply {
    Reply::text("Checking the next file.")
        .call("c", "echo", json!({"text": "a line of output from the tool"}))
        .usage(1000, 20)
}

fn client(server: &FakeLlm) -> LlmClient {
    let mut config = ProviderConfig::new(ProviderKind::OpenAi, "fake");
    config.base_url = server.openai_base_url();
    config.api_key = Some("k".into());
    LlmClient::new(config).unwrap()
}

/// Stamps the model's and the tools' time, so the loop's own time can be taken apart.
#[derive(Default)]
struct Stopwatch {
    inner: Mutex<Stamps>,
}

#[derive(Default)]
struct Stamps {
    request_started: Option<Instant>,
    tool_started: Option<Instant>,
    model: Duration,
    tools: Duration,
}

impl Observer for Stopwatch {
    fn on_event(&self, event: &AgentEvent) {
        let mut stamps = self.inner.lock().unwrap();
        match event {
            AgentEvent::Step { .. } => stamps.request_started = Some(Instant::now()),
            AgentEvent::Replied { .. } => {
                if let Some(started) = stamps.request_started.take() {
                    stamps.model += started.elapsed();
                }
            }
            AgentEvent::Exec(ExecEvent::Started { .. }) => stamps.tool_started = Some(Instant::now()),
            AgentEvent::Exec(ExecEvent::Finished { .. }) => {
                if let Some(started) = stamps.tool_started.take() {
                    stamps.tools += started.elapsed();
                }
            }
            _ => {}
        }
    }
}

/// Returns the whole run's time and the loop's own share (the whole minus the time between
/// each request's start and its complete reply, minus the tools' run time).
async fn full_run(server: &FakeLlm, dir: &std::path::Path) -> (Duration, Duration) {
    let mut registry = Registry::new();
    registry.register(&["default"], || Echo);
    registry.register(&["default"], tackle_tools::control::TaskDone::default);
    let selection = registry.select("default", "default").unwrap();
    let session = ToolSession::new(ToolSessionConfig::new(dir.to_owned()), registry.instantiate(&selection));
    let executor = Executor::new(ExecutorConfig::default())
        .with_policy(Arc::new(ModePolicy::new(PermissionMode::Bypass)))
        .with_approver(Arc::new(AutoApprover));
    let config = AgentConfig { max_steps: STEPS, ..AgentConfig::default() };
    let trajectory = Trajectory::create(dir.join("t.jsonl")).unwrap();
    let stopwatch = Arc::new(Stopwatch::default());
    let mut agent = AgentParts {
        config,
        trajectory: Some(trajectory),
        observer: stopwatch.clone(),
        ..AgentParts::new(Arc::new(client(server)), session, executor)
    }
    .build();
    let started = Instant::now();
    let outcome = agent.run("benchmark", &CancellationToken::new()).await;
    let total = started.elapsed();
    assert_eq!(outcome.steps, STEPS);
    let stamps = stopwatch.inner.lock().unwrap();
    (total, total.saturating_sub(stamps.model + stamps.tools))
}

async fn client_only(server: &FakeLlm, tools: &[serde_json::Value]) -> Duration {
    let client = client(server);
    let mut history = vec![Message::user_text("benchmark")];
    let started = Instant::now();
    for step in 0..STEPS {
        let request = ChatRequest { system: "You are Tackle.", messages: &history, tools };
        let completion = client.complete(&request, &mut |_| {}).await.unwrap();
        let id = format!("c_{step}");
        history.push(Message::Assistant(AssistantMessage {
            tool_calls: vec![NativeCall { id: id.clone(), ..completion.message.tool_calls[0].clone() }],
            ..completion.message
        }));
        history.push(Message::User {
            parts: vec![UserPart::ToolResult(ToolResult {
                call_id: id,
                content: "a line of output from the tool".into(),
                is_error: false,
                images: Vec::new(),
            })],
        });
    }
    started.elapsed()
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let server = runtime.block_on(FakeLlm::start(Script::new([Turn::reply(reply())]).repeat_last()));
    let dir = tempfile::tempdir().unwrap();
    let spec = ToolSpec::new("echo", "Echo the text.").input_schema(tackle_core::schema::schema_for::<EchoInput>());
    let tools = client(&server).render_tools([&spec]).tools;
    let mut group = c.benchmark_group("steps");
    group.sample_size(20);
    group.bench_function("loop/20_steps", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| runtime.block_on(full_run(&server, dir.path())).0).sum());
    });
    group.bench_function("loop_own_time/20_steps", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| runtime.block_on(full_run(&server, dir.path())).1).sum());
    });
    group.bench_function("client/20_requests", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| runtime.block_on(client_only(&server, &tools))).sum());
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
