//! Delegation end to end (docs/subagents.md): a parent agent against the scripted fake LLM
//! server hands tasks to children of each built-in type and of a `.claude/agents/` definition,
//! and the request bodies show what each child got (its own system prompt, only its allowed
//! tools, an empty history). Also: the depth limit, a background child notifying its parent,
//! two explore children at once, a looping child, a failing provider, a tool a child may not
//! have, hooks seeing the child's calls, and the shared trajectory.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support::delegation;

use std::path::Path;
use std::sync::{Arc, Mutex};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tackle::BoxFuture;
use tackle::permission::AutoApprover;
use tackle::{Agent, Config, PermissionMode, SessionBuilder};
use tackle_core::hooks::{HookCall, PreHookOutcome, ToolHook};
use tackle_testkit::{Expect, FakeLlm, Fault, Reply, Script, Turn, View};

use delegation::{config_with_child_provider, session_denying, workspace};

/// What one parent run left behind.
struct Run {
    outcome: tackle::RunOutcome,
    trajectory: Vec<Value>,
}

/// Runs `task` as a parent agent against `server` in `dir`, with the tools `tools`, mode
/// `mode`, the approver allowing what would ask, and `hook` around every call.
async fn run_parent(
    server: &FakeLlm,
    dir: &Path,
    config: Config,
    tools: &str,
    mode: PermissionMode,
    hook: Option<Arc<dyn ToolHook>>,
    task: &str,
) -> Run {
    let model = tackle::llm::from_model_string("openai/parent", Some(&server.openai_base_url())).unwrap();
    let mut builder =
        SessionBuilder::new(dir).config(config).tools(tools).permission_mode(mode).approver(Arc::new(AutoApprover));
    if let Some(hook) = hook {
        builder = builder.hook(hook);
    }
    let session = builder.build().await.unwrap();
    let path = dir.join("run.jsonl");
    let mut agent = Agent::builder(model, session).max_steps(8).trajectory(&path).build().unwrap();
    let outcome = agent.run(task).await;
    agent.close().await;
    let text = std::fs::read_to_string(&path).unwrap();
    tackle::trajectory::check(text.as_bytes()).unwrap();
    let trajectory = text.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    Run { outcome, trajectory }
}

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort();
    names
}

/// The last tool result the request at `index` carries.
fn last_result(view: &View) -> String {
    view.messages.iter().rev().find_map(|m| m.results.last().map(|(_, text)| text.clone())).unwrap_or_default()
}

/// The `session_start` of `agent` in a trajectory.
fn session_start<'a>(trajectory: &'a [Value], agent: &str) -> &'a Value {
    trajectory
        .iter()
        .find(|e| e["type"] == "session_start" && e["agent_id"] == agent)
        .unwrap_or_else(|| panic!("no session_start of {agent}"))
}

/// The parent's read-only tools (todo_write changes only the session's own list).
const READ_ONLY_TOOLS: [&str; 8] =
    ["glob", "grep", "job_output", "load_skill", "read_file", "task_done", "todo_read", "todo_write"];

#[tokio::test]
async fn each_built_in_type_gets_its_own_prompt_and_only_its_tools() {
    let cases = [
        ("explore", "exploration agent", true),
        ("plan", "planning agent", true),
        ("code-review", "code-review agent", true),
        ("general-purpose", "general-purpose agent", false),
    ];
    for (kind, role, read_only) in cases {
        let server = FakeLlm::start(Script::new([
            Turn::reply(Reply::text("Delegating.").call(
                "p1",
                "subagent",
                json!({"prompt": "What does README.md say?", "subagent_type": kind, "description": "read the readme"}),
            )),
            Turn::reply(Reply::text("").call("r1", "read_file", json!({"file_path": "README.md"}))),
            Turn::reply(Reply::text("The README says hello tackle.")).expect(Expect::result("r1", "hello tackle")),
            Turn::reply(Reply::text("Done: it says hello.")),
        ]))
        .await;
        let dir = workspace();
        let run =
            run_parent(&server, dir.path(), Config::default(), "default", PermissionMode::Bypass, None, "go").await;
        server.assert_clean();
        assert_eq!(run.outcome.status.name(), "success", "{kind}: {}", run.outcome.final_result);
        let requests = server.requests();
        assert_eq!(requests.len(), 4, "{kind}");
        let parent = requests[0].view();
        let child = requests[1].view();
        // Its own system prompt, not the parent's; an empty history with the prompt alone.
        assert!(child.system.contains(role), "{kind}: {}", child.system);
        assert!(!child.system.contains("You are Tackle"), "{kind}");
        assert!(parent.system.contains("You are Tackle"));
        assert_eq!(child.messages.len(), 1, "{kind}");
        assert_eq!(
            (child.messages[0].role.as_str(), child.messages[0].text.as_str()),
            ("user", "What does README.md say?")
        );
        if read_only {
            assert_eq!(sorted(child.tools.clone()), READ_ONLY_TOOLS, "{kind}");
        } else {
            // The parent's tools, less `tool_search`: its only deferred tools are the team
            // tools, which no child holds.
            let expected: Vec<String> = parent.tools.iter().filter(|t| *t != "tool_search").cloned().collect();
            assert!(parent.tools.iter().any(|t| t == "tool_search"));
            assert_eq!(sorted(child.tools.clone()), sorted(expected), "{kind}");
            assert!(child.tools.iter().any(|t| t == "write_file"));
        }
        let result = last_result(&requests[3].view());
        assert!(
            result.starts_with("The README says hello tackle.\n[subagent agent-1: 2 turns, 1 tool calls, "),
            "{result}"
        );
        let start = session_start(&run.trajectory, "agent-1");
        let mode = if read_only { "plan" } else { "bypass" };
        assert_eq!(start["permission_mode"], mode, "{kind}");
        // The child's own calls are in the parent's trajectory, under its id.
        assert!(run.trajectory.iter().any(|e| e["type"] == "tool_call" && e["agent_id"] == "agent-1"));
    }
}

/// Records the session and tool of every call a hook sees.
#[derive(Default)]
struct Seen(Mutex<Vec<(String, String)>>);

impl ToolHook for Seen {
    fn before_call<'a>(&'a self, call: &'a HookCall<'a>) -> BoxFuture<'a, PreHookOutcome> {
        self.0.lock().unwrap().push((call.session.id.clone(), call.spec.name.clone()));
        Box::pin(async { PreHookOutcome::Continue })
    }
}

#[tokio::test]
async fn a_claude_agents_definition_narrows_tools_and_never_widens_the_mode() {
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call("p1", "Task", json!({"task": "Say hi.", "agent_type": "greeter"}))),
        Turn::reply(Reply::text("").call("g1", "read_file", json!({"file_path": "README.md"}))),
        Turn::reply(Reply::text("hi from the greeter")),
        Turn::reply(Reply::text("All done.")),
    ]))
    .await;
    let dir = workspace();
    let agents = dir.path().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("greeter.md"),
        "---\nname: greeter\ndescription: Greets people\ntools: read_file, grep, bash, write_file\n\
         disallowedTools: [grep]\npermissionMode: bypassPermissions\nmaxTurns: 5\n---\n\nYou are the greeter. Greet.\n",
    )
    .unwrap();
    let seen = Arc::new(Seen::default());
    // The parent has no bash: the definition cannot give it to the child.
    let run = run_parent(
        &server,
        dir.path(),
        Config::default(),
        "read_file,grep,glob,write_file,subagent",
        PermissionMode::Default,
        Some(Arc::clone(&seen) as Arc<dyn ToolHook>),
        "greet",
    )
    .await;
    server.assert_clean();
    assert_eq!(run.outcome.status.name(), "success", "{}", run.outcome.final_result);
    let child = server.requests()[1].view();
    assert_eq!(sorted(child.tools.clone()), ["read_file", "write_file"]);
    assert!(child.system.starts_with("You are the greeter. Greet."), "{}", child.system);
    assert_eq!(child.messages.len(), 1);
    // bypassPermissions asked for, the parent's default kept.
    assert_eq!(session_start(&run.trajectory, "agent-1")["permission_mode"], "default");
    // The hooks saw the parent's call and the child's, in two sessions.
    let seen = seen.0.lock().unwrap().clone();
    let tools: Vec<&str> = seen.iter().map(|(_, tool)| tool.as_str()).collect();
    assert_eq!(tools, ["subagent", "read_file"]);
    assert_ne!(seen[0].0, seen[1].0);
}

#[tokio::test]
async fn depth_four_is_refused_and_every_level_reports_back() {
    let nest = |id: &str| {
        Turn::reply(Reply::text("").call(
            id,
            "subagent",
            json!({"prompt": "go deeper", "subagent_type": "general-purpose"}),
        ))
    };
    let server = FakeLlm::start(Script::new([
        nest("a"), // main → agent-1 (depth 1)
        nest("b"), // agent-1 → agent-2 (depth 2)
        nest("c"), // agent-2 → agent-3 (depth 3)
        nest("d"), // agent-3 → refused
        Turn::reply(Reply::text("cannot go deeper"))
            .expect(Expect::result("d", "Subagent refused: recursion depth 4 exceeds limit 3.")),
        Turn::reply(Reply::text("level 2 done")).expect(Expect::result("c", "cannot go deeper")),
        Turn::reply(Reply::text("level 1 done")).expect(Expect::result("b", "level 2 done")),
        Turn::reply(Reply::text("main done")).expect(Expect::result("a", "level 1 done")),
    ]))
    .await;
    let dir = workspace();
    let run = run_parent(&server, dir.path(), Config::default(), "default", PermissionMode::Bypass, None, "nest").await;
    server.assert_clean();
    assert_eq!(run.outcome.final_result, "main done");
    for agent in ["agent-1", "agent-2", "agent-3"] {
        session_start(&run.trajectory, agent);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_background_child_notifies_its_parent_and_job_output_finds_it() {
    // The child asks its own server (a definition's `model: child/...`), so the two scripts
    // cannot interleave.
    let child_server = FakeLlm::start(Script::new([Turn::reply(Reply::text("background answer: 42"))
        .with_fault(Fault { delay_first_byte_ms: Some(200), ..Fault::default() })]))
    .await;
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call(
            "p1",
            "subagent",
            json!({"prompt": "compute", "subagent_type": "worker", "description": "compute it", "run_in_background": true}),
        )),
        Turn::reply(Reply::text("").call("p2", "job_output", json!({"job_id": "agent-1", "block": true, "timeout": 10000})))
            .expect(Expect::result(
                "p1",
                "Subagent agent-1 started in the background; its result will arrive as a notification (job_output agent-1 to check).",
            )),
        Turn::reply(Reply::text("The child said 42.")).expect(Expect::result("p2", "Job agent-1 [done]: worker: compute it\nbackground answer: 42")),
    ]))
    .await;
    let dir = workspace();
    let agents = dir.path().join(".tackle/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("worker.md"),
        "---\nname: worker\ndescription: Works\nmodel: child/worker-model\n---\nWork.\n",
    )
    .unwrap();
    let config = config_with_child_provider(&child_server.openai_base_url(), true);
    let run = run_parent(&server, dir.path(), config, "default", PermissionMode::Bypass, None, "bg").await;
    server.assert_clean();
    child_server.assert_clean();
    assert_eq!(run.outcome.final_result, "The child said 42.");
    assert_eq!(child_server.requests()[0].body["model"], "worker-model");
    // The notification reached the parent's third request.
    let third = server.requests()[2].view();
    let last = &third.messages.last().unwrap().text;
    assert!(
        last.contains("<notifications>\nBackground subagent agent-1 (worker: compute it) finished: done."),
        "{last}"
    );
    assert!(last.contains("background answer: 42"), "{last}");
}

#[tokio::test(flavor = "multi_thread")]
async fn two_explore_children_run_at_once() {
    let slow = || Fault { delay_first_byte_ms: Some(300), ..Fault::default() };
    let explore = |id: &str, prompt: &str| (id.to_owned(), json!({"prompt": prompt, "subagent_type": "explore"}));
    let (a, b) = (explore("p1", "find A"), explore("p2", "find B"));
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call(a.0, "subagent", a.1).call(b.0, "subagent", b.1)),
        // Both children's first requests arrive before either is answered.
        Turn::reply(Reply::text("").call("r1", "read_file", json!({"file_path": "README.md"}))).with_fault(slow()),
        Turn::reply(Reply::text("").call("r2", "read_file", json!({"file_path": "README.md"}))).with_fault(slow()),
        Turn::reply(Reply::text("first child answer")),
        Turn::reply(Reply::text("second child answer")),
        Turn::reply(Reply::text("both answered")),
    ]))
    .await;
    let dir = workspace();
    let run = run_parent(&server, dir.path(), Config::default(), "default", PermissionMode::Default, None, "two").await;
    server.assert_clean();
    assert_eq!(run.outcome.final_result, "both answered");
    let requests = server.requests();
    let first_requests: Vec<usize> = requests.iter().map(|r| r.view().messages.len()).collect();
    // Concurrent: the two one-message first requests come before any second request.
    assert_eq!(first_requests, [1, 1, 1, 3, 3, 3]);
    let last = requests[5].view();
    let results: Vec<String> = last.messages.last().unwrap().results.iter().map(|(_, t)| t.clone()).collect();
    assert_eq!(results.len(), 2);
    assert!(results.iter().any(|r| r.starts_with("first child answer")), "{results:?}");
    assert!(results.iter().any(|r| r.starts_with("second child answer")), "{results:?}");
}

#[tokio::test]
async fn a_looping_child_stops_at_its_turn_limit_with_an_error_result() {
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call("p1", "subagent", json!({"prompt": "loop", "subagent_type": "looper"}))),
        Turn::reply(Reply::text("still looking").call("l1", "read_file", json!({"file_path": "README.md"}))),
        Turn::reply(Reply::text("looking more").call("l2", "read_file", json!({"file_path": "README.md"}))),
        Turn::reply(Reply::text("The child looped.")).expect(Expect::result(
            "p1",
            "Subagent agent-1 stopped after 2 turns without a final answer. Last message:\nlooking more",
        )),
    ]))
    .await;
    let dir = workspace();
    let agents = dir.path().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(agents.join("looper.md"), "---\nname: looper\ndescription: Loops\nmaxTurns: 2\n---\nLoop.\n")
        .unwrap();
    let run = run_parent(&server, dir.path(), Config::default(), "default", PermissionMode::Bypass, None, "loop").await;
    server.assert_clean();
    assert_eq!(run.outcome.final_result, "The child looped.");
    let parent_last = server.requests()[3].view();
    let result = parent_last.messages.last().unwrap();
    assert_eq!(result.results.len(), 1);
}

#[tokio::test]
async fn a_failing_provider_is_the_childs_error_result_and_an_unknown_type_lists_the_types() {
    let child_server =
        FakeLlm::start(Script::new([Turn::fault(Fault { status: Some(400), ..Fault::default() })])).await;
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call("p1", "subagent", json!({"prompt": "x", "subagent_type": "nosuch"}))),
        Turn::reply(Reply::text("").call("p2", "subagent", json!({"prompt": "x", "subagent_type": "remote"}))).expect(
            Expect::result(
                "p1",
                "Unknown subagent type: nosuch. Available: general-purpose, explore, plan, code-review, remote",
            ),
        ),
        Turn::reply(Reply::text("Both failed.")).expect(Expect::result("p2", "Subagent agent-1 failed (")),
    ]))
    .await;
    let dir = workspace();
    let agents = dir.path().join(".tackle/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(agents.join("remote.md"), "---\nname: remote\ndescription: Remote\nmodel: child/m\n---\nR.\n")
        .unwrap();
    std::fs::write(agents.join("broken.md"), "---\nname: [\n---\nBroken.\n").unwrap();
    let config = config_with_child_provider(&child_server.openai_base_url(), true);
    let run = run_parent(&server, dir.path(), config, "default", PermissionMode::Bypass, None, "fail").await;
    server.assert_clean();
    assert_eq!(run.outcome.final_result, "Both failed.");
    let outputs: Vec<&Value> =
        run.trajectory.iter().filter(|e| e["type"] == "tool_output" && e["agent_id"] == "main").collect();
    assert_eq!(outputs.len(), 2);
    assert!(outputs.iter().all(|o| o["is_error"] == true), "{outputs:?}");
    let definitions = tackle_agent::subagent::definitions(dir.path(), &Default::default(), &Default::default());
    assert_eq!(definitions.warnings.len(), 1, "{:?}", definitions.warnings);
    assert!(definitions.warnings[0].contains("broken.md: bad YAML frontmatter"), "{:?}", definitions.warnings);
}

#[tokio::test]
async fn a_tool_the_child_may_not_have_is_refused_inside_it() {
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call("p1", "subagent", json!({"prompt": "write x", "subagent_type": "explore"}))),
        Turn::reply(Reply::text("").call("w1", "write_file", json!({"file_path": "x.txt", "content": "x"}))),
        Turn::reply(Reply::text("I may not write files.")).expect(Expect::result("w1", "write_file")),
        Turn::reply(Reply::text("ok")).expect(Expect::result("p1", "I may not write files.")),
    ]))
    .await;
    let dir = workspace();
    let run = run_parent(&server, dir.path(), Config::default(), "default", PermissionMode::Bypass, None, "w").await;
    server.assert_clean();
    assert_eq!(run.outcome.final_result, "ok");
    assert!(!dir.path().join("x.txt").exists());
    let refusal = run
        .trajectory
        .iter()
        .find(|e| e["type"] == "tool_output" && e["agent_id"] == "agent-1")
        .expect("the child's refused call is recorded");
    assert_eq!(refusal["is_error"], true, "{refusal}");
}

#[tokio::test]
async fn a_workspace_definition_cannot_switch_providers_without_consent() {
    let child_server = FakeLlm::start(Script::new([])).await;
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call("p1", "subagent", json!({"prompt": "x", "subagent_type": "remote"}))),
        Turn::reply(Reply::text("refused")).expect(Expect::result(
            "p1",
            "Subagent agent-1 could not start: the workspace's agent definition asks for model child/m, of provider child, but this session uses openai",
        )),
    ]))
    .await;
    let dir = workspace();
    let agents = dir.path().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(agents.join("remote.md"), "---\nname: remote\ndescription: Remote\nmodel: child/m\n---\nR.\n")
        .unwrap();
    let config = config_with_child_provider(&child_server.openai_base_url(), false);
    let run = run_parent(&server, dir.path(), config, "default", PermissionMode::Bypass, None, "switch").await;
    server.assert_clean();
    assert_eq!(run.outcome.final_result, "refused");
    assert!(child_server.requests().is_empty(), "the other provider was never asked");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_end_of_the_session_cancels_a_background_child() {
    // The child's model never answers in time: only the cancellation can end it.
    let child_server = FakeLlm::start(Script::new([Turn::reply(Reply::text("too late"))
        .with_fault(Fault { delay_first_byte_ms: Some(60_000), ..Fault::default() })]))
    .await;
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call(
            "p1",
            "subagent",
            json!({"prompt": "wait", "subagent_type": "waiter", "run_in_background": true}),
        )),
        Turn::reply(Reply::text("leaving")).expect(Expect::result("p1", "started in the background")),
    ]))
    .await;
    let dir = workspace();
    let agents = dir.path().join(".tackle/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(agents.join("waiter.md"), "---\nname: waiter\ndescription: Waits\nmodel: child/w\n---\nWait.\n")
        .unwrap();
    let config = config_with_child_provider(&child_server.openai_base_url(), true);
    let run = run_parent(&server, dir.path(), config, "default", PermissionMode::Bypass, None, "bg").await;
    server.assert_clean();
    assert_eq!(run.outcome.final_result, "leaving");
    let end = run
        .trajectory
        .iter()
        .find(|e| e["type"] == "session_end" && e["agent_id"] == "agent-1")
        .expect("closing the session ended the child");
    assert_eq!(end["status"], "interrupted");
}

#[tokio::test]
async fn a_child_has_its_own_shell() {
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call("p1", "bash", json!({"command": "export MARK=parent; cd /"}))),
        Turn::reply(Reply::text("").call(
            "p2",
            "subagent",
            json!({"prompt": "look", "subagent_type": "general-purpose"}),
        )),
        Turn::reply(Reply::text("").call("c1", "bash", json!({"command": "echo \"mark=${MARK:-unset} pwd=$(pwd)\""}))),
        Turn::reply(Reply::text("child saw it")).expect(Expect::result("c1", "mark=unset pwd=")),
        Turn::reply(Reply::text("").call("p3", "bash", json!({"command": "echo \"mark=$MARK pwd=$(pwd)\""}))),
        Turn::reply(Reply::text("done")).expect(Expect::result("p3", "mark=parent pwd=/")),
    ]))
    .await;
    let dir = workspace();
    let run = run_parent(&server, dir.path(), Config::default(), "default", PermissionMode::Bypass, None, "sh").await;
    server.assert_clean();
    assert_eq!(run.outcome.final_result, "done");
    let child_shell = last_result(&server.requests()[3].view());
    assert!(!child_shell.ends_with("pwd=/"), "the child's shell started in the workspace: {child_shell}");
}

#[tokio::test]
async fn subagent_rules_match_the_type() {
    let dir = workspace();
    let session = session_denying(dir.path(), "Task(general-purpose)").await;
    let denied = session.call("subagent", json!({"prompt": "x", "subagent_type": "general-purpose"})).await;
    assert!(denied.is_error && denied.text_content().contains("Task(general-purpose)"), "{}", denied.text_content());
    // Another type passes the rule; outside an agent run the tool itself then says why it cannot run.
    let allowed = session.call("subagent", json!({"prompt": "x", "subagent_type": "explore"})).await;
    assert!(allowed.text_content().starts_with("subagent runs only inside an agent run"), "{}", allowed.text_content());
    session.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn children_share_the_parents_mcp_connection() {
    let dir = workspace();
    let record = dir.path().join("mcp.jsonl");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tackle-mcp/tests/peers/fake_server.py");
    let user: toml::Table = format!(
        "[mcp.servers.good]\ncommand = \"python3\"\nargs = [\"-u\", {script:?}, \"--record\", {record:?}]\ntrusted = true\n",
        script = script.display().to_string(),
        record = record.display().to_string(),
    )
    .parse()
    .unwrap();
    let session = SessionBuilder::new(dir.path())
        .config(Config::from_tables(user, toml::Table::new(), false))
        .tools("default,mcp")
        .permission_mode(PermissionMode::Bypass)
        .mcp(tackle::McpImport::User)
        .build()
        .await
        .unwrap();
    let echo = session
        .session()
        .tools()
        .specs()
        .map(|s| s.name.clone())
        .find(|name| name.ends_with("echo"))
        .expect("the MCP echo tool is imported");
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call("p1", "subagent", json!({"prompt": "echo", "subagent_type": "explore"}))),
        Turn::reply(Reply::text("").call("e1", echo.as_str(), json!({"text": "from the child"}))),
        Turn::reply(Reply::text("echoed")).expect(Expect::result("e1", "Echo: from the child")),
        Turn::reply(Reply::text("done")).expect(Expect::result("p1", "echoed")),
    ]))
    .await;
    let model = tackle::llm::from_model_string("openai/parent", Some(&server.openai_base_url())).unwrap();
    let mut agent = Agent::builder(model, session).max_steps(5).build().unwrap();
    let outcome = agent.run("go").await;
    agent.close().await;
    server.assert_clean();
    assert_eq!(outcome.final_result, "done");
    // The explore child got the read-only MCP tool (its server is trusted, so its read-only
    // hint counts), and called it over the parent's connection.
    assert!(server.requests()[1].view().tools.contains(&echo));
    let messages = std::fs::read_to_string(&record).unwrap();
    assert_eq!(messages.matches("\"initialize\"").count(), 1, "{messages}");
    assert_eq!(messages.matches("\"tools/call\"").count(), 1, "{messages}");
}

#[tokio::test]
async fn a_child_holding_load_skill_gets_the_skills_section_and_one_without_it_does_not() {
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call("p1", "subagent", json!({"prompt": "look", "subagent_type": "explore"}))),
        Turn::reply(Reply::text("explored")),
        Turn::reply(Reply::text("").call("p2", "subagent", json!({"prompt": "greet", "subagent_type": "greeter"})))
            .expect(Expect::result("p1", "explored")),
        Turn::reply(Reply::text("greeted")),
        Turn::reply(Reply::text("done")).expect(Expect::result("p2", "greeted")),
    ]))
    .await;
    let dir = workspace();
    let skill = dir.path().join(".tackle/skills/deploy");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(skill.join("SKILL.md"), "---\nname: deploy\ndescription: Ship the build to staging\n---\nRun it.\n")
        .unwrap();
    let agents = dir.path().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("greeter.md"),
        "---\nname: greeter\ndescription: Greets\ntools: read_file\n---\nGreet.\n",
    )
    .unwrap();
    let run = run_parent(&server, dir.path(), Config::default(), "default", PermissionMode::Bypass, None, "go").await;
    server.assert_clean();
    assert_eq!(run.outcome.final_result, "done");
    let requests = server.requests();
    let line = "- deploy: Ship the build to staging";
    let (parent, explore, greeter) = (requests[0].view(), requests[1].view(), requests[3].view());
    assert!(parent.system.contains(line), "{}", parent.system);
    // The explore child holds load_skill, so it hears of the skill as its parent does.
    assert!(explore.tools.iter().any(|t| t == "load_skill"), "{:?}", explore.tools);
    assert!(explore.system.contains("exploration agent"), "{}", explore.system);
    assert!(explore.system.contains("# Skills") && explore.system.contains(line), "{}", explore.system);
    // The greeter holds read_file alone: no section naming a tool it cannot call.
    assert_eq!(greeter.tools, ["read_file"]);
    assert!(!greeter.system.contains("# Skills"), "{}", greeter.system);
}

/// A session of `dir` with the fake MCP server `fake` (trusted), its notices gathered in
/// `heard`.
async fn session_with_fake_mcp(dir: &Path, heard: &Arc<Mutex<Vec<String>>>) -> tackle::TackleSession {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tackle-mcp/tests/peers/fake_server.py");
    let user: toml::Table = format!(
        "[mcp.servers.fake]\ncommand = \"python3\"\nargs = [\"-u\", {script:?}]\ntrusted = true\n",
        script = script.display().to_string(),
    )
    .parse()
    .unwrap();
    let sink = Arc::clone(heard);
    SessionBuilder::new(dir)
        .config(Config::from_tables(user, toml::Table::new(), false))
        .tools("default,mcp")
        .permission_mode(PermissionMode::Bypass)
        .mcp(tackle::McpImport::User)
        .on_notice(move |line| sink.lock().unwrap().push(line.to_owned()))
        .build()
        .await
        .unwrap()
}

/// The child's first reply: `toggle` (the server adds `added` and announces `list_changed`),
/// then a short `slow` call, so the announcement has arrived before the next request.
fn toggle_then_wait() -> Turn {
    Turn::reply(Reply::text("").call("t1", "mcp__fake__toggle", json!({})).call(
        "s1",
        "mcp__fake__slow",
        json!({"seconds": 0.3, "steps": 1}),
    ))
}

const ADDED: &str = "mcp__fake__added";
const ADDED_NOTICE: &str = "MCP server fake changed its tools: added mcp__fake__added; removed none.";

#[tokio::test(flavor = "multi_thread")]
async fn a_child_takes_up_an_mcp_tool_added_between_its_turns_and_so_does_its_parent() {
    let dir = workspace();
    let heard = Arc::new(Mutex::new(Vec::new()));
    let session = session_with_fake_mcp(dir.path(), &heard).await;
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call(
            "p1",
            "subagent",
            json!({"prompt": "toggle", "subagent_type": "general-purpose"}),
        )),
        toggle_then_wait(),
        Turn::reply(Reply::text("").call("a1", ADDED, json!({}))).expect(Expect::result("t1", "toggled")),
        Turn::reply(Reply::text("the new tool answered")).expect(Expect::result("a1", "called added with {}")),
        Turn::reply(Reply::text("done")).expect(Expect::result("p1", "the new tool answered")),
    ]))
    .await;
    let model = tackle::llm::from_model_string("openai/parent", Some(&server.openai_base_url())).unwrap();
    let mut agent = Agent::builder(model, session).max_steps(5).build().unwrap();
    let outcome = agent.run("go").await;
    agent.close().await;
    server.assert_clean();
    assert_eq!(outcome.final_result, "done");
    let requests: Vec<View> = server.requests().iter().map(tackle_testkit::RecordedRequest::view).collect();
    let holds = |view: &View| view.tools.iter().any(|t| t == ADDED);
    assert!(!holds(&requests[0]) && !holds(&requests[1]));
    // The child's next request holds the tool, and tells its model so.
    assert!(holds(&requests[2]), "{:?}", requests[2].tools);
    assert!(requests[2].messages.last().unwrap().text.contains(ADDED_NOTICE), "{:?}", requests[2].messages);
    // The child relisted, yet the parent catches up too.
    assert!(holds(&requests[4]), "{:?}", requests[4].tools);
    assert!(requests[4].messages.last().unwrap().text.contains(ADDED_NOTICE), "{:?}", requests[4].messages);
    // The person hears of the change once.
    let heard = heard.lock().unwrap();
    assert_eq!(heard.iter().filter(|line| *line == ADDED_NOTICE).count(), 1, "{heard:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_added_later_joins_a_child_only_when_its_allowlist_admits_it() {
    let dir = workspace();
    let agents = dir.path().join(".claude/agents");
    std::fs::create_dir_all(&agents).unwrap();
    std::fs::write(
        agents.join("toggler.md"),
        "---\nname: toggler\ndescription: Toggles\ntools: mcp__fake__toggle, mcp__fake__slow\n---\nToggle.\n",
    )
    .unwrap();
    let heard = Arc::new(Mutex::new(Vec::new()));
    let session = session_with_fake_mcp(dir.path(), &heard).await;
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call("p1", "subagent", json!({"prompt": "toggle", "subagent_type": "toggler"}))),
        toggle_then_wait(),
        Turn::reply(Reply::text("toggled it")).expect(Expect::result("t1", "toggled")),
        Turn::reply(Reply::text("").call("a1", ADDED, json!({}))).expect(Expect::result("p1", "toggled it")),
        Turn::reply(Reply::text("done")).expect(Expect::result("a1", "called added with {}")),
    ]))
    .await;
    let model = tackle::llm::from_model_string("openai/parent", Some(&server.openai_base_url())).unwrap();
    let mut agent = Agent::builder(model, session).max_steps(5).build().unwrap();
    let outcome = agent.run("go").await;
    agent.close().await;
    server.assert_clean();
    assert_eq!(outcome.final_result, "done");
    let requests: Vec<View> = server.requests().iter().map(tackle_testkit::RecordedRequest::view).collect();
    assert_eq!(sorted(requests[1].tools.clone()), ["mcp__fake__slow", "mcp__fake__toggle"]);
    // The child's allowlist names two tools: the new one stays out, and is no news to it.
    assert_eq!(sorted(requests[2].tools.clone()), ["mcp__fake__slow", "mcp__fake__toggle"]);
    assert!(requests[2].messages.iter().all(|m| !m.text.contains(ADDED)), "{:?}", requests[2].messages);
    // The parent's allowlist admits it.
    assert!(requests[3].tools.iter().any(|t| t == ADDED), "{:?}", requests[3].tools);
}
