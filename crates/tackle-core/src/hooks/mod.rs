//! In-process hook points around every call: before it runs (block it, allow or ask, or
//! rewrite its input) and after (amend its output). Claude Code's command hooks
//! (docs/reference/safety.md#hooks) are one implementation ([`protocol::CommandHooks`]); tests
//! and library users add their own.

pub mod command;
pub mod config;
pub mod protocol;

use serde_json::Value;

use crate::context::SessionInfo;
use crate::output::ToolOutput;
use crate::spec::ToolSpec;
use crate::tool::BoxFuture;

/// The call a hook sees.
#[derive(Debug, Clone, Copy)]
pub struct HookCall<'a> {
    pub call_id: &'a str,
    /// The session the call runs in.
    pub session: &'a SessionInfo,
    pub spec: &'a ToolSpec,
    pub args: &'a Value,
}

/// What a pre-call hook decides.
#[derive(Debug, Clone, PartialEq)]
pub enum PreHookOutcome {
    /// No opinion.
    Continue,
    /// Lift an "ask" that came from the mode (never one from an ask rule).
    Allow,
    /// Ask the approver even if the mode would allow.
    Ask { reason: String },
    /// Refuse the call; the message goes to the model.
    Deny { message: String },
    /// Replace the input; it is validated and permitted again.
    ReplaceInput(Value),
}

/// A hook around tool calls. Both methods default to doing nothing.
pub trait ToolHook: Send + Sync {
    fn before_call<'a>(&'a self, _call: &'a HookCall<'a>) -> BoxFuture<'a, PreHookOutcome> {
        Box::pin(async { PreHookOutcome::Continue })
    }

    fn after_call<'a>(&'a self, _call: &'a HookCall<'a>, _output: &'a mut ToolOutput) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}
