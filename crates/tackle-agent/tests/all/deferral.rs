//! Deferred tools in the loop: absent from the requests (native tool list, or the text
//! format's instructions) until `tool_search` loads them, present from the next request on;
//! named in the system prompt throughout.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{RunSpec, run};
use serde_json::json;
use tackle_agent::CallFormat;
use tackle_testkit::{Expect, FakeLlm, Protocol, Reply, Script, Turn};

fn native_names(body: &serde_json::Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t.pointer("/function/name").or_else(|| t.get("name")).and_then(|n| n.as_str()))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn a_loaded_tool_is_sent_from_the_next_request_natively() {
    let script = Script::new([
        Turn::reply(Reply::text("").call("s1", "tool_search", json!({"query": "weather in a city"}))).expect(Expect {
            system_contains: Some("- weather_forecast: weather forecast".into()),
            ..Expect::default()
        }),
        Turn::reply(Reply::text("").call("w1", "weather_forecast", json!({"text": "Oslo"})))
            .expect(Expect { tools_include: vec!["weather_forecast".into()], ..Expect::default() }),
        Turn::reply(Reply::text("Sunny.")).expect(Expect::result("w1", "sunny in Oslo")),
    ]);
    let server = FakeLlm::start(script).await;
    let spec = RunSpec { tools: "default,deferred", ..RunSpec::new(Protocol::OpenAi) };
    let ran = run(&server, spec, "weather?").await;
    server.assert_clean();
    assert_eq!(ran.outcome.final_result, "Sunny.");
    let requests = server.requests();
    assert!(!native_names(&requests[0].body).contains(&"weather_forecast".to_owned()));
    assert!(native_names(&requests[0].body).contains(&"tool_search".to_owned()));
    assert!(native_names(&requests[1].body).contains(&"weather_forecast".to_owned()));
}

#[tokio::test]
async fn a_loaded_tool_joins_the_text_format_instructions() {
    let call = "```tool_search\n{\"query\": \"select:weather_forecast\"}\n```";
    let script = Script::new([
        Turn::reply(Reply::text(call)).expect(Expect { no_tools: true, ..Expect::default() }),
        Turn::reply(Reply::text("Loaded.")).expect(Expect::last_user_contains("Loaded 1 tool(s)")),
    ]);
    let server = FakeLlm::start(script).await;
    let spec = RunSpec {
        tools: "default,deferred",
        format: CallFormat::Text(tackle_calls::TextFormat::Markdown),
        ..RunSpec::new(Protocol::Anthropic)
    };
    let ran = run(&server, spec, "weather?").await;
    server.assert_clean();
    assert_eq!(ran.outcome.final_result, "Loaded.");
    let requests = server.requests();
    let first = requests[0].view().system;
    let second = requests[1].view().system;
    assert!(first.contains("### tool_search") && !first.contains("### weather_forecast"), "{first}");
    assert!(first.contains("- weather_forecast: weather forecast"));
    assert!(second.contains("### weather_forecast"), "{second}");
}
