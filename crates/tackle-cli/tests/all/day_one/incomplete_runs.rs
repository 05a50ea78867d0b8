//! A run whose work was denied is not a success (issue 25, point 3): without an accepted
//! `task_done` it ends `incomplete`, exits 1 and names the denied calls on its last line, so a
//! CI job that runs `tackle run --permission-mode accept-edits --json` cannot pass on tests
//! that never ran.

use serde_json::{Value, json};
use tackle_testkit::{FakeLlm, Protocol, Reply, Script, Turn};

use super::{run_args, stderr, tackle};

/// The scripted model of the issue: it edits, runs the tests (denied in `accept-edits` with
/// nobody to ask), then gives up in words.
fn gives_up_after_the_test_command_is_denied() -> Script {
    Script::new([
        Turn::reply(Reply::text("Fixing.").call(
            "e1",
            "write_file",
            json!({"file_path": "calc.py", "content": "x = 2\n"}),
        )),
        Turn::reply(Reply::text("").call("b1", "bash", json!({"command": "python3 -m pytest -q"}))),
        Turn::reply(Reply::text("I could not finish: running the tests was denied.")),
    ])
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_that_gave_up_after_a_denial_is_incomplete_with_exit_1() {
    let workspace = tempfile::tempdir().unwrap();
    let server = FakeLlm::start(gives_up_after_the_test_command_is_denied()).await;
    let url = server.openai_base_url();
    let args = run_args(
        &server,
        Protocol::OpenAi,
        &url,
        &["--permission-mode", "accept-edits", "--json", "fix the failing test"],
    );
    let out = tackle(workspace.path(), args, "").await;
    server.assert_clean();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["status"], "incomplete", "{result}");
    assert_eq!(result["denied"], 1, "{result}");
    assert_eq!(result["denied_calls"], json!(["Bash(python3 -m pytest -q)"]), "{result}");
    assert_eq!(result["answer"], "I could not finish: running the tests was denied.");
    assert_eq!(result["error"]["kind"], "incomplete", "{result}");
    // The edit was allowed and made: only the command was denied.
    assert_eq!(std::fs::read_to_string(workspace.path().join("calc.py")).unwrap(), "x = 2\n");
    let last = stderr(&out).lines().last().unwrap_or_default().to_owned();
    assert_eq!(last, "✗ incomplete · 1 call denied: Bash(python3 -m pytest -q)", "{}", stderr(&out));

    // Plain output: the last line of stderr says it too, the answer is on stdout.
    let server = FakeLlm::start(gives_up_after_the_test_command_is_denied()).await;
    let url = server.openai_base_url();
    let args =
        run_args(&server, Protocol::OpenAi, &url, &["--permission-mode", "accept-edits", "fix the failing test"]);
    let out = tackle(workspace.path(), args, "").await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let last = stderr(&out).lines().last().unwrap_or_default().to_owned();
    assert_eq!(last, "✗ incomplete · 1 call denied: Bash(python3 -m pytest -q)", "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("I could not finish"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_done_accepted_after_the_reminder_is_success_and_a_run_without_denials_too() {
    let workspace = tempfile::tempdir().unwrap();
    // task_done is refused once with the list of denials, then accepted: the model heard them.
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call("b1", "bash", json!({"command": "python3 -m pytest -q"}))),
        Turn::reply(Reply::text("Done.").call("d1", "task_done", json!({}))),
        Turn::reply(Reply::text("The fix is in; the tests could not be run here.").call("d2", "task_done", json!({}))),
    ]))
    .await;
    let url = server.openai_base_url();
    let args = run_args(&server, Protocol::OpenAi, &url, &["--permission-mode", "accept-edits", "--json", "fix it"]);
    let out = tackle(workspace.path(), args, "").await;
    server.assert_clean();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((result["status"].as_str(), result["denied"].as_u64()), (Some("success"), Some(1)), "{result}");
    assert!(result.get("error").is_none(), "{result}");

    // A plain answer with nothing denied stays a success.
    let server = FakeLlm::start(Script::new([Turn::reply(Reply::text("Nothing to do."))])).await;
    let url = server.openai_base_url();
    let out = tackle(workspace.path(), run_args(&server, Protocol::OpenAi, &url, &["--json", "look"]), "").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["status"], "success", "{result}");
    assert!(result.get("denied_calls").is_none(), "{result}");
}

#[test]
fn the_ci_line_of_run_help_allows_the_commands_it_needs() {
    let dir = tempfile::tempdir().unwrap();
    let help = super::command(dir.path()).args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    let line = help.lines().find(|line| line.trim_start().starts_with("tackle run ")).unwrap_or_default();
    assert!(line.contains("--allow 'Bash(") && line.contains("--json"), "{help}");
    assert!(help.contains("incomplete"), "{help}");
}
