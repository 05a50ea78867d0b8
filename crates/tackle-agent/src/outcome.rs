//! How a run ended: [`RunStatus`] and [`RunOutcome`]. A leaf of the crate, so the loop
//! (`agent.rs`), the trajectory that records the end of a run, and the children that report it
//! to their parent all name these types without naming each other.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use tackle_llm::{ErrorClass, Usage};

/// The final result of a run stopped by Ctrl-C.
pub(crate) const INTERRUPTED: &str = "Interrupted by the user.";

/// The final result of a run stopped by its time limit (`tackle run --timeout`).
pub(crate) const TIMED_OUT: &str = "Stopped: the run reached its time limit (--timeout).";

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// The model answered: a `task_done` that was accepted, or a reply without calls.
    Success,
    /// The model stopped without a successful `task_done` after calls of the run were denied
    /// permission: the work may not be done, and a CI job must not pass on it.
    Incomplete,
    /// The step limit was reached before the model answered.
    MaxSteps,
    /// The run's time limit (`tackle run --timeout`) was reached: the running calls were
    /// cancelled and answered, as for Ctrl-C.
    Timeout,
    /// The run's spending limit (`--max-tokens`, `--max-cost`) was reached: no further request
    /// was made.
    Budget,
    /// Ctrl-C (the run's cancellation token) stopped it.
    Interrupted,
    /// A provider error, a refusal, too many truncated or empty replies, a blocked prompt, or a
    /// final answer that does not match the output schema ([`RunOutcome::error_kind`] says
    /// which).
    Error,
}

/// What ended a run in [`RunStatus::Error`]. Written (trajectories, `--json`'s `error.kind`) by
/// its [`StopKind::name`]: the provider error class's name, or `refused`, `truncated`,
/// `empty_reply`, `prompt_blocked`, `schema_mismatch` (docs/reference/cli.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StopKind {
    /// A provider request failed for good (after its retries).
    Provider(ErrorClass),
    /// The provider refused to continue.
    Refused,
    /// Too many replies in a row were cut off at the output token limit.
    Truncated,
    /// Two empty replies (no text, no calls) in a row.
    EmptyReply,
    /// A UserPromptSubmit hook blocked the prompt.
    PromptBlocked,
    /// The final answer did not match the run's output schema, and neither did the answer
    /// after the one correction the model was asked for.
    SchemaMismatch,
}

impl StopKind {
    /// The snake_case name in trajectories and `--json`.
    pub fn name(self) -> &'static str {
        match self {
            StopKind::Provider(class) => class.name(),
            StopKind::Refused => "refused",
            StopKind::Truncated => "truncated",
            StopKind::EmptyReply => "empty_reply",
            StopKind::PromptBlocked => "prompt_blocked",
            StopKind::SchemaMismatch => "schema_mismatch",
        }
    }
}

impl std::fmt::Display for StopKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for StopKind {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl RunStatus {
    /// Whether a limit of the run ended it (steps, time, spending): the work may be unfinished,
    /// and a harness may want to give it more.
    pub fn is_limit(self) -> bool {
        matches!(self, RunStatus::MaxSteps | RunStatus::Timeout | RunStatus::Budget)
    }

    /// The name in trajectories and `--json`.
    pub fn name(self) -> &'static str {
        match self {
            RunStatus::Success => "success",
            RunStatus::Incomplete => "incomplete",
            RunStatus::MaxSteps => "max_steps",
            RunStatus::Timeout => "timeout",
            RunStatus::Budget => "budget",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Error => "error",
        }
    }
}

/// The result of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunOutcome {
    /// How the run ended.
    pub status: RunStatus,
    /// The model requests made (a step is one request and the calls of its reply).
    pub steps: u32,
    /// The tokens of every request of the run, added up.
    pub usage: Usage,
    /// The run's wall-clock time, in milliseconds.
    pub duration_ms: u64,
    /// The final answer, or what stopped the run.
    pub final_result: String,
    /// For `error`: what stopped the run; `None` for every other status.
    pub error_kind: Option<StopKind>,
    /// The trajectory file the run was written to, if any.
    pub trajectory: Option<PathBuf>,
    /// How many calls were denied permission (by the mode, the approver or a hook).
    pub denied: u32,
    /// The denied calls as rules would name them (`Bash(python3 -m pytest -q)`), in order.
    pub denied_calls: Vec<String>,
    /// With an output schema ([`crate::AgentConfig::output_schema`]): the final answer's JSON
    /// value, which matched it; `None` for every other run, and for a run that did not end
    /// in `success`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<serde_json::Value>,
}
