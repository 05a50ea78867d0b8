//! What decides whether a call may run: the mode table of
//! docs/reference/safety.md#permission-modes ([`ModePolicy`]), the rule engine ([`rules`]),
//! where rules come from ([`sources`]), the rules that would allow a call ([`suggest`]) and the
//! approver that denies, naming the way out, where nobody can be asked
//! ([`NonInteractiveApprover`]). The seam they plug into (`PermissionPolicy`, `Approver` and the
//! types they speak) is `tackle_core::permission`'s.

pub mod domain;
pub mod rule;
pub mod rules;
pub mod sources;
pub mod suggest;

use serde_json::Value;
use tackle_core::BoxFuture;
use tackle_core::permission::{Approval, Approver, Decision, PermissionMode, PermissionPolicy, PermissionRequest};

/// The rules that would allow `request`, for denial messages: for a shell command, its
/// sub-commands' rules as [`suggest::command_rules`] gives them (none for a command no
/// rule can allow); for a file edit, the file; otherwise the tool.
pub fn suggested_rules(request: &PermissionRequest<'_>) -> Vec<String> {
    if let Some(command) = request.spec.command(request.args) {
        return suggest::command_rules(command).unwrap_or_default();
    }
    if request.is_file_edit() {
        let path = request.spec.path_params.iter().find_map(|p| request.args.get(&p.name).and_then(Value::as_str));
        let path = path.or_else(|| request.written_paths.first().map(String::as_str));
        return vec![match path {
            // An absolute path is written `//abs` (a leading `/` is relative to the file
            // holding the rule).
            Some(path) if path.starts_with('/') => format!("Edit(/{path})"),
            Some(path) => format!("Edit({})", path.strip_prefix("./").unwrap_or(path)),
            None => "Edit".to_owned(),
        }];
    }
    vec![request.spec.claude_name().to_owned()]
}

/// The ways to allow `request`, for denial messages ("Allow it with …"): rules that
/// cover it (`--allow 'Bash(cargo test:*)'` or `[permissions] allow`), the permission
/// modes that would allow it and, where the command has the flag (`tackle run`), `--yes`.
/// Every denial message names its way out through this one function.
pub fn ways_to_allow(request: &PermissionRequest<'_>, yes_flag: bool) -> String {
    let modes = if request.is_file_edit() { "accept-edits or bypass" } else { "bypass" };
    let yes = if yes_flag { ", or --yes" } else { "" };
    let rules = suggested_rules(request);
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
                    ways_to_allow(request, false)
                ),
            },
        }
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
            ways_to_allow(request, true)
        );
        Box::pin(async move { Approval::Deny { message } })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tackle_core::ToolSpec;

    fn request<'a>(spec: &'a ToolSpec, args: &'a Value, read_only: bool) -> PermissionRequest<'a> {
        PermissionRequest { read_only, ..PermissionRequest::new("c1", spec, args) }
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
}
