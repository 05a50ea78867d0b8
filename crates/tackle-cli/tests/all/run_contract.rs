//! The contract of one `tackle run` for harnesses (issue 29, part 1), through the real binary
//! against the scripted model server: `--timeout` (status `timeout`, exit 4, processes
//! killed), `--max-tokens` and `--max-cost` (status `budget`, exit 4, no further request;
//! prices from the user config only), exit 3 for a provider that stays down, 143 for SIGTERM
//! with the result still written, and the `--json` result's `usage`, `exit_code` and `diff`.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tackle_testkit::{FakeLlm, Fault, Protocol, Reply, Script, Turn};

use super::run_cli::processes_of_session;

/// `tackle run TASK --json` in `workspace` with `config` as the user config, plus `extra`.
fn command(server: &FakeLlm, protocol: Protocol, workspace: &Path, config: &Path, extra: &[&str]) -> Command {
    let model = match protocol {
        Protocol::OpenAi => "openai/fake",
        Protocol::Anthropic => "anthropic/fake",
    };
    let mut command = Command::new(env!("CARGO_BIN_EXE_tackle"));
    command
        .args(["run", "do the task", "--json", "--permission-mode", "bypass", "--model", model, "--base-url"])
        .arg(server.base_url(protocol))
        .arg("--workspace")
        .arg(workspace)
        .args(extra)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("TACKLE_MODEL")
        .env_remove("TACKLE_TRUST_WORKSPACE")
        .env("TACKLE_CONFIG_DIR", config)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// A user config dir whose config.toml is `text` (commands unsandboxed, so the test sees
/// their processes).
fn user_config(text: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), format!("[sandbox]\nmode = \"none\"\n{text}")).unwrap();
    dir
}

async fn run(mut command: Command) -> Output {
    tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap()
}

fn result(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|err| {
        panic!(
            "stdout is not one JSON object ({err}):\n{}\nstderr:\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn trajectory_end(result: &Value) -> Value {
    let text = std::fs::read_to_string(result["trajectory"].as_str().unwrap()).unwrap();
    serde_json::from_str(text.lines().last().unwrap()).unwrap()
}

/// A model that keeps thinking, each reply costing 10 input and 5 output tokens.
fn endless_thinking() -> Script {
    let thought = json!({"thought": "more", "next_thought_needed": true, "thought_number": 1, "total_thoughts": 9});
    Script::new([Turn::reply(Reply::text("Thinking.").call("t", "sequentialthinking", thought).usage(10, 5))])
        .repeat_last()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_time_limit_stops_a_running_command_with_status_timeout() {
    let script = Script::new([Turn::reply(Reply::text("Waiting.").call("b1", "bash", json!({"command": "sleep 41"})))]);
    let server = FakeLlm::start(script).await;
    let workspace = tempfile::tempdir().unwrap();
    let config = user_config("");
    let started = Instant::now();
    let out = run(command(&server, Protocol::OpenAi, workspace.path(), config.path(), &["--timeout", "3s"])).await;
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(took < Duration::from_secs(20), "the run took {took:?}");
    let result = result(&out);
    assert_eq!((&result["status"], &result["exit_code"]), (&json!("timeout"), &json!(4)), "{result}");
    assert_eq!(result["error"]["kind"], "timeout", "{result}");
    // The trajectory is closed with the same status, the command answered as cancelled.
    let end = trajectory_end(&result);
    assert_eq!((&end["type"], &end["status"]), (&json!("session_end"), &json!("timeout")));
    let text = std::fs::read_to_string(result["trajectory"].as_str().unwrap()).unwrap();
    let session_id =
        serde_json::from_str::<Value>(text.lines().next().unwrap()).unwrap()["session_id"].as_str().unwrap().to_owned();
    assert!(text.contains("\"call_id\":\"b1\""), "the call was answered");
    assert_eq!(processes_of_session(&session_id), [], "the command outlived the run");
}

#[tokio::test(flavor = "multi_thread")]
async fn max_tokens_stops_before_the_request_that_would_pass_it() {
    let server = FakeLlm::start(endless_thinking()).await;
    let workspace = tempfile::tempdir().unwrap();
    let config = user_config("");
    // 15 tokens a request: after the second (30 ≥ 25) no third request is made.
    let out = run(command(&server, Protocol::OpenAi, workspace.path(), config.path(), &["--max-tokens", "25"])).await;
    assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stderr));
    let result = result(&out);
    assert_eq!((&result["status"], &result["steps"]), (&json!("budget"), &json!(2)), "{result}");
    assert_eq!(server.requests().len(), 2);
    assert_eq!(result["usage"], json!({"input_tokens": 20, "output_tokens": 10}), "unpriced: no cost");
    assert!(result["error"]["message"].as_str().unwrap().contains("--max-tokens"), "{result}");
    assert_eq!(trajectory_end(&result)["status"], "budget");
}

#[tokio::test(flavor = "multi_thread")]
async fn max_cost_uses_the_user_configs_prices_and_never_the_workspaces() {
    let workspace = tempfile::tempdir().unwrap();
    // The workspace says the model is free: not taken (a cloned repository must not lift a
    // budget), so the price is unknown and --max-cost is a usage error before any request.
    std::fs::write(workspace.path().join("tackle.toml"), "[pricing.fake]\ninput = 0.0\noutput = 0.0\n").unwrap();
    let server = FakeLlm::start(endless_thinking()).await;
    let config = user_config("");
    let out = run(command(&server, Protocol::OpenAi, workspace.path(), config.path(), &["--max-cost", "0.01"])).await;
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no price is known for the model 'fake'") && stderr.contains("[pricing"), "{stderr}");
    assert_eq!(server.requests().len(), 0);

    // Priced in the user config at $1,000 per million tokens: 15 tokens cost $0.015.
    for protocol in [Protocol::OpenAi, Protocol::Anthropic] {
        let server = FakeLlm::start(endless_thinking()).await;
        let config = user_config("[pricing.fake]\ninput = 1000.0\noutput = 1000.0\n");
        let out = run(command(&server, protocol, workspace.path(), config.path(), &["--max-cost", "0.01"])).await;
        assert_eq!(out.status.code(), Some(4), "{}", String::from_utf8_lossy(&out.stderr));
        let result = result(&out);
        assert_eq!((&result["status"], &result["steps"]), (&json!("budget"), &json!(1)), "{result}");
        assert_eq!(server.requests().len(), 1, "{protocol:?}");
        let cost = result["usage"]["cost_usd"].as_f64().unwrap();
        assert!((cost - 0.015).abs() < 1e-9, "{result}");
    }

    // Malformed flags and prices are usage errors naming what to write.
    for (extra, config_text, expect) in [
        (vec!["--max-cost=-1"], "", "above zero"),
        (vec!["--max-cost", "lots"], "", "above zero"),
        (vec!["--max-tokens", "0"], "", "0"),
        (vec!["--timeout", "soon"], "", "not a duration"),
        (vec!["--max-cost", "1"], "[pricing.fake]\ninput = \"cheap\"\noutput = 1.0\n", "[pricing.\"fake\"]"),
    ] {
        let config = user_config(config_text);
        let out = run(command(&server, Protocol::OpenAi, workspace.path(), config.path(), &extra)).await;
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(expect),
            "{extra:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_provider_that_stays_down_is_infrastructure_exit_3() {
    let workspace = tempfile::tempdir().unwrap();
    let config = user_config("[providers.openai]\nmax_retries = 1\n");
    for status in [503, 429] {
        let server = FakeLlm::start(Script::new([Turn::fault(Fault::status(status).body("{}"))]).repeat_last()).await;
        let out = run(command(&server, Protocol::OpenAi, workspace.path(), config.path(), &[])).await;
        assert_eq!(out.status.code(), Some(3), "{status}: {}", String::from_utf8_lossy(&out.stderr));
        let result = result(&out);
        assert_eq!((&result["status"], &result["exit_code"]), (&json!("error"), &json!(3)), "{result}");
    }
    // A request the provider rejects is the agent's failure, not worth a retry: 1.
    let server = FakeLlm::start(Script::new([Turn::fault(Fault::status(400).body("{}"))])).await;
    let out = run(command(&server, Protocol::OpenAi, workspace.path(), config.path(), &[])).await;
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(result(&out)["exit_code"], 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_ends_the_run_cleanly_with_exit_143_and_a_result() {
    let script = Script::new([Turn::reply(Reply::text("Waiting.").call("b1", "bash", json!({"command": "sleep 43"})))]);
    let server = FakeLlm::start(script).await;
    let workspace = tempfile::tempdir().unwrap();
    let config = user_config("");
    let mut child = command(&server, Protocol::OpenAi, workspace.path(), config.path(), &[]).spawn().unwrap();
    let mut sleeping = false;
    for _ in 0..300 {
        sleeping = std::process::Command::new("pgrep").args(["-f", "^sleep 43$"]).output().unwrap().status.success();
        if sleeping {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(sleeping, "the command never started");
    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let mut waited = 0;
    while child.try_wait().unwrap().is_none() && waited < 400 {
        std::thread::sleep(Duration::from_millis(50));
        waited += 1;
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(143), "{}", String::from_utf8_lossy(&out.stderr));
    let result = result(&out);
    assert_eq!((&result["status"], &result["exit_code"]), (&json!("interrupted"), &json!(143)), "{result}");
    assert_eq!(trajectory_end(&result)["status"], "interrupted");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_json_result_carries_the_runs_diff_and_usage() {
    let workspace = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git").args(args).current_dir(workspace.path()).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    git(&["init", "-q"]);
    std::fs::write(workspace.path().join("app.py"), "print('hello')\n").unwrap();
    git(&["add", "-A"]);
    git(&["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "start"]);
    let script = Script::new([
        Turn::reply(Reply::text("Reading.").call("r1", "read_file", json!({"file_path": "app.py"})).usage(50, 0)),
        Turn::reply(
            Reply::text("Editing.")
                .call("e1", "edit_file", json!({"file_path": "app.py", "old_string": "hello", "new_string": "goodbye"}))
                .call("w1", "write_file", json!({"file_path": "notes/new.md", "content": "# New\n"}))
                .usage(100, 20),
        ),
        Turn::reply(Reply::text("Done.").call("d", "task_done", json!({})).usage(100, 10)),
    ]);
    let server = FakeLlm::start(script).await;
    let config = user_config("");
    let out = run(command(&server, Protocol::OpenAi, workspace.path(), config.path(), &[])).await;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let result = result(&out);
    let diff = result["diff"].as_str().unwrap();
    assert!(
        diff.contains("-print('hello')\n+print('goodbye')\n"),
        "{result}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(diff.contains("+++ b/notes/new.md") && diff.contains("+# New"), "{diff}");
    assert!(!diff.contains(".tackle"), "Tackle's own files are not the run's changes: {diff}");
    assert_eq!(result["usage"], json!({"input_tokens": 250, "output_tokens": 30}));
    assert_eq!((&result["exit_code"], &result["status"]), (&json!(0), &json!("success")));
    assert!(result["duration_ms"].as_u64().is_some(), "{result}");
    // The diff applies to the starting state: git reverts it cleanly.
    let check = Command::new("git")
        .args(["apply", "--check", "-R", "-"])
        .current_dir(workspace.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child.stdin.take().unwrap().write_all(diff.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    assert!(
        check.status.success(),
        "{diff}\n{}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn setup_runs_before_the_agent_without_asking_and_its_failure_is_infrastructure() {
    let workspace = tempfile::tempdir().unwrap();
    let config = user_config("");
    // The model reads what the set-up wrote: it ran before the first request.
    let script = Script::new([
        Turn::reply(Reply::text("Reading.").call("r", "read_file", json!({"file_path": "ready.txt"}))),
        Turn::reply(Reply::text("Done.").call("d", "task_done", json!({})))
            .expect(tackle_testkit::Expect::result("r", "set up")),
    ]);
    let server = FakeLlm::start(script).await;
    // In the default mode a model's bash call would be denied (nobody can approve it); the
    // set-up is the person's own and runs.
    let mut run_default = Command::new(env!("CARGO_BIN_EXE_tackle"));
    run_default
        .args(["run", "read ready.txt", "--json", "--model", "openai/fake", "--base-url"])
        .arg(server.base_url(Protocol::OpenAi))
        .arg("--workspace")
        .arg(workspace.path())
        .args(["--setup", "echo 'set up' > ready.txt"])
        .env_remove("OPENAI_API_KEY")
        .env_remove("TACKLE_MODEL")
        .env("TACKLE_CONFIG_DIR", config.path())
        .stdin(Stdio::null());
    let out = run(run_default).await;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    server.assert_clean();
    assert_eq!(std::fs::read_to_string(workspace.path().join("ready.txt")).unwrap(), "set up\n");

    // A failing set-up: exit 3 before any request, with a result object.
    let server = FakeLlm::start(Script::new([])).await;
    let extra = ["--setup", "echo broken >&2; exit 7"];
    let out = run(command(&server, Protocol::OpenAi, workspace.path(), config.path(), &extra)).await;
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let result = result(&out);
    assert_eq!((&result["exit_code"], &result["error"]["kind"]), (&json!(3), &json!("infrastructure")), "{result}");
    assert!(result["error"]["message"].as_str().unwrap().contains("broken"), "{result}");
    assert!(server.requests().is_empty());
}
