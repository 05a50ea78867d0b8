//! In-process hook points around every call: before it runs (block it, allow or ask, or
//! rewrite its input) and after (amend its output). Claude Code's command hooks
//! (docs/reference/safety.md#hooks) are one implementation (tackle-policy's
//! `hooks::protocol::CommandHooks`); tests and library users add their own.

use serde_json::Value;

use crate::context::SessionInfo;
use crate::output::ToolOutput;
use crate::spec::ToolSpec;
use crate::tool::BoxFuture;

/// The call a hook sees.
#[derive(Debug, Clone, Copy)]
pub struct HookCall<'a> {
    /// The id the model gave the call.
    pub call_id: &'a str,
    /// The session the call runs in.
    pub session: &'a SessionInfo,
    /// The spec of the tool called.
    pub spec: &'a ToolSpec,
    /// The call's arguments, decoded and validated against the tool's schema.
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
    Ask {
        /// Why, shown to the person asked.
        reason: String,
    },
    /// Refuse the call; the message goes to the model.
    Deny {
        /// What the model is told.
        message: String,
    },
    /// Replace the input; it is validated and permitted again.
    ReplaceInput(Value),
}

/// A hook around tool calls. Both methods default to doing nothing.
pub trait ToolHook: Send + Sync {
    /// Runs once per call, after its arguments are validated and the policy did not deny it,
    /// before the person is asked and the call runs; the first `Deny` or `ReplaceInput` among
    /// the hooks stops the others.
    fn before_call<'a>(&'a self, _call: &'a HookCall<'a>) -> BoxFuture<'a, PreHookOutcome> {
        Box::pin(async { PreHookOutcome::Continue })
    }

    /// Runs after the call produced its output (already fitted to the budget), and may amend
    /// it before the model sees it.
    fn after_call<'a>(&'a self, _call: &'a HookCall<'a>, _output: &'a mut ToolOutput) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}
