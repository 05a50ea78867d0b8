//! Imported MCP tools through the command line: `.mcp.json` and `[mcp.servers]`, consent for
//! what the workspace defines, `tools list` / `tools call` / `tools batch`, allowlists with
//! globs, `${VAR}` expansion, `MCP_TOOL_TIMEOUT`, list changes between batch lines, and
//! `mcp serve` re-exporting only what is named.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::isolated;

fn fake_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tackle-mcp/tests/peers/fake_server.py").canonicalize().unwrap()
}

/// A workspace and a user config directory of its own.
struct Setup {
    workspace: tempfile::TempDir,
    user: tempfile::TempDir,
}

impl Setup {
    fn new() -> Setup {
        Setup { workspace: tempfile::tempdir().unwrap(), user: tempfile::tempdir().unwrap() }
    }

    fn mcp_json(&self, extra_args: &[&str]) {
        let mut args = vec![json!("-u"), json!(fake_script())];
        args.extend(extra_args.iter().map(|a| json!(a)));
        let file = json!({"mcpServers": {"fake": {"command": "python3", "args": args}}});
        std::fs::write(self.workspace.path().join(".mcp.json"), file.to_string()).unwrap();
    }

    fn user_config(&self, text: &str) {
        std::fs::write(self.user.path().join("config.toml"), text).unwrap();
    }

    fn tackle(&self, args: &[&str], envs: &[(&str, &str)]) -> Command {
        let mut command = isolated::tackle(self.workspace.path(), self.user.path(), args);
        for (key, value) in envs {
            command.env(key, value);
        }
        command
    }

    fn run(&self, args: &[&str], envs: &[(&str, &str)]) -> Output {
        self.tackle(args, envs).output().unwrap()
    }

    fn listed(&self, args: &[&str], envs: &[(&str, &str)]) -> (Vec<Value>, String) {
        let out = self.run(&[&["tools", "list", "--json"][..], args].concat(), envs);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let listed: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
        let mcp = listed.into_iter().filter(|t| t["source"] != "builtin").collect();
        (mcp, String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

fn names(listed: &[Value]) -> Vec<&str> {
    listed.iter().map(|t| t["name"].as_str().unwrap()).collect()
}

const FAKE_TOOLS: [&str; 4] = ["mcp__fake__echo", "mcp__fake__slow", "mcp__fake__toggle", "mcp__fake__image"];

#[test]
fn workspace_servers_start_only_with_consent() {
    let setup = Setup::new();
    setup.mcp_json(&[]);
    let (listed, stderr) = setup.listed(&[], &[]);
    assert_eq!(listed, Vec::<Value>::new());
    assert_eq!(
        stderr.trim(),
        format!(
            "tackle: MCP server 'fake' from .mcp.json was not started: servers defined by the workspace need your \
             consent. Allow them with --allow-project-mcp, TACKLE_ALLOW_PROJECT_MCP=1, or by trusting the workspace \
             (--trust-workspace, or [mcp] trusted_workspaces in {}).",
            setup.user.path().join("config.toml").display()
        )
    );
    let (listed, stderr) = setup.listed(&["--allow-project-mcp"], &[]);
    assert_eq!(names(&listed), FAKE_TOOLS, "{stderr}");
    assert_eq!(
        listed[0],
        json!({"name": "mcp__fake__echo", "aliases": [], "description": "The echo tool.",
               "toolsets": ["default", "trae", "bare", "codex", "code", "mcp"], "read_only": false, "concurrency_safe": false,
               "source": "mcp:fake"})
    );
    let (listed, _) = setup.listed(&[], &[("TACKLE_ALLOW_PROJECT_MCP", "1")]);
    assert_eq!(names(&listed), FAKE_TOOLS);
    let (listed, _) = setup.listed(&[], &[("TACKLE_TRUST_WORKSPACE", "1")]);
    assert_eq!(names(&listed), FAKE_TOOLS);
    setup.user_config(&format!("[mcp]\ntrusted_workspaces = [{:?}]\n", setup.workspace.path().display().to_string()));
    let (listed, _) = setup.listed(&[], &[]);
    assert_eq!(names(&listed), FAKE_TOOLS);
}

#[test]
fn user_servers_need_no_consent_and_take_tackle_keys() {
    let setup = Setup::new();
    let script = fake_script();
    setup.user_config(concat!(
        "[mcp.servers.mine]\ncommand = \"python3\"\nargs = [\"-u\", \"${FAKE_SCRIPT}\"]\n",
        "disabled_tools = [\"t*\", \"image\"]\ntrusted = true\n"
    ));
    let (listed, stderr) = setup.listed(&[], &[("FAKE_SCRIPT", script.to_str().unwrap())]);
    assert_eq!(names(&listed), ["mcp__mine__echo", "mcp__mine__slow"], "{stderr}");
    assert_eq!(listed[0]["read_only"], true, "a trusted server's readOnlyHint is honoured");
    // An unset variable without a default leaves the server out with a notice.
    let (listed, stderr) = setup.listed(&[], &[]);
    assert!(listed.is_empty());
    assert!(
        stderr.contains(
            "MCP server 'mine' from the user config was not started: environment variable FAKE_SCRIPT is not set"
        ),
        "{stderr}"
    );
}

#[test]
fn imported_tools_are_called_and_allowlisted_with_globs() {
    let setup = Setup::new();
    setup.mcp_json(&[]);
    let out =
        setup.run(&["tools", "call", "mcp__fake__echo", r#"{"text": "hi"}"#, "--json", "--allow-project-mcp"], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["output"], "Echo: hi");
    assert_eq!(result["structured"], json!({"echo": "hi"}));
    let out = setup.run(&["tools", "call", "mcp__fake__echo", r#"{"text": 5}"#, "--allow-project-mcp"], &[]);
    assert_eq!(out.status.code(), Some(2));
    let (listed, _) = setup.listed(&["--allow-project-mcp", "--tools", "mcp__fake__e*,mcp__fake__slow"], &[]);
    assert_eq!(names(&listed), ["mcp__fake__echo", "mcp__fake__slow"]);
    let (listed, _) = setup.listed(&["--allow-project-mcp", "--tools", "all,mcp,-mcp__fake__image"], &[]);
    assert_eq!(names(&listed), ["mcp__fake__echo", "mcp__fake__slow", "mcp__fake__toggle"]);
    let out = setup.run(&["tools", "schema", "mcp__fake__echo", "--dialect", "anthropic", "--allow-project-mcp"], &[]);
    let schema: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        schema,
        json!([{"name": "mcp__fake__echo", "description": "The echo tool.",
                "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}])
    );
}

#[test]
fn the_call_timeout_comes_from_mcp_tool_timeout() {
    let setup = Setup::new();
    setup.mcp_json(&["--never-answer-calls"]);
    let out = setup.run(
        &["tools", "call", "mcp__fake__echo", r#"{"text": "x"}"#, "--allow-project-mcp"],
        &[("MCP_TOOL_TIMEOUT", "300")],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "MCP tool echo timed out after 300 ms (server fake).");
}

#[test]
fn a_batch_takes_up_list_changes_between_lines() {
    let setup = Setup::new();
    setup.mcp_json(&[]);
    let mut child = setup
        .tackle(&["tools", "batch", "--allow-project-mcp"], &[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, r#"{{"name": "mcp__fake__toggle"}}"#).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    writeln!(stdin, r#"{{"name": "mcp__fake__added"}}"#).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let lines: Vec<Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines[0]["output"], "toggled");
    assert_eq!(lines[1]["output"], "called added with {}");
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("MCP server fake changed its tools: added mcp__fake__added; removed none."),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn serve_list(setup: &Setup, extra: &[&str]) -> Vec<String> {
    let mut child = setup
        .tackle(&[&["mcp", "serve", "--allow-project-mcp"][..], extra].concat(), &[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    writeln!(stdin, "{init}").unwrap();
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let last: Value = serde_json::from_str(String::from_utf8(out.stdout).unwrap().lines().last().unwrap()).unwrap();
    last["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn serve_re_exports_imported_tools_only_when_named() {
    let setup = Setup::new();
    setup.mcp_json(&[]);
    let default = serve_list(&setup, &[]);
    assert!(!default.iter().any(|n| n.starts_with("mcp__")), "{default:?}");
    assert_eq!(
        serve_list(&setup, &["--tools", "all,mcp__fake__echo"])
            .iter()
            .filter(|n| n.starts_with("mcp__"))
            .collect::<Vec<_>>(),
        ["mcp__fake__echo"]
    );
    assert_eq!(serve_list(&setup, &["--tools", "mcp__fake__*"]), FAKE_TOOLS);
}

/// Only servers whose tools the allowlist can select start (issue 25, point 7): `--tools
/// …,-mcp` and `tools call` of a built-in start none, and a server left out is not asked about.
#[test]
fn servers_the_selection_cannot_use_are_not_started() {
    let setup = Setup::new();
    let marker = setup.workspace.path().join("started.log");
    let start = format!("echo started >> '{}'; exec python3 -u '{}'", marker.display(), fake_script().display());
    let file = json!({"mcpServers": {"fake": {"command": "sh", "args": ["-c", start]}}});
    std::fs::write(setup.workspace.path().join(".mcp.json"), file.to_string()).unwrap();
    std::fs::write(setup.workspace.path().join("a.txt"), "hello\n").unwrap();
    let starts = || std::fs::read_to_string(&marker).map_or(0, |text| text.lines().count());

    let read = json!({"file_path": "a.txt"}).to_string();
    for args in [
        vec!["tools", "call", "read_file", &read, "--allow-project-mcp"],
        vec!["tools", "call", "Read", &read, "--allow-project-mcp"],
        vec!["tools", "list", "--tools", "default,-mcp", "--allow-project-mcp"],
        vec!["tools", "list", "--tools", "read_file,grep", "--allow-project-mcp"],
    ] {
        let out = setup.run(&args, &[]);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(starts(), 0, "{args:?} started the server");
    }
    // Without consent, a server the selection leaves out is not even mentioned.
    let out = setup.run(&["tools", "call", "read_file", &read], &[]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "", "nothing to say about a server nobody needs");

    // The server starts when its tools can be selected: by the default, by name, by glob.
    for (args, expected) in [
        (vec!["tools", "list", "--allow-project-mcp"], 1),
        (vec!["tools", "list", "--tools", "read_file,mcp__fake__echo", "--allow-project-mcp"], 2),
        (vec!["tools", "call", "mcp__fake__echo", r#"{"text": "hi"}"#, "--allow-project-mcp"], 3),
    ] {
        let out = setup.run(&args, &[]);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(starts(), expected, "{args:?}");
    }
}

#[test]
fn a_notice_is_printed_once_not_again_when_the_tools_change() {
    let setup = Setup::new();
    let script = fake_script();
    setup.user_config(&format!(
        "[mcp.servers.fake]\ncommand = \"python3\"\nargs = [\"-u\", {:?}, \"--task-tool\", \"--hostile-schemas\"]\ndisabled_tools = [\"[oops\"]\n",
        script.to_str().unwrap()
    ));
    let mut child = setup
        .tackle(&["tools", "batch"], &[])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The toggle makes the server announce a change, and the relisting meets the same notices.
    writeln!(stdin, r#"{{"name": "mcp__fake__toggle"}}"#).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(500));
    writeln!(stdin, r#"{{"name": "mcp__fake__added"}}"#).unwrap();
    // A call of the tool whose schema does not compile: no second warning from the validator.
    writeln!(stdin, r#"{{"name": "mcp__fake__pattern", "args": {{"v": "x"}}}}"#).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(r#"called pattern with {\"v\": \"x\"}"#), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("MCP server fake changed its tools: added mcp__fake__added"), "{stderr}");
    for notice in [
        "ignoring the tool pattern '[oops'",
        "tool 'research' can only run as an MCP task",
        "the input schema of tool 'deep' nests 122 levels",
        "the input schema of tool 'loop': recursive $ref #/$defs/d was cut",
        "the input schema of tool 'pattern' does not compile",
        "does not compile",
    ] {
        assert_eq!(stderr.matches(notice).count(), 1, "{notice:?} once:\n{stderr}");
    }
    assert!(!stderr.contains("WARN"), "{stderr}");
}
