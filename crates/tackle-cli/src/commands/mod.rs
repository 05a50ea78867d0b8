//! One module per command group.

pub mod mcp;
pub mod replay;
pub mod run;
pub mod tools;
