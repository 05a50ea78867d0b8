//! Command hooks on the agent loop's events, against the scripted fake LLM server: a Stop
//! hook that blocks once keeps the agent going with its reason, the stop-loop guard ends a
//! hook that always blocks, UserPromptSubmit blocks a prompt before any request or adds
//! context, SessionStart adds context and SessionEnd runs at close; hooks see the
//! trajectory as `transcript_path`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::{Value, json};
use tackle::{Agent, Config, SessionBuilder};
use tackle_testkit::{Expect, FakeLlm, Reply, Script, Turn};

async fn agent(dir: &Path, hooks: &str, server: &FakeLlm) -> Agent {
    let config = Config::from_tables(hooks.parse().unwrap(), toml::Table::new(), false);
    let session = SessionBuilder::new(dir).config(config).build().await.unwrap();
    let model = tackle::llm::from_model_string("openai/fake", Some(&server.openai_base_url())).unwrap();
    Agent::builder(model, session).max_steps(10).trajectory(dir.join("run.jsonl")).build().unwrap()
}

/// The JSON objects a hook appended to `file`, one a line.
fn inputs(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stop_hook_that_blocks_once_keeps_the_agent_going_with_its_reason() {
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("Done.")),
        Turn::reply(Reply::text("Tests pass, done.")).expect(Expect::last_user_contains("run the tests first")),
    ]))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let hooks = r#"
[[hooks.Stop]]
command = '''cat >> stop-inputs.jsonl; echo >> stop-inputs.jsonl; if [ -e blocked-once ]; then exit 0; fi; touch blocked-once; echo "run the tests first" >&2; exit 2'''
"#;
    let mut agent = agent(dir.path(), hooks, &server).await;
    let outcome = agent.run("Finish the job.").await;
    agent.close().await;
    server.assert_clean();
    assert_eq!(server.requests().len(), 2);
    assert_eq!((outcome.status.name(), outcome.final_result.as_str()), ("success", "Tests pass, done."));
    let seen = inputs(&dir.path().join("stop-inputs.jsonl"));
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0]["hook_event_name"], "Stop");
    assert_eq!((seen[0]["stop_hook_active"].clone(), seen[1]["stop_hook_active"].clone()), (false.into(), true.into()));
    assert_eq!(seen[0]["transcript_path"], dir.path().join("run.jsonl").display().to_string());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_stop_loop_guard_lets_a_hook_that_always_blocks_stop_the_agent() {
    let server = FakeLlm::start(Script::new([Turn::reply(Reply::text("Done."))]).repeat_last()).await;
    let dir = tempfile::tempdir().unwrap();
    let hooks = "[[hooks.Stop]]\ncommand = 'echo never >&2; exit 2'\n";
    let mut agent = agent(dir.path(), hooks, &server).await;
    let outcome = agent.run("Finish the job.").await;
    agent.close().await;
    assert_eq!(outcome.status.name(), "success");
    // The first stop and three blocked ones; the fourth block is let through.
    assert_eq!(server.requests().len(), 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn user_prompt_submit_blocks_the_prompt_before_any_request() {
    let server = FakeLlm::start(Script::new([Turn::reply(Reply::text("unused"))])).await;
    let dir = tempfile::tempdir().unwrap();
    let hooks = "[[hooks.UserPromptSubmit]]\ncommand = '''grep -q password && { echo 'no secrets in prompts' >&2; exit 2; }; exit 0'''\n";
    let mut agent = agent(dir.path(), hooks, &server).await;
    let outcome = agent.run("the password is hunter2").await;
    agent.close().await;
    assert_eq!(server.requests().len(), 0);
    assert_eq!(outcome.status.name(), "error");
    assert_eq!(outcome.error_kind, Some(tackle::StopKind::PromptBlocked));
    assert_eq!(outcome.error_kind.map(|kind| kind.to_string()).as_deref(), Some("prompt_blocked"));
    assert!(outcome.final_result.contains("no secrets in prompts"), "{}", outcome.final_result);
}

#[tokio::test(flavor = "multi_thread")]
async fn session_start_and_user_prompt_submit_add_context_and_session_end_runs_at_close() {
    let server = FakeLlm::start(Script::new([Turn::reply(Reply::text("Noted."))
        .expect(Expect::last_user_contains("Current branch: main"))
        .expect(Expect::last_user_contains("Prompt checked at"))]))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let hooks = r#"
[[hooks.SessionStart]]
matcher = "startup"
command = "echo 'Current branch: main'"
[[hooks.UserPromptSubmit]]
command = '''echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"Prompt checked at noon"}}' '''
[[hooks.SessionEnd]]
command = "cat > session-end.json"
"#;
    let mut agent = agent(dir.path(), hooks, &server).await;
    let outcome = agent.run("Hello.").await;
    assert!(!dir.path().join("session-end.json").exists());
    agent.close().await;
    server.assert_clean();
    assert_eq!(outcome.status.name(), "success");
    let end: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("session-end.json")).unwrap()).unwrap();
    assert_eq!(end["hook_event_name"], "SessionEnd");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_subagent_fires_subagent_stop_and_no_prompt_or_session_events_of_its_own() {
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call(
            "p1",
            "subagent",
            json!({"prompt": "Look around.", "subagent_type": "explore"}),
        )),
        Turn::reply(Reply::text("Nothing to see.")),
        Turn::reply(Reply::text("Child stop hook said: keep looking, so I looked again."))
            .expect(Expect::last_user_contains("keep looking")),
        Turn::reply(Reply::text("Done.")).expect(Expect::result("p1", "looked again")),
    ]))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let log = "cat >> events.jsonl; echo >> events.jsonl";
    let hooks = format!(
        r#"
[[hooks.SessionStart]]
command = '{log}'
[[hooks.UserPromptSubmit]]
command = '{log}'
[[hooks.SubagentStop]]
command = '''{log}; if [ -e blocked-once ]; then exit 0; fi; touch blocked-once; echo "keep looking" >&2; exit 2'''
[[hooks.Stop]]
command = '{log}'
[[hooks.SessionEnd]]
command = '{log}'
"#
    );
    let mut agent = agent(dir.path(), &hooks, &server).await;
    let outcome = agent.run("Delegate a look around.").await;
    agent.close().await;
    server.assert_clean();
    assert_eq!((outcome.status.name(), outcome.final_result.as_str()), ("success", "Done."));
    let events: Vec<String> = inputs(&dir.path().join("events.jsonl"))
        .iter()
        .map(|input| input["hook_event_name"].as_str().unwrap().to_owned())
        .collect();
    // The child's prompt is the parent's, not a person's: only its stop fires (twice: the
    // first was blocked), then the parent's own stop and end.
    assert_eq!(events, ["SessionStart", "UserPromptSubmit", "SubagentStop", "SubagentStop", "Stop", "SessionEnd"]);
}
