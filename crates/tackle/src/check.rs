//! What the permission engine decides for one call, without running it
//! (`tackle permissions check`, docs/reference/safety.md#checking-a-call): the decision, the
//! rule that made it and where that rule came from, and for a shell command the sub-commands
//! it was split into.

use serde::Serialize;
use serde_json::{Value, json};
use tackle_core::permission::rules::{Outcome, RulePolicy};
use tackle_core::permission::{Decision, PermissionRequest};

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
    /// Where that rule came from.
    pub source: Option<String>,
    /// For a shell command: the sub-commands as rules see them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commands: Option<Vec<String>>,
    /// For a shell command that cannot be analyzed: why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unanalyzable: Option<String>,
}

impl SessionTemplate {
    /// The decision of the rules and the mode for calling `tool` with `args` (hooks and the
    /// approver are not consulted). An unknown tool or invalid arguments are an error.
    pub fn check_permission(&self, tool: &str, args: Value) -> Result<PermissionCheck, String> {
        let session = self.session();
        let handle = session.tools().resolve(tool).ok_or_else(|| session.tools().not_found_message(tool))?;
        let spec = handle.spec();
        handle.validator().check(spec, &args)?;
        let prepared = handle.tool.prepare(&args).map_err(|err| err.model_text(&spec.name))?;
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
        let (word, reason) = match decision {
            Decision::Allow => (
                "allow",
                match (&verdict.outcome, prepared.read_only) {
                    (Outcome::Allow { rules }, _) if !rules.is_empty() => "allowed by rule".to_owned(),
                    (_, true) | (Outcome::Allow { .. }, _) => "the call only reads".to_owned(),
                    _ => format!("permission mode {} allows it", self.permission_mode()),
                },
            ),
            Decision::Ask { reason, .. } => ("ask", reason),
            Decision::Deny { message } => ("deny", message),
        };
        let shell = verdict.shell.as_ref();
        Ok(PermissionCheck {
            decision: word,
            tool: spec.name.clone(),
            args,
            reason,
            rule,
            source,
            commands: shell.map(|a| a.commands.iter().map(|c| c.text.clone()).collect()),
            unanalyzable: shell.and_then(|a| a.unanalyzable.clone()),
        })
    }

    /// The call a rule-shaped text names: `Bash(git push origin main)` → the shell tool with
    /// that command, `Edit(src/a.rs)` / `Read(.env)` → a tool of that kind with that path,
    /// `NAME` alone → that tool with no arguments.
    pub fn call_from_rule(&self, text: &str) -> Result<(String, Value), String> {
        let text = text.trim();
        let (name, inner) = match text.split_once('(') {
            Some((name, rest)) => {
                (name.trim(), Some(rest.strip_suffix(')').ok_or_else(|| format!("'{text}' has no closing ')'"))?))
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
        .ok_or_else(|| format!("no tool of this session matches '{name}'"))?;
        let param = spec
            .command_param
            .clone()
            .or_else(|| spec.path_params.first().map(|p| p.name.clone()))
            .or_else(|| spec.specifier_param.clone())
            .ok_or_else(|| format!("{} takes no value a rule can name; use --tool and --args", spec.name))?;
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
