//! The permission engine's cost (docs/reference/safety.md#compound-shell-commands): the
//! decision for a 20-part compound command against 200 rules (target ≤ 200 µs), and a
//! PreToolUse command hook that runs `true` (target ≤ 5 ms added to a call).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tackle_core::ToolSpec;
use tackle_core::context::SessionInfo;
use tackle_core::hooks::{HookCall, ToolHook};
use tackle_core::permission::{PermissionMode, PermissionPolicy, PermissionRequest};
use tackle_policy::hooks::config::HookEntry;
use tackle_policy::hooks::protocol::CommandHooks;
use tackle_policy::permission::rule::RuleBase;
use tackle_policy::permission::rules::{RuleBook, RuleKind, RulePolicy};

fn decision(c: &mut Criterion) {
    let base = RuleBase { workspace: "/ws".into(), rule_dir: "/ws".into(), home: None };
    let book = RuleBook::default();
    for i in 0..100 {
        book.add(RuleKind::Deny, &format!("Bash(tool{i} --danger:*)"), &base, "bench").unwrap();
        book.add(RuleKind::Allow, &format!("Bash(cmd{i} * end)"), &base, "bench").unwrap();
    }
    let policy = RulePolicy {
        book: Arc::new(book),
        mode: PermissionMode::Default,
        workspace: "/ws".into(),
        restrict_read_only: true,
    };
    let spec = ToolSpec::new("bash", "").alias("Bash").command_param("command");
    let command: Vec<String> = (0..20).map(|i| format!("FOO={i} timeout 5 cmd{i} \"arg {i}\" $(echo x) end")).collect();
    let args = json!({ "command": command.join(" && ") });
    let request = PermissionRequest::new("c", &spec, &args);
    c.bench_function("decision_20_parts_200_rules", |b| b.iter(|| policy.decide(&request)));
    let command = args["command"].as_str().unwrap();
    // The same command's parse and walk alone: what the decision costs beyond the rules.
    c.bench_function("shell_analysis_20_parts", |b| b.iter(|| tackle_policy::shell::analyze(command)));
    // The tree-sitter-bash parse alone: the floor the walk stands on.
    let mut parser = tree_sitter::Parser::new();
    parser.set_language(&tree_sitter_bash::LANGUAGE.into()).unwrap();
    c.bench_function("shell_parse_20_parts", |b| b.iter(|| parser.parse(command, None).unwrap()));
}

fn hook(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let entry = HookEntry {
        event: "PreToolUse".into(),
        matcher: String::new(),
        regex: None,
        command: "true".into(),
        timeout: std::time::Duration::from_secs(10),
        fail_closed: false,
        source: Arc::from("bench"),
    };
    let hooks = CommandHooks::new(vec![entry], dir.path().to_owned(), PermissionMode::Default, Arc::new(|_| {}));
    let spec = ToolSpec::new("bash", "").alias("Bash").command_param("command");
    let args = json!({"command": "ls"});
    let info = SessionInfo {
        id: "s".into(),
        workspace: dir.path().to_owned(),
        spill: tackle_core::spill::SpillDir::of(dir.path(), "s"),
    };
    c.bench_function("pre_tool_use_hook_true", |b| {
        b.to_async(&runtime).iter(|| async {
            let call = HookCall { call_id: "c", session: &info, spec: &spec, args: &args };
            hooks.before_call(&call).await
        });
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3)).warm_up_time(std::time::Duration::from_secs(1));
    targets = decision, hook
}
criterion_main!(benches);
