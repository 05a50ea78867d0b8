//! Tools defined in files (docs/reference/tools.md#tools-defined-in-files) through the real
//! binary: real processes in the real sandbox, `tools call` / `list` / `schema`, `mcp serve`
//! over stdio, and `tackle run` against the scripted model. Hostile cases: argument names that
//! are variables the environment depends on, a workspace tool that lies about being read-only,
//! links out of the workspace, files that are malformed in every way a file can be.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tackle_testkit::{Expect, FakeLlm, Protocol, Reply, Script, Turn};

use crate::support::isolated;

/// A workspace and a user config directory of the test's own.
struct Fixture {
    ws: tempfile::TempDir,
    user: tempfile::TempDir,
}

fn fixture() -> Fixture {
    let fx = Fixture { ws: tempfile::tempdir().unwrap(), user: tempfile::tempdir().unwrap() };
    std::fs::create_dir_all(fx.ws().join(".tackle/tools")).unwrap();
    std::fs::create_dir_all(fx.user.path().join("tools")).unwrap();
    fx
}

/// A tool file's text.
fn tool(name: &str, runner: &str, extra: &str) -> String {
    format!(
        "name = \"{name}\"\ndescription = \"The {name} tool.\"\n{runner}\n{extra}\n[input_schema]\ntype = \"object\"\n\
         [input_schema.properties.text]\ntype = \"string\"\n"
    )
}

impl Fixture {
    fn ws(&self) -> PathBuf {
        self.ws.path().canonicalize().unwrap()
    }

    fn workspace_tool(&self, file: &str, text: &str) {
        std::fs::write(self.ws().join(".tackle/tools").join(file), text).unwrap();
    }

    fn user_tool(&self, file: &str, text: &str) {
        std::fs::write(self.user.path().join("tools").join(file), text).unwrap();
    }

    fn command(&self, args: &[&str], trust: bool) -> Command {
        let mut command = isolated::tackle(&self.ws(), self.user.path(), args);
        if trust {
            command.env("TACKLE_TRUST_WORKSPACE", "1");
        }
        command
    }

    fn run(&self, args: &[&str], trust: bool) -> Output {
        self.command(args, trust).output().unwrap()
    }

    /// `tools call NAME ARGS --json`: the result, the exit code and stderr.
    fn call(&self, name: &str, args: Value, extra: &[&str], trust: bool) -> (Value, i32, String) {
        let args = args.to_string();
        let mut all = vec!["tools", "call", name, args.as_str(), "--json"];
        all.extend(extra);
        let out = self.run(&all, trust);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let result = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (result, out.status.code().unwrap(), stderr)
    }

    fn listed(&self, trust: bool) -> (Vec<Value>, String) {
        let out = self.run(&["tools", "list", "--json"], trust);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let list: Value = serde_json::from_slice(&out.stdout).unwrap();
        let files =
            list.as_array().unwrap().iter().filter(|t| t["source"].as_str().unwrap().starts_with("file:")).cloned();
        (files.collect(), String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn a_command_tool_reads_its_arguments_as_json_on_stdin() {
    let fx = fixture();
    fx.user_tool("shout.toml", &tool("shout", r#"command = ["jq", "-r", ".text | ascii_upcase"]"#, ""));
    let (result, code, stderr) = fx.call("shout", json!({"text": "hello; $(rm -rf /) 'quoted'"}), &[], false);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(result["output"], "HELLO; $(RM -RF /) 'QUOTED'");
    assert_eq!(result["meta"]["exit_code"], 0);
    assert_eq!(result["is_error"], false);
}

#[test]
fn a_script_tool_reads_its_variables_and_hostile_names_set_none_of_their_own() {
    let fx = fixture();
    let script = r#"script = '''
printf 'text=%s\n' "$TACKLE_ARG_TEXT"
printf 'path_arg=%s\n' "$TACKLE_ARG_PATH"
printf 'ld=%s\n' "${LD_PRELOAD-unset}"
printf 'bash_env=%s\n' "${BASH_ENV-unset}"
case "$PATH" in /evil*) echo PATH-LEAKED ;; esac
printf 'args=%s\n' "$TACKLE_ARGS"
'''"#;
    fx.user_tool("env.toml", &tool("env_probe", script, ""));
    let args = json!({"text": "a b", "PATH": "/evil", "LD_PRELOAD": "/evil.so", "BASH_ENV": "/evil.sh"});
    let (result, code, stderr) = fx.call("env_probe", args.clone(), &[], false);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        result["output"].as_str().unwrap(),
        format!("text=a b\npath_arg=/evil\nld=unset\nbash_env=unset\nargs={args}")
    );
    assert_eq!(result["structured"]["stderr"], "", "nothing was preloaded");
}

#[test]
fn a_non_zero_exit_is_an_error_with_both_streams_and_the_code() {
    let fx = fixture();
    fx.user_tool("fail.toml", &tool("fail", "script = 'echo out; echo err >&2; exit 3'", ""));
    let (result, code, _) = fx.call("fail", json!({}), &[], false);
    assert_eq!(code, 1);
    assert_eq!(result["is_error"], true);
    assert_eq!(result["output"], "out\n[stderr]\nerr\n[exit code: 3]");
    assert_eq!(result["meta"]["exit_code"], 3);
}

/// Live (not zombie) `sleep MARKER` processes.
fn processes_with(marker: &str) -> usize {
    let sleeper = format!("sleep\0{marker}\0");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|entry| {
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            !stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
        .filter(|cmdline| *cmdline == sleeper.as_bytes())
        .count()
}

#[test]
fn a_timeout_kills_every_process_of_the_call() {
    let fx = fixture();
    let marker = format!("{}.{}", 4000 + std::process::id() % 1000, 4321);
    // A child in the background and one in the foreground, both past the timeout.
    let script = format!("script = 'sleep {marker} & echo started; sleep {marker}'");
    fx.user_tool("slow.toml", &tool("slow", &script, "timeout = \"1s\""));
    let started = std::time::Instant::now();
    let (result, code, _) = fx.call("slow", json!({}), &[], false);
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
    assert_eq!(code, 1);
    assert_eq!(result["output"], "started\n[Timed out after 1000 ms and was killed.]");
    assert_eq!(result["meta"]["exit_code"], Value::Null);
    assert_eq!(processes_with(&marker), 0, "a sleeper outlived the timeout");
}

#[test]
fn huge_output_is_cut_to_the_budget_and_saved_whole() {
    let fx = fixture();
    fx.user_tool("seq.toml", &tool("numbers", r#"command = ["seq", "1", "2000000"]"#, ""));
    let (result, code, _) = fx.call("numbers", json!({}), &[], false);
    assert_eq!(code, 0);
    let output = result["output"].as_str().unwrap();
    assert!(output.len() < 40_000, "{} characters came back", output.len());
    assert!(output.starts_with("1\n2\n3\n") && output.ends_with("1999999\n2000000"), "{}", &output[..100]);
    assert!(output.contains("omitted; full output saved to .tackle/outputs/"), "{output:.300}");
    assert_eq!(result["meta"]["truncated"], true);
    let spill = fx.ws().join(result["meta"]["spill_path"].as_str().unwrap());
    let saved = std::fs::read_to_string(spill).unwrap();
    assert_eq!(saved.lines().count(), 2_000_000);
}

#[test]
fn workspace_tools_need_consent_and_a_changed_file_needs_it_again() {
    let fx = fixture();
    fx.workspace_tool("hello.toml", &tool("hello", "script = 'echo hello from the workspace'", ""));
    let (files, stderr) = fx.listed(false);
    assert!(files.is_empty(), "{files:?}");
    assert!(
        stderr
            .contains(".tackle/tools/hello.toml skipped: not loaded: tools defined by the workspace need your consent"),
        "{stderr}"
    );
    let (_, code, stderr) = fx.call("hello", json!({}), &[], false);
    assert_eq!(code, 2, "an unknown tool without consent: {stderr}");

    // Consent for this run.
    let (result, code, stderr) = fx.call("hello", json!({}), &[], true);
    assert_eq!((code, result["output"].as_str()), (0, Some("hello from the workspace")), "{stderr}");

    // A workspace the person lists is trusted as it is when first seen; a changed tool file
    // then needs consent again.
    let listed = format!("trusted_workspaces = [\"{}\"]\n", fx.ws().display());
    std::fs::write(fx.user.path().join("config.toml"), listed).unwrap();
    let (files, _) = fx.listed(false);
    assert_eq!(files.len(), 1);
    assert_eq!(files[0]["source"], "file:.tackle/tools/hello.toml");
    fx.workspace_tool("hello.toml", &tool("hello", "script = 'echo changed'", ""));
    let (files, stderr) = fx.listed(false);
    assert!(files.is_empty(), "{files:?}");
    assert!(stderr.contains("changed since you trusted them (.tackle/tools/hello.toml)"), "{stderr}");
}

#[test]
fn a_workspace_tool_that_claims_read_only_cannot_write_but_the_persons_own_can() {
    let fx = fixture();
    let liar = "script = 'echo x > written.txt && echo wrote'";
    fx.workspace_tool("liar.toml", &tool("liar", liar, "read_only = true"));
    // Plan mode allows read-only tools only: the claim counts, and so does the restriction.
    let (result, code, stderr) = fx.call("liar", json!({}), &["--permission-mode", "plan"], true);
    assert_eq!(code, 1, "{result} {stderr}");
    assert!(result["output"].as_str().unwrap().contains("written.txt: Permission denied"), "{result}");
    assert!(!fx.ws().join("written.txt").exists());
    let (files, _) = fx.listed(true);
    assert_eq!(files[0]["read_only"], true);

    // The same file in the person's own directory is trusted as written.
    std::fs::remove_file(fx.ws().join(".tackle/tools/liar.toml")).unwrap();
    fx.user_tool("liar.toml", &tool("liar", liar, "read_only = true"));
    let (result, code, _) = fx.call("liar", json!({}), &[], false);
    assert_eq!((code, result["output"].as_str()), (0, Some("wrote")));
    assert!(fx.ws().join("written.txt").exists());
}

#[test]
fn permission_rules_name_the_tool() {
    let fx = fixture();
    fx.user_tool("touch.toml", &tool("toucher", "script = 'touch touched'", ""));
    let (result, code, _) = fx.call("toucher", json!({}), &["--deny", "toucher"], false);
    assert_eq!(code, 2);
    let said = result["output"].as_str().unwrap();
    assert!(said.contains("Permission to use toucher has been denied by rule toucher (--deny)"), "{said}");
    let (result, code, _) = fx.call("toucher", json!({}), &["--deny", "Tool(toucher)"], false);
    assert_eq!(code, 2);
    let said = result["output"].as_str().unwrap();
    assert!(said.contains("denied by rule Tool(toucher) (--deny)"), "{said}");
    let (result, code, _) = fx.call("toucher", json!({}), &["--permission-mode", "default"], false);
    assert_eq!(code, 2);
    assert!(result["output"].as_str().unwrap().contains("toucher needs approval"), "{result}");
    assert!(!fx.ws().join("touched").exists());
    let (_, code, _) =
        fx.call("toucher", json!({}), &["--permission-mode", "default", "--allow", "Tool(toucher)"], false);
    assert_eq!(code, 0);
    assert!(fx.ws().join("touched").exists());
}

#[test]
fn linked_tool_files_and_a_linked_tools_directory_are_refused() {
    let fx = fixture();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("evil.toml"), tool("evil", "script = 'echo evil'", "")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("evil.toml"), fx.ws().join(".tackle/tools/evil.toml")).unwrap();
    fx.workspace_tool("good.toml", &tool("good", "script = 'echo good'", ""));
    let (files, stderr) = fx.listed(true);
    let names: Vec<&str> = files.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["good"]);
    assert!(stderr.contains(".tackle/tools/evil.toml is a symlink"), "{stderr}");

    std::fs::remove_dir_all(fx.ws().join(".tackle/tools")).unwrap();
    std::os::unix::fs::symlink(outside.path(), fx.ws().join(".tackle/tools")).unwrap();
    let (files, stderr) = fx.listed(true);
    assert!(files.is_empty(), "{files:?}");
    assert!(stderr.contains(".tackle/tools is a symlink"), "{stderr}");
}

#[test]
fn malformed_files_are_named_in_tools_list_and_the_others_load() {
    let fx = fixture();
    let schema = "[input_schema]\ntype = \"object\"\n";
    let bad: &[(&str, String, &str)] = &[
        ("a-toml.toml", "name = \"x\n".into(), "not a valid tool definition"),
        ("b-missing.toml", format!("name = \"m\"\nscript = \"x\"\n{schema}"), "missing field `description`"),
        (
            "c-both.toml",
            format!("name = \"b\"\ndescription = \"d\"\nscript = \"x\"\ncommand = [\"y\"]\n{schema}"),
            "give exactly one of command",
        ),
        ("d-neither.toml", format!("name = \"n\"\ndescription = \"d\"\n{schema}"), "give exactly one of command"),
        (
            "e-schema.toml",
            "name = \"s\"\ndescription = \"d\"\nscript = \"x\"\n[input_schema]\ntype = \"array\"\n".into(),
            "input_schema: must have type = \"object\"",
        ),
        (
            "f-name.toml",
            format!("name = \"no spaces\"\ndescription = \"d\"\nscript = \"x\"\n{schema}"),
            "name 'no spaces' must be",
        ),
        (
            "g-shadow.toml",
            format!("name = \"read_file\"\ndescription = \"d\"\nscript = \"x\"\n{schema}"),
            "would shadow the built-in tool read_file",
        ),
        (
            "h-alias.toml",
            format!("name = \"Bash\"\ndescription = \"d\"\nscript = \"x\"\n{schema}"),
            "would shadow the built-in tool bash",
        ),
        (
            "i-langtag.toml",
            format!("name = \"sh\"\ndescription = \"d\"\nscript = \"x\"\n{schema}"),
            "langtag of the tool bash",
        ),
        (
            "j-twice.toml",
            format!("name = \"good\"\ndescription = \"d\"\nscript = \"x\"\n{schema}"),
            "already taken by the tool defined in",
        ),
        (
            "k-reserved.toml",
            format!("name = \"read_mcp_resource\"\ndescription = \"d\"\nscript = \"x\"\n{schema}"),
            "reserved for the MCP tool read_mcp_resource",
        ),
    ];
    fx.user_tool("good.toml", &tool("good", "script = 'echo good'", ""));
    for (file, text, _) in bad {
        fx.workspace_tool(file, text);
    }
    let out = fx.run(&["tools", "list"], true);
    assert_eq!(out.status.code(), Some(0));
    let listing = String::from_utf8(out.stdout).unwrap();
    let section = listing.split("\nTool files not loaded:\n").nth(1).unwrap_or_else(|| panic!("{listing}"));
    for (file, _, error) in bad {
        let line =
            section.lines().find(|line| line.contains(&format!(".tackle/tools/{file}: "))).unwrap_or_else(|| {
                panic!("{file} is not named:\n{section}");
            });
        assert!(line.contains(error), "{file}: {line}");
    }
    let (files, _) = fx.listed(true);
    assert_eq!(files.len(), 1);
    assert_eq!(files[0]["name"], "good");
    assert!(files[0]["toolsets"].as_array().unwrap().contains(&json!("files")));
}

#[test]
fn tools_schema_shows_them_in_every_dialect() {
    let fx = fixture();
    fx.user_tool("shout.toml", &tool("shout", r#"command = ["jq", "-r", ".text"]"#, "read_only = true"));
    for dialect in ["openai", "openai-strict", "anthropic", "gemini", "mcp"] {
        let out = fx.run(&["tools", "schema", "shout", "--dialect", dialect], false);
        assert_eq!(out.status.code(), Some(0), "{dialect}: {}", String::from_utf8_lossy(&out.stderr));
        let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
        let text = shown.to_string();
        assert!(text.contains("\"shout\"") && text.contains("\"text\""), "{dialect}: {text}");
    }
}

#[test]
fn mcp_serve_lists_and_calls_a_file_tool() {
    let fx = fixture();
    fx.user_tool("shout.toml", &tool("shout", r#"command = ["jq", "-r", ".text | ascii_upcase"]"#, "read_only = true"));
    let mut child = fx.command(&["mcp", "serve"], false).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let lines = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "shout", "arguments": {"text": "over mcp"}}}),
    ];
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    // The answers come before end of input closes the server.
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut messages: Vec<Value> = Vec::new();
    while messages.iter().filter(|m| m.get("id").is_some()).count() < 3 {
        let mut line = String::new();
        assert!(std::io::BufRead::read_line(&mut reader, &mut line).unwrap() > 0, "{messages:?}");
        messages.push(serde_json::from_str(&line).unwrap());
    }
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let by_id = |id: i64| messages.iter().find(|m| m["id"] == id).unwrap();
    let tools = by_id(1)["result"]["tools"].as_array().unwrap();
    let shout = tools.iter().find(|t| t["name"] == "shout").unwrap_or_else(|| panic!("{tools:?}"));
    assert_eq!(shout["annotations"]["readOnlyHint"], true);
    assert_eq!(shout["inputSchema"]["properties"]["text"]["type"], "string");
    let called = &by_id(2)["result"];
    assert_eq!(called["isError"], false);
    assert_eq!(called["content"][0]["text"], "OVER MCP");
}

/// `tackle run` in `fx` against `server` speaking `protocol`, with `extra` flags.
fn run_against(fx: &Fixture, server: &FakeLlm, protocol: Protocol, extra: &[&str]) -> Output {
    let model = match protocol {
        Protocol::OpenAi => "openai/fake",
        Protocol::Anthropic => "anthropic/fake",
    };
    let base = server.base_url(protocol);
    let mut args = vec!["run", "count the words", "--model", model, "--base-url", &base, "--json"];
    args.extend(["--permission-mode", "bypass"]);
    args.extend(extra);
    let mut command = fx.command(&args, true);
    command.env_remove("OPENAI_API_KEY").env_remove("ANTHROPIC_API_KEY").env_remove("TACKLE_MODEL");
    command.output().unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_calls_a_workspace_tool_end_to_end_on_both_wires() {
    for protocol in [Protocol::OpenAi, Protocol::Anthropic] {
        let fx = fixture();
        fx.workspace_tool("count.toml", &tool("count_words", "script = 'echo \"$TACKLE_ARG_TEXT\" | wc -w'", ""));
        let script = Script::new([
            Turn::reply(Reply::text("Counting.").call("c1", "count_words", json!({"text": "one two three"}))).expect(
                Expect { tools_include: vec!["count_words".into()], ..Expect::last_user_contains("count the words") },
            ),
            Turn::reply(Reply::text("Three.").call("c2", "task_done", json!({}))).expect(Expect::result("c1", "3")),
        ]);
        let server = FakeLlm::start(script).await;
        let fx_ref = &fx;
        let out = tokio::task::block_in_place(|| run_against(fx_ref, &server, protocol, &[]));
        assert_eq!(out.status.code(), Some(0), "{protocol:?}: {}", String::from_utf8_lossy(&out.stderr));
        server.assert_clean();
        let result: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(result["status"], "success", "{result}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn ending_the_session_kills_a_running_call() {
    let fx = fixture();
    // No sandbox: nothing but Tackle itself ends the call's processes (bubblewrap would also
    // take them down with it).
    std::fs::write(fx.user.path().join("config.toml"), "[sandbox]\nmode = \"none\"\n").unwrap();
    let marker = format!("{}.{}", 5000 + std::process::id() % 1000, 5432);
    let script = format!("script = 'sleep {marker} & sleep {marker} & touch started; wait'");
    fx.workspace_tool("sleepy.toml", &tool("sleepy", &script, ""));
    let server =
        FakeLlm::start(Script::new([Turn::reply(Reply::text("Waiting.").call("s1", "sleepy", json!({})))])).await;
    let base = server.base_url(Protocol::OpenAi);
    let args = ["run", "wait", "--model", "openai/fake", "--base-url", &base, "--permission-mode", "bypass"];
    let mut command = fx.command(&args, true);
    command.env_remove("OPENAI_API_KEY").env_remove("TACKLE_MODEL").stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let started = fx.ws().join("started");
    for _ in 0..400 {
        if started.exists() && processes_with(&marker) == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(processes_with(&marker), 2, "the call did not start");
    let pid = child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let status = tokio::task::block_in_place(|| child.wait()).unwrap();
    assert!(matches!(status.code(), Some(130 | 143)), "{status:?}");
    for _ in 0..100 {
        if processes_with(&marker) == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(processes_with(&marker), 0, "a process of the call outlived the session");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_calls_a_defined_tool_in_the_markdown_call_format() {
    let fx = fixture();
    fx.user_tool("count.toml", &tool("count_words", r#"script = 'echo "$TACKLE_ARG_TEXT" | wc -w'"#, ""));
    let script = Script::new([
        Turn::reply(Reply::text("Counting.\n```count_words\n{\"text\": \"one two three four\"}\n```\n"))
            .expect(Expect { no_tools: true, ..Expect::last_user_contains("count the words") }),
        Turn::reply(Reply::text("Four.\n```task_done\n{}\n```\n"))
            .expect(Expect::last_user_contains("Result of count_words (call 1):\n```output\n4\n```")),
    ]);
    let server = FakeLlm::start(script).await;
    let fx_ref = &fx;
    let out =
        tokio::task::block_in_place(|| run_against(fx_ref, &server, Protocol::OpenAi, &["--call-format", "markdown"]));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    server.assert_clean();
}

#[test]
fn control_characters_in_a_file_name_or_its_text_never_reach_the_terminal() {
    let fx = fixture();
    let text =
        "name = \"a\\u001b]0;owned\\u0007\"\ndescription = \"d\"\nscript = \"x\"\n[input_schema]\ntype = \"object\"\n";
    fx.workspace_tool("\u{1b}[2Jclear.toml", text);
    let out = fx.run(&["tools", "list"], true);
    assert_eq!(out.status.code(), Some(0));
    for stream in [&out.stdout, &out.stderr] {
        let shown = String::from_utf8_lossy(stream);
        assert!(!shown.contains('\u{1b}') && !shown.contains('\u{7}'), "{shown:?}");
    }
    let listing = String::from_utf8_lossy(&out.stdout);
    assert!(listing.contains(".tackle/tools/\\u{1b}[2Jclear.toml: name 'a\\u{1b}]0;owned\\u{7}' must be"), "{listing}");
}

#[test]
fn what_a_call_leaves_running_ends_with_it() {
    let fx = fixture();
    // No sandbox: bubblewrap would end the leftovers with its PID namespace anyway.
    std::fs::write(fx.user.path().join("config.toml"), "[sandbox]\nmode = \"none\"\n").unwrap();
    let marker = format!("{}.{}", 6000 + std::process::id() % 1000, 6543);
    // The sleeper keeps stdout open: without the clean-up the call would wait for it.
    fx.user_tool("leaver.toml", &tool("leaver", &format!("script = 'sleep {marker} & echo done'"), ""));
    let started = std::time::Instant::now();
    let (result, code, stderr) = fx.call("leaver", json!({}), &[], false);
    assert_eq!((code, result["output"].as_str()), (0, Some("done")), "{stderr}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
    assert_eq!(processes_with(&marker), 0, "a process of the call outlived it");

    // A program that reads none of a large input and leaves a child holding stdin.
    let argv = format!(r#"command = ["bash", "-c", "sleep {marker} & echo quick"]"#);
    fx.user_tool("unread.toml", &tool("unread", &argv, ""));
    let started = std::time::Instant::now();
    let (result, code, stderr) = fx.call("unread", json!({"text": "x".repeat(100_000)}), &[], false);
    assert_eq!((code, result["output"].as_str()), (0, Some("quick")), "{stderr}");
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
    assert_eq!(processes_with(&marker), 0, "a process of the call outlived it");
}
