//! Claude Code's command hooks (docs/reference/safety.md#hooks): where they are configured
//! ([`config`]), how one runs ([`command`]), and the JSON protocol that makes them a
//! `tackle_core::hooks::ToolHook` ([`protocol::CommandHooks`]).

pub mod command;
pub mod config;
pub mod protocol;

use tackle_core::hooks::{HookCall, PreHookOutcome, ToolHook};
