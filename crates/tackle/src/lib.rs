//! Tackle, the hands of an LLM agent: the front door for programs that embed it, and the only
//! assembly the `tackle` command line uses.
//!
//! Build a tool session with [`SessionBuilder`] (the built-in tools, your own typed tools, MCP
//! servers, a permission mode), run calls on it with [`TackleSession::call`] or
//! [`TackleSession::run_turn`], hand it to an [`Agent`] with a [`ChatModel`] to run a task, and
//! [`TackleSession::close`] it when done.
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use tackle::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec};
//!
//! /// The input of `shout`.
//! #[derive(Deserialize, JsonSchema)]
//! struct ShoutInput {
//!     /// The words to shout.
//!     words: String,
//! }
//!
//! struct Shout;
//!
//! impl Tool for Shout {
//!     type Input = ShoutInput;
//!
//!     fn spec(&self) -> ToolSpec {
//!         ToolSpec::new("shout", "Repeats the words in capitals.").read_only()
//!     }
//!
//!     async fn call(&self, input: ShoutInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
//!         Ok(ToolOutput::text(input.words.to_uppercase()))
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let workspace = tempfile::tempdir().unwrap();
//! let session = tackle::SessionBuilder::new(workspace.path())
//!     .config(tackle::Config::default())
//!     .tools("read_file")
//!     .tool(Shout)
//!     .build()
//!     .await
//!     .unwrap();
//! let output = session.call("shout", serde_json::json!({"words": "hello"})).await;
//! assert_eq!(output.text_content(), "HELLO");
//! session.close().await;
//! # });
//! ```

// The front door is documented item by item: every public name here is part of the contract.
#![deny(missing_docs)]

pub mod agent;
mod builder;
mod check;
mod container;
mod error;
pub mod llm;
mod mcp_wanted;
mod notice;
mod session;
mod settings;
mod template;

pub use agent::{Agent, AgentBuilder};
pub use builder::{McpImport, SessionBuilder, builtin_registry};
pub use check::{CheckError, PermissionCheck, RuleCallError};
pub use error::BuildError;
pub use session::TackleSession;
pub use tackle_policy::permission::sources::RuleFlags;
pub use template::SessionTemplate;

pub use tackle_agent::{CallFormat, Observer, RunOutcome, RunStatus, StopKind};
pub use tackle_core::permission::{Approver, PermissionMode};
pub use tackle_core::{Dialect, DynTool, Tool, ToolCall, ToolContext, ToolError, ToolOutput, ToolSpec};
pub use tackle_llm::ChatModel;
pub use tackle_policy::config::Config;

/// The lower layers: the tool pipeline's types (registry, executor, permission policies and
/// approvers, schema dialects, session state), for programs that go beyond the front door.
pub mod core {
    pub use tackle_core::*;
}

/// What decides: permission modes and rules, the shell-command analysis, command hooks,
/// configuration with consent, secrets (docs/reference/safety.md, docs/configuration.md).
pub mod policy {
    pub use tackle_policy::*;
}

/// The workspace path policy and the process sandbox (docs/reference/safety.md).
pub mod sandbox {
    pub use tackle_sandbox::*;
}

/// The built-in tools (files, search, JSON, shell, control).
pub mod tools {
    pub use tackle_tools::*;
}

/// The text call formats: markdown fences, XML, `@tool(id): {json}`; parsers and renderers.
pub mod calls {
    pub use tackle_calls::*;
}

/// MCP: serve a session's tools, import other servers' tools.
pub mod mcp {
    pub use tackle_mcp::*;
}

/// Containers: the session's tools inside a Docker or Podman container (docs/containers.md).
pub mod containers {
    pub use tackle_container::*;
}

/// The code knowledge graph: the index of a source tree's definitions and references, and
/// the `ckg` tool that asks it (docs/ckg.md).
pub mod ckg {
    pub use tackle_ckg::*;
}
