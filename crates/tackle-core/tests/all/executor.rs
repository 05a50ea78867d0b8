//! The executor pipeline through its public API, with small test tools: every error path
//! gives one clear output and the executor keeps serving; scheduling never overlaps unsafe
//! calls and keeps call order; timeouts, cancellation and panics still answer.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tackle_core::hooks::{HookCall, PreHookOutcome, ToolHook};
use tackle_core::permission::{AutoApprover, Decision, PermissionPolicy, PermissionRequest};
use tackle_core::{
    BoxFuture, ErrorKind, Executor, ExecutorConfig, Registry, Tool, ToolCall, ToolContext, ToolError, ToolOutput,
    ToolSession, ToolSessionConfig, ToolSpec,
};
use tokio_util::sync::CancellationToken;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct EchoInput {
    /// Text to echo.
    text: String,
    /// Repeat count.
    #[schemars(range(min = 1, max = 5))]
    times: Option<u32>,
    /// Output style.
    #[allow(dead_code)]
    style: Option<Style>,
    /// A list of numbers.
    numbers: Option<Vec<i64>>,
    /// Upper-case the text.
    shout: Option<bool>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Style {
    Plain,
    Fancy,
}

/// A read-only, concurrency-safe echo.
struct Echo;

impl Tool for Echo {
    type Input = EchoInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("echo_text", "Echo text back.").alias("Echo").read_only().concurrency_safe()
    }

    async fn call(&self, input: EchoInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let text = if input.shout == Some(true) { input.text.to_uppercase() } else { input.text };
        let repeated = text.repeat(input.times.unwrap_or(1) as usize);
        let sum: i64 = input.numbers.unwrap_or_default().iter().sum();
        Ok(ToolOutput::text(repeated).with_structured(json!({"sum": sum})))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
struct SleepInput {
    ms: u64,
    #[serde(default)]
    cooperative: bool,
}

/// Sleeps; tracks how many calls overlap.
#[derive(Clone)]
struct Sleeper {
    name: &'static str,
    safe: bool,
    running: Arc<AtomicUsize>,
    max_running: Arc<AtomicUsize>,
    order: Arc<std::sync::Mutex<Vec<u64>>>,
}

impl Tool for Sleeper {
    type Input = SleepInput;

    fn spec(&self) -> ToolSpec {
        let spec = ToolSpec::new(self.name, "Sleep for a while.");
        if self.safe { spec.concurrency_safe() } else { spec }
    }

    async fn call(&self, input: SleepInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let now = self.running.fetch_add(1, Ordering::SeqCst) + 1;
        self.max_running.fetch_max(now, Ordering::SeqCst);
        self.order.lock().unwrap().push(input.ms);
        let sleep = tokio::time::sleep(Duration::from_millis(input.ms));
        let result = if input.cooperative {
            tokio::select! {
                () = sleep => Ok(ToolOutput::text(format!("slept {}", input.ms))),
                () = ctx.cancel_token().cancelled() => Ok(ToolOutput::text("partial output before the stop")),
            }
        } else {
            sleep.await;
            Ok(ToolOutput::text(format!("slept {}", input.ms)))
        };
        self.running.fetch_sub(1, Ordering::SeqCst);
        result
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Empty {}

#[derive(Debug, Deserialize, JsonSchema)]
struct PanicInput {
    /// Panic while the executor asks whether the call is read-only, not in `call`.
    #[serde(default)]
    in_prepare: bool,
}

/// Panics in `call`, in `prepare` when asked, and always in `close`.
struct Panicker;

#[allow(clippy::panic)]
impl Tool for Panicker {
    type Input = PanicInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("explode", "Panics.")
    }

    fn is_read_only(&self, input: &PanicInput) -> bool {
        if input.in_prepare {
            panic!("secret detail of a classifier");
        }
        false
    }

    async fn call(&self, _input: PanicInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        panic!("secret internal detail");
    }

    async fn close(&self) {
        panic!("secret detail of closing");
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
struct BigInput {
    chars: usize,
}

struct Big;

impl Tool for Big {
    type Input = BigInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("big_output", "Prints many numbered lines.")
    }

    async fn call(&self, input: BigInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let mut text = String::with_capacity(input.chars + 16);
        let mut line = 0;
        while text.len() < input.chars {
            text.push_str(&format!("line {line:09} \u{1b}[32mok\u{1b}[0m\n"));
            line += 1;
        }
        Ok(ToolOutput::text(text))
    }
}

struct Failing;

impl Tool for Failing {
    type Input = Empty;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("fail_always", "Fails.")
    }

    async fn call(&self, _input: Empty, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Err(ToolError::Failed("it failed; try again later".into()))
    }
}

#[derive(Debug, Deserialize, JsonSchema)]
struct GuardedInput {
    /// Required unless `skip` is true.
    path: Option<String>,
    skip: Option<bool>,
}

/// Needs `path` unless `skip` (a rule the schema cannot say), and refuses the path `secret`
/// as the path policy would, from inside the call.
struct Guarded;

impl Tool for Guarded {
    type Input = GuardedInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("guarded", "Checks its own arguments.")
    }

    fn validate(&self, input: &GuardedInput) -> Result<(), ToolError> {
        match (&input.path, input.skip) {
            (None, None | Some(false)) => Err(ToolError::InvalidInput("No path provided for the guarded tool".into())),
            _ => Ok(()),
        }
    }

    async fn call(&self, input: GuardedInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        match input.path.as_deref() {
            Some("secret") => Err(ToolError::Denied("secret is outside the workspace".into())),
            _ => Ok(ToolOutput::text("ran")),
        }
    }
}

struct Fixture {
    session: ToolSession,
    executor: Executor,
    max_running: Arc<AtomicUsize>,
    order: Arc<std::sync::Mutex<Vec<u64>>>,
    _dir: tempfile::TempDir,
}

fn fixture(config: ExecutorConfig) -> Fixture {
    let running = Arc::new(AtomicUsize::new(0));
    let max_running = Arc::new(AtomicUsize::new(0));
    let order = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut registry = Registry::new();
    registry.register(&["default"], || Echo);
    let sleeper = Sleeper {
        name: "sleep_safe",
        safe: true,
        running,
        max_running: Arc::clone(&max_running),
        order: Arc::clone(&order),
    };
    let unsafe_sleeper = Sleeper { name: "sleep_unsafe", safe: false, ..sleeper.clone() };
    registry.register(&["default"], move || sleeper.clone());
    registry.register(&["default"], move || unsafe_sleeper.clone());
    registry.register(&["default"], || Panicker);
    registry.register(&["default"], || Big);
    registry.register(&["default"], || Failing);
    registry.register(&["default"], || Guarded);
    let selection = registry.select("default", "default").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let session = ToolSession::new(ToolSessionConfig::new(dir.path()), registry.instantiate(&selection));
    Fixture { session, executor: Executor::new(config), max_running, order, _dir: dir }
}

async fn run(fx: &Fixture, name: &str, args: Value) -> ToolOutput {
    fx.executor.run(&fx.session, ToolCall::new("c1", name, args), &CancellationToken::new()).await
}

async fn run_text(fx: &Fixture, name: &str, args: &str) -> ToolOutput {
    fx.executor.run(&fx.session, ToolCall::from_text("c1", name, args), &CancellationToken::new()).await
}

fn assert_rejected(output: &ToolOutput, kind: ErrorKind, text: &str) {
    assert!(output.is_error, "{output:?}");
    assert!(output.meta.rejected, "{output:?}");
    assert_eq!(output.meta.error_kind, Some(kind));
    assert_eq!(output.text_content(), text);
}

#[tokio::test]
async fn a_good_call_runs_and_reports_meta() {
    let fx = fixture(ExecutorConfig::default());
    let output = run(&fx, "echo_text", json!({"text": "hi", "times": "2", "numbers": "[1, 2]", "shout": "true"})).await;
    assert_eq!(output.text_content(), "HIHI");
    assert!(!output.is_error);
    assert_eq!(output.call_id, "c1");
    assert_eq!(output.structured, Some(json!({"sum": 3})));
    assert_eq!(output.meta.coerced, vec!["times", "numbers", "shout"]);
    assert!(output.meta.duration_ms.is_some());
}

#[tokio::test]
async fn every_bad_input_gets_one_clear_error_and_the_executor_keeps_serving() {
    let fx = fixture(ExecutorConfig::default());
    let cases: Vec<(ToolOutput, ErrorKind, &str)> = vec![
        (
            run_text(&fx, "echo_text", "{\"text\": ").await,
            ErrorKind::InvalidInput,
            "Invalid JSON in arguments for tool 'echo_text': EOF while parsing a value at line 1 column 9. Send the arguments as one JSON object.",
        ),
        (
            run(&fx, "echo_text", json!("just a string")).await,
            ErrorKind::InvalidInput,
            "Arguments for tool 'echo_text' must be a JSON object, got a string",
        ),
        (run(&fx, "echo_text", json!({})).await, ErrorKind::InvalidInput, "No text provided for the echo_text tool"),
        (
            run(&fx, "echo_text", json!({"text": 5})).await,
            ErrorKind::InvalidInput,
            "Invalid parameters for tool 'echo_text': text should be string",
        ),
        (
            run(&fx, "echo_text", json!({"text": "x", "times": 9, "style": "loud", "numbers": [1, "two"], "extra": 1}))
                .await,
            ErrorKind::InvalidInput,
            "Invalid parameters for tool 'echo_text': times must be <= 5; style must be one of: plain, fancy; numbers[1] should be integer; unexpected parameter extra",
        ),
        (
            // The schema says integer; only serde knows an i64 ends at 2^63 - 1.
            run(&fx, "echo_text", json!({"text": "x", "numbers": [1, 1e19]})).await,
            ErrorKind::InvalidInput,
            "Invalid parameters for tool 'echo_text': numbers[1] must be <= 9223372036854775807",
        ),
        (
            run(&fx, "no_such_tool", json!({})).await,
            ErrorKind::NotFound,
            "Tool 'no_such_tool' not found. Available tools: echo_text, sleep_safe, sleep_unsafe, explode, big_output, fail_always, guarded",
        ),
    ];
    for (output, kind, text) in &cases {
        assert_rejected(output, *kind, text);
    }
    let after = run(&fx, "echo_text", json!({"text": "still serving"})).await;
    assert_eq!(after.text_content(), "still serving");
    let whole_float = run(&fx, "echo_text", json!({"text": "ab", "times": 3.0})).await;
    assert_eq!(whole_float.text_content(), "ababab");
    assert_eq!(whole_float.meta.coerced, vec!["times"]);
}

#[tokio::test]
async fn names_resolve_by_alias_and_normalized_form() {
    let fx = fixture(ExecutorConfig::default());
    for name in ["echo_text", "Echo", "ECHO_TEXT", "Echo-Text", "echotext"] {
        let output = run(&fx, name, json!({"text": "ok"})).await;
        assert_eq!(output.text_content(), "ok", "{name}");
    }
}

#[tokio::test]
async fn huge_arguments_are_handled() {
    let fx = fixture(ExecutorConfig::default());
    let big = "x".repeat(10 * 1024 * 1024);
    let output = run(&fx, "echo_text", json!({"text": big})).await;
    assert!(!output.is_error);
    assert!(output.meta.truncated);
    let malformed = format!("{{\"text\": \"{big}");
    let output = run_text(&fx, "echo_text", &malformed).await;
    assert!(output.meta.rejected);
    assert!(output.text_content().starts_with("Invalid JSON in arguments for tool 'echo_text': EOF while parsing"));
}

#[tokio::test]
async fn a_panicking_tool_becomes_a_generic_internal_error() {
    let fx = fixture(ExecutorConfig::default());
    let output = run(&fx, "explode", json!({})).await;
    assert!(output.is_error);
    assert!(!output.meta.rejected);
    assert_eq!(output.meta.error_kind, Some(ErrorKind::Internal));
    assert_eq!(output.text_content(), "Tool 'explode' failed with an internal error; details are in the log.");
    assert_eq!(run(&fx, "echo_text", json!({"text": "alive"})).await.text_content(), "alive");

    let output = run(&fx, "explode", json!({"in_prepare": true})).await;
    assert!(output.is_error);
    assert_eq!(output.meta.error_kind, Some(ErrorKind::Internal));
    assert_eq!(output.text_content(), "Tool 'explode' failed with an internal error; details are in the log.");
    assert_eq!(run(&fx, "echo_text", json!({"text": "alive"})).await.text_content(), "alive");

    // Its `close` panics too; closing the session still finishes.
    fx.session.close().await;
}

#[tokio::test]
async fn a_tool_error_is_not_a_rejection() {
    let fx = fixture(ExecutorConfig::default());
    let output = run(&fx, "fail_always", json!({})).await;
    assert!(output.is_error && !output.meta.rejected);
    assert_eq!(output.meta.error_kind, Some(ErrorKind::Failed));
    assert_eq!(output.text_content(), "it failed; try again later");
}

#[tokio::test]
async fn a_tools_own_argument_check_and_its_policy_refusal_are_rejections() {
    let fx = fixture(ExecutorConfig::default());
    assert_rejected(
        &run(&fx, "guarded", json!({})).await,
        ErrorKind::InvalidInput,
        "No path provided for the guarded tool",
    );
    let refused = run(&fx, "guarded", json!({"skip": false})).await;
    assert_rejected(&refused, ErrorKind::InvalidInput, "No path provided for the guarded tool");
    assert_eq!(run(&fx, "guarded", json!({"skip": true})).await.text_content(), "ran");
    let refused = run(&fx, "guarded", json!({"path": "secret"})).await;
    assert_rejected(&refused, ErrorKind::Denied, "secret is outside the workspace");
    let ran = run(&fx, "guarded", json!({"path": "ok"})).await;
    assert!(!ran.is_error && !ran.meta.rejected, "{ran:?}");
}

/// Asserts `text` is `{prefix}{seconds} s.` for some number of seconds (measured on the
/// wall clock, while the deadlines run on tokio's, paused in these tests).
fn assert_aborted_after(text: &str, prefix: &str) {
    let seconds = text.strip_prefix(prefix).and_then(|rest| rest.strip_suffix(" s."));
    assert!(seconds.is_some_and(|s| s.parse::<f64>().is_ok()), "{text}");
}

/// Asserts that `expected` passed on tokio's clock since `started` (to its millisecond ticks).
fn assert_took(started: tokio::time::Instant, expected: Duration) {
    let took = started.elapsed();
    assert!(took >= expected && took < expected + Duration::from_millis(5), "took {took:?}, not {expected:?}");
}

// The clock is paused: the real deadline (120 s) and grace period (5 s) pass at once, in
// tokio's time, and the test measures them there.
#[tokio::test(start_paused = true)]
async fn a_hanging_tool_times_out_with_an_output() {
    let fx = fixture(ExecutorConfig::default());
    let (timeout, grace) = (tackle_core::executor::DEFAULT_TIMEOUT, tackle_core::executor::DEFAULT_ABORT_GRACE);
    let started = tokio::time::Instant::now();
    let output = run(&fx, "sleep_unsafe", json!({"ms": 3_600_000})).await;
    // The tool ignores the cancellation: the executor waits out the grace period, then answers.
    assert_took(started, timeout + grace);
    assert!(output.is_error);
    assert_eq!(output.meta.error_kind, Some(ErrorKind::Timeout));
    assert_aborted_after(&output.text_content(), "Tool 'sleep_unsafe' timed out and was aborted after ");
    // A tool that notices the cancellation answers with its own partial output, at once.
    let started = tokio::time::Instant::now();
    let output = run(&fx, "sleep_unsafe", json!({"ms": 3_600_000, "cooperative": true})).await;
    assert_took(started, timeout);
    assert!(output.is_error);
    assert_eq!(output.meta.error_kind, Some(ErrorKind::Timeout));
    assert_eq!(output.text_content(), "partial output before the stop");
    assert_eq!(run(&fx, "echo_text", json!({"text": "next"})).await.text_content(), "next");
}

#[tokio::test(start_paused = true)]
async fn a_cancelled_turn_answers_every_call() {
    let fx = fixture(ExecutorConfig::default());
    let cancel = CancellationToken::new();
    let canceller = cancel.clone();
    let pressed = Duration::from_secs(30);
    tokio::spawn(async move {
        tokio::time::sleep(pressed).await;
        canceller.cancel();
    });
    let calls = vec![
        ToolCall::new("a", "sleep_unsafe", json!({"ms": 3_600_000})),
        ToolCall::new("b", "sleep_unsafe", json!({"ms": 1})),
    ];
    let started = tokio::time::Instant::now();
    let outputs = fx.executor.run_turn(&fx.session, calls, &cancel).await;
    assert_took(started, pressed + tackle_core::executor::DEFAULT_ABORT_GRACE);
    assert_eq!(outputs.len(), 2);
    assert_eq!(outputs[0].call_id, "a");
    assert_aborted_after(&outputs[0].text_content(), "Cancelled by the user. The call was aborted after ");
    assert_eq!(outputs[0].meta.error_kind, Some(ErrorKind::Cancelled));
    assert_eq!(outputs[1].call_id, "b");
    assert_eq!(outputs[1].text_content(), "Not executed: the run stopped (cancelled by the user).");
    assert_eq!(*fx.order.lock().unwrap(), vec![3_600_000], "b never ran");
}

#[tokio::test]
async fn unsafe_calls_never_overlap_and_outputs_keep_call_order() {
    let fx = fixture(ExecutorConfig::default());
    let durations = [30u64, 1, 20, 5, 10, 2, 15, 3];
    let calls: Vec<ToolCall> = durations
        .iter()
        .enumerate()
        .map(|(i, ms)| ToolCall::new(format!("u{i}"), "sleep_unsafe", json!({"ms": ms})))
        .collect();
    let outputs = fx.executor.run_turn(&fx.session, calls, &CancellationToken::new()).await;
    assert_eq!(fx.max_running.load(Ordering::SeqCst), 1);
    assert_eq!(*fx.order.lock().unwrap(), durations.to_vec());
    let ids: Vec<&str> = outputs.iter().map(|o| o.call_id.as_str()).collect();
    assert_eq!(ids, vec!["u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7"]);
    let texts: Vec<String> = outputs.iter().map(ToolOutput::text_content).collect();
    assert_eq!(texts, durations.iter().map(|ms| format!("slept {ms}")).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_thousand_unsafe_calls_never_overlap() {
    let fx = fixture(ExecutorConfig::default());
    let calls: Vec<ToolCall> =
        (0..1000).map(|i| ToolCall::new(format!("u{i}"), "sleep_unsafe", json!({"ms": 0}))).collect();
    let outputs = fx.executor.run_turn(&fx.session, calls, &CancellationToken::new()).await;
    assert_eq!(outputs.len(), 1000);
    assert_eq!(fx.max_running.load(Ordering::SeqCst), 1);
    assert!(outputs.iter().enumerate().all(|(i, o)| o.call_id == format!("u{i}")));
}

#[tokio::test]
async fn safe_calls_run_together_but_not_across_an_unsafe_one() {
    let fx = fixture(ExecutorConfig::default());
    let calls = vec![
        ToolCall::new("s1", "sleep_safe", json!({"ms": 200})),
        ToolCall::new("s2", "sleep_safe", json!({"ms": 200})),
        ToolCall::new("s3", "sleep_safe", json!({"ms": 200})),
        ToolCall::new("u1", "sleep_unsafe", json!({"ms": 10})),
        ToolCall::new("s4", "sleep_safe", json!({"ms": 10})),
    ];
    let started = std::time::Instant::now();
    let outputs = fx.executor.run_turn(&fx.session, calls, &CancellationToken::new()).await;
    let elapsed = started.elapsed();
    assert_eq!(fx.max_running.load(Ordering::SeqCst), 3, "the three safe calls overlap, nothing else does");
    assert!(elapsed < Duration::from_millis(550), "safe calls ran one after another: {elapsed:?}");
    assert_eq!(outputs.iter().map(|o| o.call_id.as_str()).collect::<Vec<_>>(), ["s1", "s2", "s3", "u1", "s4"]);
    assert_eq!(*fx.order.lock().unwrap().last().unwrap(), 10);
}

#[tokio::test]
async fn fifty_megabytes_of_output_are_cut_and_spilled() {
    let fx = fixture(ExecutorConfig::default());
    let output = run(&fx, "big_output", json!({"chars": 50 * 1024 * 1024})).await;
    assert!(!output.is_error);
    assert!(output.meta.truncated);
    let text = output.text_content();
    assert!(text.chars().count() <= 30_000 + 200, "{}", text.len());
    assert!(text.starts_with("line 000000000 ok\n"), "escape codes are removed from model text");
    let spill = output.meta.spill_path.clone().unwrap();
    assert_eq!(spill, format!(".tackle/outputs/{}/c1.txt", fx.session.id()));
    let marker = text.lines().find(|l| l.starts_with("[... ")).unwrap();
    assert!(marker.ends_with(&format!("omitted; full output saved to {spill} ...]")), "{marker}");
    let saved = std::fs::read_to_string(fx.session.info().workspace.join(&spill)).unwrap();
    assert!(saved.len() >= 50 * 1024 * 1024);
    assert!(text.ends_with("ok\n"));
    assert_eq!(run(&fx, "echo_text", json!({"text": "small"})).await.meta.truncated, false);
}

#[tokio::test]
async fn calls_sharing_an_id_keep_their_own_spill_files() {
    let fx = fixture(ExecutorConfig::default());
    let first = run(&fx, "echo_text", json!({"text": "a".repeat(40_000)})).await;
    let second = run(&fx, "echo_text", json!({"text": "b".repeat(40_000)})).await;
    let dir = format!(".tackle/outputs/{}", fx.session.id());
    assert_eq!(first.meta.spill_path.as_deref(), Some(format!("{dir}/c1.txt").as_str()));
    assert_eq!(second.meta.spill_path.as_deref(), Some(format!("{dir}/c1-2.txt").as_str()));
    let read = |output: &ToolOutput| {
        std::fs::read_to_string(fx.session.info().workspace.join(output.meta.spill_path.as_deref().unwrap())).unwrap()
    };
    assert_eq!(read(&first), "a".repeat(40_000));
    assert_eq!(read(&second), "b".repeat(40_000));
}

/// A hook that blocks one word, rewrites another and records what ran.
struct Guard {
    seen: std::sync::Mutex<Vec<String>>,
}

impl ToolHook for Guard {
    fn before_call<'a>(&'a self, call: &'a HookCall<'a>) -> BoxFuture<'a, PreHookOutcome> {
        let text = call.args.get("text").and_then(Value::as_str).unwrap_or_default().to_owned();
        Box::pin(async move {
            match text.as_str() {
                "forbidden" => PreHookOutcome::Deny { message: "Blocked by PreToolUse hook: no".into() },
                "rewrite me" => PreHookOutcome::ReplaceInput(json!({"text": "rewritten"})),
                _ => PreHookOutcome::Continue,
            }
        })
    }

    fn after_call<'a>(&'a self, _call: &'a HookCall<'a>, output: &'a mut ToolOutput) -> BoxFuture<'a, ()> {
        self.seen.lock().unwrap().push(output.text_content());
        Box::pin(async {})
    }
}

#[tokio::test]
async fn hooks_can_block_rewrite_and_observe() {
    let mut fx = fixture(ExecutorConfig::default());
    let guard = Arc::new(Guard { seen: std::sync::Mutex::new(Vec::new()) });
    fx.executor = fx.executor.clone().with_hook(guard.clone());
    let denied = run(&fx, "echo_text", json!({"text": "forbidden"})).await;
    assert_rejected(&denied, ErrorKind::Denied, "Blocked by PreToolUse hook: no");
    assert_eq!(run(&fx, "echo_text", json!({"text": "rewrite me"})).await.text_content(), "rewritten");
    assert_eq!(*guard.seen.lock().unwrap(), vec!["rewritten".to_string()]);
}

/// A policy shaped like the permission modes (tackle-policy's `ModePolicy` is the real one):
/// a call that only reads runs (a judged command restricted, when `restrict`); any other gets
/// `otherwise`.
struct ModeLike {
    otherwise: Decision,
    restrict: bool,
}

impl ModeLike {
    /// Like mode `default`: what does not only read asks.
    fn asks() -> Arc<ModeLike> {
        Arc::new(ModeLike {
            otherwise: Decision::Ask { reason: "the mode asks".into(), from_rule: false },
            restrict: true,
        })
    }

    /// Like mode `plan`: what does not only read is refused.
    fn denies() -> Arc<ModeLike> {
        Arc::new(ModeLike { otherwise: Decision::Deny { message: "not in this mode".into() }, restrict: true })
    }

    /// Like mode `bypass`: everything runs, unrestricted.
    fn allows() -> Arc<ModeLike> {
        Arc::new(ModeLike { otherwise: Decision::Allow, restrict: false })
    }
}

impl PermissionPolicy for ModeLike {
    fn decide(&self, request: &PermissionRequest<'_>) -> Decision {
        if request.read_only {
            if request.spec.command(request.args).is_none() {
                return Decision::Allow;
            }
            if self.restrict {
                return Decision::AllowReadOnly;
            }
        }
        self.otherwise.clone()
    }
}

#[tokio::test]
async fn policies_gate_calls_before_they_run() {
    let mut fx = fixture(ExecutorConfig::default());
    fx.executor = Executor::default().with_policy(ModeLike::denies());
    let denied = run(&fx, "sleep_unsafe", json!({"ms": 1})).await;
    assert_rejected(&denied, ErrorKind::Denied, "not in this mode");
    assert!(fx.order.lock().unwrap().is_empty(), "a denied call never runs");
    assert_eq!(run(&fx, "echo_text", json!({"text": "reads are fine"})).await.text_content(), "reads are fine");

    // Without an approver, nobody can be asked: what asks is refused.
    fx.executor = Executor::default().with_policy(ModeLike::asks());
    let asked = run(&fx, "sleep_unsafe", json!({"ms": 1})).await;
    assert!(asked.meta.rejected);
    assert_eq!(asked.text_content(), "sleep_unsafe needs approval, but this executor has no approver to ask.");
    assert!(fx.order.lock().unwrap().is_empty(), "a refused call never runs");

    fx.executor = fx.executor.clone().with_approver(Arc::new(AutoApprover));
    assert_eq!(run(&fx, "sleep_unsafe", json!({"ms": 1})).await.text_content(), "slept 1");
}

/// A hook that asks about every call.
struct AlwaysAsks;

impl ToolHook for AlwaysAsks {
    fn before_call<'a>(&'a self, _call: &'a HookCall<'a>) -> BoxFuture<'a, PreHookOutcome> {
        Box::pin(async { PreHookOutcome::Ask { reason: "the hook asks".into() } })
    }
}

/// Allows, recording the reason and whether a rule or hook (not the mode) asked.
struct Recorder(std::sync::Mutex<Vec<(String, bool)>>);

impl tackle_core::permission::Approver for Recorder {
    fn approve<'a>(
        &'a self,
        _request: &'a tackle_core::permission::PermissionRequest<'a>,
        reason: &'a str,
        from_rule: bool,
    ) -> BoxFuture<'a, tackle_core::permission::Approval> {
        self.0.lock().unwrap().push((reason.to_owned(), from_rule));
        Box::pin(async { tackle_core::permission::Approval::Allow })
    }
}

#[tokio::test]
async fn the_approver_is_told_when_a_hook_not_the_mode_asks() {
    let mut fx = fixture(ExecutorConfig::default());
    let recorder = Arc::new(Recorder(std::sync::Mutex::new(Vec::new())));
    fx.executor = Executor::default().with_policy(ModeLike::asks()).with_approver(recorder.clone());
    assert_eq!(run(&fx, "sleep_unsafe", json!({"ms": 1})).await.text_content(), "slept 1");
    fx.executor = fx.executor.clone().with_hook(Arc::new(AlwaysAsks));
    assert_eq!(run(&fx, "sleep_unsafe", json!({"ms": 1})).await.text_content(), "slept 1");
    let asked = recorder.0.lock().unwrap().clone();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(!asked[0].1, "the mode asked: {asked:?}");
    assert_eq!(asked[1], ("the hook asks".to_owned(), true));
}

/// A person who never answers the prompt.
struct Silent;

impl tackle_core::permission::Approver for Silent {
    fn approve<'a>(
        &'a self,
        _request: &'a tackle_core::permission::PermissionRequest<'a>,
        _reason: &'a str,
        _from_rule: bool,
    ) -> BoxFuture<'a, tackle_core::permission::Approval> {
        Box::pin(std::future::pending())
    }
}

// The clock is paused: the 5 s guard against a hang costs nothing when the turn ends.
#[tokio::test(start_paused = true)]
async fn ctrl_c_answers_a_pending_approval_prompt() {
    let mut fx = fixture(ExecutorConfig::default());
    fx.executor = Executor::default().with_policy(ModeLike::asks()).with_approver(Arc::new(Silent));
    let cancel = CancellationToken::new();
    let calls = vec![
        ToolCall::new("c1", "sleep_unsafe", json!({"ms": 1})),
        ToolCall::new("c2", "sleep_unsafe", json!({"ms": 1})),
    ];
    let turn = fx.executor.run_turn(&fx.session, calls, &cancel);
    let interrupt = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        cancel.cancel();
    };
    let (outputs, ()) = tokio::time::timeout(Duration::from_secs(5), futures::future::join(turn, interrupt))
        .await
        .expect("the prompt must not hold the turn after Ctrl-C");
    assert_rejected(&outputs[0], ErrorKind::Cancelled, "Cancelled by the user.");
    // The next call is not asked about at all.
    assert_rejected(&outputs[1], ErrorKind::Cancelled, "Not executed: the run stopped (cancelled by the user).");
    assert!(fx.order.lock().unwrap().is_empty(), "a cancelled call never runs");
}

#[tokio::test]
async fn progress_and_lifecycle_events_are_streamed() {
    let fx = fixture(ExecutorConfig::default());
    let mut events = fx.session.subscribe();
    run(&fx, "echo_text", json!({"text": "x"})).await;
    let first = events.recv().await.unwrap();
    let second = events.recv().await.unwrap();
    assert_eq!(first, tackle_core::ExecEvent::Started { call_id: "c1".into(), tool: "echo_text".into() });
    assert!(matches!(second, tackle_core::ExecEvent::Finished { ref call_id, is_error: false, .. } if call_id == "c1"));
}

#[derive(Debug, Deserialize, JsonSchema)]
struct PathInput {
    path: String,
    look: Option<bool>,
}

/// A tool with a write path parameter that is read-only when `look` is set.
struct PathTool;

impl Tool for PathTool {
    type Input = PathInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("touch_path", "Touches a path.").path_param("path", tackle_core::spec::PathAccess::Write)
    }

    fn is_read_only(&self, input: &PathInput) -> bool {
        input.look == Some(true)
    }

    async fn call(&self, input: PathInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(format!("touched {}", input.path)))
    }
}

/// Records each resolution; refuses reads of `secret*` and writes of `ro*`.
#[derive(Default)]
struct RecordingPolicy {
    seen: std::sync::Mutex<Vec<(String, tackle_core::Access)>>,
    workspace: std::path::PathBuf,
}

impl tackle_core::PathPolicy for RecordingPolicy {
    fn resolve(&self, raw: &str, access: tackle_core::Access) -> Result<std::path::PathBuf, ToolError> {
        self.seen.lock().unwrap().push((raw.to_owned(), access));
        if raw.starts_with("secret") || (raw.starts_with("ro") && access == tackle_core::Access::Write) {
            return Err(ToolError::Denied(format!("{raw} is refused")));
        }
        Ok(self.workspace.join(raw))
    }

    fn workspace(&self) -> &std::path::Path {
        &self.workspace
    }
}

#[tokio::test]
async fn path_parameters_pass_the_path_policy_at_admission() {
    let mut registry = Registry::new();
    registry.register(&["default"], || PathTool);
    let selection = registry.select("default", "default").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let policy = Arc::new(RecordingPolicy { workspace: dir.path().to_owned(), ..Default::default() });
    let mut config = ToolSessionConfig::new(dir.path());
    config.path_policy = Some(Arc::clone(&policy) as Arc<dyn tackle_core::PathPolicy>);
    let session = ToolSession::new(config, registry.instantiate(&selection));
    let executor = Executor::default();
    let run = |args: Value| {
        let call = ToolCall::new("c1", "touch_path", args);
        let session = &session;
        let executor = &executor;
        async move { executor.run(session, call, &CancellationToken::new()).await }
    };

    assert_eq!(run(json!({"path": "a.txt"})).await.text_content(), "touched a.txt");
    assert_rejected(&run(json!({"path": "secret.txt"})).await, ErrorKind::Denied, "secret.txt is refused");
    // A write parameter of a read-only call is checked for reading only.
    assert_rejected(&run(json!({"path": "ro.txt"})).await, ErrorKind::Denied, "ro.txt is refused");
    assert_eq!(run(json!({"path": "ro.txt", "look": true})).await.text_content(), "touched ro.txt");
    use tackle_core::Access::{Read, Write};
    assert_eq!(
        *policy.seen.lock().unwrap(),
        vec![
            ("a.txt".to_owned(), Write),
            ("secret.txt".to_owned(), Write),
            ("ro.txt".to_owned(), Write),
            ("ro.txt".to_owned(), Read)
        ]
    );
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct CommandInput {
    /// The command.
    command: String,
}

/// A shell-like tool whose `ls` is read-only; it answers whether it was told to run the call
/// read-only restricted.
struct Shellish;

impl Tool for Shellish {
    type Input = CommandInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("shellish", "Runs a command.").command_param("command")
    }

    fn is_read_only(&self, input: &CommandInput) -> bool {
        input.command == "ls"
    }

    async fn call(&self, _input: CommandInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(format!("restricted={}", ctx.read_only_restricted())))
    }
}

/// A hook that allows every call.
struct AlwaysAllows;

impl ToolHook for AlwaysAllows {
    fn before_call<'a>(&'a self, _call: &'a HookCall<'a>) -> BoxFuture<'a, PreHookOutcome> {
        Box::pin(async { PreHookOutcome::Allow })
    }
}

#[tokio::test]
async fn only_a_call_allowed_as_read_only_alone_runs_restricted() {
    let mut registry = Registry::new();
    registry.register(&["default"], || Shellish);
    let session = ToolSession::new(
        ToolSessionConfig::new(std::env::temp_dir()),
        registry.instantiate(&registry.select("default", "default").unwrap()),
    );
    let call = |executor: Executor, command: &'static str| {
        let session = &session;
        async move {
            let output = executor
                .run(session, ToolCall::new("c1", "shellish", json!({ "command": command })), &CancellationToken::new())
                .await;
            if output.meta.rejected { "rejected".to_owned() } else { output.text_content() }
        }
    };
    let default = || Executor::default().with_policy(ModeLike::asks());
    // Judged read-only and nothing else allows it: restricted; otherwise it asks.
    assert_eq!(call(default(), "ls").await, "restricted=true");
    assert_eq!(call(default(), "rm x").await, "rejected");
    assert_eq!(call(Executor::default().with_policy(ModeLike::denies()), "ls").await, "restricted=true");
    // Allowed outright: by the mode, `--yes`, a hook.
    assert_eq!(call(Executor::default().with_policy(ModeLike::allows()), "ls").await, "restricted=false");
    assert_eq!(call(default().with_approver(Arc::new(AutoApprover)), "ls").await, "restricted=false");
    assert_eq!(call(default().with_hook(Arc::new(AlwaysAllows)), "ls").await, "restricted=false");
    // A hook that asks wins over the shortcut; the approver's allow is outright.
    let recorder = Arc::new(Recorder(std::sync::Mutex::new(Vec::new())));
    assert_eq!(call(default().with_hook(Arc::new(AlwaysAsks)).with_approver(recorder), "ls").await, "restricted=false");
    // Nothing can restrict: the shortcut is off, and the command asks.
    let unrestricted = ModeLike { restrict: false, ..Arc::into_inner(ModeLike::asks()).unwrap() };
    assert_eq!(call(Executor::default().with_policy(Arc::new(unrestricted)), "ls").await, "rejected");
}
