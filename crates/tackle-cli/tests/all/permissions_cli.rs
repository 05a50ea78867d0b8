//! Permission rules and command hooks through the real binary (docs/reference/safety.md#rules,
//! docs/reference/safety.md#hooks): a Claude Code `.claude/settings.json` written as Claude
//! Code's documentation shows it works unchanged (rules and a PreToolUse guard script that
//! reads `tool_input.command` with `jq` and exits 2), workspace allow rules and hooks need
//! consent, `tackle permissions check` answers with exit codes, malformed rules and settings
//! are errors that name the file and the rule, and failing hooks warn without blocking.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support::isolated;

struct Setup {
    _root: tempfile::TempDir,
    workspace: PathBuf,
    user: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let root = tempfile::tempdir_in("/var/tmp").unwrap();
        let base = root.path().canonicalize().unwrap();
        let (workspace, user) = (base.join("ws"), base.join("user"));
        std::fs::create_dir_all(workspace.join(".claude/hooks")).unwrap();
        std::fs::create_dir(&user).unwrap();
        Setup { _root: root, workspace, user }
    }

    fn file(&self, name: &str, text: &str) {
        let path = self.workspace.join(name);
        std::fs::write(&path, text).unwrap();
        if name.ends_with(".sh") {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        isolated::tackle(&self.workspace, &self.user, args).output().unwrap()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

const CLAUDE_SETTINGS: &str = r#"{
  "permissions": {
    "allow": ["Bash(npm run test:*)", "Bash(git diff:*)"],
    "deny": ["Read(./.env)", "Bash(curl:*)", "Bash(git push:*)"]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          { "type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/guard.sh", "timeout": 10 }
        ]
      }
    ]
  }
}"#;

const GUARD: &str = r#"#!/bin/bash
command=$(jq -r '.tool_input.command')
if echo "$command" | grep -q 'rm -rf'; then
  echo "Blocked: rm -rf is not allowed here" >&2
  exit 2
fi
exit 0
"#;

fn claude_workspace() -> Setup {
    let setup = Setup::new();
    setup.file(".claude/settings.json", CLAUDE_SETTINGS);
    setup.file(".claude/hooks/guard.sh", GUARD);
    setup.file("tackle.toml", "[compat]\nclaude = true\n[hooks]\nimport_claude = true\n");
    setup.file(".env", "TOKEN=secret\n");
    setup
}

#[test]
fn a_claude_code_settings_file_works_unchanged() {
    let setup = claude_workspace();
    let trusted = ["--trust-workspace"];
    let call = |args: &[&str]| setup.run(&[&["tools", "call"][..], args, &trusted[..]].concat());

    // The guard script blocks; stderr goes to the model, and tools call exits 2.
    let out = call(&["bash", r#"{"command":"rm -rf build"}"#]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("Blocked by PreToolUse hook: Blocked: rm -rf is not allowed here"));
    // Deny rules from the settings file.
    let out = call(&["bash", r#"{"command":"git fetch && git push origin main"}"#]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("denied by rule Bash(git push:*)"), "{}", text(&out.stderr));
    let out = call(&["read_file", r#"{"file_path":".env"}"#]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("denied by rule Read(./.env)"));
    // A harmless command passes the guard and runs.
    let out = call(&["bash", r#"{"command":"echo guarded-ok"}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("guarded-ok"));
    // The allow rule from the settings file, seen by permissions check in default mode.
    let out = setup.run(&["permissions", "check", "--json", "Bash(npm run test -- --watch)", "--trust-workspace"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["decision"], "allow");
    assert_eq!(json["source"], ".claude/settings.json");
}

#[test]
fn workspace_allow_rules_and_hooks_need_consent_but_deny_rules_always_count() {
    let setup = Setup::new();
    setup.file(
        "tackle.toml",
        "[permissions]\nallow = [\"Bash(rm:*)\"]\ndeny = [\"Bash(git push:*)\"]\n[[hooks.PreToolUse]]\ncommand = \"exit 2\"\n",
    );
    let out = setup.run(&["permissions", "list", "--json"]);
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    assert_eq!(list[0]["rule"], "Bash(git push:*)");
    assert!(text(&out.stderr).contains("allow rule(s) from the workspace's tackle.toml"), "{}", text(&out.stderr));
    // Without consent the hook does not run: the call is not blocked by it.
    let out = setup.run(&["tools", "call", "bash", r#"{"command":"echo ran"}"#]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // With consent both count.
    let out = setup.run(&["permissions", "list", "--json", "--trust-workspace"]);
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 2, "{list}");
    let out = setup.run(&["tools", "call", "bash", r#"{"command":"echo ran"}"#, "--trust-workspace"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
}

#[test]
fn permissions_check_exit_codes_and_sub_commands() {
    let setup = Setup::new();
    let out = setup.run(&["permissions", "check", "Bash(git fetch && git clean -fd)", "--deny", "Bash(git clean:*)"]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("deny"), "{stdout}");
    assert!(stdout.contains("rule: Bash(git clean:*) (from --deny)"), "{stdout}");
    assert!(stdout.contains("    git fetch\n    git clean -fd"), "{stdout}");
    let out = setup.run(&["permissions", "check", "Bash(npm test)", "--allow", "Bash(npm test:*)"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let out = setup.run(&["permissions", "check", "--json", "--tool", "bash", "--args", r#"{"command":"eval x"}"#]);
    assert_eq!(out.status.code(), Some(1));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["decision"], "ask");
    assert!(json["unanalyzable"].as_str().unwrap().contains("eval"));
    // An unanalyzable command is denied in bypass mode when a `Bash(...)` deny rule exists, and
    // the check names the construct; an analyzable one reports `"unanalyzable": null`.
    let bypass = ["--permission-mode", "bypass", "--deny", "Bash(rm:*)"];
    let out = setup.run(&[&["permissions", "check", "--json", "Bash(c=rm; $c v)"][..], &bypass].concat());
    assert_eq!(out.status.code(), Some(1));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["decision"], "deny", "{json}");
    assert!(json["unanalyzable"].as_str().unwrap().contains("expansion"), "{json}");
    let out = setup.run(&[&["permissions", "check", "Bash(coproc rm v)"][..], &bypass].concat());
    assert!(text(&out.stdout).starts_with("deny"), "{}", text(&out.stdout));
    assert!(text(&out.stdout).contains("unanalyzable: `coproc`"), "{}", text(&out.stdout));
    let out = setup.run(&[&["permissions", "check", "--json", "Bash(ls -la)"][..], &bypass].concat());
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((json["decision"].as_str(), &json["unanalyzable"]), (Some("allow"), &Value::Null), "{json}");
    // Output to a file is a write no `Bash(...)` rule allows, and the check says so.
    let out = setup.run(&["permissions", "check", "Bash(npm test > ~/.bashrc)", "--allow", "Bash(npm test:*)"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).contains("writes files: output goes to a file"), "{}", text(&out.stdout));
    let out = setup.run(&["permissions", "check", "--json", "Bash(npm test > out.txt)", "--allow", "Bash(npm test:*)"]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((json["decision"].as_str(), json["writes_files"].as_bool()), (Some("ask"), Some(true)));
    let out = setup.run(&[
        "permissions",
        "check",
        "--json",
        "Bash(npm test 2>&1 > /dev/null)",
        "--allow",
        "Bash(npm test:*)",
    ]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((json["decision"].as_str(), json.get("writes_files")), (Some("allow"), None));
    let out = setup.run(&["permissions", "check", "Bash(ls)", "--allow", "Bash(a:*b)"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--allow: invalid permission rule 'Bash(a:*b)': ':*' is allowed only at the end")
    );
}

#[test]
fn a_rule_saved_for_the_project_is_honoured_by_the_next_session_of_that_workspace_only() {
    let setup = Setup::new();
    // What the terminal approver's `p` writes (crates/tackle-agent/src/approve.rs tests the
    // answer): the store in the user config dir, keyed by the canonical workspace.
    let store = tackle_policy::permission::sources::ProjectRules {
        path: setup.user.join(tackle_policy::permission::sources::PROJECT_RULES_FILE),
    };
    store.save(&setup.workspace, "Bash(cargo test:*)").unwrap();
    let out = setup.run(&["permissions", "check", "Bash(cargo test --all)"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("Bash(cargo test:*) (from project rules ("), "{stdout}");
    // Joined to another command it does not cover the other.
    let out = setup.run(&["permissions", "check", "Bash(cargo test && make install)"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    // Another workspace does not see it.
    let other = setup.workspace.join("sub");
    std::fs::create_dir(&other).unwrap();
    let out = setup.run(&["permissions", "check", "Bash(cargo test)", "--workspace", other.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    // Nothing was written into the workspace.
    assert!(!setup.workspace.join(tackle_policy::permission::sources::PROJECT_RULES_FILE).exists());
}

#[test]
fn permissions_check_runs_the_pre_tool_use_hooks_and_names_the_one_that_decided() {
    let setup = claude_workspace();
    // The Claude Code guard script denies; check names the hook and its file.
    let out = setup.run(&["permissions", "check", "Bash(rm -rf build)", "--trust-workspace"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("deny"), "{stdout}");
    assert!(stdout.contains("reason: Blocked by PreToolUse hook: Blocked: rm -rf is not allowed here"), "{stdout}");
    assert!(
        stdout.contains(
            r#"hook: PreToolUse `"$CLAUDE_PROJECT_DIR"/.claude/hooks/guard.sh` (from .claude/settings.json)"#
        ),
        "{stdout}"
    );
    let out = setup.run(&["permissions", "check", "--json", "Bash(npm run test)", "--trust-workspace"]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["decision"], "allow", "{json}");
    assert!(json.get("hook").is_none(), "{json}");
    // A JSON answer: a hook's allow lifts the mode's ask, a hook's rewrite is checked again.
    let setup = Setup::new();
    let config = setup.user.join("config.toml");
    let allow = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}"#;
    std::fs::write(&config, format!("[[hooks.PreToolUse]]\ncommand = '''echo '{allow}' '''\n")).unwrap();
    let out = setup.run(&["permissions", "check", "--json", "Bash(make install)"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["source"], config.display().to_string(), "{json}");
    // ...but not a deny rule's denial, which comes first.
    let out = setup.run(&["permissions", "check", "--json", "Bash(make install)", "--deny", "Bash(make:*)"]);
    assert_eq!(out.status.code(), Some(1));
    let update = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"git push"}}}"#;
    std::fs::write(&config, format!("[[hooks.PreToolUse]]\ncommand = '''echo '{update}' '''\n")).unwrap();
    let out = setup.run(&["permissions", "check", "--json", "Bash(ls)", "--deny", "Bash(git push:*)"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["decision"], "deny", "{json}");
    assert_eq!(json["rule"], "Bash(git push:*)", "{json}");
}

#[test]
fn malformed_rules_and_settings_name_the_file_and_the_rule() {
    let setup = Setup::new();
    std::fs::write(setup.user.join("config.toml"), "[permissions]\ndeny = [\"Bash()\"]\n").unwrap();
    let out = setup.run(&["permissions", "list"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("config.toml") && stderr.contains("'Bash()'") && stderr.contains("empty parentheses"),
        "{stderr}"
    );

    let setup = Setup::new();
    std::fs::write(setup.user.join("config.toml"), "[compat]\nclaude = true\n").unwrap();
    setup.file(".claude/settings.json", r#"{"permissions": {"deny": ["Read(./.env)", 7]}}"#);
    let out = setup.run(&["permissions", "list"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains(".claude/settings.json: permissions.deny holds 7"), "{}", text(&out.stderr));
    setup.file(".claude/settings.json", "{not json");
    let out = setup.run(&["permissions", "list"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains(".claude/settings.json: not valid JSON"), "{}", text(&out.stderr));
}

fn hooked(setup: &Setup, hook: &str) -> Output {
    std::fs::write(setup.user.join("config.toml"), hook).unwrap();
    setup.run(&["tools", "call", "bash", r#"{"command":"echo went-on"}"#])
}

#[test]
fn failing_hooks_warn_and_the_call_goes_on_except_exit_2_and_fail_closed() {
    let setup = Setup::new();
    for (hook, warning) in [
        ("command = \"exit 1\"", "failed (exit 1)"),
        ("command = \"echo '{garbage'\"", "not valid JSON"),
        ("command = \"head -c 3000000 /dev/zero | tr '\\\\0' x\"", ""),
        ("command = \"sleep 30\"\ntimeout = 1", "timed out after 1 s"),
        ("command = \"kill -SEGV $$\"", "failed (exit a signal)"),
    ] {
        let out = hooked(&setup, &format!("[[hooks.PreToolUse]]\n{hook}\n"));
        assert_eq!(out.status.code(), Some(0), "{hook}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains("went-on"), "{hook}");
        assert!(text(&out.stderr).contains(warning), "{hook}: {}", text(&out.stderr));
    }
    let out = hooked(&setup, "[[hooks.PreToolUse]]\ncommand = \"sleep 30\"\ntimeout = 1\nfail_closed = true\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("fail_closed"));
    let out = hooked(&setup, "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\ncommand = \"echo no >&2; exit 2\"\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("Blocked by PreToolUse hook: no"));
    // A matcher that does not match the tool leaves it alone.
    let out = hooked(&setup, "[[hooks.PreToolUse]]\nmatcher = \"Edit|Write\"\ncommand = \"exit 2\"\n");
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn hook_json_output_denies_rewrites_and_adds_context() {
    let setup = Setup::new();
    let deny = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not today"}}"#;
    let out = hooked(&setup, &format!("[[hooks.PreToolUse]]\ncommand = '''echo '{deny}' '''\n"));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("Blocked by PreToolUse hook: not today"), "{}", text(&out.stderr));
    let update = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","updatedInput":{"command":"echo rewritten"}}}"#;
    let out = hooked(&setup, &format!("[[hooks.PreToolUse]]\ncommand = '''echo '{update}' '''\n"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("rewritten"));
    let post = r#"{"decision":"block","reason":"check the output"}"#;
    let out = hooked(&setup, &format!("[[hooks.PostToolUse]]\ncommand = '''echo '{post}' '''\n"));
    assert!(text(&out.stdout).contains("[PostToolUse hook] check the output"), "{}", text(&out.stdout));
    // The hook sees Claude Code's fields on stdin.
    let marker = setup.workspace.join("input.json");
    let out = hooked(&setup, &format!("[[hooks.PreToolUse]]\ncommand = \"cat > {}\"\n", marker.display()));
    assert_eq!(out.status.code(), Some(0));
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&marker).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["tool_name"], "Bash");
    assert_eq!(input["tackle_tool_name"], "bash");
    assert_eq!(input["tool_input"]["command"], "echo went-on");
    assert_eq!(input["permission_mode"], "bypassPermissions");
    assert!(Path::new(input["cwd"].as_str().unwrap()).ends_with("ws"));
}

/// A Claude Code user's own deny rules count without `[compat] claude` and without consent:
/// deny and ask rules only narrow. Allow rules, hooks and `defaultMode` still wait, and one
/// notice says what was left out and how to apply it (issue 24 point 8).
#[test]
fn claude_code_deny_rules_count_without_compat_or_consent() {
    let setup = Setup::new();
    setup.file(
        ".claude/settings.json",
        r#"{"permissions": {"deny": ["Bash(rm:*)"], "allow": ["Bash(curl:*)"], "defaultMode": "bypassPermissions"},
            "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "touch hooked"}]}]}}"#,
    );
    setup.file(
        ".claude/settings.local.json",
        r#"{"permissions": {"deny": ["Read(./secret.txt)"], "ask": ["Bash(git push:*)"]}}"#,
    );
    setup.file("x", "keep me\n");
    setup.file("secret.txt", "s3cret\n");
    let bypass = ["--permission-mode", "bypass"];
    let call = |tool: &str, args: &str| setup.run(&[&["tools", "call", tool, args][..], &bypass[..]].concat());

    let out = call("bash", r#"{"command":"rm x"}"#);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("denied by rule Bash(rm:*) (.claude/settings.json)"), "{stderr}");
    assert!(setup.workspace.join("x").exists(), "rm ran");
    // The same through a wrapper and a compound command.
    let out = call("bash", r#"{"command":"echo a && rm -f x"}"#);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(setup.workspace.join("x").exists(), "rm ran");
    let out = call("read_file", r#"{"file_path":"secret.txt"}"#);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("(.claude/settings.local.json)"), "{}", text(&out.stderr));
    assert!(!text(&out.stdout).contains("s3cret"));

    // One notice names what was not applied and how to apply it.
    let out = call("bash", r#"{"command":"echo ran"}"#);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let notices: Vec<&str> = stderr.lines().filter(|line| line.contains("Claude Code settings")).collect();
    assert_eq!(notices.len(), 1, "{stderr}");
    assert!(
        notices[0].contains(
            "not applied: .claude/settings.json (1 allow rule(s), permissions.defaultMode = \"bypassPermissions\", \
             hooks). To apply them, set [compat] claude = true and [hooks] import_claude = true in your user config \
             and trust the workspace"
        ),
        "{}",
        notices[0]
    );
    assert!(!setup.workspace.join("hooked").exists(), "the hook ran without consent");

    // The allow rule does not count: curl asks in the default mode; the ask rule counts.
    let check = |rule: &str, extra: &[&str]| {
        let out = setup.run(&[&["permissions", "check", "--json", rule][..], extra].concat());
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        (json["decision"].as_str().unwrap().to_owned(), json["source"].as_str().map(str::to_owned))
    };
    assert_eq!(check("Bash(curl http://127.0.0.1:9)", &[]).0, "ask");
    assert_eq!(check("Bash(git push origin main)", &bypass).0, "ask");

    // With `[compat] claude` in the user config and consent, the allow rule counts too.
    std::fs::write(setup.user.join("config.toml"), "[compat]\nclaude = true\n").unwrap();
    assert_eq!(
        check("Bash(curl http://127.0.0.1:9)", &["--trust-workspace"]),
        ("allow".to_owned(), Some(".claude/settings.json".to_owned()))
    );
}

#[test]
fn permissions_check_says_when_a_command_would_run_read_only_restricted() {
    let setup = Setup::new();
    let check = |args: &[&str]| {
        let out = setup.run(&[&["permissions", "check", "--json"], args].concat());
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        (json["decision"].as_str().unwrap().to_owned(), json["read_only_restricted"].as_bool())
    };
    // Allowed only as read-only: it runs restricted.
    assert_eq!(check(&["Bash(ls src)"]), ("allow".to_owned(), Some(true)));
    // Allowed outright by a rule or the mode: not restricted.
    assert_eq!(check(&["Bash(ls src)", "--allow", "Bash(ls:*)"]), ("allow".to_owned(), Some(false)));
    assert_eq!(check(&["Bash(ls src)", "--permission-mode", "bypass"]), ("allow".to_owned(), Some(false)));
    assert_eq!(check(&["Bash(rm -rf src)"]), ("ask".to_owned(), Some(false)));
    // A tool that only reads by construction is not a judged command.
    assert_eq!(
        check(&["--tool", "read_file", "--args", r#"{"file_path":"a.txt"}"#]),
        ("allow".to_owned(), Some(false))
    );
    let out = setup.run(&["permissions", "check", "Bash(ls src)"]);
    assert!(text(&out.stdout).contains("read-only restricted: runs with no writes"), "{}", text(&out.stdout));
    // With nothing to restrict it, the read-only shortcut is off and the command asks.
    std::fs::write(setup.user.join("config.toml"), "[sandbox]\nmode = \"none\"\n").unwrap();
    assert_eq!(check(&["Bash(ls src)"]), ("ask".to_owned(), Some(false)));
}
