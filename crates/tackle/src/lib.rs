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
pub mod changes;
mod check;
pub mod code_index;
pub mod config;
mod container;
mod error;
pub mod file_tools;
pub mod llm;
pub mod mcp_login;
pub mod mcp_serve;
pub mod mcp_servers;
mod mcp_wanted;
mod notice;
pub mod permission;
pub mod replay;
pub mod restrict;
pub mod secrets;
mod session;
mod settings;
pub mod state;
pub mod tasks;
mod template;
pub mod text_calls;
pub mod tool_catalog;
pub mod trajectory;

pub use agent::{Agent, AgentBuilder};
pub use builder::{McpImport, SessionBuilder, builtin_registry};
pub use check::{CheckError, PermissionCheck, RuleCallError};
pub use error::BuildError;
pub use session::TackleSession;
pub use tackle_policy::permission::sources::RuleFlags;
pub use template::SessionTemplate;

pub use container::{ContainerError, ContainerFlags, LaunchStep, PrunedContainers, prune_containers};
pub use session::KillSwitch;

pub use tackle_agent::{CallFormat, Observer, RunOutcome, RunStatus, StopKind};
/// The tool pipeline's session under a [`TackleSession`]: its id, workspace and state
/// ([`TackleSession::session`], [`Agent::session`]).
pub use tackle_core::ToolSession;
pub use tackle_core::permission::{Approver, PermissionMode};
/// The schema validator's refusal inside [`CheckError::InvalidArgs`].
pub use tackle_core::schema::ValidationError;
pub use tackle_core::spec::PathAccess;
pub use tackle_core::{
    Access, BoxFuture, Dialect, DynTool, ErrorKind, OutputMeta, Tool, ToolCall, ToolContext, ToolError, ToolOutput,
    ToolSpec,
};
pub use tackle_llm::ChatModel;
pub use tackle_policy::config::Config;
