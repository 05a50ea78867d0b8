//! One module per command group.

pub mod chat;
pub mod ckg;
pub mod containers;
pub mod fleet;
pub mod init;
pub mod mcp;
pub mod mcp_login;
pub mod mcp_manage;
pub mod parse;
pub mod permissions;
pub mod replay;
pub mod run;
pub mod tasks;
pub mod tools;
