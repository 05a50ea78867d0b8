//! `subagent`: hands a task to a child agent with a fresh history and a narrower tool set
//! (docs/subagents.md). The child runs the same agent loop in a session built by the parent's
//! session factory, so this crate needs nothing of the `tackle` crate; it only runs inside an
//! agent run, which tells it about itself through [`Delegation`].
//!
//! What a child can never do: gain a tool or a permission its parent lacks (its tools are cut
//! to the parent's, its mode narrowed), escape its parent's hooks and rules (its executor has
//! them), or nest deeper than [`MAX_DEPTH`].

mod child;
pub mod model;
pub mod types;

use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_core::agent_jobs::AgentJobs;
use tackle_core::factory::Factory;
use tackle_core::{Notifications, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};
use tackle_policy::config::user_dirs::UserDirs;
use tackle_policy::permission::rules::ReadRules;
use tokio_util::sync::CancellationToken;

use crate::lineage::{Delegation, MAX_DEPTH};

pub use child::{Child, Report, SpawnError, allowlist};
pub use types::{AgentType, Definitions};

/// The deadline of a child run in the foreground.
const FOREGROUND_DEADLINE: Duration = Duration::from_secs(3600);

/// Background children running at once in one session, at most.
pub const MAX_BACKGROUND: usize = 16;

/// The arguments of `subagent`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SubagentInput {
    /// The task for the child, complete and self-contained: it sees nothing of this
    /// conversation, only this text.
    pub prompt: String,
    /// The kind of agent: general-purpose (default), explore, plan, code-review, or the name of
    /// an agent defined in .tackle/agents/ or .claude/agents/.
    pub subagent_type: Option<String>,
    /// Three to five words saying what the child does (shown to the person).
    pub description: Option<String>,
    /// Start the child and return at once; its result arrives later as a notification
    /// (job_output with its id checks on it).
    pub run_in_background: Option<bool>,
}

impl SubagentInput {
    fn kind(&self) -> &str {
        self.subagent_type.as_deref().map(str::trim).filter(|t| !t.is_empty()).unwrap_or("general-purpose")
    }
}

/// The `subagent` tool.
#[derive(Debug, Default)]
pub struct Subagent;

/// The agent definitions of `workspace` (`.tackle/agents/`, `.claude/agents/`) and of the
/// person's agent directories (`user`, the session's `UserDirs`), with a warning for each file
/// left out (`tackle tools list` shows them). A file a `Read(...)` deny rule in `hidden`
/// covers is left out.
pub fn definitions(workspace: &std::path::Path, hidden: &ReadRules, user: &UserDirs) -> Definitions {
    types::load(&types::directories(workspace, &user.agents), hidden)
}

/// A subagent type that is neither built in nor defined; the text is the tool's error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Unknown subagent type: {name}. Available: {}", available.join(", "))]
pub struct UnknownType {
    /// The type asked for.
    pub name: String,
    /// The types there are: the built-ins, then the definitions.
    pub available: Vec<String>,
}

/// The type `name`: a built-in, else a definition of `workspace`.
pub fn resolve_type(
    workspace: &std::path::Path,
    name: &str,
    hidden: &ReadRules,
    user: &UserDirs,
) -> Result<AgentType, UnknownType> {
    if let Some(kind) = types::built_in(name) {
        return Ok(kind);
    }
    let defined = definitions(workspace, hidden, user);
    if let Some(kind) = defined.agents.iter().find(|a| a.name == name) {
        return Ok(kind.clone());
    }
    let mut names: Vec<String> = types::BUILT_IN.iter().map(|s| (*s).to_owned()).collect();
    names.extend(defined.agents.into_iter().map(|a| a.name));
    Err(UnknownType { name: name.to_owned(), available: names })
}

/// A `subagent_type` as given must be the type's exact name: permission rules
/// (`Subagent(general-purpose)`, `team_spawn(explore)`) match the value as written, so an
/// empty or padded one (`""`, `"explore "`) would pick a type a deny rule names without the rule
/// seeing it.
pub fn check_type_param(subagent_type: Option<&str>) -> Result<(), ToolError> {
    match subagent_type {
        Some(t) if t.is_empty() || t.trim() != t => Err(ToolError::InvalidInput(format!(
            "subagent_type {t:?} must be a type's name exactly, without spaces around it (or leave it out for general-purpose)."
        ))),
        _ => Ok(()),
    }
}

impl Tool for Subagent {
    type Input = SubagentInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "subagent",
            "Hand a task to a child agent that starts with an empty history and returns one final report. \
             Types: general-purpose (your tools, for multi-step work), explore (read-only search of the \
             workspace), plan (read-only, returns an implementation plan), code-review (read-only, returns \
             findings), or an agent defined in .tackle/agents/ or .claude/agents/. The child sees only the \
             prompt: make it complete. Several read-only children may run at once; run_in_background returns \
             at once and the result arrives later as a notification.",
        )
        .title("Subagent")
        .alias("Task")
        .alias("Agent")
        // Permission rules name it `Subagent(type)` (also `Task(…)`, `Agent(…)`).
        .alias("Subagent")
        .param_alias("task", "prompt")
        .param_alias("agent_type", "subagent_type")
        .specifier_param("subagent_type")
    }

    /// A read-only type's child only reads (its tools are read-only, its mode `plan`).
    fn is_read_only(&self, input: &SubagentInput) -> bool {
        types::built_in(input.kind()).is_some_and(|kind| kind.read_only)
    }

    /// Read-only children may run side by side (several `explore` at once).
    fn is_concurrency_safe(&self, input: &SubagentInput) -> bool {
        self.is_read_only(input)
    }

    fn validate(&self, input: &SubagentInput) -> Result<(), ToolError> {
        if input.prompt.trim().is_empty() {
            return Err(ToolError::InvalidInput("The prompt is empty: say what the subagent should do.".into()));
        }
        check_type_param(input.subagent_type.as_deref())
    }

    fn timeout(&self, _input: &SubagentInput) -> Option<Duration> {
        Some(FOREGROUND_DEADLINE)
    }

    async fn call(&self, input: SubagentInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let Some(parent) = ctx.state().existing::<Delegation>() else {
            return Err(ToolError::Failed(
                "subagent runs only inside an agent run (tackle run, tackle chat, an Agent of the library).".into(),
            ));
        };
        let depth = parent.lineage.depth + 1;
        if depth > MAX_DEPTH {
            return Err(ToolError::Failed(format!(
                "Subagent refused: recursion depth {depth} exceeds limit {MAX_DEPTH}."
            )));
        }
        let hidden = (*ctx.state().get::<ReadRules>()).clone();
        let kind = resolve_type(ctx.workspace(), input.kind(), &hidden, &ctx.state().get::<UserDirs>())
            .map_err(|err| ToolError::NotFound(err.to_string()))?;
        let Some(factory) = ctx.state().existing::<Factory>() else {
            return Err(ToolError::Failed(
                "This session cannot build child sessions (it was not built by a SessionBuilder).".into(),
            ));
        };
        let description = input.description.clone().unwrap_or_default();
        let id = parent.lineage.next_id();
        let failed = |err: SpawnError| ToolError::Failed(format!("Subagent {id} could not start: {err}"));
        if input.run_in_background == Some(true) {
            return start_in_background(ctx, &parent, &factory, &kind, &id, &description, input.prompt).await;
        }
        let child = Child::build(&parent, &factory, &kind, id.clone(), &description).await.map_err(failed)?;
        let report = child.run(&input.prompt, ctx.cancel_token(), false).await;
        let output = if report.is_error { ToolOutput::error(report.text) } else { ToolOutput::text(report.text) };
        Ok(output.with_structured(json!({"agent_id": id, "subagent_type": kind.name})))
    }
}

/// The session's background agents, with room for one more `what` (a subagent, a teammate).
pub fn background_jobs(ctx: &ToolContext, what: &str) -> Result<Arc<AgentJobs>, ToolError> {
    let queue = ctx.state().get::<Notifications>();
    let Some(jobs) = ctx.state().resource_or_insert_with(|| AgentJobs::new(queue)) else {
        return Err(ToolError::Failed(format!("The session has ended; no {what} can start.")));
    };
    if jobs.running() >= MAX_BACKGROUND {
        return Err(ToolError::Failed(format!(
            "Too many background agents running ({MAX_BACKGROUND}); wait for one or stop one with job_kill first."
        )));
    }
    Ok(jobs)
}

/// Starts the child in the background: it is recorded in the session's [`AgentJobs`] (so
/// `job_output` and `job_kill` find it, and closing the session cancels it), its result goes
/// to the notifications, and Ctrl-C of the parent's run cancels it too.
async fn start_in_background(
    ctx: &ToolContext,
    parent: &Delegation,
    factory: &Factory,
    kind: &AgentType,
    id: &str,
    description: &str,
    prompt: String,
) -> Result<ToolOutput, ToolError> {
    let jobs = background_jobs(ctx, "subagent")?;
    let child = Child::build(parent, factory, kind, id.to_owned(), description)
        .await
        .map_err(|err| ToolError::Failed(format!("Subagent {id} could not start: {err}")))?;
    let cancel = CancellationToken::new();
    let job = jobs.start(id.to_owned(), child.label.clone(), cancel.clone());
    let interrupt = parent.interrupt.clone();
    let jobs = Arc::clone(&jobs);
    tokio::spawn(async move {
        let run = child.run(&prompt, &cancel, true);
        tokio::pin!(run);
        let report = loop {
            tokio::select! {
                report = &mut run => break report,
                () = interrupt.cancelled(), if !cancel.is_cancelled() => cancel.cancel(),
            }
        };
        jobs.finish(&job, report.status, report.text);
    });
    Ok(ToolOutput::text(format!(
        "Subagent {id} started in the background; its result will arrive as a notification (job_output {id} to check)."
    ))
    .with_structured(json!({"agent_id": id, "subagent_type": kind.name, "background": true})))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_type_is_named_exactly_so_rules_see_what_runs() {
        assert!(check_type_param(None).is_ok());
        assert!(check_type_param(Some("explore")).is_ok());
        for padded in ["", " ", "explore ", " general-purpose", "plan\n"] {
            let err = check_type_param(Some(padded)).unwrap_err().to_string();
            assert!(err.contains("exactly"), "{padded:?}: {err}");
        }
    }
}
