//! `tackle run` and `tackle replay` through the real binary against the scripted fake server:
//! exit codes, `--json`, plain output, trajectories that check and re-run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Output;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tackle_testkit::{Expect, FakeLlm, Fault, Protocol, Reply, Script, Turn};

/// Links planted on Tackle's state paths, under every command (issue 24, points 1 and 2).
#[path = "support/state_links.rs"]
mod state_links;

fn thought(n: u32, next: bool) -> Value {
    json!({"thought": format!("step {n}"), "next_thought_needed": next, "thought_number": n, "total_thoughts": 2})
}

pub(crate) async fn tackle(args: Vec<String>, envs: Vec<(&'static str, &'static str)>) -> Output {
    tokio::task::spawn_blocking(move || {
        let mut command = assert_cmd::Command::cargo_bin("tackle").unwrap();
        command.args(&args).env_remove("OPENAI_API_KEY").env_remove("ANTHROPIC_API_KEY").env_remove("TACKLE_MODEL");
        command.env("TACKLE_CONFIG_DIR", "/nonexistent-tackle-config");
        for (key, value) in envs {
            command.env(key, value);
        }
        command.output().unwrap()
    })
    .await
    .unwrap()
}

fn run_args(server: &FakeLlm, protocol: Protocol, workspace: &Path, extra: &[&str]) -> Vec<String> {
    let model = match protocol {
        Protocol::OpenAi => "openai/fake",
        Protocol::Anthropic => "anthropic/fake",
    };
    let mut args = vec![
        "run".to_owned(),
        "think twice, then finish".to_owned(),
        "--model".to_owned(),
        model.to_owned(),
        "--base-url".to_owned(),
        server.base_url(protocol),
        "--workspace".to_owned(),
        workspace.display().to_string(),
        "--tools".to_owned(),
        "default,sequentialthinking".to_owned(),
    ];
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args
}

fn thinking_script() -> Script {
    Script::new([
        Turn::reply(Reply::text("Thinking.").call("t1", "sequentialthinking", thought(1, true)).usage(10, 5))
            .expect(Expect::last_user_contains("think twice")),
        Turn::reply(
            Reply::text("Done.")
                .call("t2", "sequentialthinking", thought(2, false))
                .call("t3", "task_done", json!({}))
                .usage(20, 5),
        )
        .expect(Expect::result("t1", "Sequential thinking step completed.")),
    ])
}

#[tokio::test(flavor = "multi_thread")]
async fn run_json_then_replay_check_and_rerun() {
    for protocol in [Protocol::OpenAi, Protocol::Anthropic] {
        let server = FakeLlm::start(thinking_script()).await;
        let workspace = tempfile::tempdir().unwrap();
        let out = tackle(run_args(&server, protocol, workspace.path(), &["--json", "--trajectory-full"]), vec![]).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        server.assert_clean();
        let result: Value = serde_json::from_slice(&out.stdout).unwrap();
        let mut keys: Vec<&str> = result.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "answer",
                "denied",
                "diff",
                "duration_ms",
                "exit_code",
                "status",
                "steps",
                "tokens",
                "trajectory",
                "usage"
            ]
        );
        assert_eq!(
            (result["status"].clone(), result["steps"].clone(), result["tokens"].clone()),
            (json!("success"), json!(2), json!(40))
        );
        let trajectory = result["trajectory"].as_str().unwrap().to_owned();
        assert!(
            trajectory.starts_with(&workspace.path().join(".tackle/trajectories").display().to_string()),
            "{trajectory}"
        );

        // --trajectory-full: each llm_request holds the body that was sent.
        let recorded = std::fs::read_to_string(&trajectory).unwrap();
        let requests: Vec<Value> = recorded
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|e| e["type"] == "llm_request")
            .collect();
        assert_eq!(requests[1]["request"], server.requests()[1].body, "{protocol:?}");
        let check = tackle(vec!["replay".into(), trajectory.clone(), "--check".into()], vec![]).await;
        assert_eq!(check.status.code(), Some(0), "{}", String::from_utf8_lossy(&check.stdout));
        assert!(
            String::from_utf8_lossy(&check.stdout).contains("valid (16 events, 3 tool calls)"),
            "{}",
            String::from_utf8_lossy(&check.stdout)
        );

        let shown = tackle(vec!["replay".into(), trajectory.clone()], vec![]).await;
        let text = String::from_utf8_lossy(&shown.stdout);
        assert!(text.starts_with("Task: think twice, then finish\n"), "{text}");
        assert!(text.contains("  -> task_done [t3] {}\n") && text.contains("  <- [t3]\n     Task done.\n"), "{text}");
        assert!(text.contains("End: success after 2 steps, 40 tokens"), "{text}");

        let rerun = tackle(vec!["replay".into(), trajectory.clone(), "--rerun".into()], vec![]).await;
        let text = String::from_utf8_lossy(&rerun.stdout);
        assert_eq!(rerun.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&rerun.stderr));
        assert!(text.ends_with("3 call(s) re-run, 0 differ, 0 skipped\n"), "{text}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn rerun_reports_each_call_whose_result_differs() {
    let server = FakeLlm::start(thinking_script()).await;
    let workspace = tempfile::tempdir().unwrap();
    let out = tackle(run_args(&server, Protocol::OpenAi, workspace.path(), &["--json"]), vec![]).await;
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let path = result["trajectory"].as_str().unwrap();
    // Change a recorded output: the re-run must name that call and only that one.
    let edited: String = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| {
            let mut event: Value = serde_json::from_str(line).unwrap();
            if event["type"] == "tool_output" && event["call_id"] == "t3" {
                event["content"] = json!("Task not done.");
            }
            format!("{event}\n")
        })
        .collect();
    let edited_path = workspace.path().join("edited.jsonl");
    std::fs::write(&edited_path, edited).unwrap();
    let rerun = tackle(vec!["replay".into(), edited_path.display().to_string(), "--rerun".into()], vec![]).await;
    let text = String::from_utf8_lossy(&rerun.stdout);
    assert_eq!(rerun.status.code(), Some(1), "{text}");
    assert!(
        text.starts_with("call t3 (task_done) differs:\n  recorded: Task not done.\n  now: Task done.\n"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn plain_output_streams_lines_and_a_summary() {
    let server = FakeLlm::start(thinking_script()).await;
    let workspace = tempfile::tempdir().unwrap();
    let out = tackle(run_args(&server, Protocol::Anthropic, workspace.path(), &[]), vec![]).await;
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout,
        "Thinking.\n[tool] sequentialthinking step 1 -> ok\nDone.\n[tool] sequentialthinking step 2 -> ok\n[tool] task_done -> ok\n"
    );
    // The sandbox line comes first, then the summary.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let (sandbox, summary) = stderr.split_once('\n').unwrap();
    assert!(sandbox.starts_with("tackle: commands run under "), "{stderr}");
    assert!(summary.starts_with("✓ success · 2 steps · 40 tokens · "), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn stop_conditions_map_to_exit_codes() {
    // max steps: 4, a limit (issue 29)
    let forever = Turn::reply(Reply::text("more").call("x", "sequentialthinking", thought(1, true)));
    let server = FakeLlm::start(Script::new([forever]).repeat_last()).await;
    let workspace = tempfile::tempdir().unwrap();
    let out =
        tackle(run_args(&server, Protocol::OpenAi, workspace.path(), &["--max-steps", "3", "--json"]), vec![]).await;
    assert_eq!(out.status.code(), Some(4));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((result["status"].clone(), result["steps"].clone()), (json!("max_steps"), json!(3)));
    // --json keeps stdout for the object; why the run failed goes to stderr.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.ends_with("✗ max_steps: Stopped after 3 steps without finishing.\n"), "{stderr}");

    // provider error after retries: 1, with the class in the message
    let server = FakeLlm::start(Script::new([Turn::fault(
        Fault::status(400).body(r#"{"error":{"message":"model not found"}}"#),
    )]))
    .await;
    let out = tackle(run_args(&server, Protocol::OpenAi, workspace.path(), &[]), vec![]).await;
    assert_eq!(out.status.code(), Some(1));
    let endpoint = format!("{}/chat/completions", server.openai_base_url());
    let rejected = format!("openai rejected the request (HTTP 400) at {endpoint}: model not found");
    assert!(String::from_utf8_lossy(&out.stdout).contains(&rejected));

    // The same with --json: the object on stdout, the message with its class on stderr.
    let server = FakeLlm::start(Script::new([Turn::fault(
        Fault::status(400).body(r#"{"error":{"message":"model not found"}}"#),
    )]))
    .await;
    let out = tackle(run_args(&server, Protocol::OpenAi, workspace.path(), &["--json"]), vec![]).await;
    assert_eq!(out.status.code(), Some(1));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["status"], "error");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.ends_with(&format!(
            "✗ error (bad_request): openai rejected the request (HTTP 400) at {}/chat/completions: model not found\n",
            server.openai_base_url()
        )),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_cost_the_provider_reports_is_summed_on_the_final_line() {
    let priced = || {
        Script::new([
            Turn::reply(
                Reply::text("Thinking.").call("t1", "sequentialthinking", thought(1, false)).usage(10, 5).cost(0.0125),
            ),
            Turn::reply(Reply::text("Done.").call("t2", "task_done", json!({})).usage(20, 5).cost(0.0005)),
        ])
    };
    let workspace = tempfile::tempdir().unwrap();
    let server = FakeLlm::start(priced()).await;
    let out = tackle(run_args(&server, Protocol::OpenAi, workspace.path(), &[]), vec![]).await;
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.lines().last().unwrap().starts_with("✓ success · 2 steps · 40 tokens · $0.0130 · "), "{stderr}");

    let server = FakeLlm::start(priced()).await;
    let out = tackle(run_args(&server, Protocol::OpenAi, workspace.path(), &["--json"]), vec![]).await;
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cost = result["cost_usd"].as_f64().unwrap();
    assert!((cost - 0.013).abs() < 1e-9, "{result}");
    // The trajectory keeps each response's price and the total.
    let recorded = std::fs::read_to_string(result["trajectory"].as_str().unwrap()).unwrap();
    let end: Value = serde_json::from_str(recorded.lines().last().unwrap()).unwrap();
    assert!((end["usage_total"]["cost"].as_f64().unwrap() - 0.013).abs() < 1e-9, "{end}");
}

#[tokio::test(flavor = "multi_thread")]
async fn usage_errors_exit_2_before_any_request() {
    let workspace = tempfile::tempdir().unwrap();
    let dir = workspace.path().display().to_string();
    let cases: [(Vec<&str>, &str); 4] = [
        (vec!["--model", "openai/gpt-4.1"], "tackle: missing API key for openai: set OPENAI_API_KEY\n"),
        (vec!["--model", "gpt-4.1"], "tackle: --model \"gpt-4.1\" is not PROVIDER/MODEL"),
        (vec![], "tackle: no model chosen: pass --model PROVIDER/MODEL"),
        (vec!["--model", "anthropic/x", "--permission-mode", "yolo"], "tackle: unknown permission mode 'yolo'"),
    ];
    for (extra, message) in cases {
        let mut args: Vec<String> = vec!["run".into(), "task".into(), "--workspace".into(), dir.clone()];
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        let out = tackle(args, vec![]).await;
        assert_eq!(out.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.starts_with(message), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn replay_check_names_the_first_bad_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    std::fs::write(
        &path,
        "{\"seq\":0,\"type\":\"session_start\"}\n{\"seq\":1,\"type\":\"tool_call\",\"call_id\":\"a\"}\n",
    )
    .unwrap();
    let out = tackle(vec!["replay".into(), path.display().to_string(), "--check".into()], vec![]).await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!("{}: line 2: tool_call a has no tool_output\n", path.display())
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn replay_skips_events_of_a_newer_version_and_check_names_their_types() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let lines = [
        json!({"seq": 0, "type": "session_start", "task": "plan it"}),
        json!({"seq": 1, "type": "plan_update", "plan": ["a"]}),
        json!({"seq": 2, "type": "session_end", "status": "success", "steps": 1, "final_result": "Planned."}),
    ];
    std::fs::write(&path, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let check = tackle(vec!["replay".into(), path.display().to_string(), "--check".into()], vec![]).await;
    assert_eq!(check.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&check.stdout),
        format!(
            "{}: valid (3 events, 0 tool calls, events of types this version does not know: plan_update)\n",
            path.display()
        )
    );
    let shown = tackle(vec!["replay".into(), path.display().to_string()], vec![]).await;
    assert_eq!(shown.status.code(), Some(0));
    let text = String::from_utf8_lossy(&shown.stdout);
    assert!(
        text.contains("  (skipped a plan_update event: this version of Tackle does not know it)\n\nEnd: success"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_text_call_format_runs_through_the_binary() {
    let script = Script::new([
        Turn::reply(Reply::text("Saving.\n```save notes.txt\nremember the milk\n```\n"))
            .expect(Expect { no_tools: true, ..Expect::last_user_contains("think twice") }),
        Turn::reply(Reply::text("Saved.\n```task_done\n{}\n```\n"))
            .expect(Expect::last_user_contains("Result of save (call 1):\n```output\nSaved to notes.txt")),
    ]);
    let server = FakeLlm::start(script).await;
    let workspace = tempfile::tempdir().unwrap();
    let mut args = run_args(
        &server,
        Protocol::OpenAi,
        workspace.path(),
        &["--call-format", "markdown", "--permission-mode", "accept-edits", "--json"],
    );
    // Without --tools: the default toolset plus save, append and patch.
    let tools_at = args.iter().position(|a| a == "--tools").unwrap();
    args.drain(tools_at..tools_at + 2);
    let out = tackle(args, vec![]).await;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    server.assert_clean();
    assert_eq!(std::fs::read_to_string(workspace.path().join("notes.txt")).unwrap(), "remember the milk\n");
}

/// `tackle run` as a child process the test can signal: no sandbox (the shell's processes are
/// this machine's, to be found by their environment), every call allowed, the trajectory at
/// `trajectory`.
struct Child {
    process: std::process::Child,
    trajectory: std::path::PathBuf,
    _config: tempfile::TempDir,
}

impl Child {
    fn spawn(server: &FakeLlm, workspace: &Path) -> Child {
        let config = tempfile::tempdir().unwrap();
        std::fs::write(config.path().join("config.toml"), "[sandbox]\nmode = \"none\"\n").unwrap();
        let trajectory = workspace.join("trajectory.jsonl");
        let path = trajectory.display().to_string();
        let extra = ["--json", "--permission-mode", "bypass", "--trajectory", path.as_str()];
        let process = std::process::Command::new(env!("CARGO_BIN_EXE_tackle"))
            .args(run_args(server, Protocol::OpenAi, workspace, &extra))
            .env_remove("OPENAI_API_KEY")
            .env_remove("TACKLE_MODEL")
            .env_remove("TACKLE_TRUST_WORKSPACE")
            .env("TACKLE_CONFIG_DIR", config.path())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        Child { process, trajectory, _config: config }
    }

    /// The complete lines of the trajectory so far.
    fn events(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.trajectory).unwrap_or_default();
        text.split_inclusive('\n').filter(|l| l.ends_with('\n')).map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    /// Waits (up to 20 s) until `ready` holds for the trajectory; the events then, or None.
    async fn wait_for(&self, ready: impl Fn(&[Value]) -> bool) -> Option<Vec<Value>> {
        for _ in 0..400 {
            let events = self.events();
            if ready(&events) {
                return Some(events);
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
        None
    }

    fn signal(&self, name: &str) {
        let status = std::process::Command::new("kill").args([name, &self.process.id().to_string()]).status().unwrap();
        assert!(status.success());
    }

    /// Waits for the exit (killing the child after 20 s); its output.
    fn finish(mut self) -> Output {
        for _ in 0..400 {
            if self.process.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let _ = self.process.kill();
        self.process.wait_with_output().unwrap()
    }
}

fn has_output(events: &[Value], call_id: &str) -> bool {
    events.iter().any(|e| e["type"] == "tool_output" && e["call_id"] == call_id)
}

/// The live processes whose environment carries this Tackle session id, as (pid, command line).
pub(crate) fn processes_of_session(session_id: &str) -> Vec<(i32, String)> {
    let needle = format!("TACKLE_SESSION_ID={session_id}");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else { continue };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let zombie = stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
        if !zombie && environ.split(|b| *b == 0).any(|var| var == needle.as_bytes()) {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            found.push((pid, String::from_utf8_lossy(&cmdline).replace('\0', " ").trim().to_owned()));
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread")]
async fn each_output_is_in_the_trajectory_as_soon_as_it_exists() {
    let script = Script::new([
        Turn::reply(
            Reply::text("Reading, then waiting.").call("r1", "read_file", json!({"file_path": "notes.txt"})).call(
                "b1",
                "bash",
                json!({"command": "while [ ! -e go ]; do sleep 0.05; done; echo went"}),
            ),
        ),
        Turn::reply(Reply::text("Done.").call("d1", "task_done", json!({}))).expect(Expect::result("b1", "went")),
    ]);
    let server = FakeLlm::start(script).await;
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("notes.txt"), "remember the milk\n").unwrap();
    let child = Child::spawn(&server, workspace.path());
    // The bash call runs until the test lets it go: read_file's output must be recorded now.
    let seen = child.wait_for(|events| has_output(events, "r1")).await;
    std::fs::write(workspace.path().join("go"), "").unwrap();
    let out = child.finish();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let seen = seen.expect("read_file's output was not in the trajectory while bash still ran");
    assert!(!has_output(&seen, "b1"), "bash had not finished yet");
    server.assert_clean();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_ctrl_c_kills_every_process_and_closes_the_trajectory() {
    let script = Script::new([Turn::reply(Reply::text("Sleeping.").call(
        "b1",
        "bash",
        json!({"command": "trap '' TERM INT; sleep 47"}),
    ))]);
    let server = FakeLlm::start(script).await;
    let workspace = tempfile::tempdir().unwrap();
    let child = Child::spawn(&server, workspace.path());
    let started = child.wait_for(|events| events.iter().any(|e| e["type"] == "tool_call")).await;
    let session_id = started.expect("the bash call started")[0]["session_id"].as_str().unwrap().to_owned();
    let mut sleeping = false;
    for _ in 0..200 {
        sleeping = processes_of_session(&session_id).iter().any(|(_, cmd)| cmd == "sleep 47");
        if sleeping {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(sleeping, "sleep 47 never started");

    child.signal("-INT");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    child.signal("-INT");
    let trajectory = child.trajectory.clone();
    let out = child.finish();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));

    let mut survivors = processes_of_session(&session_id);
    for _ in 0..40 {
        if survivors.is_empty() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        survivors = processes_of_session(&session_id);
    }
    for (pid, _) in &survivors {
        let _ = std::process::Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    }
    assert_eq!(survivors, [], "processes of the session outlived Tackle");

    let check = tackle(vec!["replay".into(), trajectory.display().to_string(), "--check".into()], vec![]).await;
    assert_eq!(check.status.code(), Some(0), "{}", String::from_utf8_lossy(&check.stdout));
    let events: Vec<Value> =
        std::fs::read_to_string(&trajectory).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let output = events.iter().find(|e| e["type"] == "tool_output" && e["call_id"] == "b1").unwrap();
    assert_eq!((&output["is_error"], &output["content"]), (&json!(true), &json!("Cancelled by the user.")));
    let end = events.last().unwrap();
    assert_eq!(
        (&end["type"], &end["status"], &end["steps"]),
        (&json!("session_end"), &json!("interrupted"), &json!(1))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_image_read_through_the_binary_reaches_the_next_request_unless_vision_is_off() {
    let image = image::RgbImage::from_fn(64, 48, |x, y| image::Rgb([(x * 3) as u8, (y * 5) as u8, 1]));
    for protocol in [Protocol::OpenAi, Protocol::Anthropic] {
        for vision in [true, false] {
            let script = Script::new([
                Turn::reply(Reply::text("Looking.").call("c1", "read_file", json!({"file_path": "shot.png"}))),
                Turn::reply(Reply::text("A gradient.").call("c2", "task_done", json!({})))
                    .expect(Expect::result("c1", "shot.png: image/png 64×48, shown at 64×48")),
            ]);
            let server = FakeLlm::start(script).await;
            let workspace = tempfile::tempdir().unwrap();
            image.save(workspace.path().join("shot.png")).unwrap();
            let config = tempfile::tempdir().unwrap();
            let provider = if protocol == Protocol::OpenAi { "openai" } else { "anthropic" };
            let settings = if vision { String::new() } else { format!("[providers.{provider}]\nvision = false\n") };
            std::fs::write(config.path().join("config.toml"), settings).unwrap();
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_tackle"))
                .args(run_args(&server, protocol, workspace.path(), &["--json"]))
                .env_remove("OPENAI_API_KEY")
                .env_remove("ANTHROPIC_API_KEY")
                .env_remove("TACKLE_MODEL")
                .env("TACKLE_CONFIG_DIR", config.path())
                .output()
                .unwrap();
            assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
            server.assert_clean();
            let next = server.requests()[1].body.to_string();
            let sent = match protocol {
                Protocol::OpenAi => next.contains("\"image_url\":{\"url\":\"data:image/png;base64,iVBOR"),
                Protocol::Anthropic => {
                    next.contains("\"media_type\":\"image/png\",\"type\":\"base64\"")
                        || next.contains("\"type\":\"base64\",\"media_type\":\"image/png\"")
                }
            };
            assert_eq!(sent, vision, "{protocol:?} vision={vision}: {next}");
            assert!(next.contains("shot.png: image/png 64×48, shown at 64×48"), "{next}");
        }
    }
}
