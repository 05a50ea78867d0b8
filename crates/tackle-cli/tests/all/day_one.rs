//! What a new user meets on day one, through the real binary against the scripted fake server:
//! denied calls counted and reminded, `--base-url` spellings, the task from stdin or a file,
//! `--continue` / `--resume`, `init`, `completions`, a closed stdout pipe, and `tackle chat`
//! driven through a pseudo-terminal (`tests/support/pty.rs`, as the terminal tests drive it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use tackle_testkit::{Expect, FakeLlm, Protocol, Reply, Script, Turn};

const TACKLE: &str = env!("CARGO_BIN_EXE_tackle");

fn command(workspace: &Path) -> Command {
    let mut command = Command::new(TACKLE);
    command
        .current_dir(workspace)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("TACKLE_MODEL")
        .env("TACKLE_CONFIG_DIR", "/nonexistent-tackle-config");
    command
}

use crate::support::pty::Pty;

#[path = "day_one/claude_user_dirs.rs"]
mod claude_user_dirs;
#[path = "day_one/consent_prompt.rs"]
mod consent_prompt;
#[path = "day_one/docs_match.rs"]
mod docs_match;
#[path = "day_one/incomplete_runs.rs"]
mod incomplete_runs;
#[path = "day_one/network_off.rs"]
mod network_off;
#[path = "day_one/smaller.rs"]
mod smaller;

/// Runs `tackle ARGS` in `workspace` with `stdin`, off the async runtime.
async fn tackle(workspace: &Path, args: Vec<String>, stdin: &str) -> Output {
    let workspace = workspace.to_owned();
    let stdin = stdin.to_owned();
    tokio::task::spawn_blocking(move || {
        let mut child = command(&workspace)
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap()
}

fn run_args(server: &FakeLlm, protocol: Protocol, base_url: &str, extra: &[&str]) -> Vec<String> {
    let model = match protocol {
        Protocol::OpenAi => "openai/fake",
        Protocol::Anthropic => "anthropic/fake",
    };
    let _ = server;
    let mut args: Vec<String> =
        ["run", "--model", model, "--base-url", base_url].iter().map(|s| (*s).to_owned()).collect();
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread")]
async fn denied_calls_are_counted_and_task_done_is_reminded_of_them() {
    let script = Script::new([
        Turn::reply(Reply::text("Writing.").call("w1", "write_file", json!({"file_path": "a.txt", "content": "x"}))),
        Turn::reply(Reply::text("Done.").call("d1", "task_done", json!({}))),
        Turn::reply(Reply::text("I could not write a.txt: writing was denied.")),
    ]);
    let server = FakeLlm::start(script).await;
    let workspace = tempfile::tempdir().unwrap();
    let url = server.openai_base_url();
    let args = run_args(&server, Protocol::OpenAi, &url, &["--permission-mode", "dont-ask", "--json", "write a.txt"]);
    let out = tackle(workspace.path(), args, "").await;
    // The model gave up in words after the reminder: the run is incomplete, not a success.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    server.assert_clean();
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["status"], "incomplete", "{result}");
    assert_eq!(result["denied"], 1);
    assert_eq!(result["answer"], "I could not write a.txt: writing was denied.");
    assert_eq!(result["error"]["kind"], "incomplete", "{result}");
    assert!(!workspace.path().join("a.txt").exists());
    // The reminder names the denied call, its reason and the rule that would allow it.
    assert!(server.requests()[1].body.to_string().contains("write_file needs permission"));
    let reminder = server.requests()[2].body.to_string();
    assert!(reminder.contains("task_done refused: 1 call(s) in this run were denied permission"), "{reminder}");
    assert!(reminder.contains("write_file a.txt") && reminder.contains("--permission-mode accept-edits"), "{reminder}");
    assert!(reminder.contains("--allow 'Edit(a.txt)'"), "{reminder}");

    // Plain output: the final line counts the denials.
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call("b1", "bash", json!({"command": "touch b.txt"}))),
        Turn::reply(Reply::text("gave up")),
    ]))
    .await;
    let url = server.openai_base_url();
    let out = tackle(workspace.path(), run_args(&server, Protocol::OpenAi, &url, &["touch b.txt"]), "").await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains(" · 1 call denied"), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_run_reports_its_error_in_json() {
    let server = FakeLlm::start(
        Script::new([Turn::reply(Reply::text("").call(
            "t",
            "sequentialthinking",
            json!({"thought": "a", "next_thought_needed": true, "thought_number": 1, "total_thoughts": 3}),
        ))])
        .repeat_last(),
    )
    .await;
    let workspace = tempfile::tempdir().unwrap();
    let url = server.openai_base_url();
    let args = run_args(
        &server,
        Protocol::OpenAi,
        &url,
        &["--json", "--max-steps", "1", "--tools", "sequentialthinking", "think"],
    );
    let out = tackle(workspace.path(), args, "").await;
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["error"], json!({"kind": "max_steps", "message": "Stopped after 1 step without finishing."}));
    assert_eq!(result["answer"], Value::Null);
}

#[tokio::test(flavor = "multi_thread")]
async fn base_urls_work_with_and_without_v1_for_both_wire_formats() {
    for protocol in [Protocol::OpenAi, Protocol::Anthropic] {
        for suffix in ["", "/v1", "/v1/"] {
            let server = FakeLlm::start(Script::new([Turn::reply(Reply::text("hello"))])).await;
            let url = format!("{}{suffix}", server.anthropic_base_url());
            let workspace = tempfile::tempdir().unwrap();
            let out = tackle(workspace.path(), run_args(&server, protocol, &url, &["--json", "say hello"]), "").await;
            assert_eq!(out.status.code(), Some(0), "{protocol:?} {url}: {}", stderr(&out));
            server.assert_clean();
            assert_eq!(server.requests().len(), 1);
        }
    }
    // A malformed URL is a usage error at once; an HTTP error names the URL it hit.
    let workspace = tempfile::tempdir().unwrap();
    for url in ["notaurl", "ftp://127.0.0.1/v1"] {
        let server = FakeLlm::start(Script::new([])).await;
        let out = tackle(workspace.path(), run_args(&server, Protocol::OpenAi, url, &["hi"]), "").await;
        assert_eq!(out.status.code(), Some(2), "{url}: {}", stderr(&out));
        assert!(stderr(&out).contains("--base-url"), "{}", stderr(&out));
    }
    let server = FakeLlm::start(Script::new([])).await;
    let url = format!("{}/somewhere/else", server.anthropic_base_url());
    let out = tackle(workspace.path(), run_args(&server, Protocol::OpenAi, &url, &["hi"]), "").await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(said.contains(&format!("HTTP 404) at {url}/chat/completions")), "{said}");
}

#[tokio::test(flavor = "multi_thread")]
async fn continue_and_resume_carry_the_earlier_conversation_and_the_task_comes_from_stdin_or_a_file() {
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("Noted: apple.")).expect(Expect::last_user_contains("remember the word apple")),
        Turn::reply(Reply::text("The word was apple.")).expect(Expect::last_user_contains("which word")),
        Turn::reply(Reply::text("Still apple.")).expect(Expect::last_user_contains("and now")),
    ]))
    .await;
    let workspace = tempfile::tempdir().unwrap();
    std::fs::create_dir(workspace.path().join(".git")).unwrap();
    let url = server.openai_base_url();
    // The first task from stdin.
    let out = tackle(
        workspace.path(),
        run_args(&server, Protocol::OpenAi, &url, &["--json", "-"]),
        "remember the word apple\n",
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let first: Value = serde_json::from_slice(&out.stdout).unwrap();
    // .tackle/ is excluded from git on first use, the user's .gitignore untouched.
    let exclude = std::fs::read_to_string(workspace.path().join(".git/info/exclude")).unwrap();
    assert!(exclude.lines().any(|line| line == "/.tackle/"), "{exclude}");
    assert!(!workspace.path().join(".gitignore").exists());

    let out = tackle(
        workspace.path(),
        run_args(&server, Protocol::OpenAi, &url, &["--json", "--continue", "which word?"]),
        "",
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let second: Value = serde_json::from_slice(&out.stdout).unwrap();
    let sent = server.requests()[1].body["messages"].to_string();
    assert!(sent.contains("remember the word apple") && sent.contains("Noted: apple."), "{sent}");

    // --resume the first run's trajectory with the task from a file: the second exchange is not in it.
    std::fs::write(workspace.path().join("task.txt"), "and now?").unwrap();
    let resume = first["trajectory"].as_str().unwrap();
    let args = run_args(&server, Protocol::OpenAi, &url, &["--json", "--resume", resume, "--task-file", "task.txt"]);
    let out = tackle(workspace.path(), args, "").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sent = server.requests()[2].body["messages"].to_string();
    assert!(sent.contains("Noted: apple.") && !sent.contains("The word was apple."), "{sent}");
    server.assert_clean();
    assert_eq!(std::fs::read_to_string(workspace.path().join(".git/info/exclude")).unwrap(), exclude, "added once");

    // Each trajectory checks; a missing one is a usage error.
    let check =
        command(workspace.path()).args(["replay", "--check", second["trajectory"].as_str().unwrap()]).output().unwrap();
    assert_eq!(check.status.code(), Some(0), "{}", String::from_utf8_lossy(&check.stdout));
    let out =
        tackle(workspace.path(), run_args(&server, Protocol::OpenAi, &url, &["--resume", "nope.jsonl", "x"]), "").await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let out = tackle(workspace.path(), run_args(&server, Protocol::OpenAi, &url, &["-"]), "  \n").await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("the task is empty"), "{}", stderr(&out));
}

#[test]
fn init_writes_commented_settings_and_an_agents_stub_once() {
    let workspace = tempfile::tempdir().unwrap();
    let out = command(workspace.path()).arg("init").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let toml = std::fs::read_to_string(workspace.path().join("tackle.toml")).unwrap();
    assert!(toml.lines().all(|line| line.is_empty() || line.starts_with('#')), "{toml}");
    assert!(std::fs::read_to_string(workspace.path().join("AGENTS.md")).unwrap().contains("Build and test"));
    // The settings load; a second init refuses to overwrite.
    let list = command(workspace.path()).args(["tools", "list"]).output().unwrap();
    assert_eq!(list.status.code(), Some(0), "{}", stderr(&list));
    let again = command(workspace.path()).arg("init").output().unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("already exists"), "{}", stderr(&again));
}

#[test]
fn completions_and_help_say_what_they_should() {
    let dir = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish"] {
        let out = command(dir.path()).args(["completions", shell]).output().unwrap();
        assert_eq!(out.status.code(), Some(0));
        assert!(String::from_utf8_lossy(&out.stdout).contains("tackle"), "{shell}");
    }
    let help = command(dir.path()).arg("--help").output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("read, search and edit files"));
    let help = command(dir.path()).args(["run", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("ANTHROPIC_API_KEY"));
    let help = command(dir.path()).args(["tools", "call", "--help"]).output().unwrap();
    assert!(String::from_utf8_lossy(&help.stdout).contains("tackle tools schema"));
}

#[test]
fn a_closed_stdout_pipe_ends_the_command_quietly_with_0() {
    let dir = tempfile::tempdir().unwrap();
    let mut child =
        command(dir.path()).args(["tools", "schema"]).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!((out.status.code(), stderr(&out)), (Some(0), String::new()));
}

/// `tackle ARGS` on a pseudo-terminal (its controlling terminal), with no user configuration
/// and a dumb terminal, as [`command`] runs it.
fn on_terminal(workspace: &Path, args: &[String]) -> Pty {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Pty::spawn_with_env(workspace, &args, &[("TERM", "dumb"), ("TACKLE_CONFIG_DIR", "/nonexistent-tackle-config")])
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_runs_tasks_in_one_conversation_on_a_terminal() {
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("Hello from the model.")).expect(Expect::last_user_contains("say hello")),
        Turn::reply(Reply::text("").call("s1", "bash", json!({"command": "sleep 30"}))),
        Turn::reply(Reply::text("Second answer.")).expect(Expect::last_user_contains("again")),
    ]))
    .await;
    let workspace = tempfile::tempdir().unwrap();
    let args: Vec<String> = ["chat", "--model", "openai/fake", "--base-url", &server.openai_base_url(), "--yes"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let path = workspace.path().to_owned();
    let seen = tokio::task::spawn_blocking(move || {
        let mut pty = on_terminal(&path, &args);
        pty.expect("tackle> ", 1);
        pty.type_line("/tools");
        pty.expect("Tools: ", 1);
        pty.type_line("say hello");
        pty.expect("Hello from the model.", 1);
        pty.expect("tackle> ", 3);
        // Ctrl-C cancels the running task (a long command), and the prompt comes back.
        pty.type_line("sleep please");
        std::thread::sleep(Duration::from_millis(1500));
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pty.child.id() as i32), nix::sys::signal::Signal::SIGINT)
            .unwrap();
        pty.expect("interrupted", 1);
        pty.expect("tackle> ", 4);
        std::thread::sleep(Duration::from_millis(2100));
        pty.type_line("again");
        pty.expect("Second answer.", 1);
        pty.type_line("/exit");
        assert_eq!(pty.wait(), Some(0), "{}", pty.raw());
        pty.raw()
    })
    .await
    .unwrap();
    server.assert_clean();
    // The third request carries the whole conversation; one trajectory holds the session.
    let sent = server.requests()[2].body["messages"].to_string();
    assert!(
        sent.contains("say hello") && sent.contains("Hello from the model.") && sent.contains("sleep please"),
        "{sent}"
    );
    let trajectories: Vec<_> = std::fs::read_dir(workspace.path().join(".tackle/trajectories")).unwrap().collect();
    assert_eq!(trajectories.len(), 1, "{seen}");
    let file = trajectories[0].as_ref().unwrap().path();
    let check = command(workspace.path()).arg("replay").arg("--check").arg(&file).output().unwrap();
    assert_eq!(check.status.code(), Some(0), "{}", String::from_utf8_lossy(&check.stdout));
}
