//! Claude Code's command-hook protocol (docs/reference/safety.md#hooks) as a [`ToolHook`]:
//! the event's JSON on stdin, exit 2 blocking, JSON output on exit 0, the matching hooks of
//! one event run in parallel and combined deny > ask > allow, and for the events of the agent
//! loop ([`CommandHooks::fire`]) the stop-loop guard.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Map, Value, json};

use super::command::{HookRun, run_hook};
use super::config::HookEntry;
use super::{HookCall, PreHookOutcome, ToolHook};
use tackle_core::context::SessionInfo;
use tackle_core::output::{ContentPart, ToolOutput};
use tackle_core::permission::PermissionMode;
use tackle_core::spec::ToolSpec;
use tackle_core::tool::BoxFuture;

/// After this many consecutive Stop blocks the agent stops anyway, with a warning.
pub const STOP_LOOP_LIMIT: usize = 3;

/// Where warnings for the person go.
pub type Warn = Arc<dyn Fn(&str) + Send + Sync>;

/// The command hooks of a session.
pub struct CommandHooks {
    entries: Vec<HookEntry>,
    workspace: PathBuf,
    mode: PermissionMode,
    warn: Warn,
    consecutive_stop_blocks: AtomicUsize,
    /// The run's transcript (the trajectory file), passed to hooks as `transcript_path`.
    transcript: std::sync::OnceLock<PathBuf>,
}

impl std::fmt::Debug for CommandHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandHooks").field("entries", &self.entries.len()).finish_non_exhaustive()
    }
}

/// What the hooks of an agent-loop event decided.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventOutcome {
    /// Blocked (exit 2 or `decision: "block"`), with the message.
    pub blocked: Option<String>,
    /// Text to add to the model's context (plain stdout of UserPromptSubmit and
    /// SessionStart, `additionalContext`).
    pub context: Vec<String>,
    /// `continue: false`: stop the agent, with this reason.
    pub stop: Option<String>,
}

/// One hook's answer, read from its run.
#[derive(Debug, Default)]
struct Answer {
    block: Option<String>,
    decision: Option<(&'static str, String)>,
    updated_input: Option<Value>,
    context: Vec<String>,
    stop: Option<String>,
}

impl CommandHooks {
    /// Hooks for sessions in `workspace` under `mode`; warnings go to `warn`.
    pub fn new(entries: Vec<HookEntry>, workspace: PathBuf, mode: PermissionMode, warn: Warn) -> CommandHooks {
        CommandHooks {
            entries,
            workspace,
            mode,
            warn,
            consecutive_stop_blocks: AtomicUsize::new(0),
            transcript: std::sync::OnceLock::new(),
        }
    }

    /// Sets the `transcript_path` hooks see (the run's trajectory file); the first one set
    /// stays.
    pub fn set_transcript_path(&self, path: PathBuf) {
        let _ = self.transcript.set(path);
    }

    /// Whether any hook is configured.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The configured hooks.
    pub fn entries(&self) -> &[HookEntry] {
        &self.entries
    }

    fn base_input(&self, event: &str, session: &SessionInfo) -> Map<String, Value> {
        let mut input = Map::new();
        input.insert("session_id".into(), json!(session.id));
        let transcript = self.transcript.get().map(|p| p.display().to_string()).unwrap_or_default();
        input.insert("transcript_path".into(), json!(transcript));
        input.insert("cwd".into(), json!(self.workspace.display().to_string()));
        input.insert("hook_event_name".into(), json!(event));
        input.insert("permission_mode".into(), json!(self.mode.claude_name()));
        input
    }

    fn tool_input(&self, event: &str, call: &HookCall<'_>) -> Map<String, Value> {
        let mut input = self.base_input(event, call.session);
        input.insert("tool_name".into(), json!(call.spec.claude_name()));
        input.insert("tackle_tool_name".into(), json!(call.spec.name));
        input.insert("tool_input".into(), call.args.clone());
        input.insert("tool_use_id".into(), json!(call.call_id));
        input
    }

    /// Runs the entries of `event` whose matcher matches one of `names`, in parallel; the
    /// answers come back in config order.
    async fn run(
        &self,
        event: &str,
        names: &[&str],
        input: &Map<String, Value>,
        session: &SessionInfo,
    ) -> Vec<(&HookEntry, HookRun)> {
        let entries: Vec<&HookEntry> =
            self.entries.iter().filter(|e| e.event == event && e.matches(names.iter().copied())).collect();
        if entries.is_empty() {
            return Vec::new();
        }
        let bytes = serde_json::to_vec(&Value::Object(input.clone())).unwrap_or_default();
        let root = self.workspace.display().to_string();
        let env = vec![
            ("TACKLE_PROJECT_DIR".to_owned(), root.clone()),
            ("CLAUDE_PROJECT_DIR".to_owned(), root),
            ("TACKLE_SESSION_ID".to_owned(), session.id.clone()),
        ];
        let runs = futures::future::join_all(
            entries.iter().map(|entry| run_hook(&entry.command, &bytes, &self.workspace, &env, entry.timeout)),
        )
        .await;
        entries.into_iter().zip(runs).collect()
    }

    /// Reads one run; warnings for the person are sent here.
    fn answer(&self, event: &str, entry: &HookEntry, run: &HookRun) -> Answer {
        let mut answer = Answer::default();
        let label = format!("{event} hook `{}` ({})", entry.command, entry.source);
        if let Some(why) = &run.failed_to_start {
            (self.warn)(&format!("{label}: {why}"));
            if entry.fail_closed {
                answer.block = Some(format!("the hook could not start and is fail_closed: {why}"));
            }
            return answer;
        }
        if run.timed_out {
            (self.warn)(&format!("{label} timed out after {} s and was killed", entry.timeout.as_secs_f64()));
            if entry.fail_closed {
                answer.block =
                    Some(format!("the hook timed out after {} s and is fail_closed", entry.timeout.as_secs_f64()));
            }
            return answer;
        }
        match run.code {
            Some(2) => {
                let message = run.stderr.trim();
                answer.block = Some(if message.is_empty() {
                    format!("`{}` exited with 2", entry.command)
                } else {
                    message.to_owned()
                });
            }
            Some(0) => {
                let stdout = run.stdout.trim();
                if stdout.starts_with('{') {
                    match serde_json::from_str::<Value>(stdout) {
                        Ok(value) => self.read_json(event, &label, &value, &mut answer),
                        Err(err) => {
                            (self.warn)(&format!("{label} printed output that is not valid JSON ({err}); ignored"));
                        }
                    }
                } else if !stdout.is_empty() && matches!(event, "UserPromptSubmit" | "SessionStart") {
                    answer.context.push(stdout.to_owned());
                }
            }
            code => {
                let code = code.map_or_else(|| "a signal".to_owned(), |c| c.to_string());
                let stderr = run.stderr.trim();
                (self.warn)(&format!(
                    "{label} failed (exit {code}); the call goes on{}{stderr}",
                    if stderr.is_empty() { "" } else { ": " }
                ));
                if entry.fail_closed && event == "PreToolUse" {
                    answer.block = Some(format!("the hook failed (exit {code}) and is fail_closed"));
                }
            }
        }
        answer
    }

    fn read_json(&self, event: &str, label: &str, value: &Value, answer: &mut Answer) {
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        if let Some(message) = text("systemMessage") {
            (self.warn)(&format!("{label}: {message}"));
        }
        if value.get("continue") == Some(&Value::Bool(false)) {
            answer.stop = Some(text("stopReason").unwrap_or_else(|| format!("{label} stopped the agent")));
        }
        let reason = text("reason").unwrap_or_default();
        match value.get("decision").and_then(Value::as_str) {
            Some("block") if event == "PreToolUse" => answer.decision = Some(("deny", reason)),
            Some("approve") if event == "PreToolUse" => answer.decision = Some(("allow", reason)),
            Some("block") => answer.block = Some(if reason.is_empty() { format!("{label} blocked") } else { reason }),
            _ => {}
        }
        if let Some(specific) = value.get("hookSpecificOutput") {
            let field = |key: &str| specific.get(key).and_then(Value::as_str).map(str::to_owned);
            let reason = field("permissionDecisionReason").unwrap_or_default();
            match field("permissionDecision").as_deref() {
                Some("deny") => answer.decision = Some(("deny", reason)),
                Some("ask") => answer.decision = Some(("ask", reason)),
                Some("allow") => answer.decision = Some(("allow", reason)),
                Some(other) => (self.warn)(&format!("{label}: unknown permissionDecision '{other}' ignored")),
                None => {}
            }
            if let Some(updated) = specific.get("updatedInput") {
                answer.updated_input = Some(updated.clone());
            }
            if let Some(context) = field("additionalContext") {
                answer.context.push(context);
            }
        }
    }

    /// Fires an agent-loop event (`UserPromptSubmit`, `Stop`, `SubagentStop`, `SessionStart`,
    /// `SessionEnd`) with its own fields; `subject` is what a matcher sees (a SessionStart
    /// source). A Stop that hooks keep blocking is let through after [`STOP_LOOP_LIMIT`]
    /// blocks in a row, with a warning.
    pub async fn fire(
        &self,
        event: &str,
        session: &SessionInfo,
        subject: Option<&str>,
        fields: Map<String, Value>,
    ) -> EventOutcome {
        let mut input = self.base_input(event, session);
        input.extend(fields);
        if event == "Stop" || event == "SubagentStop" {
            let active = self.consecutive_stop_blocks.load(Ordering::Relaxed) > 0;
            input.insert("stop_hook_active".into(), json!(active));
        }
        let names: Vec<&str> = subject.into_iter().collect();
        let mut outcome = EventOutcome::default();
        for (entry, run) in self.run(event, &names, &input, session).await {
            let answer = self.answer(event, entry, &run);
            if outcome.blocked.is_none() {
                outcome.blocked = answer.block;
            }
            outcome.context.extend(answer.context);
            if outcome.stop.is_none() {
                outcome.stop = answer.stop;
            }
        }
        if event == "Stop" || event == "SubagentStop" {
            if outcome.blocked.is_some() {
                let blocks = self.consecutive_stop_blocks.fetch_add(1, Ordering::Relaxed) + 1;
                if blocks > STOP_LOOP_LIMIT {
                    (self.warn)(&format!(
                        "Stop hooks blocked stopping {STOP_LOOP_LIMIT} times in a row; stopping anyway"
                    ));
                    outcome.blocked = None;
                    self.consecutive_stop_blocks.store(0, Ordering::Relaxed);
                }
            } else {
                self.consecutive_stop_blocks.store(0, Ordering::Relaxed);
            }
        }
        outcome
    }
}

fn names(spec: &ToolSpec) -> Vec<&str> {
    std::iter::once(spec.name.as_str()).chain(spec.aliases.iter().map(String::as_str)).collect()
}

/// The PreToolUse hooks' combined outcome and the hook that decided it (`tackle
/// permissions check` names it).
#[derive(Debug, Clone)]
pub struct PreToolUse {
    /// The combined outcome: deny > input rewrite > ask > allow.
    pub outcome: PreHookOutcome,
    /// The command of the hook that decided, and the file it came from; `None` for
    /// [`PreHookOutcome::Continue`].
    pub decided_by: Option<(String, Arc<str>)>,
}

impl CommandHooks {
    /// Runs the PreToolUse hooks matching the call (in parallel) and combines their answers.
    pub async fn pre_tool_use(&self, call: &HookCall<'_>) -> PreToolUse {
        let input = self.tool_input("PreToolUse", call);
        let mut deny = None;
        let mut ask = None;
        let mut allow = None;
        let mut updated = None;
        for (entry, run) in self.run("PreToolUse", &names(call.spec), &input, call.session).await {
            let answer = self.answer("PreToolUse", entry, &run);
            if let Some(message) = answer.block.or(answer.stop) {
                deny.get_or_insert((message, entry));
            }
            match answer.decision {
                Some(("deny", reason)) => {
                    deny.get_or_insert((
                        if reason.is_empty() { format!("`{}` denied the call", entry.command) } else { reason },
                        entry,
                    ));
                }
                Some(("ask", reason)) => {
                    ask.get_or_insert((
                        if reason.is_empty() { format!("the hook `{}` asks", entry.command) } else { reason },
                        entry,
                    ));
                }
                Some(_) => {
                    allow.get_or_insert(entry);
                }
                None => {}
            }
            if let Some(input) = answer.updated_input {
                if updated.is_none() {
                    updated = Some((input, entry));
                } else {
                    (self.warn)(&format!(
                        "PreToolUse hook `{}`: only the first updatedInput is applied; this one is ignored",
                        entry.command
                    ));
                }
            }
        }
        let (outcome, entry) = if let Some((message, entry)) = deny {
            (PreHookOutcome::Deny { message: format!("Blocked by PreToolUse hook: {message}") }, Some(entry))
        } else if let Some((input, entry)) = updated {
            (PreHookOutcome::ReplaceInput(input), Some(entry))
        } else if let Some((reason, entry)) = ask {
            (PreHookOutcome::Ask { reason }, Some(entry))
        } else if let Some(entry) = allow {
            (PreHookOutcome::Allow, Some(entry))
        } else {
            (PreHookOutcome::Continue, None)
        };
        PreToolUse { outcome, decided_by: entry.map(|e| (e.command.clone(), Arc::clone(&e.source))) }
    }
}

impl ToolHook for CommandHooks {
    fn before_call<'a>(&'a self, call: &'a HookCall<'a>) -> BoxFuture<'a, PreHookOutcome> {
        Box::pin(async move { self.pre_tool_use(call).await.outcome })
    }

    fn after_call<'a>(&'a self, call: &'a HookCall<'a>, output: &'a mut ToolOutput) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let mut input = self.tool_input("PostToolUse", call);
            input.insert(
                "tool_response".into(),
                json!({"content": output.text_content(), "is_error": output.is_error, "structured": output.structured}),
            );
            for (entry, run) in self.run("PostToolUse", &names(call.spec), &input, call.session).await {
                let answer = self.answer("PostToolUse", entry, &run);
                for text in answer.block.into_iter().chain(answer.context) {
                    output.content.push(ContentPart::Text { text: format!("\n[PostToolUse hook] {text}") });
                }
            }
        })
    }
}
