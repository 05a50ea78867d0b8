//! The planning tools in a whole run against the scripted fake LLM server (both protocols):
//! the model writes and updates a todo list (in the trajectory and `tackle replay`), loads a
//! skill from `.claude/skills/` and follows it, creates two dependent tasks and completes
//! them in order, and finds a deferred MCP tool with `tool_search` and calls it on the next
//! turn — the tool absent from every request before, present after (asserted on the bodies
//! the server received). And `tackle tools list` with the new tools and skills.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Output;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tackle_testkit::{Expect, FakeLlm, Protocol, Reply, Script, Turn};

fn fake_mcp_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tackle-mcp/tests/peers/fake_server.py").canonicalize().unwrap()
}

/// A workspace with a skill, and a user configuration that imports the fake MCP server's
/// four tools with a deferral threshold of one (so all four are deferred).
struct Setup {
    workspace: tempfile::TempDir,
    user: tempfile::TempDir,
}

impl Setup {
    fn new() -> Setup {
        let setup = Setup { workspace: tempfile::tempdir().unwrap(), user: tempfile::tempdir().unwrap() };
        let config = format!(
            "[mcp]\ndefer_threshold = 1\n[mcp.servers.fake]\ncommand = \"python3\"\nargs = [\"-u\", {:?}]\ntrusted = true\n",
            fake_mcp_script().display().to_string()
        );
        std::fs::write(setup.user.path().join("config.toml"), config).unwrap();
        let skill = setup.workspace.path().join(".claude/skills/greet");
        std::fs::create_dir_all(&skill).unwrap();
        std::fs::write(
            skill.join("SKILL.md"),
            "---\nname: greet\ndescription: Greet the user in a file\n---\nWrite greeting.txt with the text: hello from the skill\n",
        )
        .unwrap();
        setup
    }

    async fn tackle(&self, args: Vec<String>) -> Output {
        let workspace = self.workspace.path().to_owned();
        let user = self.user.path().to_owned();
        tokio::task::spawn_blocking(move || {
            let mut command = assert_cmd::Command::cargo_bin("tackle").unwrap();
            command
                .args(&args)
                .current_dir(&workspace)
                .env_remove("OPENAI_API_KEY")
                .env_remove("ANTHROPIC_API_KEY")
                .env_remove("TACKLE_MODEL")
                .env("TACKLE_CONFIG_DIR", &user);
            command.output().unwrap()
        })
        .await
        .unwrap()
    }
}

fn todos(states: [&str; 3]) -> Value {
    let items = [
        ("Load the greet skill", "Loading the greet skill"),
        ("Plan the tasks", "Planning the tasks"),
        ("Echo", "Echoing"),
    ];
    json!({"todos": items.iter().zip(states).map(|((content, active), status)| {
        json!({"content": content, "status": status, "activeForm": active})
    }).collect::<Vec<_>>()})
}

fn script() -> Script {
    Script::new([
        Turn::reply(
            Reply::text("Planning.").call("c_todo1", "todo_write", todos(["in_progress", "pending", "pending"])).call(
                "c_skill",
                "load_skill",
                json!({"name": "greet"}),
            ),
        )
        .expect(Expect { system_contains: Some("- greet: Greet the user in a file".into()), ..Expect::default() }),
        Turn::reply(
            Reply::text("Following the skill.")
                .call(
                    "c_write",
                    "write_file",
                    json!({"file_path": "greeting.txt", "content": "hello from the skill\n"}),
                )
                .call("c_design", "task_create", json!({"title": "Design"})),
        )
        .expect(Expect::result("c_skill", "Write greeting.txt with the text: hello from the skill")),
        Turn::reply(Reply::text("").call(
            "c_build",
            "task_create",
            json!({"title": "Build", "depends_on": ["{{result:c_design/id}}"]}),
        )),
        Turn::reply(Reply::text("").call("c_list1", "task_list", json!({})).call(
            "c_done1",
            "task_update",
            json!({"task_id": "{{result:c_design/id}}", "status": "done"}),
        )),
        Turn::reply(Reply::text("").call("c_list2", "task_list", json!({"status": "pending"})).call(
            "c_done2",
            "task_update",
            json!({"task_id": "{{result:c_build/id}}", "status": "done", "expected_status": "pending"}),
        ))
        .expect(Expect::result("c_done1", "\"status\": \"done\"")),
        Turn::reply(
            Reply::text("Now the echo.")
                .call("c_todo2", "todo_write", todos(["completed", "completed", "in_progress"]))
                .call("c_search", "tool_search", json!({"query": "echo"})),
        ),
        Turn::reply(Reply::text("").call("c_echo", "mcp__fake__echo", json!({"text": "hi"})))
            .expect(Expect { tools_include: vec!["mcp__fake__echo".into()], ..Expect::default() }),
        Turn::reply(Reply::text("All done.").call("c_end", "task_done", json!({})))
            .expect(Expect::result("c_echo", "Echo: hi")),
    ])
}

fn tool_names(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t.pointer("/function/name").or_else(|| t.get("name")).and_then(Value::as_str))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

fn outputs(trajectory: &str) -> Vec<Value> {
    trajectory.lines().map(|l| serde_json::from_str::<Value>(l).unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_plans_with_todos_tasks_a_skill_and_a_deferred_tool() {
    for protocol in [Protocol::OpenAi, Protocol::Anthropic] {
        let setup = Setup::new();
        let server = FakeLlm::start(script()).await;
        let model = if protocol == Protocol::OpenAi { "openai/fake" } else { "anthropic/fake" };
        let args: Vec<String> = [
            "run",
            "greet, plan and echo",
            "--model",
            model,
            "--base-url",
            &server.base_url(protocol),
            "--tools",
            "default,task_create,task_update,task_list",
            "--permission-mode",
            "bypass",
            "--json",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let out = setup.tackle(args).await;
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}\n{}", String::from_utf8_lossy(&out.stdout));
        server.assert_clean();

        // The deferred MCP tool: named in the system prompt, absent from every request until
        // tool_search loaded it, present in the request after.
        let requests = server.requests();
        assert_eq!(requests.len(), 8);
        for (index, request) in requests.iter().enumerate() {
            let names = tool_names(&request.body);
            assert_eq!(names.contains(&"mcp__fake__echo".to_owned()), index >= 6, "request {index}: {names:?}");
            assert!(names.contains(&"tool_search".to_owned()) && !names.contains(&"mcp__fake__slow".to_owned()));
        }
        let system = requests[0].view().system;
        assert!(system.contains("- mcp__fake__echo: The echo tool."), "{system}");

        // The skill was followed; the tasks were completed in dependency order.
        assert_eq!(
            std::fs::read_to_string(setup.workspace.path().join("greeting.txt")).unwrap(),
            "hello from the skill\n"
        );
        let board: Value =
            serde_json::from_str(&std::fs::read_to_string(setup.workspace.path().join(".tackle/tasks.json")).unwrap())
                .unwrap();
        let tasks: Vec<&Value> = board["tasks"].as_object().unwrap().values().collect();
        let design = tasks.iter().find(|t| t["title"] == "Design").unwrap();
        let build = tasks.iter().find(|t| t["title"] == "Build").unwrap();
        assert_eq!(build["depends_on"], json!([design["id"]]));
        assert_eq!((design["status"].as_str(), build["status"].as_str()), (Some("done"), Some("done")));
        assert!(design["updated_at"].as_str() < build["updated_at"].as_str());

        // The todo list and the listings in the trajectory.
        let result: Value = serde_json::from_slice(&out.stdout).unwrap();
        let path = result["trajectory"].as_str().unwrap().to_owned();
        let events = outputs(&std::fs::read_to_string(&path).unwrap());
        let todo_events: Vec<&Value> = events.iter().filter(|e| e["type"] == "todos").collect();
        assert_eq!(todo_events.len(), 2);
        assert_eq!(
            (todo_events[0]["step"].clone(), todo_events[0]["todos"][0]["status"].clone()),
            (json!(1), json!("in_progress"))
        );
        assert_eq!(todo_events[1]["todos"][2]["activeForm"], "Echoing");
        let output_of = |id: &str| -> String {
            events.iter().find(|e| e["type"] == "tool_output" && e["call_id"] == id).unwrap()["content"]
                .as_str()
                .unwrap()
                .to_owned()
        };
        let first: Value = serde_json::from_str(&output_of("c_list1")).unwrap();
        let ready: Vec<(&str, bool)> =
            first.as_array().unwrap().iter().map(|t| (t["title"].as_str().unwrap(), t["ready"] == true)).collect();
        assert_eq!(ready, [("Design", true), ("Build", false)]);
        let second: Value = serde_json::from_str(&output_of("c_list2")).unwrap();
        assert_eq!((second[0]["title"].as_str(), second[0]["ready"].as_bool()), (Some("Build"), Some(true)));
        assert!(
            output_of("c_search").starts_with("Loaded 1 tool(s), available from your next turn:\n- mcp__fake__echo")
        );

        let replay = setup.tackle(vec!["replay".into(), path]).await;
        let shown = String::from_utf8_lossy(&replay.stdout);
        assert!(
            shown.contains("  (todos)\n     [~] Load the greet skill\n     [ ] Plan the tasks\n     [ ] Echo\n"),
            "{shown}"
        );
        assert!(shown.contains("     [x] Plan the tasks\n     [~] Echo\n"), "{shown}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn tools_list_shows_the_planning_tools_the_skills_and_the_skipped_ones() {
    let setup = Setup::new();
    let bad = setup.workspace.path().join(".claude/skills/broken");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join("SKILL.md"), "no frontmatter here").unwrap();
    let out = setup.tackle(vec!["tools".into(), "list".into(), "--tools".into(), "all".into()]).await;
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let toolsets = |name: &str| -> String {
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("{name}: {text}"));
        line.split_whitespace().nth(1).unwrap().to_owned()
    };
    for (name, sets) in [
        ("todo_write", "default,bare,codex,all"),
        ("todo_read", "default,bare,all"),
        ("task_create", "bare,all"),
        ("task_update", "bare,all"),
        ("task_get", "bare,all"),
        ("task_list", "bare,all"),
        ("load_skill", "default,bare,all"),
        ("tool_search", "default,bare,all"),
    ] {
        assert_eq!(toolsets(name), sets, "{name}");
    }
    assert!(text.contains("\nSkills (load_skill NAME):\n  greet  Greet the user in a file\n"), "{text}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(".claude/skills/broken skipped: SKILL.md has no frontmatter"), "{stderr}");

    // Skill(name) rules apply to load_skill.
    let denied = setup
        .tackle(vec![
            "tools".into(),
            "call".into(),
            "load_skill".into(),
            r#"{"name": "greet"}"#.into(),
            "--deny".into(),
            "Skill(greet)".into(),
        ])
        .await;
    assert_eq!(denied.status.code(), Some(2), "{}", String::from_utf8_lossy(&denied.stdout));
    let allowed =
        setup.tackle(vec!["tools".into(), "call".into(), "Skill".into(), r#"{"name": "greet"}"#.into()]).await;
    assert_eq!(allowed.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&allowed.stdout).starts_with("Skill \"greet\" (directory .claude/skills/greet):"));
}
