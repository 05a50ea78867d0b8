//! The agent loop (docs/reference/providers.md#a-step): build the request, stream the reply, extract the calls,
//! answer them through the executor, and go on until `task_done`, a reply without calls, the
//! step limit, an error, or Ctrl-C. Every call of every reply is answered exactly once in the
//! history, whatever ends the run, so the conversation stays valid for both providers.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use tackle_calls::{CallResult, ToolIndex};
use tackle_core::deferral::{Deferral, shown_specs};
use tackle_core::factory::Allowlists;
use tackle_core::permission::{PermissionMode, PermissionPolicy};
use tackle_core::{ContentPart, Executor, Notifications, TodoList, ToolOutput, ToolSession};
use tackle_llm::{
    AssistantMessage, ChatModel, ChatRequest, Completion, FinishReason, ImageData, LlmEvent, Message, Pricing,
    ToolResult, Usage, UserPart,
};
use tackle_policy::hooks::protocol::{CommandHooks, EventOutcome};
use tokio_util::sync::CancellationToken;

use crate::approve::RecordingPolicy;
use crate::budget::Budget;
use crate::calls::{args_value, normalize_ids, to_tool_call};
use crate::events::{AgentEvent, Observer};
use crate::format::CallFormat;
use crate::lineage::{Delegation, Lineage};
use crate::outcome::{INTERRUPTED, RunOutcome, RunStatus, StopKind, TIMED_OUT};
use crate::output_schema::OutputSchema;
use crate::prompt::{BASE_PROMPT, system_prompt};
use crate::refresh::ToolRefresh;
use crate::trajectory::event::ResponseCall;
use crate::trajectory::{Trajectory, TrajectoryEvent};
use crate::turn::{DeniedCalls, PlannedCall, not_run};

/// The message added after a reply cut off at the output limit (docs/reference/providers.md#truncated-replies).
pub const TRUNCATED_MESSAGE: &str = "Your reply was cut off at the output token limit. Continue, and keep each reply shorter (split large file writes into several calls).";

/// The message added after an empty reply (no text, no calls).
pub const EMPTY_REPLY_MESSAGE: &str =
    "Your reply was empty. Continue with the task using the tools, or call task_done if it is complete.";

/// Settings of one run.
#[derive(Debug, Clone)]
pub struct AgentConfig {
    /// One step is one model request (default 200).
    pub max_steps: u32,
    /// How the model calls tools: natively, or in a text format (docs/reference/formats.md).
    pub call_format: CallFormat,
    /// Calls past this many in one reply are not run (default 64).
    pub max_calls_per_reply: usize,
    /// Truncated replies in a row that end the run (default 3).
    pub max_truncations: u32,
    /// For the trajectory: the permission mode in force.
    pub permission_mode: PermissionMode,
    /// For the trajectory: the process sandbox in force.
    pub sandbox: String,
    /// Record each request's complete body in its `llm_request` event (`--trajectory-full`).
    pub trajectory_full: bool,
    /// Replaces the role and working rules at the head of the system prompt
    /// ([`crate::prompt::BASE_PROMPT`]); the environment, call-format instructions,
    /// `AGENTS.md` and deferred tools still follow.
    pub base_prompt: Option<String>,
    /// The skills section of the system prompt (`# Skills` and one `- name: description`
    /// line per skill), made by whoever assembles the session (it knows where skills live).
    pub skills_prompt: Option<String>,
    /// The JSON Schema the final answer must match (`tackle run --output-schema`): the system
    /// prompt says so, a mismatch is sent back once, then ends the run `schema_mismatch`
    /// (docs/reference/cli.md#structured-final-answers). Never passed on to subagents.
    pub output_schema: Option<Arc<OutputSchema>>,
    /// The run's wall-clock limit (`tackle run --timeout`): at it the run stops as Ctrl-C
    /// stops it, with status `timeout`. Subagents stop with their parent.
    pub time_limit: Option<Duration>,
    /// The prices each response's usage is costed with when the provider does not say
    /// (`RunOutcome::usage.cost`); `None` leaves unreported costs unknown.
    pub pricing: Option<Arc<Pricing>>,
    /// The run's spending limit (`--max-tokens`, `--max-cost`), shared with its subagents:
    /// once reached, no further request is made and the run ends `budget`.
    pub budget: Option<Arc<Budget>>,
}

impl Default for AgentConfig {
    fn default() -> Self {
        AgentConfig {
            max_steps: 200,
            call_format: CallFormat::Native,
            max_calls_per_reply: 64,
            max_truncations: 3,
            permission_mode: PermissionMode::Default,
            sandbox: "none".to_owned(),
            trajectory_full: false,
            base_prompt: None,
            skills_prompt: None,
            output_schema: None,
            time_limit: None,
            pricing: None,
            budget: None,
        }
    }
}

/// A run in progress: a provider, a session, an executor and a history.
pub struct Agent {
    pub(crate) model: Arc<dyn ChatModel>,
    pub(crate) session: ToolSession,
    pub(crate) executor: Executor,
    pub(crate) config: AgentConfig,
    pub(crate) observer: Arc<dyn Observer>,
    pub(crate) trajectory: Option<Arc<Trajectory>>,
    pub(crate) history: Vec<Message>,
    /// Every call id used so far in the session.
    pub(crate) call_ids: HashSet<String>,
    /// The tools as the text formats see them.
    pub(crate) tool_index: ToolIndex,
    pub(crate) refresh: Option<Arc<dyn ToolRefresh>>,
    /// The command hooks fired on the loop's events (UserPromptSubmit, Stop, SessionStart,
    /// SessionEnd; docs/reference/safety.md#hooks).
    pub(crate) loop_hooks: Option<Arc<CommandHooks>>,
    /// Tasks run so far (the first writes `session_start`, later ones `task`).
    pub(crate) runs: u32,
    /// The todo list's version last recorded and shown.
    pub(crate) todo_version: u64,
    /// The deferred tools' generation the prepared request was made for.
    pub(crate) deferral_generation: u64,
    /// Where the agent stands in its tree of agents (docs/subagents.md).
    pub(crate) lineage: Lineage,
    /// What the `subagent` tool sees of the current run.
    pub(crate) delegation: Option<Arc<Delegation>>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent").field("session", &self.session).field("config", &self.config).finish_non_exhaustive()
    }
}

/// The parts of a request that depend on the session's tools.
struct Prepared {
    system: String,
    tools: Vec<Value>,
}

/// Why the loop stops.
struct Stop {
    status: RunStatus,
    final_result: String,
    error_kind: Option<StopKind>,
    /// The run ended with a `task_done` that was accepted.
    task_done: bool,
}

impl Stop {
    fn error(kind: StopKind, message: String) -> Stop {
        Stop { status: RunStatus::Error, final_result: message, error_kind: Some(kind), task_done: false }
    }

    /// The model's final answer: `task_done` accepted, or a reply without calls.
    fn answered(text: String, task_done: bool) -> Stop {
        Stop { status: RunStatus::Success, final_result: text, error_kind: None, task_done }
    }
}

impl Agent {
    /// Fires `event` on the loop hooks, if any.
    async fn fire(&self, event: &str, subject: Option<&str>, fields: Value) -> EventOutcome {
        let Some(hooks) = &self.loop_hooks else { return EventOutcome::default() };
        let fields = match fields {
            Value::Object(map) => map,
            _ => serde_json::Map::new(),
        };
        hooks.fire(event, self.session.info(), subject, fields).await
    }

    /// Fires SessionEnd (`reason`: `exit`, `clear`, `logout`, `other`); call it once, when
    /// the session ends.
    pub async fn end_session(&self, reason: &str) {
        if self.lineage.depth > 0 {
            return;
        }
        self.fire("SessionEnd", Some(reason), serde_json::json!({ "reason": reason })).await;
    }

    /// The session (its tools, state and events).
    pub fn session(&self) -> &ToolSession {
        &self.session
    }

    /// The conversation so far.
    pub fn history(&self) -> &[Message] {
        &self.history
    }

    /// Forgets the conversation: the next task starts a new one (`/clear` in `tackle chat`).
    pub fn clear_history(&mut self) {
        self.history.clear();
    }

    /// Asks `model` from the next request on (`/model` in `tackle chat`).
    pub fn set_model(&mut self, model: Arc<dyn ChatModel>) {
        self.model = model;
    }

    /// The model asked.
    pub fn model(&self) -> &Arc<dyn ChatModel> {
        &self.model
    }

    /// Decides the next calls with `policy`, for permission `mode` (`/permissions MODE` and
    /// Shift-Tab in `tackle chat`); its decisions are recorded as before.
    pub fn set_permission_policy(&mut self, policy: Arc<dyn PermissionPolicy>, mode: PermissionMode) {
        let recording = RecordingPolicy { inner: policy, trajectory: self.trajectory.clone() };
        self.executor = self.executor.clone().with_policy(Arc::new(recording));
        self.config.permission_mode = mode;
    }

    /// The permission mode in force.
    pub fn permission_mode(&self) -> PermissionMode {
        self.config.permission_mode
    }

    /// The trajectory, if one is written (for [`Trajectory::end_now`] when the process
    /// exits without the loop).
    pub fn trajectory(&self) -> Option<Arc<Trajectory>> {
        self.trajectory.clone()
    }

    /// The trajectory file, if one is written.
    pub fn trajectory_path(&self) -> Option<PathBuf> {
        self.trajectory.as_ref().map(|t| t.path().to_owned())
    }

    pub(crate) fn record(&self, event: TrajectoryEvent) {
        if let Some(trajectory) = &self.trajectory {
            trajectory.record(event);
        }
    }

    pub(crate) fn observe(&self, event: AgentEvent) {
        self.observer.on_event(&event);
    }

    /// Runs `task` to the end. `cancel` is Ctrl-C: the request or the running calls are
    /// cancelled, each call still gets an output, and the trajectory is closed.
    pub async fn run(&mut self, task: &str, cancel: &CancellationToken) -> RunOutcome {
        let started = Instant::now();
        // The time limit cancels the run as Ctrl-C does, through a token of its own, so the
        // end can tell the two apart.
        let limited = cancel.child_token();
        let timed_out = Arc::new(AtomicBool::new(false));
        let _timer = self.config.time_limit.map(|limit| {
            let (token, timed_out) = (limited.clone(), Arc::clone(&timed_out));
            let timer = tokio::spawn(async move {
                tokio::time::sleep(limit).await;
                timed_out.store(true, Ordering::SeqCst);
                token.cancel();
            });
            tokio_util::task::AbortOnDropHandle::new(timer)
        });
        let cancel = &limited;
        let mut usage = Usage::default();
        let mut steps = 0u32;
        let prepared = self.prepare();
        let model = self.model.info();
        self.runs += 1;
        let start = TrajectoryEvent::SessionStart {
            tackle_version: env!("CARGO_PKG_VERSION").to_owned(),
            task: task.to_owned(),
            provider: model.provider,
            model: model.model,
            base_url: model.base_url.unwrap_or_default(),
            call_format: self.config.call_format.name().to_owned(),
            tools: self.session.tools().specs().map(|s| s.name.clone()).collect(),
            permission_mode: self.config.permission_mode.name().to_owned(),
            workspace: self.session.info().workspace.display().to_string(),
            max_steps: self.config.max_steps,
            sandbox: self.config.sandbox.clone(),
            session_id: self.session.id().to_owned(),
        };
        // One trajectory per conversation: later tasks continue it.
        self.record(if self.runs == 1 { start } else { TrajectoryEvent::Task { task: task.to_owned() } });
        self.delegate(cancel);
        let mut denied = DeniedCalls::default();
        let mut output = None;
        let stop = match self.submit(task).await {
            Err(stop) => stop,
            Ok(()) => {
                let mut stop = self.steps(prepared, &mut steps, &mut usage, cancel, &mut denied).await;
                // A Stop hook may keep the agent going with its reason (the hooks' own guard
                // lets it stop after a few blocks in a row).
                // A subagent's end fires SubagentStop instead (Claude Code's events).
                let event = if self.lineage.depth > 0 { "SubagentStop" } else { "Stop" };
                let mut corrected = false;
                while stop.status == RunStatus::Success {
                    let outcome = self.fire(event, None, serde_json::json!({})).await;
                    let feedback = match outcome.blocked {
                        Some(reason) => format!("{event} hook feedback:\n{reason}"),
                        None => {
                            // An answer after denials ends `incomplete` (below) whatever its
                            // shape: it is not checked.
                            let Some(schema) = self.config.output_schema.clone() else { break };
                            if !stop.task_done && denied.count() > 0 {
                                break;
                            }
                            match schema.check(&stop.final_result) {
                                Ok(value) => {
                                    output = Some(value);
                                    break;
                                }
                                Err(mismatch) if corrected => {
                                    stop = Stop::error(StopKind::SchemaMismatch, mismatch.summary());
                                    break;
                                }
                                Err(mismatch) => {
                                    corrected = true;
                                    mismatch.feedback()
                                }
                            }
                        }
                    };
                    self.history.push(Message::user_text(feedback));
                    let prepared = self.prepare();
                    stop = self.steps(prepared, &mut steps, &mut usage, cancel, &mut denied).await;
                }
                stop
            }
        };
        // An answer after denied calls, without a task_done that heard of them, is not success.
        let mut stop = stop;
        if stop.status == RunStatus::Interrupted && timed_out.load(Ordering::SeqCst) {
            stop = Stop {
                status: RunStatus::Timeout,
                final_result: TIMED_OUT.to_owned(),
                error_kind: None,
                task_done: false,
            };
        }
        if stop.status == RunStatus::Success && !stop.task_done && denied.count() > 0 {
            stop.status = RunStatus::Incomplete;
        }
        if let Some(kind) = stop.error_kind {
            self.record(TrajectoryEvent::Error { kind: kind.name().to_owned(), message: stop.final_result.clone() });
        }
        let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        if self.trajectory.is_some() {
            self.record(TrajectoryEvent::Conversation { messages: self.history.clone() });
        }
        self.record(TrajectoryEvent::SessionEnd {
            status: stop.status,
            steps,
            final_result: stop.final_result.clone(),
            usage_total: usage,
            duration_ms,
        });
        RunOutcome {
            status: stop.status,
            steps,
            usage,
            duration_ms,
            final_result: stop.final_result,
            error_kind: stop.error_kind,
            trajectory: self.trajectory_path(),
            denied: u32::try_from(denied.count()).unwrap_or(u32::MAX),
            denied_calls: denied.calls().to_vec(),
            output,
        }
    }

    /// Adds the task to the history after the SessionStart (first task) and UserPromptSubmit
    /// hooks: their context goes with it; a UserPromptSubmit block (exit 2, `decision:
    /// block`) or `continue: false` keeps it out and ends the run before any request.
    async fn submit(&mut self, task: &str) -> Result<(), Stop> {
        if self.lineage.depth > 0 {
            // A subagent's prompt comes from its parent, not a person: no SessionStart or
            // UserPromptSubmit (the parent's PreToolUse hooks saw the `subagent` call).
            self.history.push(Message::user_text(task));
            return Ok(());
        }
        let mut context = Vec::new();
        if self.runs == 1 {
            let started = self.fire("SessionStart", Some("startup"), serde_json::json!({ "source": "startup" })).await;
            context.extend(started.context);
        }
        let submitted = self.fire("UserPromptSubmit", None, serde_json::json!({ "prompt": task })).await;
        if let Some(reason) = submitted.blocked.or(submitted.stop) {
            return Err(Stop {
                status: RunStatus::Error,
                final_result: format!("The prompt was blocked by a UserPromptSubmit hook: {reason}"),
                error_kind: Some(StopKind::PromptBlocked),
                task_done: false,
            });
        }
        context.extend(submitted.context);
        if context.is_empty() {
            self.history.push(Message::user_text(task));
        } else {
            let parts = vec![
                UserPart::Text { text: task.to_owned() },
                UserPart::Text { text: format!("Context from hooks:\n{}", context.join("\n")) },
            ];
            self.history.push(Message::User { parts });
        }
        Ok(())
    }

    /// What every request carries for the session's current tools: the system prompt (with
    /// the text format's instructions) and the native tool definitions.
    fn prepare(&mut self) -> Prepared {
        self.tool_index = ToolIndex::from_toolset(self.session.tools());
        let deferral = self.session.state().get::<Deferral>();
        self.deferral_generation = deferral.generation();
        let shown = shown_specs(self.session.tools(), &deferral);
        let (rendered, instructions) = match self.config.call_format.text() {
            None => (self.model.render_tools(&shown), String::new()),
            Some(format) => (
                tackle_llm::RenderedTools::default(),
                tackle_calls::instructions(format, &ToolIndex::new(shown.iter().copied())),
            ),
        };
        for (tool, paths) in rendered.json_text_params {
            self.session.set_json_text_params(&tool, paths);
        }
        let base = self.config.base_prompt.as_deref().unwrap_or(BASE_PROMPT);
        let hidden = (*self.session.state().get::<tackle_policy::permission::rules::ReadRules>()).clone();
        let mut system =
            system_prompt(base, &self.session.info().workspace, self.session.tools(), &instructions, &hidden);
        if let Some(skills) = self.config.skills_prompt.as_deref().filter(|s| !s.is_empty()) {
            system.push('\n');
            system.push_str(skills.trim_end());
            system.push('\n');
        }
        if let Some(schema) = &self.config.output_schema {
            system.push('\n');
            system.push_str(&schema.prompt_section());
        }
        if let Some(delegation) = &self.delegation {
            delegation.set_tool_names(self.tool_names());
        }
        Prepared { system, tools: rendered.tools }
    }

    /// Records and shows the todo list when a call changed it.
    fn report_todos(&mut self, step: u32) {
        let Some(list) = self.session.state().existing::<TodoList>() else {
            return;
        };
        let (version, todos) = list.snapshot();
        if version == self.todo_version {
            return;
        }
        self.todo_version = version;
        self.record(TrajectoryEvent::Todos { step, todos: todos.clone() });
        self.observe(AgentEvent::Todos(todos));
    }

    fn tool_names(&self) -> Vec<String> {
        self.session.tools().specs().map(|s| s.name.clone()).collect()
    }

    /// Tells the session's `subagent` tool about this run (docs/subagents.md).
    fn delegate(&mut self, cancel: &CancellationToken) {
        let delegation = Delegation {
            lineage: self.lineage.clone(),
            model: Arc::clone(&self.model),
            tools: std::sync::Mutex::new(self.tool_names()),
            mode: self.config.permission_mode,
            call_format: self.config.call_format,
            sandbox: self.config.sandbox.clone(),
            trajectory: self.trajectory.clone(),
            observer: Arc::clone(&self.observer),
            interrupt: cancel.clone(),
            loop_hooks: self.loop_hooks.clone(),
            refresh: self.refresh.clone(),
            pricing: self.config.pricing.clone(),
            budget: self.config.budget.clone(),
            allowlists: self.session.state().existing::<Allowlists>().map(|a| a.0.clone()).unwrap_or_default(),
        };
        self.delegation = Some(self.session.state().insert(delegation));
    }

    async fn steps(
        &mut self,
        mut prepared: Prepared,
        steps: &mut u32,
        usage: &mut Usage,
        cancel: &CancellationToken,
        denied: &mut DeniedCalls,
    ) -> Stop {
        let notifications = self.session.state().get::<Notifications>();
        let mut truncations = 0u32;
        let mut empty_replies = 0u32;
        loop {
            if cancel.is_cancelled() {
                return interrupted();
            }
            if *steps >= self.config.max_steps {
                return Stop {
                    status: RunStatus::MaxSteps,
                    final_result: format!(
                        "Stopped after {} step{} without finishing.",
                        self.config.max_steps,
                        if self.config.max_steps == 1 { "" } else { "s" }
                    ),
                    error_kind: None,
                    task_done: false,
                };
            }
            if let Some(reached) = self.config.budget.as_ref().and_then(|budget| budget.reached()) {
                return Stop { status: RunStatus::Budget, final_result: reached, error_kind: None, task_done: false };
            }
            *steps += 1;
            let step = *steps;
            let refreshed = match self.refresh.clone() {
                Some(refresh) => refresh.refresh(&mut self.session).await,
                None => false,
            };
            // New tools, or deferred tools that tool_search loaded for this request.
            if refreshed || self.session.state().get::<Deferral>().generation() != self.deferral_generation {
                prepared = self.prepare();
            }
            self.deliver_notifications(&notifications.drain());
            let Prepared { system, tools } = &prepared;
            let body = self
                .config
                .trajectory_full
                .then(|| {
                    let chat = ChatRequest { system, messages: &self.history, tools };
                    self.model.request_body(&chat)
                })
                .flatten()
                .map(crate::trajectory::event::body_without_image_data);
            self.record(TrajectoryEvent::LlmRequest {
                step,
                message_count: self.history.len(),
                tools_sent: tools.len(),
                request: body,
            });
            self.observe(AgentEvent::Step { step });
            let requested = Instant::now();
            let completion = match self.request(step, system, tools, cancel).await {
                None => return interrupted(),
                Some(Err(error)) => return Stop::error(StopKind::Provider(error.class), error.message),
                Some(Ok(completion)) => completion,
            };
            let Completion { mut message, thinking, incomplete_calls, finish, usage: mut step_usage } = completion;
            self.spend(&mut step_usage, usage);
            let planned = self.extract_calls(step, &mut message);
            self.record(TrajectoryEvent::LlmResponse {
                step,
                text: message.text.clone(),
                tool_calls: planned
                    .iter()
                    .map(|p| ResponseCall { id: p.call.id.clone(), name: p.call.name.clone(), args: p.args.clone() })
                    .collect(),
                finish_reason: finish.name().to_owned(),
                usage: step_usage,
                duration_ms: u64::try_from(requested.elapsed().as_millis()).unwrap_or(u64::MAX),
                thinking: (!thinking.is_empty()).then_some(thinking),
            });
            self.observe(AgentEvent::Replied { step, text: message.text.clone(), calls: planned.len() });
            let text = message.text.clone();
            self.history.push(Message::Assistant(message));

            let truncated = finish == FinishReason::Length;
            if incomplete_calls > 0 {
                tracing::debug!(incomplete_calls, "calls cut off at the output limit were dropped");
            }
            if finish == FinishReason::Refused {
                self.answer_unrun(step, &planned, "the provider refused to continue");
                return Stop::error(
                    StopKind::Refused,
                    format!("The provider refused to continue (finish reason {}).", finish.name()),
                );
            }
            if planned.is_empty() {
                if finish == FinishReason::PauseTurn {
                    continue;
                }
                if truncated {
                    if let Some(stop) = self.count_truncation(&mut truncations) {
                        return stop;
                    }
                    self.history.push(Message::user_text(TRUNCATED_MESSAGE));
                    continue;
                }
                if text.trim().is_empty() {
                    empty_replies += 1;
                    if empty_replies >= 2 {
                        return Stop::error(
                            StopKind::EmptyReply,
                            "The model sent empty replies (no text and no tool calls) twice in a row.".to_owned(),
                        );
                    }
                    self.history.push(Message::user_text(EMPTY_REPLY_MESSAGE));
                    continue;
                }
                return Stop::answered(text, false);
            }
            empty_replies = 0;

            let outcome = self.answer(step, &planned, cancel, denied).await;
            self.report_todos(step);
            let mut parts = self.result_parts(&planned, &outcome.outputs);
            if truncated {
                parts.push(UserPart::Text { text: TRUNCATED_MESSAGE.to_owned() });
            }
            self.history.push(Message::User { parts });
            if outcome.task_done {
                return Stop::answered(text, true);
            }
            if cancel.is_cancelled() {
                return interrupted();
            }
            if truncated {
                if let Some(stop) = self.count_truncation(&mut truncations) {
                    return stop;
                }
            } else {
                truncations = 0;
            }
        }
    }

    /// Counts one response's usage into the run's and the budget's, costed with the run's
    /// prices when the provider did not say what it cost.
    fn spend(&self, step_usage: &mut Usage, usage: &mut Usage) {
        if step_usage.cost.is_none()
            && let Some(price) = self.config.pricing.as_ref().and_then(|p| p.price(&self.model.info().model))
        {
            step_usage.cost = Some(price.cost(step_usage));
        }
        usage.add(step_usage);
        if let Some(budget) = &self.config.budget {
            budget.spend(step_usage);
        }
    }

    /// Counts one more reply cut off at the output limit; the stop once that happened
    /// `max_truncations` times in a row (docs/reference/providers.md#truncated-replies).
    fn count_truncation(&self, truncations: &mut u32) -> Option<Stop> {
        *truncations += 1;
        (*truncations >= self.config.max_truncations).then(|| {
            Stop::error(
                StopKind::Truncated,
                format!("The model's reply was cut off at the output token limit {truncations} times in a row."),
            )
        })
    }

    /// One model request, cancelled by `cancel` (then `None`).
    async fn request(
        &self,
        step: u32,
        system: &str,
        tools: &[Value],
        cancel: &CancellationToken,
    ) -> Option<Result<Completion, tackle_llm::LlmError>> {
        let request = ChatRequest { system, messages: &self.history, tools };
        let observer = Arc::clone(&self.observer);
        let trajectory = self.trajectory.clone();
        let mut sink = move |event: LlmEvent| {
            let shown = match event {
                LlmEvent::Text(text) => AgentEvent::Text(text),
                LlmEvent::Thinking(text) => AgentEvent::Thinking(text),
                LlmEvent::Restart => AgentEvent::StreamRestart,
                LlmEvent::Retry { attempt, error_class, status, delay_ms, message } => {
                    if let Some(trajectory) = &trajectory {
                        trajectory.record(TrajectoryEvent::LlmRetry {
                            step,
                            attempt,
                            error_class: error_class.name().to_owned(),
                            delay_ms,
                            message: message.clone(),
                            status,
                        });
                    }
                    AgentEvent::Retry { attempt, error_class, status, delay_ms, message }
                }
            };
            observer.on_event(&shown);
        };
        tokio::select! {
            result = self.model.complete(&request, &mut sink) => Some(result),
            () = cancel.cancelled() => None,
        }
    }

    /// The calls of a reply: native calls, or those the text format finds in the text
    /// (docs/reference/formats.md); ids unique in the session.
    fn extract_calls(&mut self, step: u32, message: &mut AssistantMessage) -> Vec<PlannedCall> {
        match self.config.call_format.text() {
            None => {
                normalize_ids(message.tool_calls.iter_mut().map(|c| &mut c.id), step, &mut self.call_ids);
                message
                    .tool_calls
                    .iter()
                    .map(|c| PlannedCall { call: to_tool_call(c), args: args_value(c), start: None })
                    .collect()
            }
            Some(format) => {
                let mut parser = tackle_calls::Parser::new(format, &self.tool_index).with_step(step);
                let mut calls = parser.feed(&message.text);
                calls.extend(parser.finish());
                normalize_ids(calls.iter_mut().map(|c| &mut c.id), step, &mut self.call_ids);
                calls
                    .iter()
                    .map(|c| PlannedCall {
                        call: c.to_tool_call(),
                        args: Value::Object(c.args.clone()),
                        start: Some(c.start),
                    })
                    .collect()
            }
        }
    }

    /// The user-message parts answering a reply: provider tool results, or one text in the
    /// text format (docs/reference/formats.md#results-back-to-the-model).
    fn result_parts(&self, calls: &[PlannedCall], outputs: &[ToolOutput]) -> Vec<UserPart> {
        let Some(format) = self.config.call_format.text() else {
            return outputs.iter().map(result_part).collect();
        };
        let texts: Vec<String> = outputs.iter().map(ToolOutput::text_content).collect();
        let names: Vec<String> = calls
            .iter()
            .map(|p| {
                self.session
                    .tools()
                    .resolve(&p.call.name)
                    .map_or_else(|| p.call.name.clone(), |h| h.spec().name.clone())
            })
            .collect();
        let results: Vec<CallResult<'_>> = outputs
            .iter()
            .zip(&texts)
            .zip(&names)
            .map(|((output, text), name)| CallResult {
                tool: name,
                id: &output.call_id,
                is_error: output.is_error,
                output: text,
            })
            .collect();
        vec![UserPart::Text { text: tackle_calls::render_results(format, &results) }]
    }

    /// Queued notifications become one `<notifications>` text after the latest results.
    fn deliver_notifications(&mut self, pending: &[String]) {
        if pending.is_empty() {
            return;
        }
        for text in pending {
            self.record(TrajectoryEvent::Notification { text: text.clone() });
        }
        let text = format!("<notifications>\n{}\n</notifications>", pending.join("\n"));
        match self.history.last_mut() {
            Some(Message::User { parts }) => parts.push(UserPart::Text { text }),
            _ => self.history.push(Message::user_text(text)),
        }
    }

    /// Answers calls that will not run because the run stops, so the history stays valid.
    fn answer_unrun(&mut self, step: u32, calls: &[PlannedCall], reason: &str) {
        if calls.is_empty() {
            return;
        }
        let outputs: Vec<ToolOutput> = calls
            .iter()
            .map(|p| {
                self.record_call(step, p, &p.call.name);
                not_run(&p.call.id, format!("Not executed: the run stopped ({reason})."))
            })
            .collect();
        for output in &outputs {
            self.record_output(step, output);
        }
        let parts = self.result_parts(calls, &outputs);
        self.history.push(Message::User { parts });
    }
}

fn interrupted() -> Stop {
    Stop { status: RunStatus::Interrupted, final_result: INTERRUPTED.to_owned(), error_kind: None, task_done: false }
}

fn result_part(output: &ToolOutput) -> UserPart {
    UserPart::ToolResult(ToolResult {
        call_id: output.call_id.clone(),
        content: output.text_content(),
        is_error: output.is_error,
        images: output
            .content
            .iter()
            .filter_map(|part| match part {
                ContentPart::Image { mime_type, data } => {
                    Some(ImageData { media_type: mime_type.clone(), data: data.clone() })
                }
                ContentPart::Text { .. } => None,
            })
            .collect(),
    })
}
