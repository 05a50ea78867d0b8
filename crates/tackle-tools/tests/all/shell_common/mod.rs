//! A real tool session over a temporary workspace, driven through the executor like any
//! front end drives it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tackle_core::{Executor, ExecutorConfig, PathPolicy, ToolCall, ToolOutput, ToolSession, ToolSessionConfig};
use tackle_sandbox::WorkspacePolicy;
use tackle_sandbox::env::{CommandEnv, EnvSettings};
use tackle_sandbox::process::{Sandbox, SandboxMode, SandboxPolicy};
use tackle_tools::shell::ShellEnvironment;
use tokio_util::sync::CancellationToken;

pub struct Harness {
    pub dir: tempfile::TempDir,
    pub session: ToolSession,
    pub executor: Executor,
    calls: std::sync::atomic::AtomicUsize,
}

/// Which sandbox a harness uses.
#[derive(Debug, Clone, Copy)]
pub enum Mode {
    /// bubblewrap, required (the test deps install it).
    Bwrap {
        network: bool,
    },
    Landlock,
    None,
}

impl Harness {
    /// A session with the sandbox `auto` picks.
    pub fn new() -> Harness {
        Harness::build(None, |_| {})
    }

    /// A session with a chosen sandbox.
    pub fn with(mode: Mode) -> Harness {
        Harness::build(Some(mode), |_| {})
    }

    /// A session with a chosen sandbox and adjusted settings.
    pub fn with_env(mode: Mode, adjust: impl FnOnce(&mut ShellEnvironment)) -> Harness {
        Harness::build(Some(mode), adjust)
    }

    /// A session with a chosen sandbox whose policy `tune` adjusts (more hidden paths, …).
    pub fn with_policy(mode: Mode, tune: impl FnOnce(&mut SandboxPolicy)) -> Harness {
        Harness::build_tuned(Some(mode), tune, |_| {})
    }

    fn build(mode: Option<Mode>, adjust: impl FnOnce(&mut ShellEnvironment)) -> Harness {
        Harness::build_tuned(mode, |_| {}, adjust)
    }

    fn build_tuned(
        mode: Option<Mode>,
        tune: impl FnOnce(&mut SandboxPolicy),
        adjust: impl FnOnce(&mut ShellEnvironment),
    ) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let workspace = dir.path().canonicalize().unwrap();
        let registry = tackle_tools::builtin_registry();
        let selection = registry.select("all", "all").unwrap();
        let mut config = ToolSessionConfig::new(workspace.clone());
        config.path_policy = Some(Arc::new(WorkspacePolicy::new(&workspace).unwrap()) as Arc<dyn PathPolicy>);
        let session = ToolSession::new(config, registry.instantiate(&selection));
        if let Some(mode) = mode {
            let mut policy = SandboxPolicy::new(&workspace);
            tune(&mut policy);
            let sandbox = match mode {
                Mode::Bwrap { network } => {
                    policy.mode = SandboxMode::Bwrap;
                    policy.network = network;
                    Sandbox::resolve(policy).expect("bubblewrap is required (scripts/install-test-deps.sh)")
                }
                Mode::Landlock => {
                    policy.mode = SandboxMode::Landlock;
                    Sandbox::resolve(policy).unwrap()
                }
                Mode::None => Sandbox::none(policy, "tests"),
            };
            let env = CommandEnv::new(&EnvSettings::default(), session.id(), &workspace);
            let mut shell_env = ShellEnvironment::new(sandbox, env);
            adjust(&mut shell_env);
            session.state().get_or_insert_with(|| shell_env);
        }
        Harness { dir, session, executor: Executor::new(ExecutorConfig::default()), calls: Default::default() }
    }

    pub fn workspace(&self) -> PathBuf {
        self.session.info().workspace.clone()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.workspace().join(rel)
    }

    pub async fn call(&self, tool: &str, args: Value) -> ToolOutput {
        self.call_with(tool, args, &CancellationToken::new()).await
    }

    pub async fn call_with(&self, tool: &str, args: Value, cancel: &CancellationToken) -> ToolOutput {
        let n = self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        self.executor.run(&self.session, ToolCall::new(format!("call_{n}"), tool, args), cancel).await
    }

    /// Runs `command` in the session's shell.
    pub async fn bash(&self, command: &str) -> ToolOutput {
        self.call("bash", json!({ "command": command })).await
    }

    /// Runs `command` and returns its text.
    pub async fn sh(&self, command: &str) -> String {
        self.bash(command).await.text_content()
    }

    pub async fn close(&self) {
        self.session.close().await;
    }
}

/// The processes whose environment carries this session id (everything a shell or job of
/// the session started inherits it).
pub fn processes_of_session(session_id: &str) -> Vec<(i32, String)> {
    let needle = format!("TACKLE_SESSION_ID={session_id}");
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else { return found };
    for entry in entries.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else { continue };
        if !environ.split(|b| *b == 0).any(|var| var == needle.as_bytes()) {
            continue;
        }
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')) {
            continue;
        }
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        found.push((pid, String::from_utf8_lossy(&cmdline).replace('\0', " ")));
    }
    found
}

/// Waits up to `limit` for `check` to hold.
pub async fn eventually(limit: Duration, check: impl Fn() -> bool) -> bool {
    let end = std::time::Instant::now() + limit;
    while std::time::Instant::now() < end {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    check()
}

pub fn exists(path: &Path) -> bool {
    path.exists()
}

pub fn shared<T>(value: T) -> Arc<T> {
    Arc::new(value)
}
