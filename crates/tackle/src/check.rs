//! What the permission engine decides for one call, without running it
//! (`tackle permissions check`, docs/reference/safety.md#checking-a-call): the decision, the
//! rule or PreToolUse hook that made it and the file it came from, and for a shell command the
//! sub-commands it was split into.

use serde::Serialize;
use serde_json::{Value, json};
use tackle_core::hooks::{HookCall, PreHookOutcome};
use tackle_core::permission::{Decision, PermissionRequest};
use tackle_policy::permission::rules::{Outcome, RulePolicy};

use crate::template::SessionTemplate;

/// The answer of [`SessionTemplate::check_permission`].
#[derive(Debug, Clone, Serialize)]
pub struct PermissionCheck {
    /// `allow`, `ask` or `deny`.
    pub decision: &'static str,
    /// The tool's wire name.
    pub tool: String,
    /// The arguments checked.
    pub args: Value,
    /// Why: the denial message, the ask reason, or what allowed it.
    pub reason: String,
    /// The rule that decided, if a rule did.
    pub rule: Option<String>,
    /// Where that rule (or hook) came from.
    pub source: Option<String>,
    /// The command of the PreToolUse hook that decided, if a hook did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hook: Option<String>,
    /// For a shell command: the sub-commands as rules see them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commands: Option<Vec<String>>,
    /// For a shell command that cannot be analyzed: the construct (`null` otherwise). Such a
    /// command asks in the default mode and is denied in every mode when any `Bash(...)`
    /// deny rule exists (docs/reference/safety.md#threat-model).
    pub unanalyzable: Option<String>,
    /// For a shell command: whether it redirects output to a file, which only the whole
    /// shell tool allowed covers (docs/reference/safety.md#compound-shell-commands).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub writes_files: bool,
    /// Whether the call would run only because the command was judged read-only, under the
    /// read-only restriction (docs/shell.md, "Read-only commands run restricted").
    pub read_only_restricted: bool,
}

/// Why a call cannot be checked; the text is the one a model would see for the same call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// No tool of the session has that name (the message suggests a close one).
    #[error("{0}")]
    UnknownTool(String),
    /// The arguments do not match the tool's schema (the validator's message).
    #[error(transparent)]
    InvalidArgs(#[from] tackle_core::schema::ValidationError),
    /// The tool refuses the arguments before any permission check (its message).
    #[error("{0}")]
    Refused(String),
}

/// Why a rule-shaped text names no call of the session.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleCallError {
    /// `NAME(...` without the closing parenthesis.
    #[error("'{0}' has no closing ')'")]
    Unclosed(String),
    /// No tool of the session matches the rule's name.
    #[error("no tool of this session matches '{0}'")]
    NoTool(String),
    /// The tool has no command, path or specifier parameter for the value.
    #[error("{0} takes no value a rule can name; use --tool and --args")]
    NoValue(String),
}

impl SessionTemplate {
    /// The decision for calling `tool` with `args`: the rules and the mode, then the
    /// configured PreToolUse command hooks (run as for a real call, the call itself is not);
    /// the approver is not consulted. An unknown tool or invalid arguments are an error.
    pub async fn check_permission(&self, tool: &str, args: Value) -> Result<PermissionCheck, CheckError> {
        let session = self.session();
        let check = self.check_rules(&session, tool, args)?;
        let Some(hooks) = self.command_hooks().filter(|_| check.decision != "deny") else { return Ok(check) };
        let handle = session
            .tools()
            .resolve(tool)
            .ok_or_else(|| CheckError::UnknownTool(session.tools().not_found_message(tool)))?;
        let call = HookCall { call_id: "check", session: session.info(), spec: handle.spec(), args: &check.args };
        let hooked = hooks.pre_tool_use(&call).await;
        let Some((command, source)) = hooked.decided_by else { return Ok(check) };
        let by_hook = |decision: &'static str, reason: String, check: PermissionCheck| PermissionCheck {
            decision,
            reason,
            rule: None,
            source: Some(source.to_string()),
            hook: Some(command.clone()),
            // What a hook decides is not the read-only shortcut: its allow is outright.
            read_only_restricted: false,
            ..check
        };
        Ok(match hooked.outcome {
            PreHookOutcome::Deny { message } => by_hook("deny", message, check),
            PreHookOutcome::Ask { reason } if check.decision != "ask" || check.rule.is_none() => {
                by_hook("ask", format!("the PreToolUse hook asks: {reason}"), check)
            }
            // A hook's allow lifts an ask of the mode, never one of an ask rule.
            PreHookOutcome::Allow
                if (check.decision == "ask" && check.rule.is_none()) || check.read_only_restricted =>
            {
                by_hook("allow", "a PreToolUse hook allows it".to_owned(), check)
            }
            PreHookOutcome::ReplaceInput(input) => {
                // The rewritten input is validated and checked again from the start.
                let again = self.check_rules(&session, tool, input.clone())?;
                let reason = format!("a PreToolUse hook rewrote the input to {input}; {}", again.reason);
                PermissionCheck { reason, hook: Some(command), ..again }
            }
            _ => check,
        })
    }

    /// The decision of the rules and the mode alone.
    fn check_rules(
        &self,
        session: &tackle_core::ToolSession,
        tool: &str,
        args: Value,
    ) -> Result<PermissionCheck, CheckError> {
        let handle = session
            .tools()
            .resolve(tool)
            .ok_or_else(|| CheckError::UnknownTool(session.tools().not_found_message(tool)))?;
        let spec = handle.spec();
        handle.validator().check(spec, &args).map_err(CheckError::InvalidArgs)?;
        let prepared = handle.tool.prepare(&args).map_err(|err| CheckError::Refused(err.model_text(&spec.name)))?;
        let request = PermissionRequest {
            call_id: "check",
            spec,
            args: &args,
            read_only: prepared.read_only,
            written_paths: &prepared.written_paths,
            preview: None,
        };
        let policy = RulePolicy {
            book: std::sync::Arc::clone(self.rules()),
            mode: self.permission_mode(),
            workspace: self.workspace().to_owned(),
            restrict_read_only: self.restricts_read_only(),
        };
        let (verdict, decision) = policy.check(&request);
        let (rule, source) = match &verdict.outcome {
            Outcome::Deny { rule, .. } | Outcome::Ask { rule } => {
                (Some(rule.rule.text.clone()), Some(rule.source.to_string()))
            }
            Outcome::Allow { rules } if !rules.is_empty() => (
                Some(rules.iter().map(|r| r.rule.text.as_str()).collect::<Vec<_>>().join(", ")),
                Some(rules.iter().map(|r| r.source.as_ref()).collect::<Vec<_>>().join(", ")),
            ),
            _ => (None, None),
        };
        let decision_restricted = decision == Decision::AllowReadOnly;
        let (word, reason) = match decision {
            Decision::Allow => (
                "allow",
                match (&verdict.outcome, prepared.read_only) {
                    (Outcome::Allow { rules }, _) if !rules.is_empty() => "allowed by rule".to_owned(),
                    (_, true) | (Outcome::Allow { .. }, _) => "the call only reads".to_owned(),
                    _ => format!("permission mode {} allows it", self.permission_mode()),
                },
            ),
            Decision::AllowReadOnly => {
                ("allow", "the command only reads, and runs read-only restricted (no writes, no network)".to_owned())
            }
            Decision::Ask { reason, .. } => ("ask", reason),
            Decision::Deny { message } => ("deny", message),
        };
        let read_only_restricted = decision_restricted;
        let shell = verdict.shell.as_ref();
        Ok(PermissionCheck {
            decision: word,
            tool: spec.name.clone(),
            args,
            reason,
            rule,
            source,
            hook: None,
            commands: shell.map(|a| a.commands.iter().map(|c| c.text.clone()).collect()),
            unanalyzable: shell.and_then(|a| a.unanalyzable.clone()),
            writes_files: shell.is_some_and(|a| a.writes_files),
            read_only_restricted,
        })
    }

    /// The call a rule-shaped text names: `Bash(git push origin main)` → the shell tool with
    /// that command, `Edit(src/a.rs)` / `Read(.env)` → a tool of that kind with that path,
    /// `NAME` alone → that tool with no arguments.
    pub fn call_from_rule(&self, text: &str) -> Result<(String, Value), RuleCallError> {
        let text = text.trim();
        let (name, inner) = match text.split_once('(') {
            Some((name, rest)) => {
                (name.trim(), Some(rest.strip_suffix(')').ok_or_else(|| RuleCallError::Unclosed(text.to_owned()))?))
            }
            None => (text, None),
        };
        let session = self.session();
        let specs: Vec<_> = session.tools().handles().iter().map(|h| h.spec().clone()).collect();
        let Some(inner) = inner else { return Ok((name.to_owned(), json!({}))) };
        let find = |pred: &dyn Fn(&tackle_core::ToolSpec) -> bool| specs.iter().find(|s| pred(s)).cloned();
        let spec = match name {
            "Bash" | "bash" => find(&|s| s.command_param.is_some()),
            "Edit" | "Write" => find(&|s| s.edits_files && s.aliases.iter().any(|a| a == name))
                .or_else(|| find(&|s| s.edits_files && !s.path_params.is_empty())),
            "Read" => find(&|s| s.aliases.iter().any(|a| a == "Read")),
            other => find(&|s| s.name == other || s.aliases.iter().any(|a| a == other)),
        }
        .ok_or_else(|| RuleCallError::NoTool(name.to_owned()))?;
        let param = spec
            .command_param
            .clone()
            .or_else(|| spec.path_params.first().map(|p| p.name.clone()))
            .or_else(|| spec.specifier_param.clone())
            .ok_or_else(|| RuleCallError::NoValue(spec.name.clone()))?;
        let mut args = json!({ param: inner });
        if spec.edits_files && spec.command_param.is_none() {
            // A plausible edit, so the call validates: whole new content.
            for required in spec.required_params() {
                if args.get(required).is_none() {
                    args[required] = json!("");
                }
            }
        }
        Ok((spec.name.clone(), args))
    }
}
