//! The tool lists the README and the docs print are the binary's (issue 25, point 12): each
//! toolset row of docs/reference/tools.md against `tackle tools list --tools TOOLSET`, and the
//! "these N tools" of `mcp serve` in the README, docs/mcp.md and docs/reference/cli.md against
//! what `tackle mcp serve` answers to `tools/list`. A tool added to a toolset, or to what
//! `mcp serve` serves, fails here until the docs say so. Likewise every flag a command's
//! `--help` shows is in docs/reference/cli.md.

use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;

use serde_json::{Value, json};

use super::command;

fn repository_file(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

/// The backticked names of a comma-separated list at the start of `text` (`` `a`, `b` ``).
fn backticked_list(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut rest = text.trim_start();
    while let Some(after) = rest.strip_prefix('`') {
        let Some((name, tail)) = after.split_once('`') else { break };
        names.push(name.to_owned());
        match tail.strip_prefix(',') {
            Some(next) => rest = next.trim_start(),
            None => break,
        }
    }
    names
}

#[test]
fn the_toolset_table_of_the_tool_reference_is_what_tools_list_selects() {
    let dir = tempfile::tempdir().unwrap();
    let reference = repository_file("docs/reference/tools.md");
    let mut checked = 0;
    for toolset in ["default", "trae", "bare", "codex", "code"] {
        let row = format!("| `{toolset}` | ");
        let line = reference.lines().find(|line| line.starts_with(&row)).unwrap_or_else(|| panic!("no row {row}"));
        let documented = backticked_list(&line[row.len()..]);
        let out = command(dir.path()).args(["tools", "list", "--json", "--tools", toolset]).output().unwrap();
        let listed: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
        let names: Vec<String> = listed.iter().map(|tool| tool["name"].as_str().unwrap().to_owned()).collect();
        assert_eq!(documented, names, "docs/reference/tools.md, toolset {toolset}");
        checked += 1;
    }
    assert_eq!(checked, 5);
}

/// What `tackle mcp serve` serves by default, from its `tools/list`.
fn served_by_default(dir: &Path) -> Vec<String> {
    let mut child = command(dir)
        .args(["mcp", "serve"])
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
fn every_doc_names_the_tools_mcp_serve_serves() {
    let dir = tempfile::tempdir().unwrap();
    let served = served_by_default(dir.path());
    assert!(served.len() > 5, "{served:?}");
    let phrase = format!("these {} tools: ", served.len());
    for file in ["README.md", "docs/mcp.md", "docs/reference/cli.md"] {
        let text = repository_file(file).replace('\n', " ");
        let at = text.find(&phrase).unwrap_or_else(|| panic!("{file} does not say {phrase:?}"));
        let documented = backticked_list(&text[at + phrase.len()..]);
        assert_eq!(documented, served, "{file}");
    }
}

/// The README says `tackle tools list` lists the agents `subagent` can start, after the tools.
#[test]
fn tools_list_lists_the_agents_the_readme_says_it_does() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(".claude/agents")).unwrap();
    std::fs::write(
        dir.path().join(".claude/agents/rev.md"),
        "---\nname: reviewer\ndescription: Reviews code\n---\nBe picky.\n",
    )
    .unwrap();
    let out = command(dir.path()).args(["tools", "list"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let agents =
        text.split_once("\nAgents (subagent_type):\n").map(|(_, rest)| rest).unwrap_or_else(|| panic!("{text}"));
    assert!(agents.lines().any(|line| line.split_whitespace().collect::<Vec<_>>() == ["reviewer", "Reviews", "code"]));
    let readme = repository_file("README.md").replace("\n# ", " ");
    assert!(readme.contains("the agents (.tackle/agents/, .claude/agents/, your config dir, ~/.claude/agents/"));
}

/// The flags `tackle ARGS --help` lists (`--name`, without `--help` and `--version`).
fn help_flags(args: &[&str]) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let out = command(dir.path()).args(args).arg("--help").output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{args:?}");
    let mut flags = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines().map(str::trim_start) {
        // `--name …` or `-x, --name …` (a wrapped description line may start with `-` too).
        let long = match line.get(2..6) {
            Some(", --") if line.starts_with('-') => &line[4..],
            _ if line.starts_with("--") => line,
            _ => continue,
        };
        let name: String = long.chars().take_while(|c| *c == '-' || c.is_ascii_alphanumeric()).collect();
        if name != "--help" && name != "--version" {
            flags.push(name);
        }
    }
    flags
}

/// Whether `text` names `flag` as a whole word (`--allow` is not named by `--allow-project-mcp`).
fn names_flag(text: &str, flag: &str) -> bool {
    text.match_indices(flag)
        .any(|(at, _)| !text[at + flag.len()..].starts_with(|c: char| c == '-' || c.is_ascii_alphanumeric()))
}

/// The part of docs/reference/cli.md under each `## HEADING` whose heading starts with `prefix`.
fn sections(reference: &str, prefix: &str) -> String {
    let mut text = String::new();
    let mut inside = false;
    for line in reference.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            inside = heading.starts_with(prefix);
        }
        if inside {
            text.push_str(line);
            text.push('\n');
        }
    }
    text
}

#[test]
fn every_flag_of_every_command_is_in_the_command_line_reference() {
    let reference = repository_file("docs/reference/cli.md");
    let synopsis = reference.split("```").nth(1).unwrap();
    let common = sections(&reference, "Common flags");
    let commands: &[&[&str]] = &[
        &["run"],
        &["chat"],
        &["init"],
        &["replay"],
        &["tools", "list"],
        &["tools", "schema"],
        &["tools", "call"],
        &["tools", "batch"],
        &["parse"],
        &["mcp", "serve"],
        &["mcp", "add"],
        &["mcp", "list"],
        &["mcp", "get"],
        &["mcp", "remove"],
        &["mcp", "prompt"],
        &["containers", "prune"],
        &["ckg", "index"],
        &["ckg", "search"],
        &["ckg", "refs"],
        &["ckg", "outline"],
        &["ckg", "map"],
        &["ckg", "stats"],
        &["permissions", "check"],
        &["permissions", "list"],
        &["tasks", "list"],
        &["tasks", "show"],
    ];
    let mut missing = Vec::new();
    let mut checked = 0;
    for args in commands {
        // `chat` takes run's agent flags, as its section says.
        let heading = if args[0] == "chat" { "tackle run".to_owned() } else { format!("tackle {}", args[0]) };
        let documented = format!(
            "{synopsis}{common}{}{}",
            sections(&reference, &heading),
            sections(&reference, &format!("tackle {}", args[0]))
        );
        for flag in help_flags(args) {
            checked += 1;
            if !names_flag(&documented, &flag) {
                missing.push(format!("tackle {} {flag}", args.join(" ")));
            }
        }
    }
    assert!(checked > 60, "{checked}");
    assert!(missing.is_empty(), "flags the binary takes that docs/reference/cli.md does not name: {missing:#?}");
}

/// docs/reference/cli.md's configuration keys: `[tools] max_output_chars` cuts every tool's
/// result (not only the shell's), and an unknown key is an error in `[tools]` and `[mcp]` too.
#[test]
fn the_tools_settings_the_reference_documents_are_read_and_unknown_keys_refused() {
    let dir = tempfile::tempdir().unwrap();
    let config = tempfile::tempdir().unwrap();
    let numbers: String = (1..=20_000).map(|n| format!("{n}\n")).collect();
    std::fs::write(dir.path().join("big.txt"), numbers).unwrap();
    let grep = |settings: &str| {
        std::fs::write(config.path().join("config.toml"), settings).unwrap();
        command(dir.path())
            .env("TACKLE_CONFIG_DIR", config.path())
            .args(["tools", "call", "grep"])
            .arg(r#"{"pattern": "1", "path": "big.txt", "output_mode": "content", "head_limit": 0}"#)
            .output()
            .unwrap()
    };
    let default = grep("");
    let limited = grep("[tools]\nmax_output_chars = 5000\n");
    assert_eq!((default.status.code(), limited.status.code()), (Some(0), Some(0)));
    assert!(default.stdout.len() > 25_000, "{}", default.stdout.len());
    assert!((5_000..5_500).contains(&limited.stdout.len()), "{}", limited.stdout.len());
    for (settings, key) in
        [("[tools]\ntimout_ms = 5\n", "timout_ms"), ("[mcp]\ndefer_treshold = 5\n", "defer_treshold")]
    {
        let out = grep(settings);
        assert_eq!(out.status.code(), Some(2), "{settings}");
        assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("unknown field `{key}`")), "{settings}");
    }
}

/// Every path of Tackle's state table under `.tackle/` has a row in docs/reference/cli.md's
/// "The .tackle directory".
#[test]
fn the_tackle_directory_table_lists_every_state_path() {
    let reference = repository_file("docs/reference/cli.md");
    let table = sections(&reference, "The .tackle directory");
    let mut checked = 0;
    for entry in tackle_core::fs::state::TABLE.iter().filter(|entry| entry.rel.starts_with(".tackle/")) {
        assert!(
            table.contains(&format!("`{}", entry.rel)),
            "{} ({}) is not in docs/reference/cli.md",
            entry.rel,
            entry.used_by
        );
        checked += 1;
    }
    assert!(checked >= 8, "{checked}");
}

/// docs/reference/safety.md's trust table: `[providers]` of a workspace without consent is
/// ignored with a notice, not silently.
#[test]
fn workspace_providers_without_consent_are_ignored_with_a_notice() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tackle.toml"),
        "[providers.evil]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9/v1\"\n",
    )
    .unwrap();
    let out = command(dir.path()).args(["tools", "call", "glob", r#"{"pattern": "*"}"#]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ignoring [providers] from the workspace's settings: they need your consent"), "{stderr}");
}
