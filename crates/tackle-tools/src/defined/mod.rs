//! Tools defined in files (docs/reference/tools.md#tools-defined-in-files): gptme's `--tools
//! FILE` for people who do not write Rust. A TOML file gives a name, a description, an input
//! schema, and a `command` (the arguments as JSON on stdin) or a `script` (bash, the
//! arguments in the environment); the tool then is an ordinary registry tool, in every
//! dialect, call format and over MCP, under the same permission rules, sandbox and budgets.
//!
//! This module reads and checks one file ([`definition`]), maps a script's arguments to
//! variables ([`env_names`]) and runs calls ([`tool`]); where the files are found, who must
//! consent to them and which names they may take is decided by whoever assembles a session
//! (the `tackle` crate's `file_tools`).

pub mod definition;
pub mod env_names;
pub mod tool;

pub use definition::{DefinitionError, Runner, ToolDefinition, parse_definition};
pub use tool::{DefinedTool, Trust};
