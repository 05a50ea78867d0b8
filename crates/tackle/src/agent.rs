//! [`Agent`]: a model and a [`TackleSession`] running a task to its end, with the loop of
//! `tackle-agent` (steps, parallel calls, `task_done`, notifications, trajectory), and the
//! named parts of the loop a program that shows a run needs: its events and observers, its
//! outcome, the terminal approver, the diff renderer. Trajectories and replay have their own
//! modules ([`crate::trajectory`], [`crate::replay`]).

use std::path::PathBuf;
use std::sync::Arc;

use tackle_agent::lineage::Lineage;
use tackle_agent::{AgentParts, ToolRefresh};
use tackle_core::{BoxFuture, ToolSession};
use tackle_llm::ChatModel;
use tokio_util::sync::CancellationToken;

use crate::error::BuildError;
use crate::session::TackleSession;
use crate::template::SessionTemplate;

pub use tackle_agent::subagent::types::Definitions as AgentDefinitions;
pub use tackle_agent::{
    AgentConfig, AgentEvent, CallFormat, Observer, OutputSchema, OutputSchemaError, Prompter, RunOutcome, RunStatus,
    Silent, StdioPrompter, TASK_DONE, TerminalApprover, Trajectory, UnknownCallFormat,
};
pub use tackle_core::{ExecEvent, TodoItem, TodoStatus};

/// The lines of a diff to show at most before folding the rest ([`render_diff`]).
pub const DIFF_SCREENFUL: usize = tackle_agent::diff::SCREENFUL;

/// `diff` (a unified diff) as a terminal shows it: at most `max_lines` lines, each indented by
/// `indent`, coloured when `color`.
pub fn render_diff(diff: &str, max_lines: usize, color: bool, indent: &str) -> String {
    tackle_agent::diff::render(diff, max_lines, color, indent)
}

/// An agent: a model, a session and a conversation.
pub struct Agent {
    inner: tackle_agent::Agent,
    /// Where the session's rules live (for [`Agent::set_permission_mode`]).
    template: SessionTemplate,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent").field("inner", &self.inner).finish()
    }
}

/// Builds an [`Agent`].
pub struct AgentBuilder {
    model: Arc<dyn ChatModel>,
    session: TackleSession,
    config: AgentConfig,
    trajectory: Option<PathBuf>,
    observer: Option<Arc<dyn Observer>>,
    history: Vec<tackle_llm::Message>,
    output_schema: Option<serde_json::Value>,
    max_tokens: Option<u64>,
    max_cost_usd: Option<f64>,
}

impl std::fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentBuilder").field("config", &self.config).field("trajectory", &self.trajectory).finish()
    }
}

impl Agent {
    /// A builder for an agent that asks `model` and runs its calls in `session`.
    pub fn builder(model: impl ChatModel + 'static, session: TackleSession) -> AgentBuilder {
        AgentBuilder::new(Arc::new(model), session)
    }

    /// Runs `task` to its end: until `task_done`, a reply without calls, the step limit or an
    /// error. Every call gets an output; the conversation is kept for the next task.
    pub async fn run(&mut self, task: &str) -> RunOutcome {
        self.run_with_cancel(task, &CancellationToken::new()).await
    }

    /// [`Agent::run`], stopped when `cancel` fires (the running calls still answer, and the
    /// outcome is `interrupted`).
    pub async fn run_with_cancel(&mut self, task: &str, cancel: &CancellationToken) -> RunOutcome {
        self.inner.run(task, cancel).await
    }

    /// The session the agent's calls run in.
    pub fn session(&self) -> &ToolSession {
        self.inner.session()
    }

    /// A [`KillSwitch`](crate::KillSwitch) for the processes the agent's session started (what
    /// a second Ctrl-C uses before exiting).
    pub fn kill_switch(&self) -> crate::KillSwitch {
        crate::KillSwitch::new(Arc::clone(self.session().state()))
    }

    /// The trajectory being written, if any.
    pub fn trajectory(&self) -> Option<Arc<Trajectory>> {
        self.inner.trajectory()
    }

    /// The template the agent's session was made from (its container, its settings).
    pub(crate) fn template(&self) -> &SessionTemplate {
        &self.template
    }

    /// The conversation so far.
    pub fn history(&self) -> &[tackle_llm::Message] {
        self.inner.history()
    }

    /// Forgets the conversation: the next task starts a new one.
    pub fn clear_history(&mut self) {
        self.inner.clear_history();
    }

    /// Asks `model` from the next request on.
    pub fn set_model(&mut self, model: Arc<dyn ChatModel>) {
        self.inner.set_model(model);
    }

    /// The model asked.
    pub fn model(&self) -> &Arc<dyn ChatModel> {
        self.inner.model()
    }

    /// The permission mode in force.
    pub fn permission_mode(&self) -> tackle_core::permission::PermissionMode {
        self.inner.permission_mode()
    }

    /// Decides the next calls in permission mode `mode`, with the session's rules as before
    /// (`/permissions MODE` and Shift-Tab in `tackle chat`).
    pub fn set_permission_mode(&mut self, mode: tackle_core::permission::PermissionMode) {
        let policy = self.template.policy_with_mode(mode);
        self.inner.set_permission_policy(policy, mode);
    }

    /// The session's permission rules, with their sources (`tackle permissions list`).
    pub fn rules(&self) -> &Arc<tackle_policy::permission::rules::RuleBook> {
        self.template.rules()
    }

    /// Ends the session: fires the SessionEnd hooks, then closes its tools, shells, jobs and
    /// MCP servers.
    pub async fn close(self) {
        self.inner.end_session("other").await;
        self.inner.session().close().await;
    }
}

impl AgentBuilder {
    /// A builder with a shared model (the command line picks the provider at run time).
    pub fn new(model: Arc<dyn ChatModel>, session: TackleSession) -> AgentBuilder {
        AgentBuilder {
            model,
            session,
            config: AgentConfig::default(),
            trajectory: None,
            observer: None,
            history: Vec::new(),
            output_schema: None,
            max_tokens: None,
            max_cost_usd: None,
        }
    }

    /// Replaces the role and working rules at the head of the system prompt (the environment,
    /// the call-format instructions and the workspace's `AGENTS.md` still follow).
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.config.base_prompt = Some(prompt.into());
        self
    }

    /// Stops after this many model requests (default 200).
    pub fn max_steps(mut self, steps: u32) -> Self {
        self.config.max_steps = steps;
        self
    }

    /// How the model calls tools: native tool calls (default) or a text format.
    pub fn call_format(mut self, format: CallFormat) -> Self {
        self.config.call_format = format;
        self
    }

    /// Writes the run, one JSON event per line, to `path` (default: no trajectory).
    pub fn trajectory(mut self, path: impl Into<PathBuf>) -> Self {
        self.trajectory = Some(path.into());
        self
    }

    /// Records each request's complete body in the trajectory.
    pub fn trajectory_full(mut self, full: bool) -> Self {
        self.config.trajectory_full = full;
        self
    }

    /// Carries on an earlier conversation: the first task is added after `history` (read one
    /// from a trajectory with [`trajectory::conversation`]).
    pub fn history(mut self, history: Vec<tackle_llm::Message>) -> Self {
        self.history = history;
        self
    }

    /// Shows the run's events (text as it streams, calls, outputs) to `observer`.
    pub fn observer(mut self, observer: Arc<dyn Observer>) -> Self {
        self.observer = Some(observer);
        self
    }

    /// Requires the final answer to be one JSON value that matches `schema` (a JSON Schema;
    /// docs/library.md#structured-final-answers): the system prompt shows it, an answer that
    /// does not match is sent back once with its problems, and a second mismatch ends the run
    /// in `error` with [`crate::StopKind::SchemaMismatch`]. The matching value is
    /// [`RunOutcome::output`]. An invalid schema fails [`AgentBuilder::build`].
    pub fn output_schema(mut self, schema: serde_json::Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Stops each run at `limit` of wall-clock time, as Ctrl-C stops it (the running calls are
    /// cancelled and answered, the trajectory closed), with [`RunStatus::Timeout`].
    pub fn time_limit(mut self, limit: std::time::Duration) -> Self {
        self.config.time_limit = Some(limit);
        self
    }

    /// Stops a run once it has used `max_tokens` tokens (input, cached input and output, summed
    /// over every request, its subagents' included): no further request is made, and the run
    /// ends [`RunStatus::Budget`]. The budget is the agent's: later tasks spend from it too.
    pub fn max_tokens(mut self, max_tokens: u64) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Stops a run once it has cost `usd` US dollars, as [`AgentBuilder::max_tokens`] does.
    /// The cost is the provider's figure, or the model's price from the user config's
    /// `[pricing]` and the built-in list; [`AgentBuilder::build`] fails when the model has no
    /// known price.
    pub fn max_cost(mut self, usd: f64) -> Self {
        self.max_cost_usd = Some(usd);
        self
    }

    /// The agent. Fails when the output schema is invalid, the trajectory file cannot be
    /// created, the user config's `[pricing]` is malformed, or `max_cost` is set for a model
    /// without a price.
    pub fn build(self) -> Result<Agent, BuildError> {
        let output_schema = match self.output_schema {
            Some(schema) => Some(Arc::new(OutputSchema::new(schema)?)),
            None => None,
        };
        let trajectory = match &self.trajectory {
            Some(path) => {
                // In the workspace: one of Tackle's state files, never made through a link.
                let workspace = self.session.template().workspace();
                let created = if path.starts_with(workspace) {
                    Trajectory::create_in_workspace(workspace, path)
                } else {
                    Trajectory::create(path)
                };
                Some(created.map_err(|source| BuildError::Trajectory { path: path.clone(), source })?)
            }
            None => None,
        };
        let template = self.session.template().clone();
        let mut config = self.config;
        config.output_schema = output_schema;
        let pricing = pricing(template.config())?;
        if self.max_cost_usd.is_some() {
            let model = self.model.info().model;
            if pricing.price(&model).is_none() {
                return Err(BuildError::NoPrice { model });
            }
        }
        config.pricing = Some(Arc::new(pricing));
        if self.max_tokens.is_some() || self.max_cost_usd.is_some() {
            config.budget = Some(Arc::new(tackle_agent::Budget::new(self.max_tokens, self.max_cost_usd)));
        }
        config.permission_mode = template.permission_mode();
        config.sandbox = match template.sandbox() {
            None => "none (no shell tools)".to_owned(),
            Some(Ok(sandbox)) => sandbox.kind().name().to_owned(),
            Some(Err(err)) => return Err(err),
        };
        let (session, _) = self.session.into_parts();
        let notices = template.clone();
        // The one assembly of an agent (subagents and teammates get theirs the same way).
        let parts = AgentParts {
            config,
            trajectory,
            history: self.history,
            observer: self.observer.unwrap_or_else(|| Arc::new(Silent)),
            refresh: Some(Arc::new(McpRefresh(template.clone()))),
            loop_hooks: template.command_hooks().cloned(),
            lineage: Lineage { config: Arc::new(template.config().clone()), ..Lineage::default() },
            notice: Some(Arc::new(move |line: &str| notices.notice(line))),
            ..AgentParts::new(self.model, session, template.executor())
        };
        Ok(Agent { inner: parts.build(), template })
    }
}

/// The prices runs are costed with: the built-in list under the user config's `[pricing]`
/// (never the workspace's: a cloned repository must not make a run look free).
fn pricing(config: &tackle_policy::config::Config) -> Result<tackle_llm::Pricing, BuildError> {
    let section: Option<serde_json::Map<String, serde_json::Value>> = config.user_section("pricing")?;
    Ok(tackle_llm::Pricing::from_section(section.as_ref())?)
}

/// Takes up MCP servers' tool-list changes before each model request.
struct McpRefresh(SessionTemplate);

impl ToolRefresh for McpRefresh {
    fn refresh<'a>(&'a self, session: &'a mut ToolSession) -> BoxFuture<'a, bool> {
        Box::pin(self.0.refresh(session))
    }
}
