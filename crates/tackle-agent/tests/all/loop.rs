//! The agent loop against the scripted fake server over real HTTP: both providers, streamed
//! and whole; parallel calls; task_done with siblings; duplicates; the call cap; bad input;
//! every stop condition; notifications; and a valid trajectory after each run.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::atomic::Ordering;
use std::time::Duration;

use common::{BOTH, EchoRuns, RunSpec, run};
use pretty_assertions::assert_eq;
use serde_json::json;
use tackle_agent::{CallFormat, RunStatus, StopKind, TRUNCATED_MESSAGE, ToolRefresh};
use tackle_calls::TextFormat;
use tackle_core::permission::PermissionMode;
use tackle_core::registry::ToolHandle;
use tackle_core::{
    BoxFuture, DynTool, Notifications, Tool, ToolContext, ToolError, ToolOutput, ToolSession, ToolSet, ToolSource,
    ToolSpec, TypedTool,
};
use tackle_testkit::{Expect, FakeLlm, Fault, Protocol, Reply, Script, Turn};

#[tokio::test]
async fn a_task_runs_to_task_done_in_both_providers_streamed_and_not() {
    for protocol in BOTH {
        for stream in [true, false] {
            let script = Script::new([
                Turn::reply(
                    Reply::text("Let me echo twice.")
                        .call("call_1", "echo", json!({"text": "one"}))
                        .call("call_2", "echo", json!({"text": "two"}))
                        .usage(100, 20),
                )
                .expect(Expect {
                    system_contains: Some("You are Tackle".into()),
                    tools_include: vec!["echo".into(), "task_done".into()],
                    stream: Some(stream),
                    ..Expect::last_user_contains("say hi")
                }),
                Turn::reply(Reply::text("Both echoed.").call("call_3", "task_done", json!({})).usage(150, 10))
                    .expect(Expect::result("call_2", "echo: two")),
            ]);
            let server = FakeLlm::start(script).await;
            let mut spec = RunSpec::new(protocol);
            spec.stream = stream;
            let ran = run(&server, spec, "say hi").await;
            server.assert_clean();
            assert_eq!(ran.outcome.status, RunStatus::Success, "{protocol:?} {stream}: {}", ran.outcome.final_result);
            assert_eq!(ran.outcome.final_result, "Both echoed.");
            assert_eq!(ran.outcome.steps, 2);
            assert_eq!(ran.outcome.usage.total(), 280);
            assert_eq!(ran.output("call_1"), ("echo: one".into(), false));
            assert_eq!(ran.output("call_3"), ("Task done.".into(), false));
            let types: Vec<&str> = ran.trajectory.iter().map(|e| e["type"].as_str().unwrap()).collect();
            assert_eq!(
                types,
                [
                    "session_start",
                    "llm_request",
                    "llm_response",
                    "tool_call",
                    "tool_call",
                    "permission",
                    "permission",
                    "tool_output",
                    "tool_output",
                    "llm_request",
                    "llm_response",
                    "tool_call",
                    "permission",
                    "tool_output",
                    "conversation",
                    "session_end"
                ]
            );
            let end = ran.events("session_end")[0];
            assert_eq!(end["status"], "success");
            assert_eq!(end["usage_total"]["input_tokens"], 250);
            // The last request's history answers every call (the server checked it too).
            assert_eq!(server.requests().len(), 2);
        }
    }
}

#[tokio::test]
async fn task_done_waits_for_its_siblings_and_is_refused_when_one_failed() {
    let script = Script::new([
        Turn::reply(
            Reply::text("Done, I think.")
                .call("c1", "fail", json!({"text": "tests"}))
                .call("c2", "task_done", json!({}))
                .call("c3", "echo", json!({"text": "after"})),
        ),
        Turn::reply(Reply::text("Fixed now.").call("c4", "echo", json!({"text": "x"})).call(
            "c5",
            "task_done",
            json!({}),
        ))
        .expect(Expect::result(
            "c2",
            "task_done refused: 1 other call(s) in this reply failed. Check their errors, then call task_done again.",
        )),
    ]);
    for protocol in BOTH {
        let server = FakeLlm::start(script.clone()).await;
        let ran = run(&server, RunSpec::new(protocol), "finish").await;
        server.assert_clean();
        assert_eq!(ran.outcome.status, RunStatus::Success);
        assert_eq!(ran.outcome.final_result, "Fixed now.");
        assert_eq!(ran.output("c1"), ("failed: tests".into(), true));
        assert_eq!(ran.output("c3"), ("echo: after".into(), false));
        assert_eq!(ran.output("c5"), ("Task done.".into(), false));
        // Outputs are recorded as they exist: task_done's after its siblings'. (The history,
        // which the server checks, keeps call order.)
        let order: Vec<&str> = ran.events("tool_output").iter().map(|e| e["call_id"].as_str().unwrap()).collect();
        assert_eq!(order, ["c1", "c3", "c2", "c4", "c5"]);
    }
}

#[tokio::test]
async fn identical_read_only_calls_run_once_and_each_gets_the_output() {
    let script = Script::new([
        Turn::reply(
            Reply::text("").call("a", "echo", json!({"text": "same"})).call("b", "echo", json!({"text": "same"})).call(
                "c",
                "echo",
                json!({"text": "other"}),
            ),
        ),
        Turn::reply(Reply::text("ok")).expect(Expect::result("b", "echo: same")),
    ]);
    let server = FakeLlm::start(script).await;
    let ran = run(&server, RunSpec::new(Protocol::OpenAi), "dup").await;
    server.assert_clean();
    assert_eq!(ran.agent.session().state().get::<EchoRuns>().0.load(Ordering::SeqCst), 2);
    assert_eq!(ran.output("a"), ran.output("b"));
}

#[tokio::test]
async fn more_than_64_calls_in_one_reply_are_capped() {
    let mut reply = Reply::text("");
    for n in 0..66 {
        reply = reply.call(format!("c{n}"), "echo", json!({"text": n.to_string()}));
    }
    let server = FakeLlm::start(Script::new([Turn::reply(reply), Turn::reply(Reply::text("ok"))])).await;
    let ran = run(&server, RunSpec::new(Protocol::Anthropic), "many").await;
    server.assert_clean();
    assert_eq!(ran.output("c63"), ("echo: 63".into(), false));
    let capped = ("Too many tool calls in one reply (limit 64); this call was not executed.".to_owned(), true);
    assert_eq!(ran.output("c64"), capped);
    assert_eq!(ran.output("c65"), capped);
}

#[tokio::test]
async fn bad_calls_get_model_visible_errors() {
    let script = Script::new([
        Turn::reply(
            Reply::text("")
                .call("u", "does_not_exist", json!({}))
                .raw_call("j", "echo", "{\"text\": \"unterminated")
                .call("v", "echo", json!({"text": 5}))
                .raw_call("e", "task_done", ""),
        ),
        Turn::reply(Reply::text("I see.")).expect(Expect::result("u", "Tool 'does_not_exist' not found.")),
    ]);
    for protocol in BOTH {
        let server = FakeLlm::start(script.clone()).await;
        let ran = run(&server, RunSpec::new(protocol), "bad").await;
        server.assert_clean();
        let (unknown, error) = ran.output("u");
        assert!(error && unknown.starts_with("Tool 'does_not_exist' not found. Available tools: "), "{unknown}");
        let (invalid, error) = ran.output("j");
        assert!(error, "{invalid}");
        assert!(
            invalid.starts_with("Invalid JSON in arguments for tool 'echo': EOF while parsing a string")
                && invalid.ends_with("Send the arguments as one JSON object."),
            "{invalid}"
        );
        assert_eq!(ran.output("v").1, true);
        // task_done with empty arguments ran (as `{}`) but was refused: its siblings failed.
        assert!(ran.output("e").0.starts_with("task_done refused: 3 other call(s)"));
        assert_eq!(ran.outcome.status, RunStatus::Success);
        assert_eq!(ran.outcome.final_result, "I see.");
    }
}

#[tokio::test]
async fn a_reply_without_calls_ends_the_run_with_its_text() {
    let server = FakeLlm::start(Script::new([Turn::reply(Reply::text("The answer is 4."))])).await;
    let ran = run(&server, RunSpec::new(Protocol::OpenAi), "2+2?").await;
    assert_eq!((ran.outcome.status, ran.outcome.final_result.as_str()), (RunStatus::Success, "The answer is 4."));
}

#[tokio::test]
async fn empty_replies_are_nudged_then_end_the_run() {
    let script = Script::new([
        Turn::reply(Reply::text("")),
        Turn::reply(Reply::text("  ")).expect(Expect::last_user_contains("Your reply was empty.")),
    ]);
    let server = FakeLlm::start(script).await;
    let ran = run(&server, RunSpec::new(Protocol::Anthropic), "go").await;
    server.assert_clean();
    assert_eq!(ran.outcome.status, RunStatus::Error);
    assert_eq!(ran.outcome.error_kind, Some(StopKind::EmptyReply));
    // The kind is written by the same name as before it was typed (the `--json` contract).
    assert_eq!(serde_json::to_value(&ran.outcome).unwrap()["error_kind"], "empty_reply");
    assert_eq!(ran.events("error")[0]["kind"], "empty_reply");
}

#[tokio::test]
async fn a_model_that_calls_tools_forever_stops_at_max_steps() {
    let forever = Turn::reply(Reply::text("again").call("x", "echo", json!({"text": "loop"})));
    let server = FakeLlm::start(Script::new([forever]).repeat_last()).await;
    let mut spec = RunSpec::new(Protocol::OpenAi);
    spec.max_steps = 5;
    let ran = run(&server, spec, "loop").await;
    server.assert_clean();
    assert_eq!(ran.outcome.status, RunStatus::MaxSteps);
    assert_eq!(ran.outcome.final_result, "Stopped after 5 steps without finishing.");
    assert_eq!(ran.outcome.steps, 5);
    assert_eq!(server.requests().len(), 5);
}

#[tokio::test]
async fn provider_errors_end_the_run_with_their_class() {
    let cases = [
        (Fault::status(500), "server", "openai had a server error (HTTP 500) after 5 attempts"),
        (
            Fault::status(400).body(r#"{"error":{"message":"This model's maximum context length is 128000 tokens.","code":"context_length_exceeded"}}"#),
            "context_length",
            "the conversation is too long for fake-model's context window",
        ),
        (Fault::status(401), "auth", "authentication failed for openai: check OPENAI_API_KEY"),
    ];
    for (fault, kind, message) in cases {
        let script =
            Script::new([Turn::reply(Reply::text("").call("a", "echo", json!({"text": "1"}))), Turn::fault(fault)])
                .repeat_last();
        let server = FakeLlm::start(script).await;
        let ran = run(&server, RunSpec::new(Protocol::OpenAi), "err").await;
        server.assert_clean();
        assert_eq!(ran.outcome.status, RunStatus::Error);
        assert!(matches!(ran.outcome.error_kind, Some(StopKind::Provider(_))), "{:?}", ran.outcome.error_kind);
        assert_eq!(ran.outcome.error_kind.map(StopKind::name), Some(kind));
        assert!(ran.outcome.final_result.starts_with(message), "{}", ran.outcome.final_result);
        assert_eq!(ran.events("error")[0]["kind"], kind);
    }
}

#[tokio::test]
async fn retries_are_recorded_and_the_run_goes_on() {
    let script = Script::new([
        Turn::fault(Fault::status(429).header("retry-after-ms", "20")),
        Turn::reply(Reply::text("ok").call("a", "echo", json!({"text": "1"}))),
        Turn::reply(Reply::text("done")),
    ]);
    let server = FakeLlm::start(script).await;
    let ran = run(&server, RunSpec::new(Protocol::Anthropic), "retry").await;
    server.assert_clean();
    assert_eq!(ran.outcome.status, RunStatus::Success);
    let retry = ran.events("llm_retry")[0];
    assert_eq!(
        (retry["error_class"].as_str(), retry["status"].as_u64(), retry["delay_ms"].as_u64()),
        (Some("rate_limit"), Some(429), Some(20))
    );
}

#[tokio::test]
async fn truncated_replies_run_complete_calls_and_three_in_a_row_stop() {
    let truncated = |id: &str| {
        Reply::text("writing")
            .call(id, "echo", json!({"text": "complete"}))
            .raw_call(format!("{id}_cut"), "echo", "{\"text\": \"never fini")
            .finish("length")
    };
    let script = Script::new([
        Turn::reply(truncated("a")),
        Turn::reply(truncated("b")).expect(Expect {
            last_user_contains: Some(TRUNCATED_MESSAGE.into()),
            ..Expect::result("a", "echo: complete")
        }),
        Turn::reply(truncated("c")),
    ]);
    let server = FakeLlm::start(script).await;
    let ran = run(&server, RunSpec::new(Protocol::OpenAi), "write").await;
    server.assert_clean();
    assert_eq!(ran.outcome.status, RunStatus::Error);
    assert_eq!(ran.outcome.error_kind, Some(StopKind::Truncated));
    assert_eq!(ran.output("c"), ("echo: complete".into(), false));
    // The cut-off calls were dropped, never answered nor recorded.
    assert!(ran.events("tool_call").iter().all(|e| !e["call_id"].as_str().unwrap().ends_with("_cut")));
}

#[tokio::test]
async fn content_filter_ends_the_run_as_refused() {
    let server = FakeLlm::start(Script::new([Turn::reply(Reply::text("I can't.").finish("content_filter"))])).await;
    let ran = run(&server, RunSpec::new(Protocol::Anthropic), "bad").await;
    assert_eq!((ran.outcome.status, ran.outcome.error_kind), (RunStatus::Error, Some(StopKind::Refused)));
}

#[tokio::test]
async fn ctrl_c_cancels_running_calls_and_each_still_gets_an_output() {
    let script = Script::new([Turn::reply(Reply::text("sleeping").call("s1", "sleep", json!({"ms": 10_000})).call(
        "s2",
        "echo",
        json!({"text": "quick"}),
    ))]);
    for protocol in BOTH {
        let server = FakeLlm::start(script.clone()).await;
        let mut spec = RunSpec::new(protocol);
        spec.cancel_after = Some(Duration::from_millis(300));
        let started = std::time::Instant::now();
        let ran = run(&server, spec, "sleep").await;
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_eq!(ran.outcome.status, RunStatus::Interrupted);
        let (text, error) = ran.output("s1");
        assert!(error && text.starts_with("Cancelled by the user."), "{text}");
        assert_eq!(ran.output("s2"), ("echo: quick".into(), false));
        assert_eq!(ran.events("session_end")[0]["status"], "interrupted");
    }
}

#[tokio::test]
async fn ctrl_c_during_a_request_closes_the_run() {
    let slow =
        Turn::reply(Reply::text("late")).with_fault(Fault { delay_first_byte_ms: Some(5_000), ..Fault::default() });
    let server = FakeLlm::start(Script::new([slow])).await;
    let mut spec = RunSpec::new(Protocol::OpenAi);
    spec.cancel_after = Some(Duration::from_millis(200));
    let ran = run(&server, spec, "wait").await;
    assert_eq!(ran.outcome.status, RunStatus::Interrupted);
    assert_eq!(ran.events("session_end").len(), 1);
}

#[tokio::test]
async fn notifications_arrive_before_the_next_request_after_the_results() {
    let script = Script::new([
        Turn::reply(Reply::text("").call("n1", "notify", json!({"text": "sleep 1"}))),
        Turn::reply(Reply::text("noted")).expect(Expect {
            last_user_contains: Some(
                "<notifications>\nBackground job job-1 (sleep 1) finished: exited 0.\n</notifications>".into(),
            ),
            ..Expect::result("n1", "queued")
        }),
    ]);
    for protocol in BOTH {
        let server = FakeLlm::start(script.clone()).await;
        let ran = run(&server, RunSpec::new(protocol), "bg").await;
        server.assert_clean();
        assert_eq!(ran.events("notification")[0]["text"], "Background job job-1 (sleep 1) finished: exited 0.");
        let last = server.requests().last().unwrap().body.clone();
        match protocol {
            Protocol::OpenAi => {
                let messages = last["messages"].as_array().unwrap();
                let roles: Vec<&str> = messages.iter().rev().take(2).map(|m| m["role"].as_str().unwrap()).collect();
                assert_eq!(roles, ["user", "tool"]);
            }
            Protocol::Anthropic => {
                let content =
                    last["messages"].as_array().unwrap().last().unwrap()["content"].as_array().unwrap().clone();
                let types: Vec<&str> = content.iter().map(|b| b["type"].as_str().unwrap()).collect();
                assert_eq!(types, ["tool_result", "text"]);
            }
        }
    }
}

#[tokio::test]
async fn without_a_terminal_a_call_that_needs_approval_is_denied_naming_the_flag() {
    let script = Script::new([
        Turn::reply(Reply::text("").call("n1", "notify", json!({"text": "x"})).call(
            "e1",
            "echo",
            json!({"text": "y"}),
        )),
        Turn::reply(Reply::text("ok")),
    ]);
    let server = FakeLlm::start(script).await;
    let mut spec = RunSpec::new(Protocol::OpenAi);
    spec.mode = PermissionMode::Default;
    let ran = run(&server, spec, "perm").await;
    let (text, error) = ran.output("n1");
    assert!(error);
    assert_eq!(
        text,
        "notify needs approval, but this run is non-interactive. Allow it with a rule (--allow 'notify', or [permissions] allow in tackle.toml), a permission mode (--permission-mode bypass), or --yes."
            .replace("tackle.toml", &tackle_policy::config::user_config_shown())
    );
    assert_eq!(ran.output("e1"), ("echo: y".into(), false));
    let decisions: Vec<(&str, &str)> = ran
        .events("permission")
        .iter()
        .map(|e| (e["decision"].as_str().unwrap(), e["source"].as_str().unwrap()))
        .collect();
    assert_eq!(decisions, [("ask", "mode"), ("deny", "policy"), ("allow", "mode")]);
}

#[tokio::test]
async fn task_done_after_a_denied_call_is_reminded_once_then_accepted() {
    let script = Script::new([
        Turn::reply(Reply::text("").call("n1", "notify", json!({"text": "x"}))),
        Turn::reply(Reply::text("Done.").call("d1", "task_done", json!({}))),
        Turn::reply(Reply::text("I could not notify; done anyway.").call("d2", "task_done", json!({}))),
    ]);
    let server = FakeLlm::start(script).await;
    let mut spec = RunSpec::new(Protocol::OpenAi);
    spec.mode = PermissionMode::Default;
    let ran = run(&server, spec, "notify").await;
    server.assert_clean();
    let (reminder, error) = ran.output("d1");
    assert!(error);
    assert_eq!(
        reminder,
        "task_done refused: 1 call(s) in this run were denied permission, so the task may not be done:\n\
         - notify x: notify needs approval, but this run is non-interactive. Allow it with a rule (--allow 'notify', or \
         [permissions] allow in tackle.toml), a permission mode (--permission-mode bypass), or --yes.\nTry another way the permissions allow, or tell the user what you \
         could not do and why; then call task_done again."
            .replace("tackle.toml", &tackle_policy::config::user_config_shown())
    );
    assert_eq!(ran.output("d2"), ("Task done.".into(), false));
    assert_eq!((ran.outcome.status, ran.outcome.denied), (RunStatus::Success, 1));
}

#[tokio::test]
async fn each_text_call_format_runs_end_to_end() {
    let cases = [
        (
            CallFormat::Text(TextFormat::Markdown),
            "Echoing.\n```echo\n{\"text\": \"hi\"}\n```\n",
            "Result of echo (call 1):\n```output\necho: hi\n```",
            "Done.\n```task_done\n{}\n```\n",
        ),
        (
            CallFormat::Text(TextFormat::Xml),
            "Echoing.\n<function_calls><invoke name=\"echo\"><parameter name=\"text\">hi</parameter></invoke></function_calls>",
            "<tool-result name=\"echo\" id=\"call_1_1\" status=\"ok\">echo: hi</tool-result>",
            "Done.\n<function_calls><invoke name=\"task_done\"></invoke></function_calls>",
        ),
        (
            CallFormat::Text(TextFormat::Tool),
            "Echoing.\n@echo(e1): {\"text\": \"hi\"}\n",
            "@result(e1): {\"tool\":\"echo\",\"is_error\":false,\"output\":\"echo: hi\"}",
            "Done.\n@task_done(d1): {}\n",
        ),
    ];
    for (format, first, rendered, last) in cases {
        for protocol in BOTH {
            let script = Script::new([
                Turn::reply(Reply::text(first).chunk_chars(5)).expect(Expect {
                    no_tools: true,
                    system_contains: Some("## Tools".into()),
                    ..Expect::last_user_contains("echo hi")
                }),
                Turn::reply(Reply::text(last)).expect(Expect::last_user_contains(rendered)),
            ]);
            let server = FakeLlm::start(script).await;
            let mut spec = RunSpec::new(protocol);
            spec.format = format;
            let ran = run(&server, spec, "echo hi").await;
            server.assert_clean();
            assert_eq!(ran.outcome.status, RunStatus::Success, "{format} {protocol:?}: {}", ran.outcome.final_result);
            assert_eq!(ran.outcome.final_result, last, "{format}");
            let calls: Vec<(&str, &str)> = ran
                .events("tool_call")
                .iter()
                .map(|e| (e["name"].as_str().unwrap(), e["format"].as_str().unwrap()))
                .collect();
            assert_eq!(calls, [("echo", format.name()), ("task_done", format.name())]);
            // Offsets are code points into the message: the fence, the `<invoke>` tag, the `@`.
            let start = if format == CallFormat::Text(TextFormat::Xml) { 25 } else { 9 };
            assert_eq!(ran.events("tool_call")[0]["start"], json!(start), "{format}");
        }
    }
}

#[tokio::test]
async fn a_malformed_text_call_is_answered_with_its_parse_error() {
    let script = Script::new([
        Turn::reply(Reply::text("@echo(e1): {\"text\": }\n")),
        Turn::reply(Reply::text("I see.")).expect(Expect::last_user_contains("\"is_error\":true")),
    ]);
    let server = FakeLlm::start(script).await;
    let mut spec = RunSpec::new(Protocol::OpenAi);
    spec.format = CallFormat::Text(TextFormat::Tool);
    let ran = run(&server, spec, "bad").await;
    server.assert_clean();
    assert_eq!(ran.output("e1").1, true);
}

/// A tool that arrives mid-run.
struct Late;

impl Tool for Late {
    type Input = common::TextInput;
    fn spec(&self) -> ToolSpec {
        ToolSpec::new("mcp__srv__late", "Arrived late.").read_only()
    }
    async fn call(&self, input: common::TextInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(format!("late: {}", input.text)))
    }
}

/// Adds a tool to the session before the second request, like an MCP server's list_changed.
struct AddLate(std::sync::atomic::AtomicU32);

impl ToolRefresh for AddLate {
    fn refresh<'a>(&'a self, session: &'a mut ToolSession) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            if self.0.fetch_add(1, Ordering::SeqCst) != 1 {
                return false;
            }
            let mut handles: Vec<ToolHandle> =
                session.tools().handles().iter().map(|h| ToolHandle::new(h.tool.clone(), h.source.clone())).collect();
            let late: std::sync::Arc<dyn DynTool> = std::sync::Arc::new(TypedTool::new(Late));
            handles.push(ToolHandle::new(late, ToolSource::Mcp("srv".into())));
            session.set_tools(ToolSet::new(handles));
            session.state().get::<Notifications>().push("MCP server srv: tools changed (added mcp__srv__late).");
            true
        })
    }
}

#[tokio::test]
async fn refreshed_tools_and_their_notice_reach_the_next_request() {
    let script = Script::new([
        Turn::reply(Reply::text("").call("a", "echo", json!({"text": "1"}))),
        Turn::reply(Reply::text("").call("b", "mcp__srv__late", json!({"text": "new"}))).expect(Expect {
            tools_include: vec!["mcp__srv__late".into()],
            ..Expect::last_user_contains(
                "<notifications>\nMCP server srv: tools changed (added mcp__srv__late).\n</notifications>",
            )
        }),
        Turn::reply(Reply::text("done")).expect(Expect::result("b", "late: new")),
    ]);
    let server = FakeLlm::start(script).await;
    let mut spec = RunSpec::new(Protocol::Anthropic);
    spec.refresh = Some(std::sync::Arc::new(AddLate(std::sync::atomic::AtomicU32::new(0))));
    let ran = run(&server, spec, "refresh").await;
    server.assert_clean();
    assert_eq!(ran.outcome.status, RunStatus::Success);
}

#[tokio::test]
async fn pause_turn_sends_the_request_again_with_the_partial_message() {
    let script = Script::new([
        Turn::reply(Reply::text("Searching the web first.").finish("pause_turn")),
        Turn::reply(Reply::text("Found it.")),
    ]);
    let server = FakeLlm::start(script).await;
    let ran = run(&server, RunSpec::new(Protocol::Anthropic), "look it up").await;
    server.assert_clean();
    assert_eq!((ran.outcome.status, ran.outcome.final_result.as_str()), (RunStatus::Success, "Found it."));
    let second = &server.requests()[1].body;
    let last = second["messages"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last, json!({"role": "assistant", "content": [{"type": "text", "text": "Searching the web first."}]}));
}

#[tokio::test]
async fn a_finished_background_job_is_a_notification_before_the_next_request() {
    let script = Script::new([
        Turn::reply(Reply::text("Starting it.").call("j1", "background_run", json!({"command": "echo hi"}))),
        Turn::reply(Reply::text("Waiting.").call("w1", "bash", json!({"command": "sleep 0.5"})))
            .expect(Expect::result("j1", "Started background job job-1: echo hi.")),
        Turn::reply(Reply::text("It finished.")).expect(Expect {
            last_user_contains: Some(
                "<notifications>\nBackground job job-1 (echo hi) finished: exited 0. Use job_output to read its output.\n</notifications>"
                    .into(),
            ),
            ..Expect::default()
        }),
    ]);
    for protocol in BOTH {
        let server = FakeLlm::start(script.clone()).await;
        let ran = run(&server, RunSpec::new(protocol), "job").await;
        server.assert_clean();
        assert_eq!(ran.outcome.status, RunStatus::Success, "{}", ran.outcome.final_result);
        ran.agent.session().close().await;
    }
}

/// Collects the live tail a running shell command reports.
#[derive(Default)]
struct Tail(std::sync::Mutex<Vec<String>>);

impl tackle_agent::Observer for Tail {
    fn on_event(&self, event: &tackle_agent::AgentEvent) {
        if let tackle_agent::AgentEvent::Exec(tackle_core::ExecEvent::Progress { progress, .. }) = event
            && let Some(message) = &progress.message
        {
            self.0.lock().unwrap().push(message.clone());
        }
    }
}

#[tokio::test]
async fn a_running_shell_command_reports_its_last_line() {
    let command = "for i in 1 2 3; do echo step $i; sleep 0.4; done";
    let script = Script::new([
        Turn::reply(Reply::text("").call("b1", "bash", json!({"command": command}))),
        Turn::reply(Reply::text("ok")).expect(Expect::result("b1", "step 3")),
    ]);
    let server = FakeLlm::start(script).await;
    let tail = std::sync::Arc::new(Tail::default());
    let mut spec = RunSpec::new(Protocol::OpenAi);
    spec.observer = Some(tail.clone());
    let ran = run(&server, spec, "tail").await;
    server.assert_clean();
    ran.agent.session().close().await;
    let lines = tail.0.lock().unwrap().clone();
    assert!(lines.contains(&"step 1".to_owned()) && lines.contains(&"step 2".to_owned()), "{lines:?}");
}
