//! The `tackle tools …` contract (docs/reference/cli.md) through the real binary: JSON shapes, exit codes,
//! batch sessions that keep state and answer line by line.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command as StdCommand, Stdio};

use assert_cmd::Command;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

fn tackle() -> Command {
    Command::cargo_bin("tackle").unwrap()
}

fn stdout_json(output: &std::process::Output) -> Value {
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|err| panic!("{err}: {}", String::from_utf8_lossy(&output.stdout)))
}

#[test]
fn version_names_the_binary() {
    let out = tackle().arg("--version").output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), format!("tackle {}\n", env!("CARGO_PKG_VERSION")));
}

#[test]
fn tools_list_json_has_the_contract_shape() {
    let out = tackle().args(["tools", "list", "--json"]).output().unwrap();
    assert!(out.status.success());
    let list = stdout_json(&out);
    let items = list.as_array().unwrap();
    let task_done = items.iter().find(|t| t["name"] == "task_done").unwrap();
    let mut keys: Vec<&str> = task_done.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["aliases", "concurrency_safe", "description", "name", "read_only", "source", "toolsets"]);
    assert_eq!(task_done["source"], "builtin");
    assert_eq!(task_done["read_only"], true);
    assert!(task_done["toolsets"].as_array().unwrap().contains(&json!("default")));
    assert!(items.iter().any(|t| t["name"] == "sequentialthinking"));
}

#[test]
fn tools_list_narrows_with_an_allowlist_and_refuses_unknown_names() {
    let out = tackle().args(["tools", "list", "--json", "--tools", "sequentialthinking"]).output().unwrap();
    let names: Vec<String> =
        stdout_json(&out).as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect();
    assert_eq!(names, ["sequentialthinking"]);

    let out = tackle().args(["tools", "list", "--tools", "task_dne"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("unknown tool or toolset 'task_dne'") && stderr.contains("did you mean 'task_done'"),
        "{stderr}"
    );
}

#[test]
fn tools_schema_prints_one_array_in_the_dialect() {
    let out = tackle()
        .args(["tools", "schema", "task_done", "Sequential-Thinking", "--dialect", "anthropic"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let schemas = stdout_json(&out);
    assert_eq!(schemas.as_array().unwrap().len(), 2);
    assert_eq!(schemas[0]["name"], "task_done");
    assert_eq!(schemas[1]["name"], "sequentialthinking");
    assert_eq!(
        schemas[1]["input_schema"]["required"],
        json!(["thought", "next_thought_needed", "thought_number", "total_thoughts"])
    );

    let out = tackle().args(["tools", "schema", "--dialect", "openai-strict"]).output().unwrap();
    assert!(stdout_json(&out).as_array().unwrap().iter().all(|t| t["function"]["strict"] == true));

    let out = tackle().args(["tools", "schema", "--dialect", "cobol"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("unknown dialect 'cobol'"));

    let out = tackle().args(["tools", "schema", "nope"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn tools_call_runs_a_tool_and_maps_exit_codes() {
    let out = tackle().args(["tools", "call", "task_done"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "Task done.\n");

    let out = tackle().args(["tools", "call", "Task_Done", "--json"]).output().unwrap();
    let result = stdout_json(&out);
    assert_eq!(result["id"], "call_1");
    assert_eq!(result["tool"], "task_done");
    assert_eq!(result["is_error"], false);
    assert_eq!(result["output"], "Task done.");
    assert!(result["meta"]["duration_ms"].is_u64());

    let out = tackle().args(["tools", "call", "no_such_tool"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("Tool 'no_such_tool' not found. Available tools: "), "{stderr}");
    assert!(stderr.contains("bash, ") && stderr.contains("glob, "), "every tool is listed: {stderr}");

    let out = tackle().args(["tools", "call", "sequentialthinking", "{\"thought\": "]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("Invalid JSON in arguments for tool 'sequentialthinking'"));

    // `command` is required unless `restart` is true: checked before the tool runs.
    let out = tackle().args(["tools", "call", "bash", "{}"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // (After the line that names the sandbox in force.)
    let stderr = String::from_utf8(out.stderr).unwrap();
    let mut last = stderr.lines().rev();
    assert_eq!(
        last.next(),
        Some(
            r#"tackle: for example: tackle tools call bash '{"command":"COMMAND"}' (every parameter: tackle tools schema bash)"#
        ),
        "{stderr}"
    );
    assert_eq!(last.next(), Some("tackle: No command provided for the bash tool"), "{stderr}");

    let out =
        tackle().args(["tools", "call", "sequentialthinking", "{\"thought\": \"x\"}", "--json"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let result = stdout_json(&out);
    assert_eq!(result["output"], "No next_thought_needed provided for the sequentialthinking tool");
    assert_eq!(result["meta"]["rejected"], true);
}

#[test]
fn tools_call_reads_arguments_from_stdin() {
    let args = r#"{"thought": "t", "nextThoughtNeeded": false, "thoughtNumber": 1, "totalThoughts": 1}"#;
    let out = tackle().args(["tools", "call", "sequentialthinking", "-", "--json"]).write_stdin(args).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(stdout_json(&out)["structured"]["thought_history_length"], 1);
}

#[test]
fn usage_errors_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing");
    let out = tackle().args(["tools", "call", "task_done", "--workspace"]).arg(&missing).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("is not usable"));

    let out = tackle().args(["tools", "call", "task_done", "--permission-mode", "yolo"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8(out.stderr).unwrap().contains("unknown permission mode 'yolo'"));

    let out = tackle().args(["tools", "frobnicate"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn batch_keeps_one_session_and_answers_every_line() {
    let thought = |n: u32| json!({"name": "sequentialthinking", "args": {"thought": "t", "next_thought_needed": true, "thought_number": n, "total_thoughts": 3}});
    let input = [
        thought(1).to_string(),
        String::new(),
        "this is not json".to_owned(),
        json!([thought(2), {"name": "task_done", "id": "mine"}, {"args": {}}]).to_string(),
        "42".to_owned(),
        json!({"name": "task_done", "args": "{\"unexpected\": 1}"}).to_string(),
        "[]".to_owned(),
        json!([{"name": "task_done", "id": 7}, {"name": "task_done", "id": {"no": 1}}]).to_string(),
    ]
    .join("\n");
    let out = tackle().args(["tools", "batch"]).write_stdin(input).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let lines: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let summary: Vec<(String, Value, bool)> = lines
        .iter()
        .map(|l| (l["id"].as_str().unwrap().to_owned(), l["tool"].clone(), l["is_error"].as_bool().unwrap()))
        .collect();
    assert_eq!(
        summary,
        vec![
            ("batch_1_1".into(), json!("sequentialthinking"), false),
            ("batch_3_1".into(), Value::Null, true),
            ("batch_4_1".into(), json!("sequentialthinking"), false),
            ("mine".into(), json!("task_done"), false),
            ("batch_4_3".into(), Value::Null, true),
            ("batch_5_1".into(), Value::Null, true),
            ("batch_6_1".into(), json!("task_done"), true),
            ("batch_7_1".into(), Value::Null, true),
            ("7".into(), json!("task_done"), false),
            ("batch_8_2".into(), Value::Null, true),
        ]
    );
    // State lives across lines: the second thought sees the first.
    assert_eq!(lines[0]["structured"]["thought_history_length"], 1);
    assert_eq!(lines[2]["structured"]["thought_history_length"], 2);
    assert!(lines[1]["output"].as_str().unwrap().starts_with("Line 3 is not valid JSON"));
    assert_eq!(lines[6]["output"], "Invalid parameters for tool 'task_done': unexpected parameter unexpected");
    assert!(lines[7]["output"].as_str().unwrap().starts_with("Line 7 has no calls;"));
    assert_eq!(lines[9]["output"], "Call 2 on line 8 has an \"id\" that is not a string or a number.");
}

#[test]
fn batch_answers_each_line_before_reading_the_next() {
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("tackle"))
        .args(["tools", "batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    for n in 1..=3 {
        writeln!(stdin, "{}", json!({"name": "task_done", "id": format!("turn{n}")})).unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let answer: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(answer["id"], format!("turn{n}"));
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_one_shot_call_prepares_only_what_its_tool_needs() {
    // `[sandbox] mode = "bwrap"` where no bwrap is on PATH: only a shell tool needs the
    // sandbox, so only a shell tool's call fails over it.
    let config = tempfile::tempdir().unwrap();
    std::fs::write(config.path().join("config.toml"), "[sandbox]\nmode = \"bwrap\"\n").unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let run = |tool: &str, args: &str| {
        tackle()
            .args(["tools", "call", tool, args, "--workspace"])
            .arg(workspace.path())
            .env("TACKLE_CONFIG_DIR", config.path())
            .env("PATH", "/nonexistent")
            .output()
            .unwrap()
    };
    let out = run("task_done", "{}");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = run("Bash", r#"{"command": "true"}"#);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("[sandbox] mode = \"bwrap\" is not available here"), "{stderr}");
    // A name that resolves to nothing keeps every tool (its message lists them all), so the
    // shell's sandbox is prepared, and refused, first.
    let out = run("no_such_tool", "{}");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not available here"));
}

#[test]
fn tools_list_names_agent_definitions_it_skips() {
    let dir = tempfile::tempdir().unwrap();
    let agents = dir.path().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(agents.join("good.md"), "---\nname: good\ndescription: Fine\n---\nPrompt.\n").unwrap();
    std::fs::write(agents.join("bad.md"), "---\nname: [unclosed\n---\nPrompt.\n").unwrap();
    let config = tempfile::tempdir().unwrap();
    let out = tackle()
        .args(["tools", "list"])
        .current_dir(dir.path())
        .env("TACKLE_CONFIG_DIR", config.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("tackle: agent definition skipped: ") && stderr.contains("bad.md: bad YAML frontmatter"),
        "{stderr}"
    );
    assert!(!stderr.contains("good.md"), "{stderr}");
    assert!(String::from_utf8(out.stdout).unwrap().lines().any(|line| line.starts_with("subagent ")));
}
