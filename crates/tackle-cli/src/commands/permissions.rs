//! `tackle permissions check|list` (docs/reference/cli.md): what the permission engine decides
//! for a call, and every rule with its source. The decision is made by the `tackle` library's
//! session template; this module only parses and prints. Exit codes: 0 allow, 1 ask or deny,
//! 2 for a malformed rule, settings file or input.

use std::process::ExitCode;

use serde_json::{Value, json};

use crate::cli::{CheckArgs, PermissionsListArgs, RuleArgs};
use crate::exit::{CommandResult, Failure, OK, TOOL_FAILED};
use crate::{session, stdout};

async fn template(
    workspace: Option<&std::path::PathBuf>,
    trust: bool,
    rules: &RuleArgs,
    mode: tackle::PermissionMode,
) -> Result<tackle::SessionTemplate, Failure> {
    let workspace = session::workspace(workspace)?;
    let config = session::config(&workspace, trust, session::interactive())?;
    let builder = tackle::SessionBuilder::new(&workspace)
        .config(config)
        .on_notice(|line| diagln!("tackle: {line}"))
        .default_tools("all")
        .permission_mode(mode)
        .rules(rules.flags());
    Ok(builder.build_template().await?)
}

/// `tackle permissions check`.
pub async fn check(args: CheckArgs) -> CommandResult {
    let template = template(args.workspace.as_ref(), args.trust_workspace, &args.rules, args.permission_mode).await?;
    let (tool, call_args) = match (&args.call, &args.tool) {
        (Some(call), _) => template.call_from_rule(call).map_err(|err| Failure::usage(err.to_string()))?,
        (None, Some(tool)) => {
            let text = args.args.as_deref().unwrap_or("{}");
            let value: Value =
                serde_json::from_str(text).map_err(|err| Failure::usage(format!("--args is not valid JSON: {err}")))?;
            if !value.is_object() {
                return Err(Failure::usage("--args must be a JSON object"));
            }
            (tool.clone(), value)
        }
        (None, None) => {
            return Err(Failure::usage("give a call such as 'Bash(git status)', or --tool NAME --args JSON"));
        }
    };
    let result = template.check_permission(&tool, call_args).await.map_err(|err| Failure::usage(err.to_string()))?;
    if args.json {
        stdout::print_json_line(&result)?;
    } else {
        let mut text = format!("{}\n  tool: {}\n  reason: {}\n", result.decision, result.tool, result.reason);
        if let (Some(rule), Some(source)) = (&result.rule, &result.source) {
            text.push_str(&format!("  rule: {rule} (from {source})\n"));
        }
        if let (Some(hook), Some(source)) = (&result.hook, &result.source) {
            text.push_str(&format!("  hook: PreToolUse `{hook}` (from {source})\n"));
        }
        if let Some(commands) = &result.commands {
            text.push_str("  sub-commands:\n");
            for command in commands {
                text.push_str(&format!("    {command}\n"));
            }
        }
        if result.writes_files {
            text.push_str("  writes files: output goes to a file, which no Bash(...) rule allows (only Bash alone)\n");
        }
        if let Some(why) = &result.unanalyzable {
            text.push_str(&format!(
                "  unanalyzable: {why} (no allow rule covers it; any Bash(...) deny rule denies it)\n"
            ));
        }
        if result.read_only_restricted {
            text.push_str("  read-only restricted: runs with no writes (but its own /tmp) and no network\n");
        }
        stdout::print(&text)?;
    }
    template.close().await;
    Ok(ExitCode::from(if result.decision == "allow" { OK } else { TOOL_FAILED }))
}

/// The rules of `book`, one a line with its kind and source, as `tackle permissions list`
/// and `/permissions` in `tackle chat` show them.
pub fn rule_lines(book: &tackle::permission::RuleBook) -> String {
    let rules = book.list();
    if rules.is_empty() {
        return "no permission rules (the permission mode decides every call)\n".to_owned();
    }
    rules.iter().map(|r| format!("{:<5}  {:<40}  {}\n", r.kind.name(), r.rule.text, r.source)).collect()
}

/// `tackle permissions list`.
pub async fn list(args: PermissionsListArgs) -> CommandResult {
    let template =
        template(args.workspace.as_ref(), args.trust_workspace, &args.rules, tackle::PermissionMode::Default).await?;
    let rules = template.rules().list();
    if args.json {
        let list: Vec<Value> = rules
            .iter()
            .map(|r| json!({"kind": r.kind.name(), "rule": r.rule.text, "source": r.source.as_ref()}))
            .collect();
        stdout::print_json_line(&list)?;
    } else {
        stdout::print(&rule_lines(template.rules()))?;
    }
    template.close().await;
    Ok(ExitCode::from(OK))
}
