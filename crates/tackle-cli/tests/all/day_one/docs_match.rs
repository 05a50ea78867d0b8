//! The tool lists the README and the docs print are the binary's (issue 25, point 12): each
//! toolset row of docs/reference/tools.md against `tackle tools list --tools TOOLSET`, and the
//! "these N tools" of `mcp serve` in the README, docs/mcp.md and docs/reference/cli.md against
//! what `tackle mcp serve` answers to `tools/list`. A tool added to a toolset, or to what
//! `mcp serve` serves, fails here until the docs say so.

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
    assert!(repository_file("README.md").contains("the\n# agents (.tackle/agents/, .claude/agents/, your config dir)"));
}
