//! Where Tackle's hands may reach: the workspace path policy that in-process file tools
//! resolve every path with (docs/reference/safety.md#path-policy), and the process sandbox and environment that
//! shell commands run in (docs/reference/safety.md#process-sandbox).

pub mod env;
pub mod gitdir;
pub mod paths;
pub mod process;
pub mod workspace;

pub use paths::{PathError, Root, WorkspacePolicy};
pub use workspace::{ConfiguredPolicy, PolicyError, WorkspaceSection, policy_from_config};
