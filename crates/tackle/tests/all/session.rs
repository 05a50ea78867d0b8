//! The front door as an embedder uses it: a typed tool and the built-ins in one turn, the
//! builder's errors, one close for everything a session owns, `[tools] timeout_ms`, child
//! sessions through the factory, and an agent against the scripted fake LLM server.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle::{
    Agent, BuildError, Config, McpImport, PermissionMode, SessionBuilder, Tool, ToolCall, ToolContext, ToolError,
    ToolOutput, ToolSpec,
};
use tackle_core::factory::{ChildRequest, Factory};
use tackle_testkit::{Expect, FakeLlm, Reply, Script, Turn};

/// The input of `echo_upper`.
#[derive(Deserialize, JsonSchema)]
struct EchoInput {
    /// The text to repeat.
    text: String,
    /// Milliseconds to wait first.
    #[serde(default)]
    wait_ms: u64,
}

struct EchoUpper;

impl Tool for EchoUpper {
    type Input = EchoInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("echo_upper", "Repeats the text in capitals.").read_only().concurrency_safe()
    }

    async fn call(&self, input: EchoInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(input.wait_ms)) => Ok(ToolOutput::text(input.text.to_uppercase())),
            () = ctx.cancel_token().cancelled() => Err(ToolError::Cancelled("stopped".into())),
        }
    }
}

fn table(text: &str) -> toml::Table {
    text.parse().unwrap()
}

/// A workspace with a README, and a configuration that reads no file of the machine.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README.md"), "hello tackle\nsecond line\n").unwrap();
    dir
}

fn builder(dir: &Path) -> SessionBuilder {
    SessionBuilder::new(dir).config(Config::default())
}

#[tokio::test]
async fn a_typed_tool_and_read_file_run_in_one_turn() {
    let dir = workspace();
    let session = builder(dir.path()).tools("read_file").tool(EchoUpper).build().await.unwrap();
    let names: Vec<&str> = session.session().tools().specs().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["read_file", "echo_upper"]);
    let outputs = session
        .run_turn(vec![
            ToolCall::new("a", "echo_upper", json!({"text": "hi"})),
            ToolCall::new("b", "read_file", json!({"file_path": "README.md"})),
            ToolCall::new("c", "no_such_tool", json!({})),
        ])
        .await;
    let ids: Vec<&str> = outputs.iter().map(|o| o.call_id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "c"]);
    assert_eq!(outputs[0].text_content(), "HI");
    assert!(outputs[1].text_content().contains("hello tackle"), "{}", outputs[1].text_content());
    assert!(outputs[2].is_error && outputs[2].text_content().contains("echo_upper"));
    let single = session.call("echo_upper", json!({"text": "x"})).await;
    assert_eq!((single.is_error, single.text_content()), (false, "X".to_owned()));
    session.close().await;
}

#[tokio::test]
async fn build_errors_name_their_cause() {
    let missing = SessionBuilder::new("/nonexistent/tackle-workspace").config(Config::default()).build().await;
    let err = missing.unwrap_err();
    assert!(matches!(err, BuildError::Workspace { .. }), "{err}");
    assert!(err.to_string().contains("/nonexistent/tackle-workspace"), "{err}");

    let dir = workspace();
    let err = builder(dir.path()).tools("read_file,no_such_tool").build().await.unwrap_err().to_string();
    assert!(err.contains("unknown tool or toolset 'no_such_tool'"), "{err}");

    // A misspelt key or a wrong type names the file, the section and the key (a misspelt
    // number in the workspace has no row in the table of numbers a workspace may lower, so
    // it is dropped with a notice instead: docs/configuration.md).
    let config = Config::from_tables(toml::Table::new(), table("[tools]\ntimout_ms = \"5\""), false);
    let err = SessionBuilder::new(dir.path()).config(config).build().await.unwrap_err().to_string();
    assert!(err.contains("[tools] in tackle.toml") && err.contains("timout_ms"), "{err}");
    let config = Config::from_tables(toml::Table::new(), table("[tools]\ntimout_ms = 5"), false);
    assert!(config.notices().iter().any(|n| n.contains("[tools] timout_ms")), "{:?}", config.notices());
    let config = Config::from_tables(table("[tools]\ntimeout_ms = \"soon\""), toml::Table::new(), false);
    let err = SessionBuilder::new(dir.path()).config(config).build().await.unwrap_err().to_string();
    assert!(err.contains("[tools] in the user config") && err.contains("invalid type"), "{err}");
    let config = Config::from_tables(table("[mcp]\ndefer_treshold = 3"), toml::Table::new(), false);
    let err = builder(dir.path()).config(config).mcp(McpImport::User).build().await.unwrap_err().to_string();
    assert!(err.contains("[mcp]") && err.contains("defer_treshold"), "{err}");

    let err = builder(dir.path()).tool(EchoUpper).tool(EchoUpper).build().await.unwrap_err().to_string();
    assert_eq!(err, "cannot add the tool 'echo_upper': a tool of that name already exists");
}

#[tokio::test]
async fn the_executor_deadline_comes_from_tools_timeout_ms() {
    let dir = workspace();
    let config = Config::from_tables(table("[tools]\ntimeout_ms = 300"), toml::Table::new(), false);
    let session =
        SessionBuilder::new(dir.path()).config(config).tools("read_file").tool(EchoUpper).build().await.unwrap();
    let slow = session.call("echo_upper", json!({"text": "x", "wait_ms": 30_000})).await;
    assert!(slow.is_error, "{}", slow.text_content());
    assert!(
        slow.text_content().starts_with("Tool 'echo_upper' timed out and was aborted after 0."),
        "{}",
        slow.text_content()
    );
    assert!(slow.meta.duration_ms.unwrap() < 5_000, "the deadline was the default, not [tools] timeout_ms");
    session.close().await;
}

/// The processes (by host pid) whose environment carries this session id: the shell, its
/// children and the jobs, whatever sandbox and pid namespace they run in.
pub(crate) fn processes_of(session_id: &str) -> Vec<u32> {
    let needle = format!("TACKLE_SESSION_ID={session_id}");
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok()) else { continue };
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')));
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        if !zombie && environ.split(|b| *b == 0).any(|var| var == needle.as_bytes()) {
            pids.push(pid);
        }
    }
    pids
}

#[tokio::test]
async fn close_ends_shells_and_jobs_once() {
    let dir = workspace();
    let session =
        builder(dir.path()).tools("bash,background_run").permission_mode(PermissionMode::Bypass).build().await;
    let session = session.unwrap();
    let id = session.session().id().to_owned();
    let shell = session.call("bash", json!({"command": "echo started"})).await;
    assert!(!shell.is_error, "{}", shell.text_content());
    let job = session.call("background_run", json!({"command": "exec sleep 300"})).await;
    assert!(!job.is_error, "{}", job.text_content());
    assert!(processes_of(&id).len() >= 2, "the shell and the job run: {:?}", processes_of(&id));
    let state = Arc::clone(session.session().state());
    session.close().await;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !processes_of(&id).is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(processes_of(&id), Vec::<u32>::new(), "processes outlived the session");
    drop(state);
}

#[tokio::test]
async fn child_sessions_never_gain_a_tool() {
    let dir = workspace();
    let session = builder(dir.path()).tools("read_file,glob,grep").build().await.unwrap();
    let factory = session.session().state().existing::<Factory>().expect("the session carries its factory");
    let request = |tools: &str| ChildRequest { tools: Some(tools.into()), ..ChildRequest::default() };
    let child = factory.0.child(request("read_file,bash")).await.unwrap();
    let names: Vec<&str> = child.session.tools().specs().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["read_file"], "bash is not the parent's, so the child does not get it");
    let all = factory.0.child(ChildRequest::default()).await.unwrap();
    assert_eq!(all.session.tools().len(), 3);
    assert_ne!(all.session.id(), session.session().id());
    let none = factory.0.child(request("bash")).await.unwrap_err();
    assert!(matches!(none, tackle_core::ChildError::NoTools), "{none:?}");
    assert!(none.to_string().contains("none of the parent's tools"), "{none}");
    // A child's child asks within the child's tools, not the template's.
    let within = ChildRequest { within: Some(vec!["glob".into()]), ..ChildRequest::default() };
    let grandchild = factory.0.child(within).await.unwrap();
    let names: Vec<&str> = grandchild.session.tools().specs().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["glob"]);
    child.session.close().await;
    all.session.close().await;
    grandchild.session.close().await;
    session.close().await;
}

#[tokio::test]
async fn a_child_mode_is_narrowed_never_widened() {
    use tackle::permission::{Decision, PermissionRequest};
    let dir = workspace();
    let session = builder(dir.path()).tools("write_file").build().await.unwrap();
    let factory = session.session().state().existing::<Factory>().unwrap();
    let spec = ToolSpec::new("write_file", "").edits_files();
    let args = json!({"file_path": "a.txt", "content": "x"});
    let write = PermissionRequest::new("c", &spec, &args);
    let decide = |mode: PermissionMode| {
        let factory = Arc::clone(&factory.0);
        async move {
            let child = factory.child(ChildRequest { mode: Some(mode), ..ChildRequest::default() }).await.unwrap();
            child.session.close().await;
            child.executor
        }
    };
    // The template's mode is `default`: bypass asked for is not granted, plan is.
    let wider = decide(PermissionMode::Bypass).await;
    assert!(matches!(wider.policy().decide(&write), Decision::Ask { .. }));
    let narrower = decide(PermissionMode::Plan).await;
    assert!(matches!(narrower.policy().decide(&write), Decision::Deny { .. }));
    session.close().await;
}

#[tokio::test]
async fn notices_go_to_the_callback_never_to_stdout() {
    let dir = workspace();
    std::fs::write(dir.path().join("tackle.toml"), "[sandbox]\nnetwork = true\n").unwrap();
    let heard = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = Arc::clone(&heard);
    let config = Config::load(dir.path(), false).unwrap();
    let session = SessionBuilder::new(dir.path())
        .config(config)
        .tools("bash")
        .on_notice(move |line| sink.lock().unwrap().push(line.to_owned()))
        .build()
        .await
        .unwrap();
    session.close().await;
    let heard = heard.lock().unwrap();
    assert!(heard.iter().any(|line| line.contains("network")), "{heard:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_runs_on_an_openai_compatible_server() {
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("Reading.").call("c1", "read_file", json!({"file_path": "README.md"}))),
        Turn::reply(Reply::text("It says hello.").call("c2", "task_done", json!({})))
            .expect(Expect::result("c1", "hello tackle")),
    ]))
    .await;
    let dir = workspace();
    let model = tackle::llm::from_model_string("openai/fake", Some(&server.openai_base_url())).unwrap();
    let session = builder(dir.path()).build().await.unwrap();
    let trajectory = dir.path().join("run.jsonl");
    let mut agent = Agent::builder(model, session).max_steps(5).trajectory(&trajectory).build().unwrap();
    let outcome = agent.run("What does the README say?").await;
    agent.close().await;
    server.assert_clean();
    assert_eq!((outcome.status.name(), outcome.steps), ("success", 2));
    let recorded = std::fs::read_to_string(&trajectory).unwrap();
    assert!(recorded.contains("\"session_end\""), "{recorded}");
}

/// The pids whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok()) else { continue };
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if cmdline.split(|b| *b == 0).any(|arg| arg == marker.as_bytes()) {
            pids.push(pid);
        }
    }
    pids
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mcp_server_that_cannot_start_fails_the_build_and_stops_the_others() {
    let dir = workspace();
    let record = dir.path().join("good-server.jsonl").display().to_string();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tackle-mcp/tests/peers/fake_server.py");
    let user = format!(
        "[mcp.servers.good]\ncommand = \"python3\"\nargs = [\"-u\", {script:?}, \"--record\", {record:?}]\n\
         [mcp.servers.broken]\ncommand = \"/nonexistent/mcp-server\"\n",
        script = script.display().to_string(),
    );
    let config = || Config::from_tables(table(&user), toml::Table::new(), false);
    let err = SessionBuilder::new(dir.path()).config(config()).mcp(tackle::McpImport::User).build().await.unwrap_err();
    assert!(matches!(&err, BuildError::Mcp { server, .. } if server == "broken"), "{err}");
    assert!(err.to_string().starts_with("MCP server 'broken' could not start: "), "{err}");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !processes_with(&record).is_empty() && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(processes_with(&record), Vec::<u32>::new(), "the server that started was left running");
    assert!(std::path::Path::new(&record).exists(), "the good server did start (and record its messages)");

    // Left out with a notice instead, as the command line does.
    let heard = Arc::new(Mutex::new(Vec::<String>::new()));
    let sink = Arc::clone(&heard);
    let session = SessionBuilder::new(dir.path())
        .config(config())
        .mcp(tackle::McpImport::User)
        .mcp_required(false)
        .tools("mcp")
        .on_notice(move |line| sink.lock().unwrap().push(line.to_owned()))
        .build()
        .await
        .unwrap();
    assert!(session.session().tools().resolve("mcp__good__echo").is_some());
    assert!(heard.lock().unwrap().iter().any(|line| line.starts_with("MCP server 'broken' was left out")));
    session.close().await;
    assert_eq!(processes_with(&record), Vec::<u32>::new(), "close shut the server down");
}

/// Loads the configuration of `workspace` with the user config directory `user_dir`.
fn load_config(workspace: &Path, user_dir: &Path) -> Result<(), String> {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "session::load_config_in_a_child", "--ignored", "--nocapture"])
        .env("TACKLE_CONFIG_DIR", user_dir)
        .env("LOAD_CONFIG_WORKSPACE", workspace)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    match stdout.lines().find_map(|line| line.strip_prefix("load error: ")) {
        Some(err) => Err(err.to_owned()),
        None => Ok(()),
    }
}

/// Runs in a child process of [`load_config`] (the user config dir comes from the environment);
/// ignored, so a suite never counts it as a test that passed by doing nothing.
#[test]
#[ignore = "a helper: load_config runs it in a child process"]
fn load_config_in_a_child() {
    let workspace =
        std::env::var_os("LOAD_CONFIG_WORKSPACE").expect("run by load_config, which sets LOAD_CONFIG_WORKSPACE");
    if let Err(err) = Config::load(Path::new(&workspace), false) {
        println!("load error: {err}");
    }
}

#[test]
fn an_unknown_section_in_either_file_is_an_error_naming_the_file() {
    let dir = workspace();
    let user = tempfile::tempdir().unwrap();
    assert!(load_config(dir.path(), user.path()).is_ok());
    std::fs::write(user.path().join("config.toml"), "[sandbx]\nmode = \"none\"\n").unwrap();
    let err = load_config(dir.path(), user.path()).unwrap_err();
    assert!(err.contains("config.toml has an unknown section or key `sandbx`") && err.contains("`sandbox`"), "{err}");
    std::fs::remove_file(user.path().join("config.toml")).unwrap();
    std::fs::write(dir.path().join("tackle.toml"), "[tool]\ntimeout_ms = 5\n").unwrap();
    let err = load_config(dir.path(), user.path()).unwrap_err();
    assert!(err.contains("tackle.toml has an unknown section or key `tool`"), "{err}");
}
