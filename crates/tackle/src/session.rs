//! [`TackleSession`]: a built tool session and the executor that runs its calls, with one
//! `close` for everything it owns.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;
use tackle_core::{Executor, SessionState, ToolCall, ToolOutput, ToolSession};
use tackle_tools::shell::ShellState;
use tokio_util::sync::CancellationToken;

use crate::template::SessionTemplate;

/// The longest a set-up command may run ([`TackleSession::run_setup`]): the `bash` tool's own
/// ceiling, 10 minutes.
pub const SETUP_TIMEOUT_MS: u64 = 600_000;

/// A tool session ready to run calls.
#[derive(Debug)]
pub struct TackleSession {
    session: ToolSession,
    executor: Executor,
    template: SessionTemplate,
    next_call: AtomicU64,
}

/// Ends every process a session started, from anywhere (a signal handler, another task):
/// what a second Ctrl-C does before Tackle exits. Cheap to clone; holds the session's state,
/// not the session.
#[derive(Clone)]
pub struct KillSwitch {
    state: Arc<SessionState>,
}

impl std::fmt::Debug for KillSwitch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KillSwitch").finish_non_exhaustive()
    }
}

impl KillSwitch {
    /// The switch for the session whose state is `state`.
    pub(crate) fn new(state: Arc<SessionState>) -> KillSwitch {
        KillSwitch { state }
    }

    /// Kills the shell and every background job the session started (SIGKILL, no grace). A
    /// session whose shell never ran has nothing to kill.
    pub fn kill_processes(&self) {
        if let Some(shell) = self.state.existing::<ShellState>() {
            shell.kill_now();
        }
    }
}

impl TackleSession {
    /// Kills the shell and every background job this session started (SIGKILL, no grace).
    pub fn kill_processes(&self) {
        self.kill_switch().kill_processes();
    }

    /// A [`KillSwitch`] for this session's processes, to keep where the session cannot go.
    pub fn kill_switch(&self) -> KillSwitch {
        KillSwitch::new(Arc::clone(self.session.state()))
    }

    pub(crate) fn new(session: ToolSession, template: SessionTemplate) -> TackleSession {
        let executor = template.executor();
        TackleSession { session, executor, template, next_call: AtomicU64::new(1) }
    }

    /// Calls one tool with JSON arguments; the output says what happened (errors included:
    /// an unknown tool, invalid arguments or a denial are outputs with `is_error`).
    pub async fn call(&self, name: &str, args: Value) -> ToolOutput {
        self.call_with_cancel(name, args, &CancellationToken::new()).await
    }

    /// [`TackleSession::call`], cancelled when `cancel` fires (the tool still answers).
    pub async fn call_with_cancel(&self, name: &str, args: Value, cancel: &CancellationToken) -> ToolOutput {
        let id = format!("call_{}", self.next_call.fetch_add(1, Ordering::Relaxed));
        self.executor.run(&self.session, ToolCall::new(id, name, args), cancel).await
    }

    /// Runs `command` with the session's `bash` tool, under its sandbox (and in its container),
    /// without asking the permission rules: the person's own set-up of a task (`tackle run
    /// --setup`, a fleet task's `setup`), never a call of the model's. Its output says how it
    /// went; an error when the session has no `bash` tool.
    pub async fn run_setup(&self, command: &str, cancel: &CancellationToken) -> ToolOutput {
        let executor = self.executor.clone().with_policy(Arc::new(tackle_core::permission::AllowAll));
        let args = serde_json::json!({"command": command, "timeout": SETUP_TIMEOUT_MS});
        executor.run(&self.session, ToolCall::new("setup", "bash", args), cancel).await
    }

    /// Runs the calls of one model turn: concurrency-safe calls together, the others alone,
    /// in order. Exactly one output per call, in call order.
    pub async fn run_turn(&self, calls: Vec<ToolCall>) -> Vec<ToolOutput> {
        self.run_turn_with_cancel(calls, &CancellationToken::new()).await
    }

    /// [`TackleSession::run_turn`], cancelled when `cancel` fires.
    pub async fn run_turn_with_cancel(&self, calls: Vec<ToolCall>, cancel: &CancellationToken) -> Vec<ToolOutput> {
        self.executor.run_turn(&self.session, calls, cancel).await
    }

    /// The core session (tools, state, events).
    pub fn session(&self) -> &ToolSession {
        &self.session
    }

    /// The core session, to change its tools between turns.
    pub fn session_mut(&mut self) -> &mut ToolSession {
        &mut self.session
    }

    /// The executor (settings, permission policy, approver).
    pub fn executor(&self) -> &Executor {
        &self.executor
    }

    /// What the session was built from (registry, configuration, sandbox).
    pub fn template(&self) -> &SessionTemplate {
        &self.template
    }

    /// Takes up the tool changes MCP servers announced (`tools/list_changed`), keeping to the
    /// session's allowlist; each change is a notice. True when the tools changed. Call it
    /// between turns.
    pub async fn refresh_tools(&mut self) -> bool {
        self.template.refresh(&mut self.session).await
    }

    /// Splits the session into its parts (the agent loop takes them over).
    pub(crate) fn into_parts(self) -> (ToolSession, SessionTemplate) {
        (self.session, self.template)
    }

    /// Ends the session: closes its tools, shells, jobs and MCP servers, everything it owns,
    /// once.
    pub async fn close(self) {
        self.session.close().await;
    }
}
