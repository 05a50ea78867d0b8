//! Where Tackle's hands may reach: the workspace path policy that in-process file tools
//! resolve every path with (safety.md §1), and the process sandbox and environment that
//! shell commands run in (safety.md §6–§7).

pub mod env;
pub mod paths;
pub mod process;
pub mod workspace;

pub use paths::{PathError, Root, WorkspacePolicy};
pub use workspace::{ConfiguredPolicy, PolicyError, WorkspaceSection, policy_from_config};
