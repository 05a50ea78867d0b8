//! `--container` against the real Podman service (docs/containers.md#tests): a `tackle run`
//! on the fake LLM server whose model edits a file at /testbed inside a container and proves
//! the edit with a command; attaching to a running container; no container left after a
//! normal end, an error, SIGTERM or Ctrl-C during start-up; each bad input refused with what
//! to do next; a container killed mid-session.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::podman;

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use podman::IMAGE;
use serde_json::{Value, json};
use tackle_testkit::{Expect, FakeLlm, Fault, Protocol, Reply, Script, Turn};

fn tackle(socket: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("tackle"));
    command
        .args(args)
        .env("DOCKER_HOST", format!("unix://{}", socket.display()))
        .env("TACKLE_CONFIG_DIR", "/nonexistent-tackle-config")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("TACKLE_MODEL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Waits at most `limit` for `child`; kills it and fails when it hangs.
fn finish(mut child: Child, limit: Duration) -> std::process::Output {
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > limit {
            child.kill().unwrap();
            panic!("tackle did not end within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// Waits until the tackle `pid` has created a container; its id.
fn wait_for_container(socket: &Path, pid: u32, limit: Duration) -> String {
    let start = Instant::now();
    loop {
        if let Some(id) = podman::created_by(socket, pid).into_iter().next() {
            return id;
        }
        assert!(start.elapsed() < limit, "tackle {pid} created no container within {limit:?}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn run_args<'a>(server: &'a str, workspace: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "fix the greeting",
        "--model",
        "openai/fake",
        "--base-url",
        server,
        "--workspace",
        workspace,
        "--container",
        IMAGE,
        "--yes",
        "--json",
    ];
    args.extend_from_slice(extra);
    args
}

#[tokio::test(flavor = "multi_thread")]
async fn run_edits_a_file_inside_the_container_and_leaves_no_container() {
    let Some(socket) = podman::socket() else { return };
    let script = Script::new([
        Turn::reply(Reply::text("Reading.").call("r", "read_file", json!({"file_path": "/testbed/hello.py"}))),
        Turn::reply(Reply::text("Editing.").call(
            "e",
            "edit_file",
            json!({"file_path": "/testbed/hello.py", "old_string": "\"hello\"", "new_string": "\"edited inside\""}),
        ))
        .expect(Expect::result("r", "def greet():")),
        Turn::reply(Reply::text("Checking.").call(
            "b",
            "bash",
            json!({"command": "grep -c 'edited inside' /testbed/hello.py && pwd"}),
        ))
        .expect(Expect::result("e", "hello.py")),
        Turn::reply(Reply::text("Done.").call("d", "task_done", json!({}))).expect(Expect::result("b", "1\n/testbed")),
    ]);
    let server = FakeLlm::start(script).await;
    let workspace = tempfile::tempdir().unwrap();
    let url = server.base_url(Protocol::OpenAi);
    let ws = workspace.path().display().to_string();
    let socket_for = socket.clone();
    let (pid, out) = tokio::task::spawn_blocking(move || {
        let child = tackle(&socket_for, &run_args(&url, &ws, &[])).spawn().unwrap();
        (child.id(), finish(child, Duration::from_secs(60)))
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    server.assert_clean();
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["status"], "success", "{result}");
    // The edit happened in the container: the host has neither the file nor /testbed's.
    assert!(!workspace.path().join("hello.py").exists());
    assert!(
        !Path::new("/testbed/hello.py").exists()
            || !std::fs::read_to_string("/testbed/hello.py").unwrap().contains("edited inside")
    );
    assert!(podman::created_by(&socket, pid).is_empty(), "a container was left after the run");
}

#[tokio::test(flavor = "multi_thread")]
async fn attaching_to_a_running_container_uses_it_and_leaves_it_running() {
    let Some(socket) = podman::socket() else { return };
    let id = podman::start_sleeper(&socket, "tackle-test-attach", "tackle-test-attach");
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().display().to_string();
    let child = tackle(
        &socket,
        &[
            "tools",
            "call",
            "bash",
            r#"{"command":"echo attached > /testbed/mark && cat /testbed/mark && cat /etc/hostname"}"#,
            "--container",
            "tackle-test-attach",
            "--workspace",
            &ws,
        ],
    )
    .spawn()
    .unwrap();
    let out = finish(child, Duration::from_secs(60));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("attached"), "{stdout}");
    assert!(stdout.contains(&id[..12]), "the command ran elsewhere: {stdout}");
    assert!(podman::running(&socket, &id), "the attached container was stopped");
    podman::remove(&socket, &id);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_error_and_sigterm_leave_no_container() {
    let Some(socket) = podman::socket() else { return };
    // The provider refuses the first request: the run ends with an error.
    let server =
        FakeLlm::start(Script::new([Turn::fault(Fault::status(400).body(r#"{"error":{"message":"bad request"}}"#))]))
            .await;
    let workspace = tempfile::tempdir().unwrap();
    let (url, ws) = (server.base_url(Protocol::OpenAi), workspace.path().display().to_string());
    let child = tackle(&socket, &run_args(&url, &ws, &[])).spawn().unwrap();
    let pid = child.id();
    let out = finish(child, Duration::from_secs(60));
    assert_ne!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(podman::created_by(&socket, pid).is_empty(), "a container was left after an error");

    // SIGTERM while a command runs in the container.
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("Waiting.").call("s", "bash", json!({"command": "sleep 30"}))),
        Turn::reply(Reply::text("Done.").call("d", "task_done", json!({}))),
    ]))
    .await;
    let url = server.base_url(Protocol::OpenAi);
    let socket_for = socket.clone();
    let out = tokio::task::spawn_blocking(move || {
        let child = tackle(&socket_for, &run_args(&url, &ws, &[])).spawn().unwrap();
        let pid = child.id();
        wait_for_container(&socket_for, pid, Duration::from_secs(20));
        std::thread::sleep(Duration::from_millis(1500));
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::Signal::SIGTERM).unwrap();
        (pid, finish(child, Duration::from_secs(30)))
    })
    .await
    .unwrap();
    let (pid, out) = out;
    // `run` answers SIGTERM by ending the run as interrupted (not by dying of the signal).
    assert!(out.status.code().is_some_and(|code| code != 0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(podman::created_by(&socket, pid).is_empty(), "a container was left after SIGTERM");
}

#[test]
fn bad_inputs_are_refused_with_what_to_do_next_and_leave_nothing() {
    let Some(socket) = podman::socket() else { return };
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().display().to_string();
    // An image that cannot be had is infrastructure (3: a harness retries it); an image that
    // cannot serve, or a wrong workdir, is the person's to fix (2).
    let cases: [(&str, &[&str], &[&str], i32); 5] = [
        (
            "localhost/tackle-no-such-image:1",
            &[],
            &["localhost/tackle-no-such-image:1", "was not found", "--container"],
            3,
        ),
        ("localhost/tackle-test-nosh:1", &[], &["has no /bin/sh"], 2),
        ("localhost/tackle-test-musl:1", &[], &["C library loader", "--tackle-binary"], 2),
        ("localhost/tackle-test-arm64:1", &[], &["is arm64", "--tackle-binary"], 2),
        (IMAGE, &["--container-workdir", "/no/such/dir"], &["/no/such/dir does not exist", "--container-workdir"], 2),
    ];
    for (image, extra, wanted, code) in cases {
        let mut args =
            vec!["tools", "call", "bash", r#"{"command":"echo hi"}"#, "--workspace", &ws, "--container", image];
        args.extend_from_slice(extra);
        let child = tackle(&socket, &args).spawn().unwrap();
        let pid = child.id();
        let out = finish(child, Duration::from_secs(60));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "{image}: {stderr}");
        for text in wanted {
            assert!(stderr.contains(text), "{image}: wanted '{text}' in: {stderr}");
        }
        assert!(podman::created_by(&socket, pid).is_empty(), "{image}: a container was left");
    }
}

#[test]
fn no_engine_names_the_sockets_tried_and_how_to_start_podman() {
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().display().to_string();
    let missing = workspace.path().join("no-engine.sock");
    let out = tackle(
        &missing,
        &["tools", "call", "bash", r#"{"command":"echo hi"}"#, "--workspace", &ws, "--container", IMAGE],
    )
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // No engine answering is infrastructure: exit 3, worth a retry.
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(&missing.display().to_string()), "{stderr}");
    assert!(stderr.contains("podman system service"), "{stderr}");
}

#[test]
fn a_killed_container_fails_the_call_in_flight_and_the_next_says_it_is_gone() {
    let Some(socket) = podman::socket() else { return };
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().display().to_string();
    let mut child = tackle(&socket, &["tools", "batch", "--workspace", &ws, "--container", IMAGE])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    writeln!(stdin, r#"{{"name":"bash","args":{{"command":"echo ready"}}}}"#).unwrap();
    let first: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert!(first["output"].as_str().unwrap().contains("ready"), "{first}");
    let id = wait_for_container(&socket, pid, Duration::from_secs(5));
    writeln!(stdin, r#"{{"name":"bash","args":{{"command":"sleep 60"}}}}"#).unwrap();
    std::thread::sleep(Duration::from_millis(700));
    let killed_at = Instant::now();
    podman::kill(&socket, &id);
    let in_flight: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert!(killed_at.elapsed() < Duration::from_secs(10), "the call in flight waited {:?}", killed_at.elapsed());
    assert_eq!(in_flight["is_error"], true, "{in_flight}");
    writeln!(stdin, r#"{{"name":"read_file","args":{{"file_path":"/testbed/hello.py"}}}}"#).unwrap();
    let next: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(next["is_error"], true, "{next}");
    assert!(next["output"].as_str().unwrap().contains("is gone"), "{next}");
    drop(stdin);
    let out = finish(child, Duration::from_secs(30));
    assert!(out.status.code().is_some(), "tackle was killed");
    assert!(podman::created_by(&socket, pid).is_empty(), "the dead container was left");
}

#[test]
fn ctrl_c_during_start_up_leaves_nothing_running() {
    let Some(socket) = podman::socket() else { return };
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().display().to_string();
    let child = tackle(
        &socket,
        &["tools", "call", "bash", r#"{"command":"echo hi"}"#, "--workspace", &ws, "--container", IMAGE],
    )
    .spawn()
    .unwrap();
    let pid = child.id();
    // The container exists as soon as it is created, before it starts and before the tool
    // server inside answers: Ctrl-C then is during start-up.
    wait_for_container(&socket, pid, Duration::from_secs(20));
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid as i32), nix::sys::signal::Signal::SIGINT).unwrap();
    let out = finish(child, Duration::from_secs(30));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "the call ran to the end: {stderr}");
    assert!(podman::created_by(&socket, pid).is_empty(), "a container was left after Ctrl-C: {stderr}");
}

#[test]
fn prune_removes_the_containers_of_dead_sessions_only() {
    let Some(socket) = podman::socket() else { return };
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().display().to_string();
    // A kept container stands for a crashed session's leftover (its tackle is gone).
    let out = tackle(
        &socket,
        &[
            "tools",
            "call",
            "bash",
            r#"{"command":"echo kept"}"#,
            "--workspace",
            &ws,
            "--container",
            IMAGE,
            "--keep-container",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let kept = podman::labelled(&socket, "tackle.keep", "true");
    assert!(!kept.is_empty(), "--keep-container kept nothing");
    let sleeper = podman::start_sleeper(&socket, "tackle-test-not-ours", "tackle-test-not-ours");
    let out = tackle(&socket, &["containers", "prune"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        !podman::labelled(&socket, "tackle.keep", "true").is_empty(),
        "prune removed a kept container without --all"
    );
    let out = tackle(&socket, &["containers", "prune", "--all"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("removed"));
    assert!(podman::labelled(&socket, "tackle.keep", "true").is_empty(), "prune --all left a kept container");
    assert!(podman::running(&socket, &sleeper), "prune touched a container Tackle did not create");
    podman::remove(&socket, &sleeper);
}

#[test]
fn prune_leaves_a_container_whose_image_carries_tackles_label() {
    let Some(socket) = podman::socket() else { return };
    // An image built with Tackle's labels hands them to every container made from it.
    let base = podman::start_sleeper(&socket, "tackle-test-label-base", "tackle-test-label-base");
    let changes = "LABEL tackle.created-by=tackle";
    let query = format!(
        "/commit?container={base}&repo=localhost/tackle-test-labelled&tag=1&changes={}",
        changes.replace(' ', "%20").replace('=', "%3D")
    );
    let (status, body) = podman::request(&socket, "POST", &query, Some(&json!({})));
    assert_eq!(status, 201, "{body}");
    podman::remove(&socket, &base);
    let name = "tackle-test-labelled-victim";
    let _ = podman::request(&socket, "DELETE", &format!("/containers/{name}?force=true"), None);
    let create = json!({"Image": "localhost/tackle-test-labelled:1", "Cmd": ["sleep", "600"], "HostConfig": {"NetworkMode": "none"}});
    let (status, created) = podman::request(&socket, "POST", &format!("/containers/create?name={name}"), Some(&create));
    assert_eq!(status, 201, "{created}");
    let victim = serde_json::from_str::<Value>(&created).unwrap()["Id"].as_str().unwrap().to_owned();
    let (status, started) = podman::request(&socket, "POST", &format!("/containers/{victim}/start"), None);
    assert!(status == 204 || status == 304, "{started}");
    assert!(podman::labelled(&socket, "tackle.created-by", "tackle").contains(&victim));
    let out = tackle(&socket, &["containers", "prune", "--all"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let running = podman::running(&socket, &victim);
    podman::remove(&socket, &victim);
    let _ = podman::request(&socket, "DELETE", "/images/localhost/tackle-test-labelled:1?force=true", None);
    assert!(running, "prune removed a container whose label came from its image");
}

#[test]
fn the_workspace_may_name_the_image_but_not_widen_the_container() {
    let Some(socket) = podman::socket() else { return };
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(
        workspace.path().join("tackle.toml"),
        format!(
            "[container]\nimage = \"{IMAGE}\"\nworkdir = \"/testbed\"\nmounts = [\"/etc:/hostetc:ro\"]\nnetwork = \"host\"\nenv = {{ LEAK = \"1\" }}\nbinary = \"/bin/false\"\n"
        ),
    )
    .unwrap();
    let ws = workspace.path().display().to_string();
    let command = r#"{"command":"test -e /hostetc && echo MOUNTED; echo interfaces $(grep -c : /proc/net/dev); echo leak=${LEAK:-none}; cat hello.py"}"#;
    let child =
        tackle(&socket, &["tools", "call", "bash", command, "--workspace", &ws, "--trust-workspace"]).spawn().unwrap();
    let pid = child.id();
    let out = finish(child, Duration::from_secs(60));
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    // The image and workdir counted: the command ran in the container's /testbed.
    assert!(stdout.contains("def greet()"), "{stdout}");
    // Mounts, network, env and binary did not, even with --trust-workspace.
    assert!(!stdout.contains("MOUNTED"), "{stdout}");
    assert!(stdout.contains("interfaces 1"), "the network was not `none`: {stdout}");
    assert!(stdout.contains("leak=none"), "{stdout}");
    for key in ["mounts", "network", "env", "binary"] {
        assert!(stderr.contains(&format!("ignoring [container] {key}")), "no notice for {key}: {stderr}");
    }
    assert!(podman::created_by(&socket, pid).is_empty());
}

#[test]
fn mount_workspace_puts_the_host_checkout_at_the_workdir() {
    let Some(socket) = podman::socket() else { return };
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("notes.txt"), "from the host\n").unwrap();
    let ws = workspace.path().display().to_string();
    let command = r#"{"command":"pwd && cat notes.txt && echo from the container > made.txt"}"#;
    let out = tackle(
        &socket,
        &["tools", "call", "bash", command, "--workspace", &ws, "--container", IMAGE, "--mount-workspace"],
    )
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("/workspace\nfrom the host"), "{stdout}");
    assert_eq!(std::fs::read_to_string(workspace.path().join("made.txt")).unwrap(), "from the container\n");
}

#[test]
fn a_mounted_workspace_keeps_git_and_the_settings_read_only_inside() {
    let Some(socket) = podman::socket() else { return };
    let workspace = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(workspace.path().join(".git/hooks")).unwrap();
    std::fs::write(workspace.path().join("tackle.toml"), "").unwrap();
    std::fs::write(outside.path().join("secret.txt"), "host secret\n").unwrap();
    // A symlink is not bound: inside, it resolves in the container, not to the host's directory.
    std::os::unix::fs::symlink(outside.path(), workspace.path().join(".claude")).unwrap();
    let ws = workspace.path().display().to_string();
    let script = "for f in .git/hooks/pre-commit tackle.toml; do (echo planted > $f) 2>/dev/null && echo wrote $f; done; \
                  cat .claude/secret.txt 2>/dev/null; echo ok > plain.txt; echo done";
    let command = json!({ "command": script }).to_string();
    let out = tackle(
        &socket,
        &["tools", "call", "bash", &command, "--workspace", &ws, "--container", IMAGE, "--mount-workspace"],
    )
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("done"), "{stdout}");
    assert!(!stdout.contains("wrote") && !stdout.contains("host secret"), "{stdout}");
    assert!(!workspace.path().join(".git/hooks/pre-commit").exists());
    assert_eq!(std::fs::read_to_string(workspace.path().join("tackle.toml")).unwrap(), "");
    assert_eq!(std::fs::read_to_string(workspace.path().join("plain.txt")).unwrap(), "ok\n");
}

#[test]
fn mcp_serve_serves_the_containers_tools_and_removes_it_when_the_client_leaves() {
    let Some(socket) = podman::socket() else { return };
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().display().to_string();
    let mut child = tackle(&socket, &["mcp", "serve", "--workspace", &ws, "--container", IMAGE])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(message) = serde_json::from_str(&line) {
                let _ = tx.send(message);
            }
        }
    });
    let answer = |id: u64| loop {
        let message = rx.recv_timeout(Duration::from_secs(30)).expect("mcp serve did not answer");
        if message["id"] == id {
            break message;
        }
    };
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}});
    writeln!(stdin, "{init}").unwrap();
    answer(1);
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "bash", "arguments": {"command": "pwd; cat hello.py"}}});
    writeln!(stdin, "{call}").unwrap();
    let result = answer(2);
    let text = result["result"]["content"][0]["text"].as_str().unwrap_or_default().to_owned();
    assert!(text.contains("/testbed") && text.contains("def greet()"), "{result}");
    assert_eq!(podman::created_by(&socket, pid).len(), 1);
    drop(stdin);
    let out = finish(child, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(podman::created_by(&socket, pid).is_empty(), "the container outlived mcp serve");
}

/// The file tools run inside the container, where the host's path rules cannot see their
/// paths: the host's `Read(...)` and `Edit(...)` deny rules go to the tackle inside.
#[test]
fn the_hosts_path_deny_rules_hold_inside_the_container() {
    let Some(socket) = podman::socket() else { return };
    let workspace = tempfile::tempdir().unwrap();
    let ws = workspace.path().display().to_string();
    let call = |tool: &str, args: &str, rules: &[&str]| {
        let mut argv = vec!["tools", "call", tool, args, "--workspace", &ws, "--container", IMAGE];
        argv.extend_from_slice(rules);
        let out = tackle(&socket, &argv).output().unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        (out.status.code(), text)
    };
    let read = r#"{"file_path":"hello.py"}"#;
    let (code, text) = call("read_file", read, &[]);
    assert_eq!(code, Some(0), "{text}");
    let (code, text) = call("read_file", read, &["--deny", "Read(./hello.py)"]);
    assert_ne!(code, Some(0), "{text}");
    assert!(text.contains("Read(./hello.py)") && !text.contains("print("), "{text}");
    let write = r#"{"file_path":"made.txt","content":"x"}"#;
    let (code, text) = call("write_file", write, &["--deny", "Edit(./made.txt)"]);
    assert_ne!(code, Some(0), "{text}");
    assert!(text.contains("Edit(./made.txt)"), "{text}");
}

/// A workspace's `[container] image` may name an image, never a running container: a cloned
/// repository must not point the tools at a container of this machine.
#[test]
fn the_workspace_cannot_attach_the_tools_to_a_running_container() {
    let Some(socket) = podman::socket() else { return };
    let id = podman::start_sleeper(&socket, "tackle-test-ws-attach", "tackle-test-ws-attach");
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("tackle.toml"), "[container]\nimage = \"tackle-test-ws-attach\"\n").unwrap();
    let ws = workspace.path().display().to_string();
    let command = r#"{"command":"echo reached > /testbed/reached"}"#;
    let out =
        tackle(&socket, &["tools", "call", "bash", command, "--workspace", &ws, "--trust-workspace"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("attaches to a running container only when you name it"), "{stderr}");
    assert!(stderr.contains("--container tackle-test-ws-attach"), "{stderr}");
    // The user naming an image does not let the workspace's image name a container instead.
    let user = tempfile::tempdir().unwrap();
    std::fs::write(user.path().join("config.toml"), format!("[container]\nimage = \"{IMAGE}\"\n")).unwrap();
    let out = tackle(&socket, &["tools", "call", "bash", command, "--workspace", &ws, "--trust-workspace"])
        .env("TACKLE_CONFIG_DIR", user.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("attaches to a running container only when you name it"), "{stderr}");
    // Named on the command line, the same container is attached to.
    let out = tackle(
        &socket,
        &["tools", "call", "bash", command, "--workspace", &ws, "--container", "tackle-test-ws-attach"],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(podman::running(&socket, &id));
    podman::remove(&socket, &id);
}

/// The containers of Tackle sessions (any `tackle.pid` label) that exist now.
fn tackle_containers(socket: &Path) -> Vec<String> {
    let filters = "%7B%22label%22%3A%5B%22tackle.pid%22%5D%7D"; // {"label":["tackle.pid"]}
    let (status, body) = podman::request(socket, "GET", &format!("/containers/json?all=true&filters={filters}"), None);
    assert_eq!(status, 200, "{body}");
    let list: Vec<Value> = serde_json::from_str(&body).unwrap();
    list.iter().filter_map(|c| c["Id"].as_str().map(str::to_owned)).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fleet_runs_each_task_in_a_container_of_its_image_and_leaves_none() {
    let Some(socket) = podman::socket() else { return };
    let before = tackle_containers(&socket);
    let script = Script::new([Turn::reply(
        Reply::text("Looking.").call("b", "bash", json!({"command": "pwd; grep -c greet hello.py"})).call(
            "d",
            "task_done",
            json!({}),
        ),
    )])
    .repeat_last();
    let server = FakeLlm::start(script).await;
    let root = tempfile::tempdir().unwrap();
    let tasks = root.path().join("tasks.jsonl");
    let lines: Vec<String> = ["c1", "c2"]
        .iter()
        .map(|id| json!({"id": id, "task": "look around", "image": IMAGE, "workdir": "/testbed"}).to_string())
        .collect();
    std::fs::write(&tasks, lines.join("\n") + "\n").unwrap();
    let out = root.path().join("out");
    let url = server.base_url(Protocol::OpenAi);
    let (tasks_arg, out_arg) = (tasks.display().to_string(), out.display().to_string());
    let socket_for = socket.clone();
    let ran = tokio::task::spawn_blocking(move || {
        let args = [
            "fleet",
            "run",
            &tasks_arg,
            "--out",
            &out_arg,
            "--workers",
            "2",
            "--model",
            "openai/fake",
            "--base-url",
            &url,
            "--yes",
        ];
        finish(tackle(&socket_for, &args).spawn().unwrap(), Duration::from_secs(120))
    })
    .await
    .unwrap();
    assert_eq!(ran.status.code(), Some(0), "{}", String::from_utf8_lossy(&ran.stderr));
    for id in ["c1", "c2"] {
        let result: Value =
            serde_json::from_str(&std::fs::read_to_string(out.join(id).join("result.json")).unwrap()).unwrap();
        assert_eq!(result["status"], "success", "{id}: {result}");
        let trajectory = std::fs::read_to_string(out.join(id).join("trajectory.jsonl")).unwrap();
        assert!(trajectory.contains("/testbed\\n1"), "{id}: the command ran in the image's /testbed: {trajectory}");
    }
    let after: Vec<String> = tackle_containers(&socket).into_iter().filter(|id| !before.contains(id)).collect();
    assert_eq!(after, Vec::<String>::new(), "the fleet's containers were removed");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_json_diff_of_a_container_run_comes_from_the_containers_repository() {
    let Some(socket) = podman::socket() else { return };
    let script = Script::new([
        Turn::reply(Reply::text("Reading.").call("r", "read_file", json!({"file_path": "/testbed/hello.py"}))),
        Turn::reply(
            Reply::text("Editing.")
                .call(
                    "e",
                    "edit_file",
                    json!({"file_path": "/testbed/hello.py", "old_string": "\"hello\"", "new_string": "\"edited inside\""}),
                )
                .call("w", "write_file", json!({"file_path": "/testbed/NEW.md", "content": "# new\n"})),
        ),
        Turn::reply(Reply::text("Done.").call("d", "task_done", json!({}))),
    ]);
    let server = FakeLlm::start(script).await;
    let workspace = tempfile::tempdir().unwrap();
    let url = server.base_url(Protocol::OpenAi);
    let ws = workspace.path().display().to_string();
    let socket_for = socket.clone();
    let out = tokio::task::spawn_blocking(move || {
        let mut args = run_args(&url, &ws, &["--setup", "echo 'set up' > setup.txt"]);
        let image = args.iter().position(|a| *a == IMAGE).unwrap();
        args[image] = "localhost/tackle-test-git:1";
        finish(tackle(&socket_for, &args).spawn().unwrap(), Duration::from_secs(90))
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let diff = result["diff"].as_str().unwrap();
    assert!(diff.contains("-    return \"hello\"\n+    return \"edited inside\"\n"), "{diff}\n{stderr}");
    assert!(diff.contains("+++ b/NEW.md") && diff.contains("+# new"), "{diff}");
    // The set-up ran before the baseline: its file is not the run's change.
    assert!(!diff.contains("setup.txt"), "{diff}");
}
