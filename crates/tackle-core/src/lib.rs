//! The core of Tackle: what a tool is, how it is shown to a model, and how a call to it is
//! checked, permitted, scheduled, run and reported.
//!
//! The pipeline (docs/architecture.md#one-pipeline) in one sentence: a [`ToolCall`] is resolved against the session's
//! [`ToolSet`], its arguments are decoded and validated against the tool's JSON Schema, a
//! [`permission`] policy and [`hooks`] may stop or rewrite it, the [`executor`] schedules it
//! (concurrency-safe calls together, the others alone and in order), runs it under a timeout
//! and cancellation, fits its output into the budget, and always returns exactly one
//! [`ToolOutput`].
//!
//! This crate knows no concrete tool: where it needs something concrete (the path policy, the
//! session state of file tools, the shell) it defines a seam and the owner implements it. It
//! knows no concrete policy either: the permission modes and rules, the shell-command
//! analysis, command hooks, configuration and secrets are the `tackle-policy` crate's, which
//! implements [`permission::PermissionPolicy`], [`permission::Approver`] and [`hooks::ToolHook`].

// The public API is a contract for embedders: every public item says what it is.
#![deny(missing_docs)]

pub mod agent_jobs;
pub mod call;
pub mod changes;
pub mod context;
pub mod deferral;
pub mod diff;
pub mod error;
pub mod events;
pub mod executor;
pub mod factory;
pub mod frontmatter;
pub mod fs;
pub mod hooks;
pub mod notify;
pub mod output;
pub mod paths;
pub mod permission;
pub mod registry;
pub mod resource;
pub mod schema;
pub mod session;
pub mod spec;
pub mod spill;
pub mod text;
pub mod time;
pub mod todos;
pub mod tool;

pub use call::{CallArgs, ToolCall};
pub use context::{SessionState, ToolContext};
pub use deferral::Deferral;
pub use error::{ErrorKind, ToolError};
pub use events::{ExecEvent, Progress};
pub use executor::{Executor, ExecutorConfig};
pub use factory::{ChildError, ChildRequest, ChildSession, Factory, SessionFactory};
pub use notify::Notifications;
pub use output::{ContentPart, OutputMeta, ToolOutput};
pub use paths::{Access, PathPolicy};
pub use registry::{Registry, ToolSet, ToolSource};
pub use resource::SessionResource;
pub use schema::Dialect;
pub use session::{ToolSession, ToolSessionConfig};
pub use spec::{Annotations, BlockMapping, InterruptBehavior, Loading, ToolSpec};
pub use todos::{TodoItem, TodoList, TodoStatus};
pub use tool::{BoxFuture, DynTool, PreparedCall, Tool, TypedTool};
