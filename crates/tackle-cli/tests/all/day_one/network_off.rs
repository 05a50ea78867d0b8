//! With the network off, a run says so (issue 25, point 6): `tackle run` names the sandbox and
//! network policy once at the start, and a command that fails to connect, even to 127.0.0.1
//! where something listens on the host, gets the sandbox hint, from `bash` and from a
//! background job alike.

use serde_json::json;
use tackle_testkit::{FakeLlm, Protocol, Reply, Script, Turn};

use super::{run_args, stderr, tackle};

#[tokio::test(flavor = "multi_thread")]
async fn a_command_that_cannot_connect_gets_the_sandbox_hint_and_the_run_names_the_sandbox() {
    // The scripted server itself listens on 127.0.0.1: a command in the sandbox cannot reach it.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let health = format!("curl -sS --max-time 5 http://127.0.0.1:{}/health", listener.local_addr().unwrap().port());
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call("b1", "bash", json!({"command": health}))),
        Turn::reply(Reply::text("").call("b2", "bash", json!({"command": health, "run_in_background": true}))),
        Turn::reply(Reply::text("").call("j1", "job_output", json!({"job_id": "job-1", "block": true}))),
        Turn::reply(Reply::text("The service is not reachable.").call("d", "task_done", json!({}))),
    ]))
    .await;
    let workspace = tempfile::tempdir().unwrap();
    let url = server.openai_base_url();
    let out =
        tackle(workspace.path(), run_args(&server, Protocol::OpenAi, &url, &["--yes", "check the service"]), "").await;
    server.assert_clean();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = stderr(&out);
    assert_eq!(said.matches("tackle: commands run under ").count(), 1, "{said}");
    assert!(said.contains("(network off"), "{said}");
    let hint = "[sandbox: network access is off, so connections (127.0.0.1 too) and name lookups fail; the user can \
                set [sandbox] network = true in /nonexistent-tackle-config/config.toml]";
    let requests = server.requests();
    let bash = requests[1].body["messages"].to_string();
    assert!(bash.contains("curl: (7)") && bash.contains(&hint.replace('"', "\\\"")), "{bash}");
    // The job's output carries the hint too: the conversation now holds it twice.
    let job = requests[3].body["messages"].to_string();
    assert!(job.contains("Job job-1 [exited 7]"), "{job}");
    assert_eq!(job.matches(&hint.replace('"', "\\\"")).count(), 2, "{job}");
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_names_the_sandbox_once_before_its_first_prompt() {
    let server = FakeLlm::start(Script::new([])).await;
    let workspace = tempfile::tempdir().unwrap();
    let args: Vec<String> = ["chat", "--model", "openai/fake", "--base-url", &server.openai_base_url(), "--yes"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    let path = workspace.path().to_owned();
    let seen = tokio::task::spawn_blocking(move || {
        let mut pty = super::on_terminal(&path, &args);
        pty.expect("tackle> ", 1);
        pty.type_line("/exit");
        assert_eq!(pty.wait(), Some(0), "{}", pty.raw());
        pty.raw()
    })
    .await
    .unwrap();
    let named = seen.find("tackle: commands run under ").unwrap_or_else(|| panic!("{seen}"));
    assert!(named < seen.find("tackle> ").unwrap(), "{seen}");
    assert_eq!(seen.matches("commands run under").count(), 1, "{seen}");
    assert!(seen.contains("(network off"), "{seen}");
}
