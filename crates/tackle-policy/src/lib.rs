//! What decides whether a tool call may run, and with what: Tackle's policy, apart from the
//! tool contract and executor of `tackle-core`, as codex keeps its `execpolicy` apart.
//!
//! - [`permission`]: the permission modes' table, the rule engine (deny > ask > allow > mode)
//!   and where rules come from, and the non-interactive approver (docs/reference/safety.md).
//! - [`shell`]: which commands a shell command line runs and which of them only read, from a
//!   tree-sitter-bash parse (docs/reference/safety.md#compound-shell-commands).
//! - [`hooks`]: Claude Code's command hooks (docs/reference/safety.md#hooks).
//! - [`config`]: the configuration layers, the trust table of what the workspace's
//!   `tackle.toml` may set, and consent (docs/configuration.md); [`tools_config`] reads its
//!   `[tools]` section.
//! - [`secrets`]: secrets stripped from the environment at start-up.
//!
//! Core defines the seams these implement (`tackle_core::permission::PermissionPolicy` and
//! `Approver`, `tackle_core::hooks::ToolHook`), so a tool author's build never compiles
//! tree-sitter; docs/architecture.md has the crate graph.

// The public API is a contract for embedders: every public item says what it is.
#![deny(missing_docs)]

pub mod config;
pub mod hooks;
pub mod permission;
pub mod secrets;
pub mod shell;
pub mod tools_config;
pub mod wildcard;
