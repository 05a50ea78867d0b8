//! `AgentBuilder::output_schema` (issue 28, point 6) against the scripted fake LLM server: an
//! invalid schema fails the build, the schema reaches the system prompt, a Stop hook's block
//! comes before the check, a mismatch is sent back once, and every task of the agent is held
//! to the schema.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::{Value, json};
use tackle::{Agent, BuildError, Config, RunStatus, SessionBuilder, StopKind};
use tackle_testkit::{Expect, FakeLlm, Reply, Script, Turn};

fn schema() -> Value {
    json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]})
}

async fn agent(dir: &Path, hooks: &str, server: &FakeLlm, schema: Value) -> Result<Agent, BuildError> {
    let config = Config::from_tables(hooks.parse().unwrap(), toml::Table::new(), false);
    let session = SessionBuilder::new(dir).config(config).build().await.unwrap();
    let model = tackle::llm::from_model_string("openai/fake", Some(&server.openai_base_url())).unwrap();
    Agent::builder(model, session).max_steps(10).output_schema(schema).build()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invalid_schema_fails_the_build() {
    let server = FakeLlm::start(Script::new([])).await;
    let dir = tempfile::tempdir().unwrap();
    let err = agent(dir.path(), "", &server, json!({"type": 7})).await.unwrap_err();
    assert!(matches!(err, BuildError::OutputSchema(_)), "{err:?}");
    assert!(err.to_string().starts_with("the output schema is not a valid JSON Schema: "), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stop_hook_blocks_before_the_check_and_a_mismatch_is_sent_back_once_per_task() {
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("{\"ok\": \"yes\"}"))
            .expect(Expect { system_contains: Some("# Final answer format".to_owned()), ..Expect::default() }),
        // The Stop hook's block first, then the schema's feedback.
        Turn::reply(Reply::text("{\"ok\": \"yes\"}")).expect(Expect::last_user_contains("check again")),
        Turn::reply(Reply::text("{\"ok\": true}")).expect(Expect::last_user_contains("is not of type \"boolean\"")),
        // The second task is held to the schema too, with its own correction.
        Turn::reply(Reply::text("Done.")).expect(Expect::last_user_contains("second task")),
        Turn::reply(Reply::text("still not JSON")).expect(Expect::last_user_contains("not one JSON value")),
    ]))
    .await;
    let dir = tempfile::tempdir().unwrap();
    let hooks = "[[hooks.Stop]]\ncommand = '''if [ -e blocked ]; then exit 0; fi; touch blocked; echo 'check again' >&2; exit 2'''\n";
    let mut agent = agent(dir.path(), hooks, &server, schema()).await.unwrap();
    let outcome = agent.run("first task").await;
    assert_eq!(outcome.status, RunStatus::Success, "{}", outcome.final_result);
    assert_eq!(outcome.output, Some(json!({"ok": true})));
    assert_eq!(outcome.final_result, "{\"ok\": true}");
    let outcome = agent.run("second task").await;
    agent.close().await;
    server.assert_clean();
    assert_eq!(outcome.status, RunStatus::Error);
    assert_eq!(outcome.error_kind, Some(StopKind::SchemaMismatch));
    assert_eq!(outcome.output, None);
    assert!(outcome.final_result.contains("not one JSON value"), "{}", outcome.final_result);
}
