//! The smaller rough edges of issue 25, point 11, through the real binary: a misspelt tool
//! name, arguments of the wrong shape, a base URL written as the whole endpoint, a server that
//! is not running, `ckg` answers that found nothing or were clipped, and the order of the last
//! lines of an interrupted run.

use std::time::{Duration, Instant};

use serde_json::json;
use tackle_testkit::{FakeLlm, Protocol, Reply, Script, Turn};

use super::{command, on_terminal, run_args, stderr, tackle};

#[test]
fn a_misspelt_tool_gets_one_suggestion_and_bad_arguments_an_example() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hello\n").unwrap();
    let out = command(dir.path()).args(["tools", "call", "read_fil", r#"{"file_path": "a.txt"}"#]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("Tool 'read_fil' not found; did you mean read_file?"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("Available tools"), "{}", stderr(&out));

    let out = command(dir.path()).args(["tools", "call", "read_file", r#"{"path": "a.txt"}"#]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let example = r#"tackle: for example: tackle tools call read_file '{"file_path":"FILE_PATH"}'"#;
    assert!(stderr(&out).contains(example), "{}", stderr(&out));
    // The example is of the right shape: with a real path it runs.
    let out = command(dir.path()).args(["tools", "call", "read_file", r#"{"file_path":"a.txt"}"#]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_base_url_written_as_the_whole_endpoint_is_understood() {
    for (protocol, endpoint) in [(Protocol::OpenAi, "/v1/chat/completions"), (Protocol::Anthropic, "/v1/messages")] {
        let server = FakeLlm::start(Script::new([Turn::reply(Reply::text("hello"))])).await;
        let url = format!("{}{endpoint}", server.anthropic_base_url());
        let workspace = tempfile::tempdir().unwrap();
        let out = tackle(workspace.path(), run_args(&server, protocol, &url, &["--json", "say hello"]), "").await;
        assert_eq!(out.status.code(), Some(0), "{protocol:?} {url}: {}", stderr(&out));
        server.assert_clean();
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_is_not_running_is_retried_twice_and_named() {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let server = FakeLlm::start(Script::new([])).await;
    let workspace = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let out = tackle(workspace.path(), run_args(&server, Protocol::OpenAi, &url, &["hi"]), "").await;
    let took = started.elapsed();
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    // Two retries: about 1 s and 2 s of backoff, not the 16 s of four.
    assert!(took < Duration::from_secs(8), "{took:?}");
    let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), stderr(&out));
    assert!(said.contains(&format!("nothing answers at {url}/chat/completions after 3 attempts")), "{said}");
    assert!(said.contains("Connection refused"), "{said}");
}

#[test]
fn ckg_search_that_finds_nothing_fails_and_counts_are_singular() {
    let dir = tempfile::tempdir().unwrap();
    let calls = "    Foo().bar()\n".repeat(3);
    std::fs::write(
        dir.path().join("m.py"),
        format!("class Foo:\n    def bar(self):\n        return 1\n\ndef use():\n{calls}"),
    )
    .unwrap();
    let ckg = |args: &[&str]| command(dir.path()).arg("ckg").args(args).output().unwrap();
    let out = ckg(&["search", "class", "Foo"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("Found 1 class named Foo:"));
    for args in [&["search", "class", "Nope"][..], &["search", "any", "zzzq"], &["refs", "nope"]] {
        let out = ckg(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", String::from_utf8_lossy(&out.stdout));
    }
    let out = ckg(&["search", "any", "zzzq", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let out = ckg(&["refs", "bar", "--max", "1"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("Found 3 references to bar:"), "{text}");
    assert!(text.trim_end().ends_with("(raise --max, now 1, to see more)"), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_interrupted_run_says_so_before_its_summary_line() {
    let server =
        FakeLlm::start(Script::new([Turn::reply(Reply::text("").call("s1", "bash", json!({"command": "sleep 30"})))]))
            .await;
    let workspace = tempfile::tempdir().unwrap();
    let args = run_args(&server, Protocol::OpenAi, &server.openai_base_url(), &["--yes", "wait"]);
    let path = workspace.path().to_owned();
    let seen = tokio::task::spawn_blocking(move || {
        let mut pty = on_terminal(&path, &args);
        pty.expect("commands run under", 1);
        // The model's reply and the start of the long command.
        std::thread::sleep(Duration::from_millis(2000));
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pty.child.id() as i32), nix::sys::signal::Signal::SIGINT)
            .unwrap();
        assert_eq!(pty.wait(), Some(130), "{}", pty.raw());
        pty.raw()
    })
    .await
    .unwrap();
    let said = seen.rfind("Interrupted by the user.").unwrap_or_else(|| panic!("{seen}"));
    let summary = seen.rfind("✗ interrupted ·").unwrap_or_else(|| panic!("{seen}"));
    assert!(said < summary, "{seen}");
}

#[test]
fn a_count_of_zero_is_refused_in_words() {
    let dir = tempfile::tempdir().unwrap();
    for args in
        [&["mcp", "serve", "--page-size", "0"][..], &["mcp", "serve", "--http", "127.0.0.1:0", "--max-sessions", "x"]]
    {
        let out = command(dir.path()).args(args).stdin(std::process::Stdio::null()).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains("is not a whole number of 1 or more"), "{args:?}: {}", stderr(&out));
        assert!(!stderr(&out).contains("18446744073709551615"), "{}", stderr(&out));
    }
}
