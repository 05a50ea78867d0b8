//! Shared set-up for the loop tests: test tools, a session over them, and a run against the
//! fake server with the trajectory checked afterwards.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tackle_agent::{Agent, AgentConfig, AgentParts, CallFormat, Observer, RunOutcome, ToolRefresh, Trajectory};
use tackle_core::permission::{AutoApprover, PermissionMode};
use tackle_core::{
    Executor, ExecutorConfig, Notifications, Registry, Tool, ToolContext, ToolError, ToolOutput, ToolSession,
    ToolSessionConfig, ToolSpec,
};
use tackle_llm::{LlmClient, ProviderConfig, ProviderKind};
use tackle_policy::permission::{ModePolicy, NonInteractiveApprover};
use tackle_testkit::{FakeLlm, Protocol};
use tokio_util::sync::CancellationToken;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct TextInput {
    /// The text.
    pub text: String,
}

/// Read-only, concurrency-safe: answers with its text; counts its runs in session state.
#[derive(Debug, Default)]
pub struct Echo;

#[derive(Debug, Default)]
pub struct EchoRuns(pub AtomicUsize);

impl Tool for Echo {
    type Input = TextInput;
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("echo", "Echo the text.").read_only().concurrency_safe()
    }
    async fn call(&self, input: TextInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        ctx.state().get::<EchoRuns>().0.fetch_add(1, Ordering::SeqCst);
        Ok(ToolOutput::text(format!("echo: {}", input.text)))
    }
}

/// Deferred (toolset `deferred`): sent only after `tool_search` loads it.
#[derive(Debug, Default)]
pub struct Weather;

impl Tool for Weather {
    type Input = TextInput;
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("weather_forecast", "Get the weather forecast for a city.")
            .search_hint("weather forecast")
            .loading(tackle_core::Loading::Deferred)
            .read_only()
    }
    async fn call(&self, input: TextInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(format!("sunny in {}", input.text)))
    }
}

/// Fails with its text.
#[derive(Debug, Default)]
pub struct Fail;

impl Tool for Fail {
    type Input = TextInput;
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("fail", "Fail with the text.").read_only()
    }
    async fn call(&self, input: TextInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Err(ToolError::Failed(format!("failed: {}", input.text)))
    }
}

/// Not read-only: asks in the default mode. Queues a notification.
#[derive(Debug, Default)]
pub struct Notify;

impl Tool for Notify {
    type Input = TextInput;
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("notify", "Queue a notification.")
    }
    async fn call(&self, input: TextInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        ctx.state().get::<Notifications>().push(format!("Background job job-1 ({}) finished: exited 0.", input.text));
        Ok(ToolOutput::text("queued"))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct SleepInput {
    /// Milliseconds.
    pub ms: u64,
}

/// Sleeps, answering its own cancellation.
#[derive(Debug, Default)]
pub struct Sleep;

impl Tool for Sleep {
    type Input = SleepInput;
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("sleep", "Sleep.").read_only().concurrency_safe()
    }
    async fn call(&self, input: SleepInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(input.ms)) => Ok(ToolOutput::text("slept")),
            () = ctx.cancel_token().cancelled() => Err(ToolError::Cancelled("Cancelled by the user.".into())),
        }
    }
}

/// The built-ins plus the test tools.
pub fn registry() -> Registry {
    let mut registry = tackle_tools::builtin_registry();
    registry.register(&["test"], || Echo);
    registry.register(&["test"], || Fail);
    registry.register(&["test"], || Notify);
    registry.register(&["test"], || Sleep);
    registry.register(&["deferred"], || Weather);
    registry
}

/// A run's settings.
pub struct RunSpec {
    pub protocol: Protocol,
    pub stream: bool,
    pub mode: PermissionMode,
    pub max_steps: u32,
    pub cancel_after: Option<Duration>,
    pub format: CallFormat,
    pub refresh: Option<Arc<dyn ToolRefresh>>,
    pub observer: Option<Arc<dyn Observer>>,
    /// The `--tools` allowlist of the session.
    pub tools: &'static str,
    /// Files written into the workspace before the run (path, bytes).
    pub files: Vec<(&'static str, Vec<u8>)>,
    /// The model takes images (`vision`).
    pub vision: bool,
    /// Record request bodies (`--trajectory-full`).
    pub trajectory_full: bool,
}

impl RunSpec {
    pub fn new(protocol: Protocol) -> Self {
        RunSpec {
            protocol,
            stream: true,
            mode: PermissionMode::Bypass,
            max_steps: 200,
            cancel_after: None,
            format: CallFormat::Native,
            refresh: None,
            observer: None,
            tools: "default,trae,test",
            files: Vec::new(),
            vision: true,
            trajectory_full: false,
        }
    }
}

/// What a run left behind.
pub struct Ran {
    pub outcome: RunOutcome,
    pub agent: Agent,
    pub trajectory: Vec<Value>,
    pub workspace: tempfile::TempDir,
}

impl Ran {
    /// The trajectory events of one type.
    pub fn events(&self, kind: &str) -> Vec<&Value> {
        self.trajectory.iter().filter(|e| e["type"] == kind).collect()
    }

    /// The content of the `tool_output` of `call_id`.
    pub fn output(&self, call_id: &str) -> (String, bool) {
        let event = self
            .events("tool_output")
            .into_iter()
            .find(|e| e["call_id"] == call_id)
            .unwrap_or_else(|| panic!("no tool_output for {call_id}"));
        (event["content"].as_str().unwrap().to_owned(), event["is_error"].as_bool().unwrap())
    }
}

pub async fn run(server: &FakeLlm, spec: RunSpec, task: &str) -> Ran {
    let workspace = tempfile::tempdir().unwrap();
    for (path, bytes) in &spec.files {
        std::fs::write(workspace.path().join(path), bytes).unwrap();
    }
    let registry = registry();
    let selection = registry.select(spec.tools, "default").unwrap();
    let mut session_config = ToolSessionConfig::new(workspace.path().to_owned());
    if !spec.files.is_empty() {
        // The file tools need the workspace's path policy.
        let root = workspace.path().canonicalize().unwrap();
        let policy = tackle_sandbox::WorkspacePolicy::new(&root).unwrap();
        session_config.path_policy = Some(Arc::new(policy) as Arc<dyn tackle_core::PathPolicy>);
    }
    let session = ToolSession::new(session_config, registry.instantiate(&selection));
    let kind = match spec.protocol {
        Protocol::OpenAi => ProviderKind::OpenAi,
        Protocol::Anthropic => ProviderKind::Anthropic,
    };
    let mut provider = ProviderConfig::new(kind, "fake-model");
    provider.base_url = server.base_url(spec.protocol);
    provider.api_key = Some("sk-test".into());
    provider.retry.base = Duration::from_millis(5);
    provider.stream = spec.stream;
    provider.vision = spec.vision;
    let client = LlmClient::new(provider).unwrap();
    let path = workspace.path().join(".tackle/trajectories/run.jsonl");
    let trajectory = Trajectory::create(&path).unwrap();
    let approver: Arc<dyn tackle_core::permission::Approver> =
        if spec.mode == PermissionMode::Bypass { Arc::new(AutoApprover) } else { Arc::new(NonInteractiveApprover) };
    let executor = Executor::new(ExecutorConfig::default())
        .with_policy(Arc::new(ModePolicy::new(spec.mode)))
        .with_approver(approver);
    let config = AgentConfig {
        max_steps: spec.max_steps,
        permission_mode: spec.mode,
        call_format: spec.format,
        trajectory_full: spec.trajectory_full,
        ..AgentConfig::default()
    };
    let mut parts = AgentParts {
        config,
        trajectory: Some(trajectory),
        refresh: spec.refresh,
        ..AgentParts::new(Arc::new(client), session, executor)
    };
    if let Some(observer) = spec.observer {
        parts.observer = observer;
    }
    let mut agent = parts.build();
    let cancel = CancellationToken::new();
    if let Some(after) = spec.cancel_after {
        let token = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            token.cancel();
        });
    }
    let outcome = agent.run(task, &cancel).await;
    let text = std::fs::read_to_string(&path).unwrap();
    tackle_agent::trajectory::check(text.as_bytes()).unwrap_or_else(|v| panic!("invalid trajectory: {v}\n{text}"));
    let trajectory = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    Ran { outcome, agent, trajectory, workspace }
}

pub const BOTH: [Protocol; 2] = [Protocol::OpenAi, Protocol::Anthropic];
