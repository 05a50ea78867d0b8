//! `tackle mcp serve`, the real binary, against the attacks on its bounds (issue 12, points 6
//! and 7; docs/mcp.md, "Bounds"): a flood of HTTP sessions (count and memory, the default cap),
//! idle expiry and the workspace's say in both, the bearer token (through the official Python
//! SDK, the flag and the variable that the secrets re-execution moves out of the environment;
//! never in the logs or a command's environment), a request reusing an id in flight, unsafe
//! calls answered in arrival order, and background jobs that must not outlive the server
//! however early the client leaves or the signal comes, in both sandbox modes.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::peers;
use crate::support::serve;

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use serve::{HttpServe, TACKLE};

#[test]
fn two_hundred_http_sessions_stay_within_a_cap_of_sixteen_and_memory_stays_flat() {
    let workspace = tempfile::tempdir().unwrap();
    let serve = HttpServe::start(workspace.path(), &["--max-sessions", "16"]);
    let mut sessions: Vec<String> = (0..16).map(|_| serve.open_session(&[])).collect();
    std::thread::sleep(Duration::from_millis(300));
    let at_cap = serve.rss_kb();
    sessions.extend((16..200).map(|_| serve.open_session(&[])));
    std::thread::sleep(Duration::from_millis(300));
    let after = serve.rss_kb();
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let alive: Vec<usize> = (0..sessions.len())
        .filter(|&n| {
            let (status, _, _) = serve.post(&[("Mcp-Session-Id", &sessions[n])], list);
            assert!(status == 200 || status == 404, "session {n}: {status}");
            status == 200
        })
        .collect();
    assert_eq!(alive, (184..200).collect::<Vec<_>>(), "the sessions idle the longest went first");
    // Without the cap, 184 more sessions cost tens of MB.
    assert!(after < at_cap + 6 * 1024, "RSS grew from {at_cap} KB at the cap to {after} KB after 200 sessions");
}

#[test]
fn without_a_flag_or_setting_the_cap_is_sixty_four() {
    let workspace = tempfile::tempdir().unwrap();
    let serve = HttpServe::start(workspace.path(), &[]);
    let sessions: Vec<String> = (0..70).map(|_| serve.open_session(&[])).collect();
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let alive: Vec<usize> =
        (0..sessions.len()).filter(|&n| serve.post(&[("Mcp-Session-Id", &sessions[n])], list).0 == 200).collect();
    assert_eq!(alive, (6..70).collect::<Vec<_>>());
}

#[test]
fn idle_sessions_expire_busy_ones_do_not_and_the_workspace_may_lower_both_bounds_not_raise_them() {
    let workspace = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    std::fs::write(config.path().join("config.toml"), "[mcp.serve]\nidle_timeout_s = 1\n").unwrap();
    // A file a command could have written: the cap it lowers is taken, the expiry it raises is not.
    std::fs::write(workspace.path().join("tackle.toml"), "[mcp.serve]\nidle_timeout_s = 86400\nmax_sessions = 3\n")
        .unwrap();
    let config_dir = config.path().to_str().unwrap();
    let serve = HttpServe::start_with(workspace.path(), &[], &[("TACKLE_CONFIG_DIR", config_dir)]);
    assert!(
        serve.preamble.contains("ignoring [mcp.serve] idle_timeout_s = 86400 from ")
            && serve.preamble.contains("tackle.toml: the workspace may only lower it, to a value from 0 to 1 (yours)"),
        "{}",
        serve.preamble
    );
    assert!(!serve.preamble.contains("max_sessions"), "{}", serve.preamble);
    let sessions: Vec<String> = (0..4).map(|_| serve.open_session(&[])).collect();
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let status = |session: &str| serve.post(&[("Mcp-Session-Id", session)], list).0;
    assert_eq!(sessions.iter().map(|s| status(s)).collect::<Vec<_>>(), [404, 200, 200, 200], "a cap of 3");
    // A call twice as long as the idle timeout keeps its session; the others expire meanwhile.
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep 2; echo done"}}}"#;
    let (code, _, body) = serve.post(&[("Mcp-Session-Id", &sessions[3])], call);
    assert_eq!(code, 200, "{body}");
    assert_eq!(HttpServe::messages(&body).last().unwrap()["result"]["content"][0]["text"], "done", "{body}");
    assert_eq!(status(&sessions[3]), 200, "the busy session expired");
    assert_eq!(status(&sessions[1]), 404, "an idle session outlived its timeout");
    // Idle now (any request would make it active again): gone within the timeout and a
    // quarter (the sweep period), here with slack.
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(status(&sessions[3]), 404, "the idle session never expired");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_token_lets_the_python_sdk_in_keeps_others_out_and_is_never_logged() {
    let python = require!(peers::python(), "the Python MCP SDK");
    let token = "mcp-token-7c1e0b9a4f";
    let workspace = tempfile::tempdir().unwrap();
    let serve = HttpServe::start_with(
        workspace.path(),
        &["--tools", "sequentialthinking,task_done,bash"],
        &[("TACKLE_MCP_TOKEN", token), ("TACKLE_LOG", "debug")],
    );
    let thought =
        json!({"thought": "t", "next_thought_needed": false, "thought_number": 1, "total_thoughts": 1}).to_string();
    let call = ["--no-list", "--url", &serve.url, "--call", "sequentialthinking", "--args", &thought];
    let out = peers::probe(&python, &[&call[..], &["--bearer", token]].concat()).await;
    assert_eq!(out.code, 0, "{out:?}");
    assert_eq!(out.json()["call"]["isError"], false);
    for wrong in [None, Some("mcp-token-7c1e0b9a4e")] {
        let args = match wrong {
            Some(wrong) => [&call[..], &["--bearer", wrong]].concat(),
            None => call.to_vec(),
        };
        let out = peers::probe(&python, &args).await;
        assert_ne!(out.code, 0, "{wrong:?} got in: {out:?}");
        assert!(out.json().get("call").is_none(), "{wrong:?} got in: {out:?}");
    }
    // What the SDK saw (it reports only "an error response"): 401 with the Bearer challenge.
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    for headers in [&[][..], &[("Authorization", "Bearer mcp-token-7c1e0b9a4e")][..]] {
        let (status, answer_headers, body) = serve.post(headers, init);
        assert_eq!(status, 401, "{headers:?}: {body}");
        assert!(answer_headers.contains(&("www-authenticate".to_owned(), "Bearer".to_owned())), "{answer_headers:?}");
    }
    let right = format!("Bearer {token}");
    serve.open_session(&[("Authorization", &right)]);
    // A command of a session never sees the variable (a name with TOKEN in it is a secret).
    let session = serve.open_session(&[("Authorization", &right)]);
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo ${TACKLE_MCP_TOKEN:-unset}"}}}"#;
    let (_, _, body) = serve.post(&[("Authorization", &right), ("Mcp-Session-Id", &session)], call);
    assert_eq!(HttpServe::messages(&body).last().unwrap()["result"]["content"][0]["text"], "unset", "{body}");
    // Over stdio the token means nothing: the client owns the process.
    let config = tempfile::tempdir().unwrap();
    let mut stdio = StdioServe::start(workspace.path(), config.path(), &[("TACKLE_MCP_TOKEN", token)]);
    stdio.call(1, "bash", "echo served");
    assert_eq!(stdio.answer(1)["result"]["content"][0]["text"], "served");
    let stderr = serve.stop();
    assert!(stderr.contains("refused an HTTP request"), "nothing was logged at debug level: {stderr}");
    assert!(!stderr.contains(token), "the token is in the log: {stderr}");
    // The flag does the same.
    let serve = HttpServe::start(workspace.path(), &["--auth-token", token]);
    assert_eq!(serve.post(&[], init).0, 401);
    serve.open_session(&[("Authorization", &right)]);
    // A token a header cannot carry is refused before anything is served.
    for (flag, variable) in [(Some("two words"), None), (None, Some("two words"))] {
        let mut command = Command::new(TACKLE);
        command.args(["mcp", "serve", "--http", "127.0.0.1:0", "--workspace"]).arg(workspace.path());
        command.args(flag.map(|token| ["--auth-token", token]).into_iter().flatten());
        command.envs(variable.map(|token| ("TACKLE_MCP_TOKEN", token)));
        let out = command.env("TACKLE_CONFIG_DIR", config.path()).stdin(Stdio::null()).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("must be visible ASCII") && !stderr.contains("listening"), "{stderr}");
    }
}

/// A `tackle mcp serve` over stdio, driven line by line.
struct StdioServe {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl StdioServe {
    /// Started in `workspace` with the user config of `config_dir` (its `config.toml`) and
    /// the environment variables `envs`.
    fn start(workspace: &Path, config_dir: &Path, envs: &[(&str, &str)]) -> StdioServe {
        let mut child = Command::new(TACKLE)
            .args(["mcp", "serve", "--workspace"])
            .arg(workspace)
            .env("TACKLE_CONFIG_DIR", config_dir)
            .envs(envs.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let (stdin, stdout) = (child.stdin.take(), BufReader::new(child.stdout.take().unwrap()));
        let mut serve = StdioServe { child, stdin, stdout };
        serve.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}));
        serve.answer(0);
        serve.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        serve
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin.as_mut().unwrap(), "{message}").unwrap();
    }

    fn call(&mut self, id: i64, tool: &str, command: &str) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": {"command": command}}}));
    }

    /// The answer to `id` (the messages before it are skipped).
    fn answer(&mut self, id: i64) -> Value {
        loop {
            let mut line = String::new();
            assert!(self.stdout.read_line(&mut line).unwrap() > 0, "the server ended before answering {id}");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    }

    /// The exit code, waiting at most 20 s.
    fn wait(mut self) -> Option<i32> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for StdioServe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn a_request_reusing_an_id_in_flight_is_refused_and_never_runs_over_stdio_and_http() {
    let workspace = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let first = "touch started; sleep 0.5; echo first";
    let second = "echo second > second.txt; echo second";
    let mut serve = StdioServe::start(workspace.path(), config.path(), &[]);
    serve.call(1, "bash", first);
    serve.call(1, "bash", second);
    let refusal = serve.answer(1);
    assert_eq!(refusal["error"]["code"], -32600, "{refusal}");
    assert!(refusal["error"]["message"].as_str().unwrap().contains("has not been answered yet"), "{refusal}");
    assert_eq!(serve.answer(1)["result"]["content"][0]["text"], "first");
    assert!(!workspace.path().join("second.txt").exists(), "the refused request ran");
    // Answered, the id is free again.
    serve.call(1, "bash", "echo again");
    assert_eq!(serve.answer(1)["result"]["content"][0]["text"], "again");
    drop(serve);

    std::fs::remove_file(workspace.path().join("started")).unwrap();
    let http = HttpServe::start(workspace.path(), &[]);
    let session = http.open_session(&[]);
    let call = |command: &str| {
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "bash", "arguments": {"command": command}}})
            .to_string()
    };
    std::thread::scope(|scope| {
        let running = scope.spawn(|| http.post(&[("Mcp-Session-Id", &session)], &call(first)));
        let deadline = Instant::now() + Duration::from_secs(10);
        while !workspace.path().join("started").exists() {
            assert!(Instant::now() < deadline, "the first call never started");
            std::thread::sleep(Duration::from_millis(5));
        }
        let (status, _, body) = http.post(&[("Mcp-Session-Id", &session)], &call(second));
        assert_eq!(status, 200, "{body}");
        let refusal = HttpServe::messages(&body).pop().unwrap();
        assert_eq!((&refusal["id"], &refusal["error"]["code"]), (&json!(7), &json!(-32600)), "{body}");
        let (_, _, body) = running.join().unwrap();
        assert_eq!(HttpServe::messages(&body).last().unwrap()["result"]["content"][0]["text"], "first", "{body}");
    });
    assert!(!workspace.path().join("second.txt").exists(), "the refused request ran");
}

#[test]
fn a_background_run_sent_before_a_bash_call_is_answered_first() {
    let workspace = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    for run in 0..8 {
        let mut serve = StdioServe::start(workspace.path(), config.path(), &[]);
        serve.call(1, "background_run", "echo job");
        serve.call(2, "bash", "echo shell");
        let mut line = String::new();
        let mut answered = Vec::new();
        while answered.len() < 2 {
            line.clear();
            serve.stdout.read_line(&mut line).unwrap();
            let message: Value = serde_json::from_str(&line).unwrap();
            if let Some(id) = message["id"].as_i64() {
                assert_eq!(message["result"]["isError"], false, "{message}");
                answered.push(id);
            }
        }
        assert_eq!(answered, [1, 2], "run {run}: answered out of order");
    }
}

/// The processes whose command line is exactly `sleep MARKER`.
fn sleeping(marker: &str) -> Vec<u32> {
    let wanted = format!("sleep\0{marker}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|line| line == wanted.as_bytes()))
        .collect()
}

/// Kills the leftovers of a failed run (by pid: they are this test's) and says whether any were left.
fn reap(marker: &str) -> bool {
    let left = sleeping(marker);
    for pid in &left {
        let _ = Command::new("kill").args(["-KILL", &pid.to_string()]).status();
    }
    !left.is_empty()
}

/// How a trial ends the server that was just asked for a background job.
#[derive(Debug, Clone, Copy)]
enum End {
    /// Stdin closed right after the answer: the attack (8 of 12 jobs survived under bubblewrap).
    CloseAfterAnswer,
    /// Stdin closed right after the request, before any answer.
    CloseBeforeAnswer,
    /// SIGTERM while the job is being started (its log file exists, its process may not yet).
    TermWhileStarting,
    /// The signal once the job surely runs.
    Signal(&'static str),
}

/// The ends each sandbox mode is put through: the attack 12 times, as the attack run did.
fn ends() -> Vec<End> {
    let mut ends = vec![End::CloseAfterAnswer; 12];
    ends.extend([End::CloseBeforeAnswer; 3]);
    ends.extend([End::TermWhileStarting; 8]);
    ends.extend([End::Signal("TERM"), End::Signal("HUP")]);
    ends
}

/// Whether a job log of the session in `workspace` exists.
fn job_log_exists(workspace: &Path) -> bool {
    let outputs = std::fs::read_dir(workspace.join(".tackle/outputs")).into_iter().flatten().flatten();
    outputs.into_iter().any(|session| session.path().join("jobs/job-1.log").exists())
}

/// Ends a server that was just asked for a background job (`setsid sleep MARKER & sleep
/// MARKER`: one process leaves the job's session at once) in each of `ends`; returns the
/// markers of the runs, or the mode's reason to be skipped.
fn end_servers_with_a_job(mode: &'static str, m: usize, ends: &[End]) -> Result<Vec<String>, String> {
    let config = tempfile::tempdir().unwrap();
    // A short kill grace: bubblewrap's init ignores SIGTERM, and 2 s per run add up.
    let settings = format!("[sandbox]\nmode = \"{mode}\"\n[tools]\nkill_grace_ms = 100\n");
    std::fs::write(config.path().join("config.toml"), settings).unwrap();
    let mut markers = Vec::new();
    for (n, end) in ends.iter().enumerate() {
        let workspace = tempfile::tempdir().unwrap();
        let marker = format!("97.{}{m}{n:02}", std::process::id() % 1000);
        let mut serve = StdioServe::start(workspace.path(), config.path(), &[]);
        serve.call(1, "background_run", &format!("setsid sleep {marker} & sleep {marker}"));
        let kill = |serve: &StdioServe, signal: &str| {
            let pid = serve.child.id().to_string();
            assert!(Command::new("kill").args([&format!("-{signal}"), &pid]).status().unwrap().success());
        };
        match end {
            End::CloseAfterAnswer => {
                let answer = serve.answer(1);
                let text = answer["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
                if text.contains("is not available here") && std::env::var_os("TACKLE_REQUIRE_PEERS").is_none() {
                    return Err(text);
                }
                assert_eq!(answer["result"]["isError"], false, "{mode}: {answer}");
                drop(serve.stdin.take());
            }
            End::CloseBeforeAnswer => drop(serve.stdin.take()),
            End::TermWhileStarting => {
                let deadline = Instant::now() + Duration::from_secs(5);
                while !job_log_exists(workspace.path()) {
                    assert!(Instant::now() < deadline, "{mode}: the job never started");
                    std::hint::spin_loop();
                }
                kill(&serve, "TERM");
            }
            End::Signal(signal) => {
                let deadline = Instant::now() + Duration::from_secs(5);
                while sleeping(&marker).len() < 2 {
                    assert!(Instant::now() < deadline, "{mode}: the job never started");
                    std::thread::sleep(Duration::from_millis(10));
                }
                kill(&serve, signal);
            }
        }
        let code = serve.wait();
        assert!(!reap(&marker), "{mode}, {end:?}: the job outlived the server (run {n})");
        assert_eq!(code, Some(0), "{mode}, {end:?}");
        markers.push(marker);
    }
    Ok(markers)
}

#[test]
fn no_background_job_outlives_the_server_however_early_the_client_leaves_or_the_signal_comes() {
    let runs: Vec<_> = ["bwrap", "landlock"]
        .into_iter()
        .enumerate()
        .map(|(m, mode)| (mode, std::thread::spawn(move || end_servers_with_a_job(mode, m, &ends()))))
        .collect();
    let mut markers = Vec::new();
    for (mode, run) in runs {
        match run.join().unwrap() {
            Ok(found) => markers.extend(found),
            Err(reason) => eprintln!("SKIPPED {mode}: {reason}"),
        }
    }
    // A job still starting when the server went away would show up a moment later.
    std::thread::sleep(Duration::from_millis(300));
    let survivors: Vec<_> = markers.iter().filter(|marker| reap(marker)).collect();
    assert!(survivors.is_empty(), "jobs outlived the server: {survivors:?}");
}
