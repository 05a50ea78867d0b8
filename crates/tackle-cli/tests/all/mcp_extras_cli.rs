//! Resources, prompts and elicitation of imported servers, driving the real binary against a
//! server on the official Python SDK (`tackle-mcp/tests/peers/sdk_extras.py`): the two resource
//! tools (text, image, blob, template, hostile input), present only when a server offers
//! resources and under the permission rules; `tackle mcp prompt`; chat's
//! `/mcp__SERVER__PROMPT`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Output;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tackle_testkit::{Expect, FakeLlm, Reply, Script, Turn};

use crate::support::isolated;
use crate::support::pty::{Controlling, Pty, Stdin};

fn extras_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tackle-mcp/tests/peers/sdk_extras.py").canonicalize().unwrap()
}

/// The user config that imports the SDK server as `extras`, written to `user`.
fn import_extras(user: &Path, python: &Path) {
    let config = format!(
        "[mcp.servers.extras]\ncommand = {:?}\nargs = [{:?}]\n",
        python.display().to_string(),
        extras_script().display().to_string()
    );
    std::fs::write(user.join("config.toml"), config).unwrap();
}

fn run(workspace: &Path, user: &Path, args: &[&str]) -> Output {
    isolated::tackle(workspace, user, args).output().unwrap()
}

fn call(workspace: &Path, user: &Path, tool: &str, args: Value) -> Value {
    let out = run(workspace, user, &["tools", "call", tool, &args.to_string(), "--json"]);
    serde_json::from_slice(&out.stdout).unwrap_or_else(|_| panic!("{}", String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn the_resource_tools_list_and_read_text_images_blobs_and_templates() {
    let python = require!(crate::peers::python(), "the Python MCP SDK (.venv-mcp)");
    let (workspace, user) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    import_extras(user.path(), &python);
    let (ws, user) = (workspace.path(), user.path());
    let listed = call(ws, user, "list_mcp_resources", json!({}));
    assert_eq!(listed["is_error"], false, "{listed}");
    let entries: Vec<Value> = serde_json::from_str(listed["output"].as_str().unwrap()).unwrap();
    let uris: Vec<&str> = entries.iter().map(|e| e["uri"].as_str().or(e["uriTemplate"].as_str()).unwrap()).collect();
    assert_eq!(uris, ["notes://readme", "img://pixel", "bin://data", "notes://topics/{topic}"]);
    assert!(entries.iter().all(|e| e["server"] == "extras"));
    assert_eq!(entries[0]["description"], "The project's notes.");
    let only = call(ws, user, "list_mcp_resources", json!({"server": "extras"}));
    assert_eq!(only["output"], listed["output"]);
    let text = call(ws, user, "read_mcp_resource", json!({"server": "extras", "uri": "notes://readme"}));
    assert_eq!(text["output"], "Remember the milk.");
    let templated = call(ws, user, "read_mcp_resource", json!({"server": "extras", "uri": "notes://topics/cats"}));
    assert_eq!(templated["output"], "Notes on cats.");
    let image = call(ws, user, "read_mcp_resource", json!({"server": "extras", "uri": "img://pixel"}));
    assert_eq!(image["output"], "[image img://pixel: image/png, 70 bytes, attached]");
    let blob = call(ws, user, "read_mcp_resource", json!({"server": "extras", "uri": "bin://data"}));
    assert_eq!(blob["output"], "[blob bin://data: application/octet-stream, 4 bytes, base64]\nAAEC/w==");
    // Hostile and wrong input: unknown servers and URIs, missing or extra fields.
    let unknown = call(ws, user, "read_mcp_resource", json!({"server": "../extras", "uri": "notes://readme"}));
    assert_eq!(unknown["is_error"], true);
    let missing = call(ws, user, "read_mcp_resource", json!({"server": "extras", "uri": "file:///etc/passwd"}));
    assert_eq!(missing["is_error"], true, "{missing}");
    assert!(missing["output"].as_str().unwrap().starts_with("MCP server extras: resources/read failed"), "{missing}");
    for bad in [json!({"server": "extras"}), json!({"uri": "x"}), json!({"server": "extras", "uri": "x", "more": 1})] {
        let refused = call(ws, user, "read_mcp_resource", bad.clone());
        assert_eq!(refused["is_error"], true, "{bad}: {refused}");
    }
    let bad_list = call(ws, user, "list_mcp_resources", json!({"server": "nope"}));
    assert_eq!(bad_list["is_error"], true);
}

#[test]
fn the_resource_tools_are_absent_without_a_server_that_offers_resources() {
    let (workspace, user) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tackle-mcp/tests/peers/fake_server.py");
    std::fs::write(
        user.path().join("config.toml"),
        format!("[mcp.servers.fake]\ncommand = \"python3\"\nargs = [\"-u\", {:?}]\n", fake.display().to_string()),
    )
    .unwrap();
    let out = run(workspace.path(), user.path(), &["tools", "list", "--json"]);
    let listed: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = listed.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"mcp__fake__echo"), "{names:?}");
    assert!(!names.iter().any(|n| n.contains("mcp_resource")), "{names:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_reads_resources_under_the_permission_rules() {
    let python = require!(crate::peers::python(), "the Python MCP SDK (.venv-mcp)");
    let script = || {
        Script::new([
            Turn::reply(Reply::text("").call("l1", "list_mcp_resources", json!({})).call(
                "r1",
                "read_mcp_resource",
                json!({"server": "extras", "uri": "notes://readme"}),
            )),
            Turn::reply(Reply::text("Read.")),
        ])
    };
    let result = |body: &Value, id: &str| -> String {
        body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
            .map(|m| m["content"].to_string())
            .unwrap()
    };
    for (extra, readable) in [(None, false), (Some("read_mcp_resource"), true)] {
        let server = FakeLlm::start(script()).await;
        let (workspace, user) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        import_extras(user.path(), &python);
        let url = server.openai_base_url();
        let mut args = vec!["run", "read the notes", "--model", "openai/fake", "--base-url", &url];
        if let Some(rule) = extra {
            args.extend(["--allow", rule]);
        }
        let out = isolated::tackle(workspace.path(), user.path(), &args).env("OPENAI_API_KEY", "k").output().unwrap();
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{}", String::from_utf8_lossy(&out.stderr));
        let body = &requests[1].body;
        // Listing is read-only: it runs in the default mode without a question.
        assert!(result(body, "l1").contains("notes://readme"), "{}", result(body, "l1"));
        // Reading asks, like any tool of a server that is not trusted; an allow rule lets it.
        assert_eq!(result(body, "r1").contains("Remember the milk."), readable, "{}", result(body, "r1"));
    }
}

#[test]
fn mcp_prompt_prints_a_filled_in_prompt() {
    let python = require!(crate::peers::python(), "the Python MCP SDK (.venv-mcp)");
    let (workspace, user) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    import_extras(user.path(), &python);
    let (ws, user) = (workspace.path(), user.path());
    let out = run(ws, user, &["mcp", "prompt", "extras", "review", "--arg", "code=x = 1", "--arg", "focus=style"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Please review this code for style:\nx = 1\n");
    let listed = run(ws, user, &["mcp", "prompt", "extras"]);
    assert_eq!(String::from_utf8_lossy(&listed.stdout), "review code [focus] — Review some code.\n");
    let missing = run(ws, user, &["mcp", "prompt", "extras", "review"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("needs code"));
    let unknown = run(ws, user, &["mcp", "prompt", "extras", "nope"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("its prompts: review"));
    let bad = run(ws, user, &["mcp", "prompt", "extras", "review", "--arg", "novalue"]);
    assert_eq!(bad.status.code(), Some(2));
    // A workspace server is not started for a prompt without consent.
    std::fs::remove_file(user.join("config.toml")).unwrap();
    let definition = json!({"mcpServers": {"extras": {"command": python, "args": [extras_script()]}}});
    std::fs::write(ws.join(".mcp.json"), definition.to_string()).unwrap();
    let refused = run(ws, user, &["mcp", "prompt", "extras", "review", "--arg", "code=x"]);
    assert_eq!(refused.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("need your consent"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let allowed = run(ws, user, &["mcp", "prompt", "extras", "review", "--arg", "code=x", "--allow-project-mcp"]);
    assert_eq!(String::from_utf8_lossy(&allowed.stdout), "Please review this code for bugs:\nx\n");
}

#[tokio::test(flavor = "multi_thread")]
async fn chat_sends_a_server_prompt_as_the_task() {
    let python = require!(crate::peers::python(), "the Python MCP SDK (.venv-mcp)");
    let server = FakeLlm::start(Script::new([Turn::reply(Reply::text("Reviewed."))
        .expect(Expect::last_user_contains("Please review this code for naming:\nfn main() {}"))]))
    .await;
    let workspace = tempfile::tempdir().unwrap();
    let user = workspace.path().join(".test-user-config");
    std::fs::create_dir_all(&user).unwrap();
    import_extras(&user, &python);
    let url = server.openai_base_url();
    let path = workspace.path().to_owned();
    let seen = tokio::task::spawn_blocking(move || {
        let args = ["chat", "--model", "openai/fake", "--base-url", &url];
        let mut pty = Pty::spawn(&path, &args, Stdin::Terminal, "", Controlling::Yes);
        pty.expect("tackle> ", 1);
        pty.type_line("/mcp__extras__nope");
        pty.expect("/mcp__extras__review code [focus]", 1);
        pty.type_line("/mcp__extras__review");
        pty.expect("needs code", 1);
        pty.type_line("/mcp__extras__review focus=naming code=\"fn main() {}\"");
        pty.expect("Reviewed.", 1);
        pty.type_line("/exit");
        assert_eq!(pty.wait(), Some(0), "{}", pty.screen());
        pty.screen()
    })
    .await
    .unwrap();
    let _ = seen;
    server.assert_clean();
}

#[test]
fn unattended_forms_are_declined_or_take_their_defaults_as_the_user_config_says() {
    let python = require!(crate::peers::python(), "the Python MCP SDK (.venv-mcp)");
    let (workspace, user) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    import_extras(user.path(), &python);
    let (ws, user) = (workspace.path(), user.path());
    let output = |tool: &str, extra: &[&str]| {
        let mut args = vec!["tools", "call", tool, "{}"];
        args.extend(extra);
        let out = run(ws, user, &args);
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    // Nobody to ask and nothing configured: declined.
    assert_eq!(output("mcp__extras__book", &[]), "decline");
    // A workspace cannot choose the answer, even a trusted one.
    std::fs::write(ws.join("tackle.toml"), "[mcp]\nelicitation = \"accept-defaults\"\n").unwrap();
    assert_eq!(output("mcp__extras__book", &["--trust-workspace"]), "decline");
    // The person's own config can: every field takes its default.
    let config = std::fs::read_to_string(user.join("config.toml")).unwrap();
    std::fs::write(user.join("config.toml"), format!("[mcp]\nelicitation = \"accept-defaults\"\n{config}")).unwrap();
    assert_eq!(
        output("mcp__extras__book", &[]),
        r#"accept: {"guest":"Ada","nights":2,"room":"single","breakfast":false}"#
    );
    // A required field without a default cannot be filled in: declined.
    assert_eq!(output("mcp__extras__subscribe", &[]), "decline");
    // A value it does not know is an error naming the key.
    std::fs::write(user.join("config.toml"), format!("[mcp]\nelicitation = \"accept-all\"\n{config}")).unwrap();
    let out = run(ws, user, &["tools", "call", "mcp__extras__book", "{}"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("elicitation"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[tokio::test(flavor = "multi_thread")]
async fn on_a_terminal_the_person_fills_the_form_in_or_declines_it() {
    let python = require!(crate::peers::python(), "the Python MCP SDK (.venv-mcp)");
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("").call("b1", "mcp__extras__book", json!({}))),
        Turn::reply(Reply::text("").call("b2", "mcp__extras__book", json!({}))),
        Turn::reply(Reply::text("").call("b3", "mcp__extras__book", json!({}))),
        Turn::reply(Reply::text("Booked.")),
    ]))
    .await;
    let workspace = tempfile::tempdir().unwrap();
    let user = workspace.path().join(".test-user-config");
    std::fs::create_dir_all(&user).unwrap();
    import_extras(&user, &python);
    let url = server.openai_base_url();
    let path = workspace.path().to_owned();
    let seen = tokio::task::spawn_blocking(move || {
        let args = ["run", "book a room", "--model", "openai/fake", "--base-url", &url, "--allow", "mcp__extras__book"];
        let mut pty = Pty::spawn(&path, &args, Stdin::Terminal, "", Controlling::Yes);
        pty.expect("Fill it in? [y]es, [n]o (decline), [c]ancel: ", 1);
        pty.type_line("y");
        pty.expect("Guest [Enter: Ada]: ", 1);
        pty.type_line("Bob");
        pty.expect("Nights [Enter: 2]: ", 1);
        pty.type_line("three");
        pty.expect("type a whole number", 1);
        pty.type_line("3");
        pty.expect("Room [Enter: single]: ", 1);
        pty.type_line("2");
        pty.expect("Breakfast [Enter: false]: ", 1);
        pty.type_line("");
        pty.expect("was sent", 1);
        pty.expect("Fill it in?", 2);
        pty.type_line("n");
        pty.expect("was declined", 1);
        pty.expect("Fill it in?", 3);
        pty.type_line("c");
        pty.expect("was cancelled", 1);
        pty.expect("Booked.", 1);
        let code = pty.wait();
        (code, pty.screen(), pty.raw())
    })
    .await
    .unwrap();
    let (code, screen, raw) = seen;
    assert_eq!(code, Some(0), "{screen}");
    assert!(raw.contains("MCP server 'extras' asks for input:"), "{raw}");
    assert!(raw.contains("• Guest (text): Who stays [default: Ada]"), "{raw}");
    assert!(
        raw.contains("• Room (one of the choices): The kind of room — 1) single  2) double [default: single]"),
        "{raw}"
    );
    let requests = server.requests();
    let result = |index: usize, id: &str| -> String {
        requests[index].body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
            .map(|m| m["content"].as_str().map_or_else(|| m["content"].to_string(), str::to_owned))
            .unwrap()
    };
    assert_eq!(result(1, "b1"), r#"accept: {"guest":"Bob","nights":3,"room":"double","breakfast":false}"#);
    assert_eq!(result(2, "b2"), "decline");
    assert_eq!(result(3, "b3"), "cancel");
}

#[test]
fn the_reference_server_everything_lists_reads_and_prompts() {
    let everything = require!(
        crate::peers::npm_file("@modelcontextprotocol/server-everything/dist/index.js"),
        "server-everything (.mcp-peers)"
    );
    let (workspace, user) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    std::fs::write(
        user.path().join("config.toml"),
        format!(
            "[mcp.servers.everything]\ncommand = \"node\"\nargs = [{:?}, \"stdio\"]\n",
            everything.display().to_string()
        ),
    )
    .unwrap();
    let (ws, user) = (workspace.path(), user.path());
    let listed = call(ws, user, "list_mcp_resources", json!({"server": "everything"}));
    let entries: Vec<Value> = serde_json::from_str(listed["output"].as_str().unwrap()).unwrap();
    assert!(entries.iter().any(|e| e["uriTemplate"] == "demo://resource/dynamic/blob/{resourceId}"), "{entries:?}");
    assert!(entries.iter().any(|e| e["uri"].as_str().is_some_and(|u| u.ends_with("architecture.md"))), "{entries:?}");
    let blob =
        call(ws, user, "read_mcp_resource", json!({"server": "everything", "uri": "demo://resource/dynamic/blob/1"}));
    let text = blob["output"].as_str().unwrap();
    let (head, data) = text.split_once('\n').unwrap();
    assert!(head.starts_with("[blob demo://resource/dynamic/blob/1: "), "{text}");
    // "Resource 1: " in base64.
    assert!(data.starts_with("UmVzb3VyY2UgMTog"), "{text}");
    let out = run(
        ws,
        user,
        &["mcp", "prompt", "everything", "resource-prompt", "--arg", "resourceType=Text", "--arg", "resourceId=1"],
    );
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.contains("--- demo://resource/dynamic/text/1 ---\nResource 1: "), "{printed}");
}

#[test]
fn a_form_out_of_the_blue_and_a_url_form_are_declined() {
    let python = require!(crate::peers::python(), "the Python MCP SDK (.venv-mcp)");
    let (workspace, user) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    import_extras(user.path(), &python);
    // With accept-defaults, a form asked during a call is accepted; the others are not.
    let config = std::fs::read_to_string(user.path().join("config.toml")).unwrap();
    std::fs::write(user.path().join("config.toml"), format!("[mcp]\nelicitation = \"accept-defaults\"\n{config}"))
        .unwrap();
    let lines = [
        json!({"name": "mcp__extras__late", "args": {}}),
        json!({"name": "bash", "args": {"command": "sleep 1.5"}}),
        json!({"name": "mcp__extras__late_result", "args": {}}),
        json!({"name": "mcp__extras__url_form", "args": {}}),
        json!({"name": "mcp__extras__book", "args": {}}),
    ];
    let input: String = lines.iter().map(|line| format!("{line}\n")).collect();
    let mut child = isolated::tackle(workspace.path(), user.path(), &["tools", "batch", "--permission-mode", "bypass"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(child.stdin.as_mut().unwrap(), input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let outputs: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap()["output"].as_str().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(outputs[0], "scheduled");
    assert_eq!(outputs[2], "decline", "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(outputs[3], "decline");
    assert!(outputs[4].starts_with("accept: "), "{outputs:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("asked for a form while Tackle had asked it nothing"));
}
