//! Whether a call may run: the permission seam of the executor.
//!
//! A [`PermissionPolicy`] gives a tentative decision (allow, ask, deny) from the mode and the
//! rules; pre-call hooks may change it (docs/reference/safety.md#order-of-evaluation); an
//! [`Approver`] resolves what is still "ask" (a terminal prompt, MCP elicitation, or a
//! non-interactive denial). This module holds the seam, the permission modes of
//! docs/reference/safety.md#permission-modes and the two policies that know nothing (allow
//! everything, approve everything); what decides (the mode table, the rule engine, the shell
//! analysis, the non-interactive denial that names its way out) is the `tackle-policy` crate's.

use std::str::FromStr;

use serde_json::Value;

use crate::spec::ToolSpec;
use crate::tool::BoxFuture;

/// What the permission layer is asked about.
#[derive(Debug, Clone, Copy)]
pub struct PermissionRequest<'a> {
    /// The id the model gave the call.
    pub call_id: &'a str,
    /// The spec of the tool called.
    pub spec: &'a ToolSpec,
    /// The call's arguments, decoded and validated against the tool's schema.
    pub args: &'a Value,
    /// The call only reads (`Tool::is_read_only` for this input).
    pub read_only: bool,
    /// Paths the call writes beyond its path parameters (`Tool::written_paths`).
    pub written_paths: &'a [String],
    /// What the call would change (a unified diff for a file edit), when the tool can say;
    /// filled in only for the approver.
    pub preview: Option<&'a str>,
}

impl<'a> PermissionRequest<'a> {
    /// A request for the call `call_id` of `spec` with `args`, as yet not known to be
    /// read-only, writing nothing beyond its path parameters, with no preview.
    pub fn new(call_id: &'a str, spec: &'a ToolSpec, args: &'a Value) -> PermissionRequest<'a> {
        PermissionRequest { call_id, spec, args, read_only: false, written_paths: &[], preview: None }
    }

    /// Whether the call edits files (the `accept-edits` mode allows these).
    pub fn is_file_edit(&self) -> bool {
        self.spec.edits_files && !self.read_only
    }
}

/// A tentative or final decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The call may run.
    Allow,
    /// The call may run only because it was judged read-only: a command the shell analysis
    /// let through, which the tool runs under the read-only restriction (docs/shell.md,
    /// "Read-only commands run restricted"). Anything that allows the call outright (a hook's
    /// allow, an approver that allows everything) makes it [`Decision::Allow`].
    AllowReadOnly,
    /// Needs approval. `from_rule` is true when an ask rule or a PreToolUse hook (not the
    /// mode) asked: a hook's allow cannot lift that (docs/reference/safety.md#order-of-evaluation),
    /// and no rule an approver allowed "always" answers for the person.
    Ask {
        /// Why it asks, passed to the approver.
        reason: String,
        /// An ask rule or a hook asked (not the mode).
        from_rule: bool,
    },
    /// The call is refused without asking.
    Deny {
        /// What the model is told.
        message: String,
    },
}

/// Decides from the mode and rules, without asking anyone.
pub trait PermissionPolicy: Send + Sync {
    /// The decision for one call; `Ask` is then resolved by the [`Approver`].
    fn decide(&self, request: &PermissionRequest<'_>) -> Decision;
}

/// The answer of an approver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// The call may run.
    Allow,
    /// The call is refused.
    Deny {
        /// What the model is told.
        message: String,
    },
}

/// Resolves calls that need approval.
pub trait Approver: Send + Sync {
    /// Decides one call that needs approval; `reason` says why it asks (a rule, the mode),
    /// and `from_rule` whether an ask rule or a hook asked: then nothing an approver allowed
    /// "always" may answer in the person's place (an ask beats every allow rule).
    fn approve<'a>(
        &'a self,
        request: &'a PermissionRequest<'a>,
        reason: &'a str,
        from_rule: bool,
    ) -> BoxFuture<'a, Approval>;

    /// Whether a person answers (a terminal prompt, MCP elicitation): trajectories record
    /// such decisions as the user's, the others as the policy's.
    fn asks_a_person(&self) -> bool {
        false
    }

    /// Whether this approver allows every call it is asked about (`--yes`): a read-only
    /// command then runs as it would had it asked, unrestricted.
    fn allows_everything(&self) -> bool {
        false
    }
}

/// The permission modes of docs/reference/safety.md#permission-modes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum PermissionMode {
    /// Read-only calls run; everything else asks.
    #[default]
    Default,
    /// Read-only calls and file edits run; the rest asks.
    AcceptEdits,
    /// Only read-only calls run.
    Plan,
    /// What would ask is denied (CI).
    DontAsk,
    /// Everything runs (deny rules, the path policy and the sandbox still apply).
    Bypass,
}

/// The mode name was not one of the known ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown permission mode '{0}'; use one of: default, accept-edits, plan, dont-ask, bypass")]
pub struct UnknownMode(pub String);

impl PermissionMode {
    /// Every mode, in documentation order.
    pub const ALL: [PermissionMode; 5] = [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::DontAsk,
        PermissionMode::Bypass,
    ];

    /// Tackle's name of the mode.
    pub fn name(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "accept-edits",
            PermissionMode::Plan => "plan",
            PermissionMode::DontAsk => "dont-ask",
            PermissionMode::Bypass => "bypass",
        }
    }

    /// How much the mode lets run without asking, from `plan` (least) to `bypass` (most).
    fn reach(self) -> u8 {
        match self {
            PermissionMode::Plan => 0,
            PermissionMode::DontAsk => 1,
            PermissionMode::Default => 2,
            PermissionMode::AcceptEdits => 3,
            PermissionMode::Bypass => 4,
        }
    }

    /// The stricter of `self` and `requested`: what a child session asking for `requested`
    /// gets under a parent in `self` (narrowed, never widened).
    pub fn narrowed_to(self, requested: PermissionMode) -> PermissionMode {
        if requested.reach() < self.reach() { requested } else { self }
    }

    /// Claude Code's spelling (used in hook input).
    pub fn claude_name(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::DontAsk => "dontAsk",
            PermissionMode::Bypass => "bypassPermissions",
        }
    }
}

impl FromStr for PermissionMode {
    type Err = UnknownMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        PermissionMode::ALL
            .into_iter()
            .find(|m| m.name() == s || m.claude_name() == s)
            .ok_or_else(|| UnknownMode(s.to_owned()))
    }
}

impl std::fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Allows every call (a library default; front ends pick a mode).
#[derive(Debug, Clone, Copy, Default)]
pub struct AllowAll;

impl PermissionPolicy for AllowAll {
    fn decide(&self, _request: &PermissionRequest<'_>) -> Decision {
        Decision::Allow
    }
}

/// Approves everything (`--yes`, tests).
#[derive(Debug, Clone, Copy, Default)]
pub struct AutoApprover;

impl Approver for AutoApprover {
    fn approve<'a>(&'a self, _: &'a PermissionRequest<'a>, _: &'a str, _: bool) -> BoxFuture<'a, Approval> {
        Box::pin(async { Approval::Allow })
    }

    fn allows_everything(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_mode_is_narrowed_never_widened() {
        use PermissionMode::*;
        assert_eq!(Default.narrowed_to(Bypass), Default);
        assert_eq!(Default.narrowed_to(Plan), Plan);
        assert_eq!(AcceptEdits.narrowed_to(Default), Default);
        assert_eq!(DontAsk.narrowed_to(AcceptEdits), DontAsk);
        assert_eq!(Plan.narrowed_to(DontAsk), Plan);
        for parent in PermissionMode::ALL {
            assert_eq!(parent.narrowed_to(parent), parent);
        }
    }

    #[test]
    fn modes_parse_with_claude_code_aliases() {
        assert_eq!("acceptEdits".parse::<PermissionMode>().unwrap(), PermissionMode::AcceptEdits);
        assert_eq!("bypassPermissions".parse::<PermissionMode>().unwrap(), PermissionMode::Bypass);
        assert_eq!("dont-ask".parse::<PermissionMode>().unwrap(), PermissionMode::DontAsk);
        assert!("yolo".parse::<PermissionMode>().is_err());
    }
}
