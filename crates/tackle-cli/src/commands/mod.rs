//! One module per command group.

pub mod replay;
pub mod run;
pub mod tools;
