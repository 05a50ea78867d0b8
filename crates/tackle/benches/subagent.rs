//! Delegation's own cost (docs/subagents.md#cost): building a child (its session, tool set,
//! executor and agent) and closing it, with no model or tool time (target ≤ 5 ms); and a
//! parent running 1 or 8 `explore` children at once against the scripted fake LLM server,
//! each model reply 50 ms late (target: 8 children ≤ 1.5 × the time of one).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tackle::PermissionMode;
use tackle::agent::CallFormat;
use tackle::agent::Silent;
use tackle::{Agent, Config, SessionBuilder};
use tackle_agent::lineage::{Delegation, Lineage};
use tackle_agent::subagent::{Child, types};
use tackle_core::factory::Factory;
use tackle_testkit::{FakeLlm, Fault, Reply, Script, Turn};
use tokio_util::sync::CancellationToken;

/// What a parent agent in the default mode tells its `subagent` calls.
fn delegation(tools: Vec<String>) -> Delegation {
    let model = tackle::llm::from_model_string("openai/unused", Some("http://127.0.0.1:9/v1")).unwrap();
    Delegation {
        lineage: Lineage::default(),
        model: Arc::new(model),
        tools: std::sync::Mutex::new(tools),
        mode: PermissionMode::Default,
        call_format: CallFormat::Native,
        sandbox: "none".to_owned(),
        trajectory: None,
        observer: Arc::new(Silent),
        interrupt: CancellationToken::new(),
        loop_hooks: None,
        refresh: None,
        allowlists: Vec::new(),
        pricing: None,
        budget: None,
    }
}

fn bench_build(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let session = runtime.block_on(SessionBuilder::new(dir.path()).config(Config::default()).build()).unwrap();
    let factory = session.session().state().existing::<Factory>().unwrap();
    let tools = session.session().tools().specs().map(|s| s.name.clone()).collect();
    let parent = delegation(tools);
    let mut group = c.benchmark_group("subagent");
    for kind in ["explore", "general-purpose"] {
        let kind = types::built_in(kind).unwrap();
        group.bench_function(format!("build and close a {} child", kind.name), |b| {
            b.to_async(&runtime).iter(|| async {
                let child = Child::build(&parent, &factory, &kind, "agent-1".into(), "bench").await.unwrap();
                child.close().await;
            });
        });
    }
    group.finish();
    runtime.block_on(session.close());
}

/// A parent that starts `n` explore children in one reply; each child answers at once, every
/// model reply 50 ms late.
async fn parent_with_children(n: usize, dir: &std::path::Path) {
    let late = || Fault { delay_first_byte_ms: Some(50), ..Fault::default() };
    let mut first = Reply::text("");
    for i in 0..n {
        first =
            first.call(format!("p{i}"), "subagent", json!({"prompt": format!("find {i}"), "subagent_type": "explore"}));
    }
    let mut turns = vec![Turn::reply(first).with_fault(late())];
    turns.extend((0..n).map(|i| Turn::reply(Reply::text(format!("child {i} found it"))).with_fault(late())));
    turns.push(Turn::reply(Reply::text("done")).with_fault(late()));
    let server = FakeLlm::start(Script::new(turns)).await;
    let model = tackle::llm::from_model_string("openai/parent", Some(&server.openai_base_url())).unwrap();
    let session = SessionBuilder::new(dir).config(Config::default()).build().await.unwrap();
    let mut agent = Agent::builder(model, session).build().unwrap();
    let outcome = agent.run("delegate").await;
    agent.close().await;
    assert_eq!(outcome.final_result, "done");
    server.assert_clean();
}

fn bench_concurrent(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("subagent");
    group.sample_size(10).measurement_time(Duration::from_secs(5));
    for n in [1, 8] {
        group.bench_function(format!("{n} explore children at once"), |b| {
            b.to_async(&runtime).iter(|| parent_with_children(n, dir.path()));
        });
    }
    group.finish();
}

criterion_group!(benches, bench_build, bench_concurrent);
criterion_main!(benches);
