//! Whether a call may run: the permission seam of the executor.
//!
//! A [`PermissionPolicy`] gives a tentative decision (allow, ask, deny) from the mode and,
//! in a later issue, rules; pre-call hooks may change it (docs/reference/safety.md#order-of-evaluation); an [`Approver`]
//! resolves what is still "ask" (a terminal prompt, MCP elicitation, or a non-interactive
//! denial). This module holds the seam, the permission modes of docs/reference/safety.md#permission-modes and the simple
//! approvers; the rule engine plugs in as another policy.

pub mod rule;
pub mod rules;
pub mod sources;
pub mod suggest;

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

impl PermissionRequest<'_> {
    /// Whether the call edits files (the `accept-edits` mode allows these).
    pub fn is_file_edit(&self) -> bool {
        self.spec.edits_files && !self.read_only
    }

    /// The rules that would allow this call, for denial messages: for a shell command, its
    /// sub-commands' rules as [`suggest::command_rules`] gives them (none for a command no
    /// rule can allow); for a file edit, the file; otherwise the tool.
    pub fn suggested_rules(&self) -> Vec<String> {
        if let Some(command) = self.spec.command(self.args) {
            return suggest::command_rules(command).unwrap_or_default();
        }
        if self.is_file_edit() {
            let path = self.spec.path_params.iter().find_map(|p| self.args.get(&p.name).and_then(Value::as_str));
            let path = path.or_else(|| self.written_paths.first().map(String::as_str));
            return vec![match path {
                // An absolute path is written `//abs` (a leading `/` is relative to the file
                // holding the rule).
                Some(path) if path.starts_with('/') => format!("Edit(/{path})"),
                Some(path) => format!("Edit({})", path.strip_prefix("./").unwrap_or(path)),
                None => "Edit".to_owned(),
            }];
        }
        vec![self.spec.claude_name().to_owned()]
    }

    /// The ways to allow this call, for denial messages ("Allow it with …"): rules that
    /// cover it (`--allow 'Bash(cargo test:*)'` or `[permissions] allow`), the permission
    /// modes that would allow it and, where the command has the flag (`tackle run`), `--yes`.
    /// Every denial message names its way out through this one function.
    pub fn ways_to_allow(&self, yes_flag: bool) -> String {
        let modes = if self.is_file_edit() { "accept-edits or bypass" } else { "bypass" };
        let yes = if yes_flag { ", or --yes" } else { "" };
        let rules = self.suggested_rules();
        if rules.is_empty() {
            return format!("a permission mode (--permission-mode {modes}){yes} (no rule can allow this command)");
        }
        let flags: Vec<String> = rules.iter().map(|r| format!("--allow '{r}'")).collect();
        // The workspace's `tackle.toml` allows only with the person's consent: the hint names
        // the file that can allow it outright, the user config as resolved.
        format!(
            "a rule ({}, or [permissions] allow in {}), a permission mode (--permission-mode {modes}){yes}",
            flags.join(" "),
            crate::config::user_config_shown()
        )
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

/// The mode table of docs/reference/safety.md#permission-modes as a policy.
#[derive(Debug, Clone, Copy, Default)]
pub struct ModePolicy {
    /// The mode whose row of the table decides.
    pub mode: PermissionMode,
    /// Whether a command judged read-only can run restricted, so it need not ask
    /// ([`Decision::AllowReadOnly`]); when not, it is decided as any other command.
    pub restrict_read_only: bool,
}

impl ModePolicy {
    /// The policy of `mode`, with read-only commands allowed to run restricted (a tool that
    /// cannot restrict them refuses to run them).
    pub fn new(mode: PermissionMode) -> Self {
        ModePolicy { mode, restrict_read_only: true }
    }
}

impl PermissionPolicy for ModePolicy {
    fn decide(&self, request: &PermissionRequest<'_>) -> Decision {
        if request.read_only {
            let command = request.spec.command(request.args).is_some();
            if !command || self.mode == PermissionMode::Bypass {
                return Decision::Allow;
            }
            if self.restrict_read_only {
                return Decision::AllowReadOnly;
            }
        }
        let tool = &request.spec.name;
        match self.mode {
            PermissionMode::Bypass => Decision::Allow,
            PermissionMode::AcceptEdits if request.is_file_edit() => Decision::Allow,
            PermissionMode::Default | PermissionMode::AcceptEdits => {
                Decision::Ask { reason: format!("permission mode {} asks before {tool}", self.mode), from_rule: false }
            }
            PermissionMode::Plan => Decision::Deny {
                message: format!(
                    "{tool} is not available in plan mode (read-only). Finish the plan and present it; to carry it out, the user leaves plan mode (Shift-Tab or /permissions default in tackle chat, or --permission-mode on the command line)."
                ),
            },
            PermissionMode::DontAsk => Decision::Deny {
                message: format!(
                    "{tool} needs permission, and mode dont-ask denies what is not allowed without asking. Allow it with {}.",
                    request.ways_to_allow(false)
                ),
            },
        }
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

/// Denies what needs approval, saying how to allow it (no terminal, `--json`, CI).
#[derive(Debug, Clone, Copy, Default)]
pub struct NonInteractiveApprover;

impl Approver for NonInteractiveApprover {
    fn approve<'a>(&'a self, request: &'a PermissionRequest<'a>, _: &'a str, _: bool) -> BoxFuture<'a, Approval> {
        let message = format!(
            "{} needs approval, but this run is non-interactive. Allow it with {}.",
            request.spec.name,
            request.ways_to_allow(true)
        );
        Box::pin(async move { Approval::Deny { message } })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request<'a>(spec: &'a ToolSpec, args: &'a Value, read_only: bool) -> PermissionRequest<'a> {
        PermissionRequest { call_id: "c1", spec, args, read_only, written_paths: &[], preview: None }
    }

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
    fn the_mode_table_holds() {
        let edit = ToolSpec::new("edit_file", "").alias("Edit").edits_files();
        let shell = ToolSpec::new("bash", "").alias("Bash").command_param("command");
        let args = json!({"command": "git push origin main", "file_path": "a.txt"});
        let cases = [
            (PermissionMode::Default, &edit, "ask"),
            (PermissionMode::Default, &shell, "ask"),
            (PermissionMode::AcceptEdits, &edit, "allow"),
            (PermissionMode::AcceptEdits, &shell, "ask"),
            (PermissionMode::Plan, &edit, "deny"),
            (PermissionMode::DontAsk, &shell, "deny"),
            (PermissionMode::Bypass, &shell, "allow"),
        ];
        for (mode, spec, expected) in cases {
            let got = match ModePolicy::new(mode).decide(&request(spec, &args, false)) {
                Decision::Allow => "allow",
                Decision::AllowReadOnly => "allow read-only",
                Decision::Ask { .. } => "ask",
                Decision::Deny { .. } => "deny",
            };
            assert_eq!(got, expected, "{mode} {}", spec.name);
            // A read-only command runs restricted unless the mode allows it outright.
            let read_only = if spec.name == "bash" && mode != PermissionMode::Bypass {
                Decision::AllowReadOnly
            } else {
                Decision::Allow
            };
            assert_eq!(ModePolicy::new(mode).decide(&request(spec, &args, true)), read_only, "{mode}");
        }
    }

    #[test]
    fn without_a_restriction_a_read_only_command_is_decided_like_any_other() {
        let shell = ToolSpec::new("bash", "").alias("Bash").command_param("command");
        let read = ToolSpec::new("read_file", "").alias("Read");
        let args = json!({"command": "ls"});
        let cases = [
            (PermissionMode::Default, "ask"),
            (PermissionMode::AcceptEdits, "ask"),
            (PermissionMode::Plan, "deny"),
            (PermissionMode::DontAsk, "deny"),
            (PermissionMode::Bypass, "allow"),
        ];
        for (mode, expected) in cases {
            let policy = ModePolicy { mode, restrict_read_only: false };
            let got = match policy.decide(&request(&shell, &args, true)) {
                Decision::Allow => "allow",
                Decision::AllowReadOnly => "allow read-only",
                Decision::Ask { .. } => "ask",
                Decision::Deny { .. } => "deny",
            };
            assert_eq!(got, expected, "{mode}");
            // A tool that only reads by construction is not a judged command.
            assert_eq!(policy.decide(&request(&read, &args, true)), Decision::Allow, "{mode}");
        }
    }

    #[test]
    fn denial_messages_name_the_way_out() {
        let shell = ToolSpec::new("bash", "").alias("Bash").command_param("command");
        let args = json!({"command": "git push origin main"});
        let Decision::Deny { message } =
            ModePolicy::new(PermissionMode::DontAsk).decide(&request(&shell, &args, false))
        else {
            panic!("expected a denial");
        };
        assert_eq!(
            message,
            "bash needs permission, and mode dont-ask denies what is not allowed without asking. Allow it with a rule (--allow 'Bash(git push:*)', or [permissions] allow in USER_CONFIG), a permission mode (--permission-mode bypass)."
                .replace("USER_CONFIG", &crate::config::user_config_shown())
        );
        let Decision::Deny { message } = ModePolicy::new(PermissionMode::Plan).decide(&request(&shell, &args, false))
        else {
            panic!("expected a denial");
        };
        assert!(message.starts_with("bash is not available in plan mode (read-only)."));
    }

    #[tokio::test]
    async fn the_non_interactive_denial_suggests_only_modes_that_would_allow_the_call() {
        let edit = ToolSpec::new("edit_file", "").alias("Edit").edits_files();
        let shell = ToolSpec::new("bash", "").alias("Bash").command_param("command");
        let args = json!({"command": "git push origin main", "file_path": "a.txt"});
        async fn denial(spec: &ToolSpec, args: &Value) -> String {
            match NonInteractiveApprover.approve(&request(spec, args, false), "mode default", false).await {
                Approval::Deny { message } => message,
                Approval::Allow => panic!("expected a denial"),
            }
        }
        assert_eq!(
            denial(&shell, &args).await,
            "bash needs approval, but this run is non-interactive. Allow it with a rule (--allow 'Bash(git push:*)', or [permissions] allow in USER_CONFIG), a permission mode (--permission-mode bypass), or --yes."
                .replace("USER_CONFIG", &crate::config::user_config_shown())
        );
        assert!(
            denial(&edit, &args)
                .await
                .ends_with(&"with a rule (--allow 'Edit', or [permissions] allow in USER_CONFIG), a permission mode (--permission-mode accept-edits or bypass), or --yes.".replace("USER_CONFIG", &crate::config::user_config_shown()))
        );
    }

    #[test]
    fn modes_parse_with_claude_code_aliases() {
        assert_eq!("acceptEdits".parse::<PermissionMode>().unwrap(), PermissionMode::AcceptEdits);
        assert_eq!("bypassPermissions".parse::<PermissionMode>().unwrap(), PermissionMode::Bypass);
        assert_eq!("dont-ask".parse::<PermissionMode>().unwrap(), PermissionMode::DontAsk);
        assert!("yolo".parse::<PermissionMode>().is_err());
    }
}
