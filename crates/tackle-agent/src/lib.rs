//! Tackle's agent loop (docs/reference/providers.md#the-agent-loop): a provider from `tackle-llm`, a tool session and
//! executor from `tackle-core`, and a run that goes model → calls → executor → results →
//! model until the task is done, written to a JSON Lines trajectory as it happens.
//!
//! Front ends (the `tackle run` command, a library user) build a [`tackle_core::ToolSession`], an
//! [`tackle_llm::LlmClient`] and a [`tackle_core::Executor`], assemble them with
//! [`AgentParts`] (as subagents and teammates are), then call [`Agent::run`] and watch it
//! through an [`Observer`].

#![deny(missing_docs)]

mod agent;
pub mod approve;
mod budget;
pub mod calls;
pub mod diff;
mod events;
mod format;
pub mod lineage;
mod outcome;
pub mod output_schema;
mod parts;
pub mod prompt;
pub mod provider;
mod refresh;
pub mod replay;
pub mod subagent;
pub mod team;
pub use tackle_core::time;
pub mod trajectory;
mod turn;

pub use agent::{Agent, AgentConfig, EMPTY_REPLY_MESSAGE, TRUNCATED_MESSAGE};
pub use approve::{Prompter, StdioPrompter, TerminalApprover};
pub use budget::Budget;
pub use events::{AgentEvent, Observer, Silent, call_summary};
pub use format::{CallFormat, UnknownCallFormat};
pub use outcome::{RunOutcome, RunStatus, StopKind};
pub use output_schema::{OutputSchema, OutputSchemaError};
pub use parts::{AgentParts, Notice};
pub use refresh::ToolRefresh;
pub use trajectory::{Trajectory, TrajectoryEvent};
pub use turn::TASK_DONE;
