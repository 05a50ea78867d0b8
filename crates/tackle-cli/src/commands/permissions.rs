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
        (Some(call), _) => template.call_from_rule(call).map_err(Failure::usage)?,
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
    let result = template.check_permission(&tool, call_args).await.map_err(Failure::usage)?;
    if args.json {
        stdout::print_json_line(&result)?;
    } else {
        println!("{}", result.decision);
        println!("  tool: {}", result.tool);
        println!("  reason: {}", result.reason);
        if let (Some(rule), Some(source)) = (&result.rule, &result.source) {
            println!("  rule: {rule} (from {source})");
        }
        if let (Some(hook), Some(source)) = (&result.hook, &result.source) {
            println!("  hook: PreToolUse `{hook}` (from {source})");
        }
        if let Some(commands) = &result.commands {
            println!("  sub-commands:");
            for command in commands {
                println!("    {command}");
            }
        }
        if let Some(why) = &result.unanalyzable {
            println!("  unanalyzable: {why} (no allow rule covers it)");
        }
    }
    template.close().await;
    Ok(ExitCode::from(if result.decision == "allow" { OK } else { TOOL_FAILED }))
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
    } else if rules.is_empty() {
        println!("no permission rules (the permission mode decides every call)");
    } else {
        for rule in &rules {
            println!("{:<5}  {:<40}  {}", rule.kind.name(), rule.rule.text, rule.source);
        }
    }
    template.close().await;
    Ok(ExitCode::from(OK))
}
