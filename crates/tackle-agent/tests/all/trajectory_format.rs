//! The trajectory format stays put: a file written by an earlier Tackle (the fixture, recorded
//! by the writer of version 0.1.0 from the run below) still checks and renders the same
//! transcript, and the writer of today writes that run line for line as it did then (only
//! times, durations, paths and ids differ).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};

use common::{RunSpec, run};
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tackle_agent::ToolRefresh;
use tackle_agent::trajectory::{CheckSummary, check};
use tackle_core::permission::PermissionMode;
use tackle_core::{BoxFuture, Notifications, ToolSession};
use tackle_testkit::{FakeLlm, Fault, Protocol, Reply, Script, Turn};

const FIXTURE: &str = "tests/fixtures/trajectory-0.1.0.jsonl";
const FIXTURE_TRANSCRIPT: &str = "tests/fixtures/trajectory-0.1.0.transcript";

/// Queues a notification before the second request, as a finished background job would.
struct NotifyOnce(AtomicU32);

impl ToolRefresh for NotifyOnce {
    fn refresh<'a>(&'a self, session: &'a mut ToolSession) -> BoxFuture<'a, bool> {
        Box::pin(async move {
            if self.0.fetch_add(1, Ordering::SeqCst) == 1 {
                session.state().get::<Notifications>().push("Background job job-1 (make) finished: exited 0.");
            }
            false
        })
    }
}

/// A run that writes every event type the loop writes: a retry; thinking, cost and three
/// calls in one reply (one allowed, one denied without a terminal, one failing); a
/// notification; a refused `task_done`; two empty replies that end the run with an error.
async fn recorded_run() -> (common::Ran, FakeLlm) {
    let script = Script::new([
        Turn::fault(Fault::status(429).header("retry-after-ms", "20")),
        Turn::reply(
            Reply::text("Let me look.")
                .thinking("Echo first, then\nthe rest.")
                .call("e1", "echo", json!({"text": "one"}))
                .call("n1", "notify", json!({"text": "make"}))
                .call("f1", "fail", json!({"text": "tests"}))
                .usage(100, 20)
                .cost(0.0012),
        ),
        Turn::reply(Reply::text("Finishing.").call("f2", "fail", json!({"text": "again"})).call(
            "d1",
            "task_done",
            json!({}),
        )),
        Turn::reply(Reply::text("")),
        Turn::reply(Reply::text(" ")),
    ]);
    let server = FakeLlm::start(script).await;
    let mut spec = RunSpec::new(Protocol::OpenAi);
    spec.mode = PermissionMode::Default;
    spec.tools = "echo,fail,notify,task_done";
    spec.refresh = Some(std::sync::Arc::new(NotifyOnce(AtomicU32::new(0))));
    let ran = run(&server, spec, "Look around, then finish.").await;
    server.assert_clean();
    (ran, server)
}

/// A line with what changes from run to run (times, durations, paths, ids, the version)
/// replaced, its keys kept in their order.
fn normalized(line: &str) -> String {
    fn blank(value: &mut Value) {
        if let Value::Object(map) = value {
            for (key, field) in map.iter_mut() {
                match key.as_str() {
                    "t" | "workspace" | "session_id" | "base_url" | "tackle_version" => *field = json!("-"),
                    "duration_ms" => *field = json!(0),
                    _ => blank(field),
                }
            }
        }
    }
    let mut value: Value = serde_json::from_str(line).unwrap();
    blank(&mut value);
    value.to_string()
}

fn fixture(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

#[tokio::test]
async fn the_writer_writes_the_run_as_version_0_1_0_did() {
    let (ran, _server) = recorded_run().await;
    let written = std::fs::read_to_string(ran.workspace.path().join(".tackle/trajectories/run.jsonl")).unwrap();
    let mut now: Vec<String> = written.lines().map(normalized).collect();
    // Since 0.1.0: a `conversation` event before `session_end` (for `run --continue`), whose
    // `seq` shifts the end's, and denial messages that name a rule, the modes and --yes.
    let conversation = now.len() - 2;
    assert!(now[conversation].contains(r#""type":"conversation""#), "{}", now[conversation]);
    now.remove(conversation);
    let end = now.len() - 1;
    now[end] = now[end].replace(&format!(r#""seq":{}"#, end + 1), &format!(r#""seq":{end}"#));
    let then: Vec<String> = fixture(FIXTURE)
        .lines()
        .map(|line| {
            normalized(&line.replace(
                "Allow it with a rule (e.g. notify) or a permission mode (--permission-mode bypass).",
                &"Allow it with a rule (--allow 'notify', or [permissions] allow in USER_CONFIG), a permission mode (--permission-mode bypass), or --yes."
                    .replace("USER_CONFIG", &tackle_policy::config::user_config_shown()),
            ))
        })
        .collect();
    assert_eq!(now, then);
}

#[test]
fn a_file_of_version_0_1_0_still_checks_and_renders_the_same_transcript() {
    let text = fixture(FIXTURE);
    assert_eq!(
        check(text.as_bytes()).unwrap(),
        CheckSummary { events: 28, tool_calls: 5, ended: true, unknown: Vec::new() }
    );
    let events = tackle_agent::replay::read_events(&Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE)).unwrap();
    assert_eq!(tackle_agent::replay::transcript(&events), fixture(FIXTURE_TRANSCRIPT));
}

#[test]
fn an_event_of_a_newer_version_is_reported_by_check_and_skipped_with_a_note_by_replay() {
    // The fixture with a `plan_update` (a type this version does not know) after the start.
    let mut lines: Vec<Value> = fixture(FIXTURE).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    lines.insert(1, json!({"seq": 1, "t": "2027-01-01T00:00:00.000Z", "type": "plan_update", "agent_id": "main", "plan": ["look", "finish"]}));
    for (seq, line) in lines.iter_mut().enumerate() {
        line["seq"] = json!(seq);
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("newer.jsonl");
    std::fs::write(&path, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();

    let summary = check(std::fs::read_to_string(&path).unwrap().as_bytes()).unwrap();
    let expected = CheckSummary { events: 29, tool_calls: 5, ended: true, unknown: vec!["plan_update".into()] };
    assert_eq!(summary, expected);

    let events = tackle_agent::replay::read_events(&path).unwrap();
    let mut transcript: Vec<String> = fixture(FIXTURE_TRANSCRIPT).split_inclusive('\n').map(str::to_owned).collect();
    // After the two lines of session_start.
    transcript.insert(2, "  (skipped a plan_update event: this version of Tackle does not know it)\n".to_owned());
    assert_eq!(tackle_agent::replay::transcript(&events), transcript.concat());
}

#[test]
fn a_known_event_with_a_field_of_the_wrong_type_is_named_with_its_line() {
    let text = fixture(FIXTURE).replacen("\"step\":1,\"message_count\":1", "\"step\":\"one\",\"message_count\":1", 1);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.jsonl");
    std::fs::write(&path, &text).unwrap();
    let violation = check(text.as_bytes()).unwrap_err();
    assert_eq!(
        violation.to_string(),
        "line 2: this llm_request event does not match the trajectory format: invalid type: string \"one\", expected u32"
    );
    let error = tackle_agent::replay::read_events(&path).unwrap_err().to_string();
    assert_eq!(error, format!("{} {}", path.display(), violation));
}
