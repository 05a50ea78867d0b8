//! One module per command group.

pub mod ckg;
pub mod mcp;
pub mod parse;
pub mod permissions;
pub mod replay;
pub mod run;
pub mod tools;
