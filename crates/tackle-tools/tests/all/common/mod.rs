//! A real workspace in a temp dir with a session over every built-in tool, the workspace
//! path policy, and the executor, so tests drive tools exactly as a model's calls would.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tackle_core::{Executor, PathPolicy, SessionState, ToolCall, ToolOutput, ToolSession, ToolSessionConfig};
use tackle_sandbox::WorkspacePolicy;
use tackle_tools::fs::FsSettings;
use tokio_util::sync::CancellationToken;

pub struct Ws {
    pub dir: tempfile::TempDir,
    /// The workspace root (canonical).
    pub root: PathBuf,
    pub session: ToolSession,
    pub executor: Executor,
}

impl Ws {
    /// A session that enforces read-before-edit (agent, batch, MCP).
    pub fn new() -> Self {
        Self::with(true, |_| {})
    }

    /// A one-shot `tools call` session: no read-before-edit, no stale check.
    pub fn one_shot() -> Self {
        Self::with(false, |_| {})
    }

    /// A session whose policy is adjusted by `tune`.
    pub fn with(enforce: bool, tune: impl FnOnce(&mut WorkspacePolicy)) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir(&root).unwrap();
        let session = session(dir.path(), &root, enforce, tune);
        Ws { dir, root, session, executor: Executor::default() }
    }

    /// Ends this session and starts the next one on the same workspace (what a new `tackle`
    /// process would see).
    pub fn next_session(&mut self) {
        self.session = session(self.dir.path(), &self.root, true, |_| {});
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// A directory next to the workspace, outside it.
    pub fn outside(&self) -> PathBuf {
        let path = self.dir.path().canonicalize().unwrap().join("outside");
        std::fs::create_dir_all(&path).unwrap();
        path
    }

    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }

    pub fn bytes(&self, rel: &str) -> Vec<u8> {
        std::fs::read(self.path(rel)).unwrap()
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.path(rel).exists()
    }

    pub async fn call(&self, tool: &str, args: Value) -> ToolOutput {
        self.executor.run(&self.session, ToolCall::new("call_1", tool, args), &CancellationToken::new()).await
    }

    /// Runs a call that must succeed; returns its text.
    pub async fn ok(&self, tool: &str, args: Value) -> String {
        let output = self.call(tool, args.clone()).await;
        assert!(!output.is_error, "{tool} {args} failed: {}", output.text_content());
        output.text_content()
    }

    /// Runs a call that must fail; returns its text.
    pub async fn err(&self, tool: &str, args: Value) -> String {
        let output = self.call(tool, args.clone()).await;
        assert!(output.is_error, "{tool} {args} should fail but gave: {}", output.text_content());
        output.text_content()
    }

    /// Makes every call ask, and the approver record what each question previews and deny:
    /// what a person asked to approve would see, with nothing run.
    pub fn asking(&mut self) -> Arc<RecordingApprover> {
        use tackle_core::permission::PermissionMode;
        use tackle_policy::permission::ModePolicy;
        let approver = Arc::new(RecordingApprover(Mutex::new(Vec::new())));
        self.executor = Executor::default()
            .with_policy(Arc::new(ModePolicy::new(PermissionMode::Default)))
            .with_approver(approver.clone());
        approver
    }

    /// Every file name in the directory of `rel` (to see that no temporary file is left).
    pub fn names_in(&self, rel: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path(rel))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

/// Records what each approval request previews, and denies.
pub struct RecordingApprover(pub Mutex<Vec<Option<String>>>);

impl RecordingApprover {
    /// The previews recorded so far, taken.
    pub fn take(&self) -> Vec<Option<String>> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

impl tackle_core::permission::Approver for RecordingApprover {
    fn approve<'a>(
        &'a self,
        request: &'a tackle_core::permission::PermissionRequest<'a>,
        _reason: &'a str,
        _from_rule: bool,
    ) -> tackle_core::BoxFuture<'a, tackle_core::permission::Approval> {
        self.0.lock().unwrap().push(request.preview.map(str::to_owned));
        Box::pin(async { tackle_core::permission::Approval::Deny { message: "no".into() } })
    }
}

fn session(dir: &Path, root: &Path, enforce: bool, tune: impl FnOnce(&mut WorkspacePolicy)) -> ToolSession {
    let mut policy = WorkspacePolicy::new(root).unwrap().with_home(Some(dir.join("home")));
    tune(&mut policy);
    let registry = tackle_tools::builtin_registry();
    let selection = registry.select("all", "all").unwrap();
    let mut config = ToolSessionConfig::new(root.to_owned());
    config.path_policy = Some(Arc::new(policy) as Arc<dyn PathPolicy>);
    let state = SessionState::default();
    state.insert(FsSettings { enforce_read_before_edit: enforce, ..FsSettings::default() });
    ToolSession::with_state(config, registry.instantiate(&selection), state)
}

/// Sets a file's mtime into the past, so a later write is seen as a change whatever the
/// file system's timestamp granularity.
pub fn age(path: &Path) {
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000)).unwrap();
}
