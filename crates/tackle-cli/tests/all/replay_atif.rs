//! `tackle replay --format atif` through the real binary: a scripted run with several steps,
//! usage, a failing call and a subagent is exported and checked field by field, and the
//! document (with hand-written edge cases, a teammate run, the 0.1.0 fixture, and 400 random
//! event sequences: every one the export takes) is validated by Harbor's own ATIF validator
//! (harbor 0.25.0's `harbor/utils/trajectory_validator.py`, unpacked under `.test-deps/harbor`
//! by scripts/install-test-deps.sh). Without the validator the validation is skipped with a
//! message, unless `TACKLE_REQUIRE_PEERS` is set (scripts/test.sh sets it).

use std::path::{Path, PathBuf};
use std::process::Command;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tackle_testkit::{FakeLlm, Protocol, Reply, Script, Turn};

use crate::run_cli::tackle;

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Harbor's validator as `(python, PYTHONPATH)`, when installed; else skips (fails under
/// TACKLE_REQUIRE_PEERS).
fn harbor_validator() -> Option<(PathBuf, PathBuf)> {
    let python = root().join(".venv-test/bin/python");
    let harbor = root().join(".test-deps/harbor");
    let found = Command::new(&python)
        .args(["-c", "import harbor.utils.trajectory_validator"])
        .env("PYTHONPATH", &harbor)
        .output()
        .is_ok_and(|out| out.status.success());
    if !found {
        assert!(
            std::env::var_os("TACKLE_REQUIRE_PEERS").is_none(),
            "Harbor's ATIF validator is not installed in .test-deps/harbor (TACKLE_REQUIRE_PEERS is set); run scripts/install-test-deps.sh"
        );
        eprintln!(
            "SKIPPED: Harbor's ATIF validator is not installed in .test-deps/harbor; run scripts/install-test-deps.sh"
        );
        return None;
    }
    Some((python, harbor))
}

/// Harbor's verdict on `document`: `Ok` with its line, or `Err` with its errors.
fn harbor_verdict(validator: &(PathBuf, PathBuf), document: &Value) -> Result<String, String> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trajectory.json");
    std::fs::write(&path, serde_json::to_string_pretty(document).unwrap()).unwrap();
    let out = Command::new(&validator.0)
        .args(["-m", "harbor.utils.trajectory_validator"])
        .arg(&path)
        .env("PYTHONPATH", &validator.1)
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if out.status.success() { Ok(text) } else { Err(text) }
}

/// Exports `trajectory` with the binary: (exit code, stdout, stderr).
async fn export(trajectory: &Path) -> (Option<i32>, String, String) {
    let out =
        tackle(vec!["replay".into(), trajectory.display().to_string(), "--format".into(), "atif".into()], vec![]).await;
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A parent that reads two files (one missing), delegates to an `explore` child that reads one,
/// and finishes; every reply priced.
fn delegating_script() -> Script {
    Script::new([
        Turn::reply(
            Reply::text("Let me look.")
                .thinking("Read it, and ask a helper.")
                .call("c1", "read_file", json!({"file_path": "README.md"}))
                .call("c2", "read_file", json!({"file_path": "missing.txt"}))
                .call(
                    "c3",
                    "subagent",
                    json!({"prompt": "What does README.md say?", "subagent_type": "explore", "description": "read it"}),
                )
                .usage(100, 20)
                .cost(0.001),
        ),
        Turn::reply(
            Reply::text("").call("r1", "read_file", json!({"file_path": "README.md"})).usage(50, 5).cost(0.0005),
        ),
        Turn::reply(Reply::text("The README says hello.").usage(60, 6).cost(0.0006)),
        Turn::reply(Reply::text("Done: it says hello.").call("d1", "task_done", json!({})).usage(200, 10).cost(0.002)),
    ])
}

/// The `(source, message)` of each step.
fn steps(document: &Value) -> Vec<(String, String)> {
    document["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["source"].as_str().unwrap().to_owned(), s["message"].as_str().unwrap_or("(parts)").to_owned()))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_with_a_subagent_exports_as_atif_that_harbor_validates() {
    let validator = harbor_validator();
    for (protocol, model, full) in
        [(Protocol::OpenAi, "openai/fake", false), (Protocol::Anthropic, "anthropic/fake", true)]
    {
        let server = FakeLlm::start(delegating_script()).await;
        let workspace = tempfile::tempdir().unwrap();
        std::fs::write(workspace.path().join("README.md"), "hello\n").unwrap();
        let mut args: Vec<String> = ["run", "read the readme", "--model", model, "--base-url"]
            .iter()
            .map(|s| (*s).to_owned())
            .chain([server.base_url(protocol), "--workspace".into(), workspace.path().display().to_string()])
            .chain(["--json".to_owned(), "--yes".to_owned()])
            .collect();
        if full {
            args.push("--trajectory-full".into());
        }
        let out = tackle(args, vec![]).await;
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        server.assert_clean();
        let result: Value = serde_json::from_slice(&out.stdout).unwrap();
        let trajectory = PathBuf::from(result["trajectory"].as_str().unwrap());

        let (code, stdout, stderr) = export(&trajectory).await;
        assert_eq!(code, Some(0), "{stderr}");
        assert_eq!(stderr, "");
        let document: Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(document["schema_version"], "ATIF-v1.7");
        assert_eq!(document["agent"]["model_name"], model);
        let session = std::fs::read_to_string(&trajectory).unwrap();
        let first: Value = serde_json::from_str(session.lines().next().unwrap()).unwrap();
        assert_eq!(document["session_id"], first["session_id"]);

        // The system prompt (only with --trajectory-full), the task, then one step per reply.
        let mut expected = vec![
            ("user".to_owned(), "read the readme".to_owned()),
            ("agent".to_owned(), "Let me look.".to_owned()),
            ("agent".to_owned(), "Done: it says hello.".to_owned()),
        ];
        if full {
            assert!(steps(&document)[0].1.contains("You are Tackle"), "{:?}", steps(&document)[0]);
            expected.insert(0, ("system".to_owned(), steps(&document)[0].1.clone()));
            let names: Vec<&Value> = document["agent"]["tool_definitions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| &d["function"]["name"])
                .collect();
            assert!(names.contains(&&json!("read_file")) && names.contains(&&json!("subagent")), "{names:?}");
        } else {
            assert!(document["agent"].get("tool_definitions").is_none());
        }
        assert_eq!(steps(&document), expected);
        let first_reply = &document["steps"][expected.len() - 2];
        assert_eq!(first_reply["reasoning_content"], "Read it, and ask a helper.");
        let calls: Vec<(&Value, &Value)> = first_reply["tool_calls"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (&c["tool_call_id"], &c["function_name"]))
            .collect();
        assert_eq!(
            calls,
            [
                (&json!("c1"), &json!("read_file")),
                (&json!("c2"), &json!("read_file")),
                (&json!("c3"), &json!("subagent"))
            ]
        );
        assert_eq!(first_reply["tool_calls"][1]["arguments"], json!({"file_path": "missing.txt"}));
        let results = first_reply["observation"]["results"].as_array().unwrap();
        let answered: Vec<(&Value, &Value)> =
            results.iter().map(|r| (&r["source_call_id"], &r["extra"]["is_error"])).collect();
        assert_eq!(
            answered,
            [(&json!("c1"), &json!(false)), (&json!("c2"), &json!(true)), (&json!("c3"), &json!(false))]
        );
        assert!(results[0]["content"].as_str().unwrap().contains("hello"), "{}", results[0]);
        assert!(results[1]["content"].as_str().unwrap().contains("missing.txt"), "{}", results[1]);
        assert_eq!(
            (&first_reply["metrics"]["prompt_tokens"], &first_reply["metrics"]["completion_tokens"]),
            (&json!(100), &json!(20))
        );
        // Prices come on the OpenAI wire only (OpenRouter's `usage.cost`).
        let priced = protocol == Protocol::OpenAi;
        assert_eq!(
            first_reply["metrics"]["cost_usd"].as_f64().map(|c| (c - 0.001).abs() < 1e-12),
            priced.then_some(true)
        );

        // The child: embedded, and referenced from the result of the call that started it.
        assert_eq!(
            results[2]["subagent_trajectory_ref"],
            json!([{"trajectory_id": "agent-1", "extra": {"subagent_type": "explore"}}])
        );
        let children = document["subagent_trajectories"].as_array().unwrap();
        assert_eq!(children.len(), 1);
        let child = &children[0];
        assert_eq!(child["trajectory_id"], "agent-1");
        assert_eq!(
            steps(child)[..3],
            [
                ("user".to_owned(), "What does README.md say?".to_owned()),
                ("agent".to_owned(), String::new()),
                ("agent".to_owned(), "The README says hello.".to_owned())
            ]
        );
        assert_eq!(child["agent"]["extra"]["permission_mode"], "plan");

        // Totals: every reply of the tree, the child's included.
        let totals = &document["final_metrics"];
        assert_eq!(
            (&totals["total_prompt_tokens"], &totals["total_completion_tokens"], &totals["total_steps"]),
            (&json!(410), &json!(41), &json!(expected.len()))
        );
        assert_eq!(
            totals["total_cost_usd"].as_f64().map(|c| (c - 0.0041).abs() < 1e-9),
            priced.then_some(true),
            "{totals}"
        );
        assert_eq!(document["extra"]["runs"][0]["status"], "success");

        if let Some(validator) = &validator {
            harbor_verdict(validator, &document).unwrap_or_else(|errors| panic!("{protocol:?}: {errors}\n{stdout}"));
            // The validator can fail: a result for a call of another step is refused.
            let mut broken = document.clone();
            broken["steps"][expected.len() - 1]["observation"]["results"][0]["source_call_id"] = json!("c1");
            let errors = harbor_verdict(validator, &broken).unwrap_err();
            assert!(errors.contains("source_call_id 'c1'"), "{errors}");
        }
    }
}

/// Writes `events` (`[agent, type, fields]`) as a trajectory file, `seq` and `t` filled in.
fn write_trajectory(dir: &Path, events: &[(&str, &str, Value)]) -> PathBuf {
    let text: String = events
        .iter()
        .enumerate()
        .map(|(seq, (agent, kind, fields))| {
            let mut line = json!({"seq": seq, "t": "2026-01-02T03:04:05.678Z", "type": kind, "agent_id": agent});
            line.as_object_mut().unwrap().extend(fields.as_object().cloned().unwrap_or_default());
            format!("{line}\n")
        })
        .collect();
    let path = dir.join("t.jsonl");
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread")]
async fn odd_and_hostile_trajectories_still_export_valid_atif() {
    let validator = harbor_validator();
    let dir = tempfile::tempdir().unwrap();
    let start = |task: &str| json!({"task": task, "provider": "openai", "model": "m", "session_id": "s"});
    let call = |id: &str| json!({"step": 1, "call_id": id, "name": "bash", "args": "{not json"});
    let output =
        |id: &str, names: &str| json!({"step": 1, "call_id": id, "content": "x", "structured": {"agent_id": names}});
    let path = write_trajectory(
        dir.path(),
        &[
            ("main", "session_start", start("t")),
            ("main", "plan_update", json!({"plan": ["a"]})),
            ("main", "notification", json!({"text": "job-1 finished"})),
            // Times Harbor's reader (Python's fromisoformat) refuses, and one it takes.
            ("main", "notification", json!({"text": "n1", "t": "2026-01-02t03:04:05.1z"})),
            ("main", "notification", json!({"text": "n2", "t": "2026-02-30T00:00:00Z"})),
            ("main", "notification", json!({"text": "n3", "t": "2026-01-02T03:04:05.123456+05:30"})),
            // A call no reply announced, with arguments that are no JSON, naming the main
            // agent as its child.
            ("main", "tool_call", call("m1")),
            ("main", "tool_output", output("m1", "main")),
            ("agent-1", "session_start", start("child")),
            // A child naming its parent, and itself, as children; a time that is none.
            ("agent-1", "tool_call", call("a1")),
            ("agent-1", "tool_output", output("a1", "main")),
            ("agent-1", "tool_call", call("a2")),
            ("agent-1", "tool_output", output("a2", "agent-1")),
            ("agent-1", "task", json!({"task": "again", "t": "yesterday"})),
            // Cut short: a reply whose call never answered, no session_end.
            (
                "main",
                "llm_response",
                json!({"step": 2, "text": "", "tool_calls": [{"id": "m2", "name": "bash", "args": {}}]}),
            ),
            ("main", "tool_call", json!({"step": 2, "call_id": "m2", "name": "bash", "args": {}})),
        ],
    );
    let (code, stdout, stderr) = export(&path).await;
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(stderr, "tackle: left out events of types this version does not know: plan_update\n");
    let document: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        steps(&document),
        [
            ("user".to_owned(), "t".to_owned()),
            ("system".to_owned(), "job-1 finished".to_owned()),
            ("system".to_owned(), "n1".to_owned()),
            ("system".to_owned(), "n2".to_owned()),
            ("system".to_owned(), "n3".to_owned()),
            ("agent".to_owned(), String::new()),
            ("agent".to_owned(), String::new())
        ]
    );
    let times: Vec<&Value> = (2..5).map(|i| &document["steps"][i]["timestamp"]).collect();
    assert_eq!(times, [&Value::Null, &Value::Null, &json!("2026-01-02T03:04:05.123456+05:30")]);
    assert_eq!(document["steps"][5]["tool_calls"][0]["extra"]["raw_arguments"], "{not json");
    assert!(!stdout.contains("subagent_trajectory_ref"), "{stdout}");
    assert_eq!(document["subagent_trajectories"][0]["trajectory_id"], "agent-1");
    if let Some(validator) = &validator {
        harbor_verdict(validator, &document).unwrap_or_else(|errors| panic!("{errors}\n{stdout}"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_trajectory_is_refused_naming_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.jsonl");
    let shown = path.display().to_string();
    let start = r#"{"seq":0,"type":"session_start","task":"t"}"#;
    let cases = [
        (format!("{start}\n{{\"seq\":1,\"type\":\"tool_call\",\n"), format!("tackle: {shown} line 2: not valid JSON")),
        (
            format!("{start}\n\n{{\"seq\":1,\"type\":\"llm_response\",\"step\":\"one\"}}\n"),
            format!("tackle: {shown} line 3: this llm_response event does not match the trajectory format"),
        ),
        (
            format!("{start}\n{{\"seq\":1,\"call_id\":\"a\"}}\n"),
            format!("tackle: {shown} line 2: an event without a type"),
        ),
        (
            format!("{start}\n{{\"seq\":1,\"type\":\"tool_output\",\"call_id\":\"a\"}}\n"),
            format!("tackle: {shown}: line 2: tool_output for call_id a has no earlier tool_call"),
        ),
        (
            r#"{"seq":0,"type":"session_start","agent_id":"agent-1"}"#.to_owned() + "\n",
            format!("tackle: {shown}: no session_start of the main agent"),
        ),
    ];
    for (text, message) in cases {
        std::fs::write(&path, text).unwrap();
        let (code, stdout, stderr) = export(&path).await;
        assert_eq!((code, stdout.as_str()), (Some(2), ""), "{stderr}");
        assert!(stderr.starts_with(&message), "{stderr} vs {message}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    let missing =
        tackle(vec!["replay".into(), "/nonexistent/t.jsonl".into(), "--format".into(), "atif".into()], vec![]).await;
    assert_eq!(missing.status.code(), Some(2));
    // `text`, the default, is the transcript.
    std::fs::write(&path, format!("{start}\n")).unwrap();
    let text = tackle(vec!["replay".into(), shown.clone(), "--format".into(), "text".into()], vec![]).await;
    assert_eq!(text.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&text.stdout).starts_with("Task: t\n"),
        "{}",
        String::from_utf8_lossy(&text.stdout)
    );
    // --format prints; it goes with neither --check nor --rerun, and knows two formats.
    for extra in [&["--format", "atif", "--check"][..], &["--format", "atif", "--rerun"], &["--format", "html"]] {
        let mut args = vec!["replay".to_owned(), shown.clone()];
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        let out = tackle(args, vec![]).await;
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_of_version_0_1_0_exports_valid_atif() {
    let validator = harbor_validator();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tackle-agent/tests/fixtures/trajectory-0.1.0.jsonl");
    let (code, stdout, stderr) = export(&fixture).await;
    assert_eq!(code, Some(0), "{stderr}");
    let document: Value = serde_json::from_str(&stdout).unwrap();
    // The task, four replies and the notification between them; five outputs in two steps.
    let sources: Vec<String> = steps(&document).into_iter().map(|(source, _)| source).collect();
    assert_eq!(sources, ["user", "agent", "system", "agent", "agent", "agent"]);
    let answered: Vec<usize> = document["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["observation"]["results"].as_array().map_or(0, Vec::len))
        .collect();
    assert_eq!(answered, [0, 3, 0, 2, 0, 0]);
    assert_eq!(document["extra"]["runs"][0]["error"]["kind"], "empty_reply");
    if let Some(validator) = &validator {
        harbor_verdict(validator, &document).unwrap_or_else(|errors| panic!("{errors}\n{stdout}"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_teammate_s_turns_export_as_one_embedded_trajectory() {
    let validator = harbor_validator();
    // The main agent waits for each reply, so the teammate's requests (on the main agent's
    // model) come in a fixed order between the main agent's.
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call(
            "s1",
            "tool_search",
            json!({"query": "select:team_spawn,team_send,team_list"}),
        )),
        Turn::reply(Reply::text("").call("t1", "team_spawn", json!({"name": "alice", "role": "arithmetic"}))),
        Turn::reply(Reply::text("").call("m1", "team_send", json!({"to": "alice", "content": "What is 2+2?"}))),
        Turn::reply(Reply::text("4").usage(30, 1)),
        Turn::reply(Reply::text("").call("m2", "team_send", json!({"to": "alice", "content": "Times 3?"}))),
        Turn::reply(Reply::text("12").usage(40, 1)),
        Turn::reply(Reply::text("The team answered.")),
    ]))
    .await;
    let workspace = tempfile::tempdir().unwrap();
    let args: Vec<String> = ["run", "lead the team", "--model", "openai/fake", "--base-url"]
        .iter()
        .map(|s| (*s).to_owned())
        .chain([server.base_url(Protocol::OpenAi), "--workspace".into(), workspace.path().display().to_string()])
        .chain(["--json".to_owned(), "--permission-mode".to_owned(), "bypass".to_owned()])
        .collect();
    let out = tackle(args, vec![]).await;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    server.assert_clean();
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (code, stdout, stderr) = export(Path::new(result["trajectory"].as_str().unwrap())).await;
    assert_eq!(code, Some(0), "{stderr}");
    let document: Value = serde_json::from_str(&stdout).unwrap();
    let spawned = &document["steps"][2];
    assert_eq!(spawned["tool_calls"][0]["function_name"], "team_spawn");
    let reference = &spawned["observation"]["results"][0]["subagent_trajectory_ref"];
    assert_eq!((&reference[0]["trajectory_id"], &reference[0]["extra"]["name"]), (&json!("agent-1"), &json!("alice")));
    let children = document["subagent_trajectories"].as_array().unwrap();
    assert_eq!(children.len(), 1);
    // Both turns of the teammate, each request a user step, in one trajectory.
    let turns: Vec<(String, String)> = steps(&children[0])
        .into_iter()
        .map(|(source, message)| (source, message.lines().last().unwrap_or_default().to_owned()))
        .collect();
    assert_eq!(
        turns,
        [
            ("user".to_owned(), "What is 2+2?".to_owned()),
            ("agent".to_owned(), "4".to_owned()),
            ("user".to_owned(), "Times 3?".to_owned()),
            ("agent".to_owned(), "12".to_owned())
        ]
    );
    assert_eq!(children[0]["extra"]["runs"].as_array().unwrap().len(), 2);
    assert_eq!(children[0]["final_metrics"]["total_prompt_tokens"], 70);
    if let Some(validator) = &validator {
        harbor_verdict(validator, &document).unwrap_or_else(|errors| panic!("{errors}\n{stdout}"));
    }
}

/// A small deterministic generator (xorshift), so a failing case can be found again.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }

    fn pick<T: Clone>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())].clone()
    }
}

/// One random event line of a random agent: calls and outputs over a few ids (mostly of calls
/// that agent made, in `called`), children named in results, arguments of every JSON type,
/// times good and bad, odd text.
fn random_event(rng: &mut Rng, seq: usize, called: &mut Vec<(String, String)>, started: &[&str]) -> Value {
    let agents = ["main", "main", "main", "agent-1", "agent-2", ""];
    let ids = ["a", "b", "c", "d", "e", "f", "g", "h"];
    let mut agent = rng.pick(&agents);
    // Mostly an agent that started (an event before its session_start is refused).
    if !agent.is_empty() && !started.contains(&agent) && rng.below(10) > 0 {
        agent = "main";
    }
    let owner = if agent.is_empty() { "main" } else { agent };
    let mine: Vec<String> = called.iter().filter(|(a, _)| a == owner).map(|(_, id)| id.clone()).collect();
    let earlier_call = |rng: &mut Rng| {
        if !mine.is_empty() && rng.below(10) > 0 { rng.pick(&mine) } else { rng.pick(&ids).to_owned() }
    };
    let texts = ["", " ", "done", "é\u{0}\"<x>", "line\nline"];
    let times = ["2026-01-02T03:04:05.678Z", "", "x", "2026-01-02t03:04:05z", "2026-01-02T03:04:05+01:00"];
    let args = [json!({}), json!({"k": [1, {"n": null}]}), json!("{not json"), json!(null), json!(7), json!([1])];
    let mut kind = rng.pick(&[
        "task",
        "notification",
        "llm_request",
        "llm_retry",
        "llm_response",
        "llm_response",
        "tool_call",
        "tool_call",
        "permission",
        "tool_output",
        "tool_output",
        "todos",
        "error",
        "session_end",
        "conversation",
        "plan_update",
    ]);
    // Mostly an output or decision for a call made before (else it is refused).
    if matches!(kind, "tool_output" | "permission") && mine.is_empty() && rng.below(10) > 0 {
        kind = "tool_call";
    }
    let fields = match kind {
        "session_start" => {
            json!({"task": rng.pick(&texts), "provider": rng.pick(&["openai", "anthropic", ""]), "model": rng.pick(&["m", ""]), "session_id": rng.pick(&["s", ""])})
        }
        "task" | "notification" => json!({"task": rng.pick(&texts), "text": rng.pick(&texts)}),
        "llm_request" => {
            let body = rng.pick(&[
                json!(null),
                json!({"messages": [{"role": "system", "content": "sys"}], "tools": [{"name": "x", "input_schema": {}}, 3]}),
                json!({"system": [{"type": "text", "text": "s"}, 1], "tools": "no"}),
            ]);
            if body.is_null() { json!({"step": 1}) } else { json!({"step": 1, "request": body}) }
        }
        "llm_retry" => json!({"step": 1, "attempt": 1}),
        "llm_response" => {
            let calls: Vec<Value> = (0..rng.below(3))
                .map(|_| json!({"id": rng.pick(&ids), "name": "x", "args": rng.pick(&args)}))
                .collect();
            let mut usage = json!({"input_tokens": rng.below(100), "output_tokens": rng.below(100)});
            for key in ["cache_read", "cache_write"] {
                if rng.below(2) == 0 {
                    usage[key] = json!(rng.below(50));
                }
            }
            if rng.below(2) == 0 {
                usage["cost"] = json!(rng.below(100) as f64 / 1000.0);
            }
            json!({"step": 1, "text": rng.pick(&texts), "tool_calls": calls, "usage": usage, "thinking": rng.pick(&[json!(null), json!("t")])})
        }
        "tool_call" => {
            // Mostly an id this agent has not used (a second call with one id is refused).
            let fresh: Vec<&str> = ids.iter().copied().filter(|id| !mine.iter().any(|m| m == id)).collect();
            let id = if !fresh.is_empty() && rng.below(10) > 0 { rng.pick(&fresh) } else { rng.pick(&ids) };
            called.push((owner.to_owned(), id.to_owned()));
            json!({"step": 1, "call_id": id, "name": rng.pick(&["x", "y", ""]), "args": rng.pick(&args), "format": "native"})
        }
        "permission" => json!({"call_id": earlier_call(rng), "decision": "allow", "source": "mode"}),
        "tool_output" => {
            let structured = rng.pick(&[
                json!(null),
                json!({"agent_id": "agent-1"}),
                json!({"agent_id": "agent-2"}),
                json!({"agent_id": "main"}),
                json!([1]),
            ]);
            let mut output = json!({"step": 1, "call_id": earlier_call(rng), "is_error": rng.below(2) == 0, "content": rng.pick(&texts), "meta": {"duration_ms": null}});
            if !structured.is_null() {
                output["structured"] = structured;
            }
            output
        }
        "todos" => json!({"step": 1, "todos": [{"content": "c", "status": "pending"}]}),
        "error" => json!({"kind": "server", "message": rng.pick(&texts)}),
        "session_end" => json!({"status": rng.pick(&["success", "error", "max_steps"])}),
        _ => json!({}),
    };
    let mut line = json!({"seq": seq, "t": rng.pick(&times), "type": kind});
    if !agent.is_empty() {
        line["agent_id"] = json!(agent);
    }
    line.as_object_mut().unwrap().extend(fields.as_object().cloned().unwrap_or_default());
    line
}

#[test]
fn every_random_trajectory_the_export_takes_is_valid_atif() {
    let Some(validator) = harbor_validator() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let (mut taken, mut refused) = (0, 0);
    for case in 0..400 {
        let mut events = vec![json!({"seq": 0, "t": "", "type": "session_start", "agent_id": "main", "task": "t"})];
        let mut started = vec!["main"];
        for agent in ["agent-1", "agent-2"] {
            if rng.below(2) == 0 {
                events.push(json!({"seq": 0, "type": "session_start", "agent_id": agent, "task": "sub"}));
                started.push(agent);
            }
        }
        // Now and then a second start of an agent: refused.
        if rng.below(20) == 0 {
            events.push(json!({"seq": 0, "type": "session_start", "agent_id": "main"}));
        }
        let count = 1 + rng.below(25);
        let mut called = Vec::new();
        events.extend((0..count).map(|seq| random_event(&mut rng, seq, &mut called, &started)));
        let lines: Vec<(usize, tackle::trajectory::Line)> =
            events.iter().enumerate().map(|(i, e)| (i + 1, tackle::trajectory::Line::from_value(e).unwrap())).collect();
        match tackle::trajectory::atif::to_atif(&lines) {
            Ok(export) => {
                taken += 1;
                let path = dir.path().join(format!("case-{case:03}.json"));
                std::fs::write(&path, serde_json::to_string(&export.document).unwrap()).unwrap();
            }
            Err(_) => refused += 1,
        }
    }
    // Both outcomes are exercised.
    assert!(taken >= 100 && refused >= 50, "taken {taken}, refused {refused}");
    let script = "import json, pathlib, sys\n\
                  from harbor.utils.trajectory_validator import TrajectoryValidator\n\
                  bad = []\n\
                  for path in sorted(pathlib.Path(sys.argv[1]).glob('*.json')):\n    \
                      v = TrajectoryValidator()\n    \
                      if not v.validate(path):\n        \
                          bad.append([path.name] + v.errors[:3])\n\
                  print(json.dumps(bad))\n";
    let out = Command::new(&validator.0)
        .args(["-c", script])
        .arg(dir.path())
        .env("PYTHONPATH", &validator.1)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let bad: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(bad, json!([]), "export accepted these but Harbor refuses them (see {})", dir.keep().display());
}
