//! The shell tools through the real binary: `tools batch` keeps one shell across lines,
//! `tools call bash` runs inside the sandbox `[sandbox]` configures, and the person sees each
//! sandbox notice once on stderr.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use assert_cmd::Command;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};

#[path = "shell/restricted.rs"]
mod restricted;

/// `tackle` with a private user configuration directory holding `user_config`.
fn tackle(config_dir: &Path, user_config: &str) -> Command {
    std::fs::write(config_dir.join("config.toml"), user_config).unwrap();
    let mut command = Command::cargo_bin("tackle").unwrap();
    command.env("TACKLE_CONFIG_DIR", config_dir).env_remove("TACKLE_TRUST_WORKSPACE");
    command
}

struct Dirs {
    workspace: tempfile::TempDir,
    config: tempfile::TempDir,
}

fn dirs() -> Dirs {
    Dirs { workspace: tempfile::tempdir().unwrap(), config: tempfile::tempdir().unwrap() }
}

fn lines(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout).lines().map(|line| serde_json::from_str(line).unwrap()).collect()
}

#[test]
fn batch_lines_share_one_shell() {
    let d = dirs();
    std::fs::create_dir(d.workspace.path().join("sub")).unwrap();
    let input = [
        json!({"id": "a", "name": "bash", "args": {"command": "cd sub && export COUNT=1 && greet() { echo hi $1; }"}}),
        json!({"id": "b", "name": "Bash", "args": {"command": "COUNT=$((COUNT + 1)); pwd; echo $COUNT; greet you"}}),
        json!({"id": "c", "name": "background_run", "args": {"command": "echo from job $COUNT"}}),
        json!({"id": "d", "name": "job_output", "args": {"job_id": "job-1", "block": true}}),
    ]
    .map(|line| line.to_string())
    .join("\n");
    let out = tackle(d.config.path(), "")
        .args(["tools", "batch", "--workspace"])
        .arg(d.workspace.path())
        .write_stdin(input)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let outputs = lines(&out.stdout);
    let sub = d.workspace.path().canonicalize().unwrap().join("sub");
    assert_eq!(outputs[0]["output"], json!("(no output)"));
    assert_eq!(outputs[1]["tool"], json!("bash"));
    assert_eq!(outputs[1]["output"], json!(format!("{}\n2\nhi you", sub.display())));
    assert_eq!(outputs[1]["structured"]["cwd"], json!(sub.to_str().unwrap()));
    assert!(outputs[2]["output"].as_str().unwrap().starts_with("Started background job job-1: "));
    assert_eq!(outputs[3]["output"], json!("Job job-1 [exited 0]: echo from job $COUNT\nfrom job 2"));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "", "a working sandbox prints no notice");
}

#[test]
fn tools_call_bash_runs_sandboxed() {
    let d = dirs();
    let outside = tempfile::tempdir_in("/var/tmp").unwrap();
    let target = outside.path().join("escaped");
    let args = json!({"command": format!("echo inside > made.txt && echo x > {}", target.display())});
    let out = tackle(d.config.path(), "")
        .args(["tools", "call", "bash", "--json", "--workspace"])
        .arg(d.workspace.path())
        .arg(args.to_string())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let text = result["output"].as_str().unwrap();
    assert!(text.contains("Read-only file system"), "{text}");
    // The hint names the user config Tackle read, the file that can widen the sandbox.
    let hint = format!(
        "[exit code: 1]\n[sandbox: writes outside the workspace are blocked; the user can set [sandbox] \
         extra_writable = [\"DIR\"] in {}]",
        d.config.path().join("config.toml").display()
    );
    assert!(text.ends_with(&hint), "{text}");
    assert!(!target.exists());
    assert_eq!(std::fs::read_to_string(d.workspace.path().join("made.txt")).unwrap(), "inside\n");
}

#[test]
fn no_sandbox_is_announced_once_and_an_unavailable_mode_is_a_usage_error() {
    let d = dirs();
    let input = [
        json!({"name": "bash", "args": {"command": "echo one"}}),
        json!({"name": "bash", "args": {"command": "echo two"}}),
    ]
    .map(|line| line.to_string())
    .join("\n");
    let out = tackle(d.config.path(), "[sandbox]\nmode = \"none\"\n")
        .args(["tools", "batch", "--workspace"])
        .arg(d.workspace.path())
        .write_stdin(input)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(lines(&out.stdout).len(), 2);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "tackle: Commands run without a sandbox: [sandbox] mode is \"none\". Writes outside the workspace and network \
         access are not blocked.\n"
    );

    // A session without the shell tools needs no sandbox and prints nothing.
    let out = tackle(d.config.path(), "[sandbox]\nmode = \"none\"\n")
        .args(["tools", "call", "task_done", "--tools", "task_done", "--workspace"])
        .arg(d.workspace.path())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");

    let out = tackle(d.config.path(), "[sandbox]\nmode = \"bwrap\"\n")
        .env("PATH", "/nonexistent")
        .args(["tools", "call", "bash", "{\"command\": \"true\"}", "--workspace"])
        .arg(d.workspace.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "tackle: [sandbox] mode = \"bwrap\" is not available here: bubblewrap (bwrap) is not installed. Install it, or \
         choose another mode.\n"
    );
}

#[test]
fn tools_call_and_mcp_serve_say_which_sandbox_is_in_force_on_stderr() {
    let d = dirs();
    let call = |user_config: &str, tool: &str, args: &str| {
        let out = tackle(d.config.path(), user_config)
            .args(["tools", "call", tool, args, "--workspace"])
            .arg(d.workspace.path())
            .output()
            .unwrap();
        (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    assert_eq!(
        call("", "bash", "{\"command\": \"echo hi\"}"),
        ("hi\n".to_owned(), "tackle: commands run under bubblewrap (network off)\n".to_owned())
    );
    assert_eq!(
        call("[sandbox]\nmode = \"landlock\"\n", "bash", "{\"command\": \"echo hi\"}").1,
        "tackle: commands run under Landlock, partial (network off; paths in hide stay readable; .git and the settings \
         files stay writable (changes are reported after each command))\n"
    );
    // A session without a shell tool says nothing about a sandbox.
    assert_eq!(call("", "glob", "{\"pattern\": \"*\"}").1, "");

    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let out = tackle(d.config.path(), "")
        .args(["mcp", "serve", "--workspace"])
        .arg(d.workspace.path())
        .write_stdin(format!("{initialize}\n"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stderr), "tackle: commands run under bubblewrap (network off)\n");
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answer["id"], json!(1), "stdout holds only the protocol");
}

#[test]
fn read_only_commands_run_in_plan_mode_and_others_are_refused() {
    let d = dirs();
    let call = |command: &str| {
        tackle(d.config.path(), "")
            .args(["tools", "call", "bash", "--permission-mode", "plan", "--workspace"])
            .arg(d.workspace.path())
            .arg(json!({ "command": command }).to_string())
            .output()
            .unwrap()
    };
    let out = call("echo hi | tr a-z A-Z && git status 2>/dev/null; ls");
    assert_eq!((out.status.code(), String::from_utf8_lossy(&out.stdout).as_ref()), (Some(0), "HI\n"));
    let out = call("echo hi > file.txt");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "tackle: commands run under bubblewrap (network off)\ntackle: bash is not available in plan mode (read-only). \
         Finish the plan and present it; to carry it out, the user leaves plan mode (Shift-Tab or /permissions \
         default in tackle chat, or --permission-mode on the command line).\n"
    );
    assert!(!d.workspace.path().join("file.txt").exists());
}

#[test]
fn sigterm_and_sighup_close_the_session_and_end_its_processes() {
    use std::io::{BufRead as _, Write as _};
    use tackle_sandbox::process::ProcessSessions;

    for (signal, code) in [("TERM", 143), ("HUP", 129)] {
        let d = dirs();
        std::fs::write(d.config.path().join("config.toml"), "[sandbox]\nmode = \"none\"\n").unwrap();
        let mut tackle = std::process::Command::new(env!("CARGO_BIN_EXE_tackle"))
            .env("TACKLE_CONFIG_DIR", d.config.path())
            .args(["tools", "batch", "--workspace"])
            .arg(d.workspace.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let command = "sleep 1000 & setsid sleep 1001 >/dev/null 2>&1 & echo $TACKLE_SESSION_ID";
        let line = json!({"name": "bash", "args": {"command": command}});
        // stdin stays open: the batch is waiting for its next line when the signal comes.
        let mut stdin = tackle.stdin.take().unwrap();
        writeln!(stdin, "{line}").unwrap();
        let mut answer = String::new();
        std::io::BufReader::new(tackle.stdout.take().unwrap()).read_line(&mut answer).unwrap();
        let answer: Value = serde_json::from_str(&answer).unwrap();
        let session = answer["output"].as_str().unwrap().to_owned();
        let sleeps = || {
            let members = ProcessSessions::carrying("TACKLE_SESSION_ID", session.as_ref()).members();
            members
                .iter()
                .filter_map(|p| std::fs::read(format!("/proc/{}/cmdline", p.pid)).ok())
                .filter(|cmdline| cmdline.starts_with(b"sleep\x00100"))
                .count()
        };
        let started = std::time::Instant::now();
        while sleeps() < 2 && started.elapsed() < std::time::Duration::from_secs(5) {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(sleeps(), 2, "{signal}: both sleeps run");

        std::process::Command::new("kill").arg(format!("-{signal}")).arg(tackle.id().to_string()).status().unwrap();
        let status = tackle.wait().unwrap();
        assert_eq!(status.code(), Some(code), "{signal}: {status}");
        assert_eq!(sleeps(), 0, "{signal}: the session's processes are gone");
        drop(stdin);
    }
}

#[test]
fn without_a_sandbox_a_read_only_command_asks_and_with_one_it_runs_restricted() {
    let d = dirs();
    let call = |user_config: &str| {
        tackle(d.config.path(), user_config)
            .args(["tools", "call", "bash", "--permission-mode", "default", "--workspace"])
            .arg(d.workspace.path())
            .arg(json!({ "command": "ls; echo \"tmp=$TMPDIR\"" }).to_string())
            .output()
            .unwrap()
    };
    std::fs::write(d.workspace.path().join("a.txt"), "").unwrap();
    // Nothing could restrict it, so the read-only shortcut is off: it needs approval.
    let out = call("[sandbox]\nmode = \"none\"\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bash needs approval, but this run is non-interactive"), "{stderr}");
    assert!(out.stdout.is_empty());
    for mode in ["bwrap", "landlock"] {
        let out = call(&format!("[sandbox]\nmode = \"{mode}\"\n"));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{mode}: {}", String::from_utf8_lossy(&out.stderr));
        // Its own temporary directory shows it ran under the wrapper.
        assert!(stdout.starts_with("a.txt\ntmp=/tmp/tackle-ro-"), "{mode}: {stdout}");
    }
}
