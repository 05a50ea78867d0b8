//! The file tools through the real binary: `tools call` (one-shot, no read-before-edit) and
//! `tools batch` (one session: the read ledger, the stale check and undo across lines), exit
//! codes for refusals before and after a tool ran, and `[workspace]` / `[tools]` settings.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use assert_cmd::Command;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn tackle(workspace: &Path) -> Command {
    let mut command = Command::cargo_bin("tackle").unwrap();
    command.current_dir(workspace).env("TACKLE_CONFIG_DIR", workspace.join(".no-user-config"));
    command.env_remove("TACKLE_TRUST_WORKSPACE");
    command
}

fn call(workspace: &Path, tool: &str, args: Value) -> std::process::Output {
    tackle(workspace).args(["tools", "call", tool, &args.to_string()]).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn workspace() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().canonicalize().unwrap().join("ws");
    std::fs::create_dir(&ws).unwrap();
    (dir, ws)
}

#[test]
fn tools_call_runs_every_file_tool_one_shot() {
    let (_dir, ws) = workspace();
    let out = call(
        &ws,
        "str_replace_based_edit_tool",
        json!({"command": "create", "path": "src/a.txt", "file_text": "alpha\nbeta\n"}),
    );
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(0), "File created successfully at: src/a.txt\n".into()));
    // A one-shot call has no earlier reads: the person typing is the reader.
    let out = call(&ws, "Edit", json!({"file_path": "src/a.txt", "old_string": "beta", "new_string": "gamma"}));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let out = call(&ws, "Write", json!({"file_path": "src/a.txt", "content": "one\ntwo\n"}));
    assert_eq!(text(&out.stdout), "The file src/a.txt has been overwritten (2 lines).\n");
    let out = call(&ws, "Read", json!({"file_path": "src/a.txt"}));
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(0), "     1\tone\n     2\ttwo\n".into()));
    // A tool's own failure exits 1 with the message on stdout.
    let out = call(&ws, "read_file", json!({"file_path": "src/missing.txt"}));
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(1), "File does not exist: src/missing.txt\n".into()));
}

#[test]
fn tools_call_refuses_escapes_before_running_with_exit_2() {
    let (dir, ws) = workspace();
    std::fs::write(dir.path().join("secret.txt"), "s").unwrap();
    let out = call(&ws, "read_file", json!({"file_path": "../secret.txt"}));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        format!(
            "tackle: Path ../secret.txt is outside the workspace ({}). Use a path inside it; the user can allow another directory with [workspace] extra_roots in {}.\n",
            ws.display(),
            ws.join(".no-user-config/config.toml").display()
        )
    );
    let out = call(&ws, "write_file", json!({"file_path": ".git/hooks/pre-commit", "content": "evil"}));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("is inside a protected directory (.git/)"));
    assert!(!ws.join(".git").exists());
    // A path named inside a patch is refused before anything is written: exit 2 too.
    let patch = "*** Begin Patch\n*** Add File: ok.txt\n+x\n*** Add File: ../evil.txt\n+x\n*** End Patch";
    let out = call(&ws, "apply_patch", json!({"input": patch}));
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("tackle: apply_patch failed; no files were changed.\n../evil.txt: Path"));
    assert!(!ws.join("ok.txt").exists() && !dir.path().join("evil.txt").exists());
    let out = tackle(&ws)
        .args(["tools", "call", "read_file", "--json", r#"{"file_path": "../secret.txt"}"#])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (json["is_error"].clone(), json["meta"]["rejected"].clone(), json["meta"]["error_kind"].clone()),
        (json!(true), json!(true), json!("denied"))
    );
}

#[test]
fn tools_batch_keeps_the_ledger_and_history_across_lines() {
    let (_dir, ws) = workspace();
    std::fs::write(ws.join("notes.md"), "draft\n").unwrap();
    let lines = [
        json!({"name": "write_file", "args": {"file_path": "notes.md", "content": "final\n"}}),
        json!({"name": "read_file", "args": {"file_path": "notes.md"}}),
        json!({"name": "write_file", "args": {"file_path": "notes.md", "content": "final\n"}}),
        json!({"name": "edit_file", "args": {"file_path": "notes.md", "old_string": "final", "new_string": "FINAL"}}),
        json!({"name": "str_replace_based_edit_tool", "args": {"command": "undo_edit", "path": "notes.md"}}),
    ];
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let out = tackle(&ws).args(["tools", "batch"]).write_stdin(input).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let results: Vec<Value> = text(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let summary: Vec<(bool, String)> = results
        .iter()
        .map(|r| {
            (r["is_error"].as_bool().unwrap(), r["output"].as_str().unwrap().lines().next().unwrap_or("").to_owned())
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (true, "File has not been read yet. Read it first before writing to it.".into()),
            (false, "     1\tdraft".into()),
            (false, "The file notes.md has been overwritten (1 lines).".into()),
            (false, "The file notes.md has been updated. Here's the result of running `cat -n` on a snippet of the edited file:".into()),
            (false, "Last edit to notes.md undone successfully. Here's the result of running `cat -n` on notes.md:".into()),
        ]
    );
    assert_eq!(std::fs::read_to_string(ws.join("notes.md")).unwrap(), "final\n");
}

#[test]
fn workspace_settings_never_widen_the_path_policy_and_the_users_do() {
    let (dir, ws) = workspace();
    let shared = dir.path().canonicalize().unwrap().join("sibling");
    std::fs::create_dir(&shared).unwrap();
    std::fs::write(shared.join("lib.txt"), "shared lib\n").unwrap();
    std::fs::write(
        ws.join("tackle.toml"),
        "[workspace]\nextra_roots = [\"../sibling\"]\n\n[tools]\ndurable_writes = true\n",
    )
    .unwrap();
    let args = json!({"file_path": shared.join("lib.txt")});
    for trust in [None, Some("--trust-workspace")] {
        let out = tackle(&ws).args(["tools", "call", "read_file", &args.to_string()]).args(trust).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(
            text(&out.stderr).starts_with(&format!(
                "tackle: ignoring [workspace] extra_roots from the workspace's tackle.toml: it would widen the \
                 sandbox, the path policy or the environment, which only your user config ({}) and flags may do\n",
                ws.join(".no-user-config/config.toml").display()
            )),
            "{}",
            text(&out.stderr)
        );
    }
    let user = ws.join(".no-user-config");
    std::fs::create_dir(&user).unwrap();
    std::fs::write(user.join("config.toml"), "[workspace]\nextra_roots = [\"../sibling\"]\n").unwrap();
    let out = tackle(&ws).args(["tools", "call", "read_file", &args.to_string()]).output().unwrap();
    assert_eq!((out.status.code(), text(&out.stdout)), (Some(0), "     1\tshared lib\n".into()));
    // durable_writes (fsync before rename) changes nothing visible but must work.
    let out = call(&ws, "write_file", json!({"file_path": "durable.txt", "content": "synced\n"}));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert_eq!(std::fs::read_to_string(ws.join("durable.txt")).unwrap(), "synced\n");
}

#[test]
fn search_json_and_patch_tools_through_tools_call() {
    let (_dir, ws) = workspace();
    std::fs::create_dir(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/a.rs"), "fn alpha() {}\n").unwrap();
    std::fs::write(ws.join("src/b.rs"), "fn beta() {}\n").unwrap();
    std::fs::write(ws.join("conf.json"), "{\n    \"debug\": false\n}\n").unwrap();
    let out = call(&ws, "Grep", json!({"pattern": "fn \\w+", "output_mode": "content"}));
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(0), "src/a.rs:1:fn alpha() {}\nsrc/b.rs:1:fn beta() {}\n".into())
    );
    let out = call(&ws, "grep", json!({"pattern": "("}));
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stdout).starts_with("Invalid regex: "));
    let out = tackle(&ws).args(["tools", "call", "Glob", r#"{"pattern": "**/*.rs"}"#, "--json"]).output().unwrap();
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut names: Vec<String> = serde_json::from_value(json["structured"]["filenames"].clone()).unwrap();
    names.sort();
    assert_eq!(names, ["src/a.rs", "src/b.rs"]);
    let out = call(
        &ws,
        "json_edit_tool",
        json!({"operation": "set", "file_path": "conf.json", "json_path": "$.debug", "value": true}),
    );
    assert_eq!(text(&out.stdout), "Successfully updated 1 location(s) at JSONPath '$.debug' with value: true\n");
    assert_eq!(std::fs::read_to_string(ws.join("conf.json")).unwrap(), "{\n    \"debug\": true\n}\n");
    let patch = "*** Begin Patch\n*** Update File: src/a.rs\n-fn alpha() {}\n+fn alpha() -> u8 { 1 }\n*** End Patch";
    let out = call(&ws, "apply_patch", json!({"input": patch}));
    assert_eq!(text(&out.stdout), "Success. Updated the following files:\nM src/a.rs\n");
    assert_eq!(std::fs::read_to_string(ws.join("src/a.rs")).unwrap(), "fn alpha() -> u8 { 1 }\n");
}

#[test]
fn file_tools_sit_in_the_documented_toolsets() {
    let (_dir, ws) = workspace();
    let names = |tools: &str| -> Vec<String> {
        let out = tackle(&ws).args(["tools", "list", "--json", "--tools", tools]).output().unwrap();
        let list: Value = serde_json::from_slice(&out.stdout).unwrap();
        let file_tools = [
            "str_replace_based_edit_tool",
            "read_file",
            "write_file",
            "edit_file",
            "apply_patch",
            "glob",
            "grep",
            "json_edit_tool",
        ];
        list.as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .filter(|n| file_tools.contains(&n.as_str()))
            .collect()
    };
    assert_eq!(names("default"), ["read_file", "write_file", "edit_file", "glob", "grep"]);
    assert_eq!(names("bare"), ["read_file", "write_file", "edit_file", "glob", "grep"]);
    assert_eq!(names("codex"), ["read_file", "apply_patch", "glob", "grep"]);
    assert_eq!(names("trae"), ["str_replace_based_edit_tool"]);
    assert_eq!(names("default,json_edit_tool").last().unwrap(), "json_edit_tool");
    let out = tackle(&ws).args(["tools", "list", "--json"]).output().unwrap();
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let flags = |name: &str| {
        let tool = list.as_array().unwrap().iter().find(|t| t["name"] == name).unwrap();
        (tool["read_only"].as_bool().unwrap(), tool["concurrency_safe"].as_bool().unwrap(), tool["aliases"].clone())
    };
    assert_eq!(flags("read_file"), (true, true, json!(["Read"])));
    assert_eq!(flags("grep"), (true, true, json!(["Grep"])));
    assert_eq!(flags("glob"), (true, true, json!(["Glob"])));
    assert_eq!(flags("write_file"), (false, false, json!(["Write"])));
    assert_eq!(flags("edit_file"), (false, false, json!(["Edit"])));
    assert_eq!(flags("str_replace_based_edit_tool"), (false, false, json!([])));
    assert_eq!(flags("json_edit_tool"), (false, false, json!([])));
}

/// A multi-file `apply_patch` killed (SIGKILL) while it renames: the next session completes
/// it, so every file ends patched or none. The kill lands at once after the first file
/// changed; a try that lands before or after the renames is retried (bounded), and every try
/// must end consistent.
#[test]
fn a_patch_killed_between_renames_is_completed_by_the_next_session() {
    const FILES: usize = 100;
    let (_dir, ws) = workspace();
    let name = |i: usize| format!("f{i:03}.txt");
    let mut patch = String::from("*** Begin Patch\n");
    for i in 0..FILES {
        patch.push_str(&format!("*** Update File: {}\n@@\n-old {i}\n+new {i}\n", name(i)));
    }
    patch.push_str("*** End Patch\n");
    let count_new =
        || (0..FILES).filter(|&i| std::fs::read_to_string(ws.join(name(i))).unwrap().starts_with("new")).count();
    let started = std::time::Instant::now();
    let mut landed = 0;
    let mut tries = 0;
    while landed == 0 && started.elapsed() < std::time::Duration::from_secs(10) {
        tries += 1;
        for i in 0..FILES {
            std::fs::write(ws.join(name(i)), format!("old {i}\n")).unwrap();
        }
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("tackle"))
            .args(["tools", "call", "apply_patch", "-"])
            .current_dir(&ws)
            .env("TACKLE_CONFIG_DIR", ws.join(".no-user-config"))
            .env_remove("TACKLE_TRUST_WORKSPACE")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let args = json!({"input": patch}).to_string();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), args.as_bytes()).unwrap();
        // Kill as soon as the first file is renamed.
        while child.try_wait().unwrap().is_none()
            && !std::fs::read_to_string(ws.join(name(0))).unwrap().starts_with("new")
        {}
        child.kill().unwrap();
        child.wait().unwrap();
        let patched = count_new();
        if patched > 0 && patched < FILES {
            landed += 1;
        }
        // The next session (any file tool) completes or cleans up what the killed one left.
        let out = call(&ws, "read_file", json!({"file_path": name(FILES - 1)}));
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let after = count_new();
        assert!(
            after == 0 || after == FILES,
            "try {tries}: {patched} patched at the kill, {after} after the next session"
        );
        assert!(patched == 0 || after == FILES, "try {tries}: a started patch must be completed");
        let stray: Vec<String> = std::fs::read_dir(&ws)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(stray.is_empty(), "try {tries}: staged files left: {stray:?}");
        let journal = ws.join(".tackle/journal");
        assert!(!journal.exists() || std::fs::read_dir(&journal).unwrap().next().is_none(), "try {tries}");
    }
    assert!(landed > 0, "no kill landed between two renames in {tries} tries");
}
