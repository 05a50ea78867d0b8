//! Helpers for the client tests: server definitions for the fake server and the real peers,
//! a hub started over them, and calls through a real session and executor.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use tackle_core::registry::Selection;
use tackle_core::{ExecEvent, Executor, Progress, Registry, ToolCall, ToolOutput, ToolSession, ToolSessionConfig};
use tackle_mcp::client::McpHub;
use tackle_mcp::client::config::{Defer, Endpoint, Origin, ServerConfig};
use tokio_util::sync::CancellationToken;

use super::peers::repo_root;

/// A stdio server definition.
pub fn stdio(name: &str, command: &str, args: &[&str], cwd: &Path) -> ServerConfig {
    ServerConfig {
        name: name.to_owned(),
        endpoint: Endpoint::Stdio {
            command: command.to_owned(),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            env: BTreeMap::new(),
            cwd: cwd.to_path_buf(),
        },
        startup_timeout: Duration::from_secs(20),
        call_timeout: Duration::from_secs(20),
        enabled_tools: vec!["*".to_owned()],
        disabled_tools: Vec::new(),
        trusted: false,
        defer: Defer::Auto,
        origin: Origin::User,
        fingerprint: String::new(),
    }
}

/// The fake server's script.
pub fn fake_script() -> PathBuf {
    repo_root().join("crates/tackle-mcp/tests/peers/fake_server.py")
}

/// The fake server as `fake`, with `flags`.
pub fn fake(cwd: &Path, flags: &[&str]) -> ServerConfig {
    let script = fake_script();
    let mut args = vec!["-u", script.to_str().unwrap()];
    args.extend_from_slice(flags);
    let mut config = stdio("fake", "python3", &args, cwd);
    config.startup_timeout = Duration::from_secs(10);
    config.call_timeout = Duration::from_secs(10);
    config
}

/// A started hub with its tools registered in an otherwise empty registry.
pub struct Imported {
    pub hub: McpHub,
    pub notices: Vec<String>,
    pub registry: Registry,
    pub workspace: tempfile::TempDir,
}

pub async fn import_in(workspace: tempfile::TempDir, configs: Vec<ServerConfig>) -> Imported {
    let mut registry = Registry::new();
    let (hub, notices) = McpHub::start(configs, workspace.path(), &registry, 40).await;
    hub.register(&mut registry);
    Imported { hub, notices, registry, workspace }
}

impl Imported {
    /// Every imported tool's name.
    pub fn names(&self) -> Vec<String> {
        self.registry.entries().iter().map(|e| e.spec.name.clone()).collect()
    }

    /// A session over every imported tool.
    pub fn session(&self) -> ToolSession {
        let selection = Selection { names: self.names(), warnings: Vec::new() };
        ToolSession::new(ToolSessionConfig::new(self.workspace.path()), self.registry.instantiate(&selection))
    }

    /// One call in a fresh session; the output and the progress reported.
    pub async fn call(&self, name: &str, args: Value) -> (ToolOutput, Vec<Progress>) {
        let session = self.session();
        call_in(&session, name, args, &CancellationToken::new()).await
    }
}

/// One call in `session`; the output and the progress it reported.
pub async fn call_in(
    session: &ToolSession,
    name: &str,
    args: Value,
    cancel: &CancellationToken,
) -> (ToolOutput, Vec<Progress>) {
    let mut events = session.subscribe();
    let output = Executor::default().run(session, ToolCall::new("c1", name, args), cancel).await;
    let mut progress = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let ExecEvent::Progress { progress: p, .. } = event {
            progress.push(p);
        }
    }
    (output, progress)
}
