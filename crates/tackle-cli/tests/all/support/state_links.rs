//! Issue 24, points 1 and 2, through the real binary: a workspace whose Tackle state paths
//! are symlinks out of it (a cloned repository that commits `.tackle/outputs -> ../..`,
//! `AGENTS.md -> ~/.ssh/id_rsa`, ...) cannot make any command write, append, create, delete
//! or read through them.
//!
//! The test iterates over the code's own table (`tackle_core::fs::state::TABLE`), so a new
//! entry is covered without a change here. Each entry gets a link to a directory outside
//! (holding a 30-day-old project a clean-up would delete), in a second pass to a file outside
//! (holding a secret), and in a third to a path outside that does not exist; entries that do not lie under one another are planted
//! together. Then every command that touches state runs: `tools call`, `tools batch`,
//! `tools list` (with an MCP server whose stderr goes to `.tackle/logs`), `run` and `chat`
//! against the scripted model, `mcp serve` over stdio and HTTP, `ckg`, `tasks`,
//! `permissions`, `init` and `replay`. Afterwards the outside targets are byte for byte what
//! they were, every entry was named in a notice, and the secret is in no request sent to the
//! model.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime};

use serde_json::json;
use tackle_core::fs::state::{StatePath, TABLE};
use tackle_testkit::{FakeLlm, Reply, Script, Turn};

use crate::support::serve;

const TACKLE: &str = env!("CARGO_BIN_EXE_tackle");
/// What the outside file holds: it must reach no request.
const SECRET: &str = "SENTINEL-SECRET-do-not-send-4d1c";

/// Where a link points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Dir,
    File,
    /// A path outside that does not exist (a dangling link, which a create would make).
    Missing,
}

/// The directory outside the workspace: `tree/` (a project, 30 days old), `secret.txt`, and
/// `missing` (which must not come to exist).
struct Outside {
    tree: PathBuf,
    file: PathBuf,
    missing: PathBuf,
}

fn outside(base: &Path) -> Outside {
    let tree = base.join("outside/tree");
    std::fs::create_dir_all(tree.join("old-project/src")).unwrap();
    std::fs::write(tree.join("old-project/src/main.rs"), "fn main() {}\n").unwrap();
    std::fs::write(tree.join("keep.txt"), "keep me\n").unwrap();
    let old = SystemTime::now() - Duration::from_secs(30 * 24 * 3600);
    for path in [tree.join("old-project/src/main.rs"), tree.join("keep.txt")] {
        std::fs::File::options().write(true).open(&path).unwrap().set_modified(old).unwrap();
    }
    for dir in [tree.join("old-project/src"), tree.join("old-project"), tree.clone()] {
        std::fs::File::open(&dir).unwrap().set_modified(old).unwrap();
    }
    let file = base.join("outside/secret.txt");
    std::fs::write(&file, format!("{SECRET}\n")).unwrap();
    Outside { tree, file, missing: base.join("outside/missing") }
}

/// Every path under `root` (not following links) with its bytes (`None` for a directory)
/// and, for a directory, its entries: what must not change.
fn snapshot(root: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut found = BTreeMap::new();
    let mut pending = vec![root.to_owned()];
    while let Some(path) = pending.pop() {
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            found.insert(path.clone(), None);
            for entry in std::fs::read_dir(&path).unwrap() {
                pending.push(entry.unwrap().path());
            }
        } else {
            found.insert(path.clone(), Some(std::fs::read(&path).unwrap_or_default()));
        }
    }
    found
}

/// The table's entries in groups none of whose members lies under another.
fn rounds() -> Vec<Vec<StatePath>> {
    let related = |a: &StatePath, b: &StatePath| {
        a.rel.starts_with(&format!("{}/", b.rel)) || b.rel.starts_with(&format!("{}/", a.rel))
    };
    let mut rounds: Vec<Vec<StatePath>> = Vec::new();
    for entry in TABLE {
        match rounds.iter_mut().find(|round| round.iter().all(|other| !related(entry, other))) {
            Some(round) => round.push(*entry),
            None => rounds.push(vec![*entry]),
        }
    }
    rounds
}

/// A workspace with a source file, a `.git` directory and a link at each entry of `round`.
fn plant(ws: &Path, round: &[StatePath], outside: &Outside, target: Target) {
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/lib.rs"), "pub fn answer() -> u32 { 42 }\n").unwrap();
    std::fs::create_dir_all(ws.join(".git")).unwrap();
    for entry in round {
        let path = ws.join(entry.rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let to = match target {
            Target::Dir => &outside.tree,
            Target::File => &outside.file,
            Target::Missing => &outside.missing,
        };
        std::os::unix::fs::symlink(to, &path).unwrap();
    }
}

/// Collects `child`'s output, killing it after `limit`.
fn wait(child: std::process::Child, limit: Duration) -> Output {
    let pid = child.id().to_string();
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(child.wait_with_output());
    });
    match finished.recv_timeout(limit) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
            finished.recv().unwrap().unwrap()
        }
    }
}

/// `tackle ARGS` in `ws` with `stdin`, its user configuration in `user`.
fn tackle(ws: &Path, user: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(TACKLE)
        .args(args)
        .current_dir(ws)
        .env("TACKLE_CONFIG_DIR", user)
        .env_remove("TACKLE_TRUST_WORKSPACE")
        .env_remove("TACKLE_ALLOW_PROJECT_MCP")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("TACKLE_MODEL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let _ = input.write_all(stdin.as_bytes());
    drop(input);
    wait(child, Duration::from_secs(90))
}

/// The model's script of a run: a command with a long output (spilled to `.tackle/outputs`),
/// then `task_done`.
fn run_script() -> Script {
    Script::new([
        Turn::reply(Reply::text("Listing.").call("c1", "bash", json!({"command": "seq 1 40000"}))),
        Turn::reply(Reply::text("Done.").call("c2", "task_done", json!({}))),
    ])
    .repeat_last()
}

/// Runs every command that touches state in `ws`; returns their stderr and the bodies of the
/// requests the model received.
async fn every_command(ws: &Path, user: &Path, mcp_user: &Path, trajectory: &Path) -> (String, Vec<String>) {
    let mut stderr = String::new();
    let mut note = |what: &str, out: &Output| {
        stderr.push_str(&format!(
            "--- {what} (exit {:?})\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        ));
    };
    let ws_arg = ws.display().to_string();
    let call = json!({"command": "seq 1 40000"}).to_string();
    note("tools call glob", &tackle(ws, user, &["tools", "call", "glob", r#"{"pattern": "**/*"}"#], ""));
    note("tools call bash", &tackle(ws, user, &["tools", "call", "bash", &call, "--json"], ""));
    let batch = [
        json!({"name": "bash", "args": {"command": "seq 1 40000"}}),
        json!({"name": "apply_patch", "args": {"input": "*** Begin Patch\n*** Add File: new.txt\n+x\n*** End Patch"}}),
        json!({"name": "task_create", "args": {"title": "t", "description": "d"}}),
        json!({"name": "load_skill", "args": {"name": "any"}}),
    ];
    let batch: String = batch.iter().map(|line| format!("{line}\n")).collect();
    note("tools batch", &tackle(ws, user, &["tools", "batch"], &batch));
    note("tools list (MCP)", &tackle(ws, mcp_user, &["tools", "list"], ""));
    note("mcp list", &tackle(ws, mcp_user, &["mcp", "list"], ""));
    note("mcp get", &tackle(ws, mcp_user, &["mcp", "get", "noisy"], ""));
    note(
        "mcp add --scope project",
        &tackle(ws, user, &["mcp", "add", "--scope", "project", "added", "--", "true"], ""),
    );
    note("mcp remove --scope project", &tackle(ws, user, &["mcp", "remove", "--scope", "project", "added"], ""));
    note("tasks list", &tackle(ws, user, &["tasks", "list"], ""));
    note("tasks show", &tackle(ws, user, &["tasks", "show", "1"], ""));
    note("ckg index", &tackle(ws, user, &["ckg", "index"], ""));
    note("ckg search", &tackle(ws, user, &["ckg", "search", "answer"], ""));
    note("permissions check", &tackle(ws, user, &["permissions", "check", "Bash(ls)"], ""));
    note("permissions list", &tackle(ws, user, &["permissions", "list"], ""));
    note("replay --check", &tackle(ws, user, &["replay", "--check", &trajectory.display().to_string()], ""));
    let server = FakeLlm::start(run_script()).await;
    let base_url = server.openai_base_url();
    let model = ["--model", "openai/fake", "--base-url", &base_url];
    let run: Vec<&str> = ["run", "list the numbers", "--permission-mode", "bypass", "--workspace", &ws_arg]
        .into_iter()
        .chain(model)
        .collect();
    note("run", &tackle(ws, user, &run, ""));
    let chat: Vec<&str> = ["chat", "--yes", "--workspace", &ws_arg].into_iter().chain(model).collect();
    note("chat", &tackle(ws, user, &chat, "list the numbers\n"));
    let rerun = ["replay", "--rerun", &trajectory.display().to_string(), "--workspace", &ws_arg];
    note("replay --rerun", &tackle(ws, user, &rerun, ""));
    let stdio = [
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
            "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "bash",
            "arguments": {"command": "seq 1 40000"}}}),
    ];
    let stdio: String = stdio.iter().map(|line| format!("{line}\n")).collect();
    note("mcp serve (stdio)", &tackle(ws, user, &["mcp", "serve", "--workspace", &ws_arg], &stdio));
    note("init", &tackle(ws, user, &["init", "--workspace", &ws_arg], ""));
    let http = serve::HttpServe::start(ws, &[]);
    let session = http.open_session(&[]);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "bash",
        "arguments": {"command": "seq 1 40000"}}});
    http.post(&[("Mcp-Session-Id", &session)], &body.to_string());
    let preamble = http.preamble.clone();
    stderr.push_str(&format!("--- mcp serve --http\n{preamble}{}", http.stop()));
    let bodies = server.requests().iter().map(|request| request.body.to_string()).collect();
    (stderr, bodies)
}

/// A trajectory to replay, from a run in a clean workspace.
async fn a_trajectory(base: &Path, user: &Path) -> PathBuf {
    let ws = base.join("clean");
    std::fs::create_dir_all(&ws).unwrap();
    let path = base.join("recorded.jsonl");
    let server = FakeLlm::start(run_script()).await;
    let base_url = server.openai_base_url();
    let args = [
        "run",
        "list the numbers",
        "--permission-mode",
        "bypass",
        "--model",
        "openai/fake",
        "--base-url",
        &base_url,
        "--trajectory",
        &path.display().to_string(),
    ];
    let out = tackle(&ws, user, &args, "");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    path
}

#[tokio::test(flavor = "multi_thread")]
async fn no_command_follows_a_link_planted_on_tackles_state_paths() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let user = base.join("user");
    std::fs::create_dir_all(&user).unwrap();
    // A user-configured MCP server (no consent needed) that writes to its stderr log.
    let mcp_user = base.join("user-mcp");
    std::fs::create_dir_all(&mcp_user).unwrap();
    std::fs::write(
        mcp_user.join("config.toml"),
        "[mcp.servers.noisy]\ncommand = \"sh\"\nargs = [\"-c\", \"echo noisy-stderr >&2; exit 1\"]\n",
    )
    .unwrap();
    let trajectory = a_trajectory(&base, &user).await;
    let rounds = rounds();
    assert!(rounds.iter().map(Vec::len).sum::<usize>() == TABLE.len() && rounds.len() >= 2, "{rounds:?}");
    for target in [Target::Dir, Target::File, Target::Missing] {
        for (n, round) in rounds.iter().enumerate() {
            let case = base.join(format!("{target:?}-{n}"));
            let outside = outside(&case);
            let before = snapshot(&case.join("outside"));
            let ws = case.join("ws");
            plant(&ws, round, &outside, target);
            let (stderr, bodies) = every_command(&ws, &user, &mcp_user, &trajectory).await;
            let after = snapshot(&case.join("outside"));
            assert_eq!(
                before.keys().collect::<Vec<_>>(),
                after.keys().collect::<Vec<_>>(),
                "{target:?} links at {round:?}: the outside tree changed\n{stderr}"
            );
            assert!(before == after, "{target:?} links at {round:?}: an outside file changed\n{stderr}");
            for entry in round {
                let named = stderr.lines().any(|line| line.contains(entry.rel) && line.contains("symlink"));
                assert!(named, "{target:?}: no notice names the link at {} ({})\n{stderr}", entry.rel, entry.used_by);
            }
            assert!(!bodies.is_empty(), "the model got no request\n{stderr}");
            for body in &bodies {
                assert!(!body.contains(SECRET), "{target:?} links at {round:?}: the secret reached the model");
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deny_rule_keeps_the_instructions_file_out_of_the_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let user = base.join("user");
    std::fs::create_dir_all(&user).unwrap();
    let rules = [("Read(./AGENTS.md)", "AGENTS.md"), ("Read(**/*.md)", "CLAUDE.md"), ("Read(CLAUDE*)", "CLAUDE.md")];
    for (n, (rule, file)) in rules.into_iter().enumerate() {
        let ws = base.join(format!("ws-{n}"));
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join(file), format!("{SECRET}\n")).unwrap();
        let server = FakeLlm::start(run_script()).await;
        let base_url = server.openai_base_url();
        let args = ["run", "go", "--yes", "--deny", rule, "--model", "openai/fake", "--base-url", &base_url];
        let out = tackle(&ws, &user, &args, "");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        let requests = server.requests();
        assert!(!requests.is_empty());
        for request in &requests {
            assert!(!request.body.to_string().contains(SECRET), "{rule}: the denied file reached the model");
        }
        assert!(stderr.contains(&format!("{file} is hidden by a Read(...) deny rule")), "{rule}: {stderr}");
    }
    // Without the rule the same file is part of the prompt (the test can fail).
    let ws = base.join("ws-0");
    assert!(ws.join("AGENTS.md").exists());
    let server = FakeLlm::start(run_script()).await;
    let base_url = server.openai_base_url();
    let out = tackle(&ws, &user, &["run", "go", "--yes", "--model", "openai/fake", "--base-url", &base_url], "");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(server.requests()[0].body.to_string().contains(SECRET));
}
