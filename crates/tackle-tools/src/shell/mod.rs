//! The shell tools (docs/reference/tools.md#bash): `bash`, one persistent shell per session, and the
//! background jobs `background_run`, `job_output`, `job_kill`.
//!
//! What commands run in — the process sandbox, the command environment, the output budget and
//! the kill grace period — is a [`ShellEnvironment`], made when the session's first command
//! runs by the [`ShellSetup`] whoever assembled the session put in its state (the `tackle`
//! crate reads `[sandbox]`, `[env]` and `[tools]`), so a session that runs no command never
//! probes the sandbox; a session without a setup detects the sandbox with default settings.
//! The shell and the jobs of a session live in one [`ShellState`], a session resource that
//! `ToolSession::close` ends with everything it started; a job that finishes on its own is queued in the
//! session's `tackle_core::Notifications` (which the agent loop drains before each model
//! request) and broadcast as a typed event to subscribers of [`JobNotifications`]. A change to
//! a protected path that the sandbox could not stop is reported the same ways, and recorded in
//! the session's [`ProtectedChanges`].

mod bash;
pub(crate) mod capture;
mod events;
mod jobs;
mod process;
mod protected;
/// Which commands only read: the shell analysis of the permission engine.
pub use tackle_policy::shell as readonly;
pub(crate) mod render;
mod restricted;
mod stream;

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tackle_core::executor::DEFAULT_MAX_OUTPUT_CHARS;
use tackle_core::spill::SpillDir;
use tackle_core::{BoxFuture, Notifications, SessionResource, ToolContext, ToolError};
use tackle_sandbox::env::{CommandEnv, EnvSettings, SESSION_ID_VAR};
use tackle_sandbox::process::{DEFAULT_KILL_GRACE, ProcessSessions, Sandbox, SandboxKind, SandboxPolicy, restrict};

pub use self::bash::{Bash, BashInput};
pub use self::events::{Broadcast, Subscription};
use self::jobs::JobTable;
pub use self::jobs::{
    BackgroundRun, BackgroundRunInput, JobEvents, JobKill, JobKillInput, JobNotification, JobNotifications, JobOutput,
    JobOutputInput, JobStatus, MAX_RUNNING_JOBS,
};
use self::process::{ShellProcess, ShellStartError};
pub use self::protected::{ProtectedChange, ProtectedChanges};

/// The wire names of the shell tools (a session with none of them needs no sandbox).
pub const TOOLS: &[&str] = &["bash", "background_run", "job_output", "job_kill"];

/// Prints the shell's working directory and every exported variable, NUL-separated.
const EXPORTS_QUERY: &str = r#"builtin printf '%s\0' "$PWD"; while IFS= builtin read -r __tackle_n; do [ -n "$__tackle_n" ] && builtin printf '%s=%s\0' "$__tackle_n" "${!__tackle_n}"; done <<< "$(builtin compgen -e)""#;

/// What the commands of a session run in.
#[derive(Debug)]
pub struct ShellEnvironment {
    /// The process sandbox.
    pub sandbox: Sandbox,
    /// The environment of every command (docs/reference/safety.md#command-environment).
    pub env: CommandEnv,
    /// The inline output limit in characters (`[tools] max_output_chars`).
    pub max_output_chars: usize,
    /// The time between SIGTERM and SIGKILL (`[tools] kill_grace_ms`).
    pub kill_grace: Duration,
}

impl ShellEnvironment {
    /// An environment with the default budget and grace period.
    pub fn new(sandbox: Sandbox, env: CommandEnv) -> ShellEnvironment {
        ShellEnvironment { sandbox, env, max_output_chars: DEFAULT_MAX_OUTPUT_CHARS, kill_grace: DEFAULT_KILL_GRACE }
    }

    /// The environment of a session assembled without one: the sandbox `auto` picks with the
    /// default policy (its warning, if any, is logged) and the inherited environment.
    pub fn detect(workspace: &Path, session_id: &str) -> ShellEnvironment {
        let policy = SandboxPolicy::new(workspace);
        let sandbox = Sandbox::resolve(policy.clone()).unwrap_or_else(|err| Sandbox::none(policy, err.to_string()));
        if let Some(warning) = sandbox.warning() {
            tracing::warn!("{warning}");
        }
        ShellEnvironment::new(sandbox, CommandEnv::new(&EnvSettings::default(), session_id, workspace))
    }

    /// Bytes kept in memory for the head, and again for the tail, of each captured stream:
    /// enough for the whole budget even if every character took four bytes.
    fn memory_per_part(&self) -> usize {
        self.max_output_chars.saturating_mul(4)
    }
}

/// What the session's commands run in, for another tool that runs processes the same way
/// (the tools defined in files): made on first use like the shell's, together with the
/// session's shell state, so the end of the session also kills what such a process left.
pub(crate) fn session_environment(ctx: &ToolContext) -> Result<Arc<ShellEnvironment>, ToolError> {
    ShellState::of(ctx).map(|state| Arc::clone(&state.env))
}

/// The shell and the background jobs of one session.
pub struct ShellState {
    env: Arc<ShellEnvironment>,
    workspace: PathBuf,
    spill: SpillDir,
    shell: tokio::sync::Mutex<Option<ShellProcess>>,
    /// The shell's process sessions, reachable without the shell's lock (to kill a shell whose
    /// call is stuck when the session closes).
    shell_sessions: Mutex<Option<ProcessSessions>>,
    jobs: JobTable,
    /// Notices changes to protected paths around commands and jobs.
    guard: Arc<protected::Guard>,
    /// Set when the session ends: no shell starts after that.
    closed: AtomicBool,
}

/// The answer to a command or job asked of a session that has closed.
const SESSION_ENDED: &str = "The session has ended; no command or background job can start.";

/// How a session's [`ShellEnvironment`] is made, once, when its first command runs (the
/// sandbox is resolved then, not when the session is built). The error is the reason commands
/// cannot run, such as an explicitly chosen sandbox that is unavailable.
pub struct ShellSetup(Box<dyn Fn() -> Result<ShellEnvironment, SetupError> + Send + Sync>);

/// Why the shell environment cannot be made (the assembler's own error, e.g. the `tackle`
/// crate's `BuildError`); shown after `Commands cannot run: `.
pub type SetupError = Box<dyn std::error::Error + Send + Sync>;

impl ShellSetup {
    /// A setup that makes the environment with `make`.
    pub fn new(make: impl Fn() -> Result<ShellEnvironment, SetupError> + Send + Sync + 'static) -> ShellSetup {
        ShellSetup(Box::new(make))
    }
}

impl std::fmt::Debug for ShellSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ShellSetup")
    }
}

impl ShellState {
    /// `command` as it must run for a call allowed only because it was judged read-only
    /// (docs/shell.md, "Read-only commands run restricted"): under the read-only wrapper, in
    /// the foreground or as a background job; other calls run `command` as it is. When this
    /// session cannot restrict it, the call is refused rather than run unrestricted.
    fn command_for(&self, ctx: &ToolContext, command: &str, background: bool) -> Result<String, ToolError> {
        if !ctx.read_only_restricted() {
            return Ok(command.to_owned());
        }
        let helper = match self.env.sandbox.kind() {
            SandboxKind::None => Err(restrict::Unrestricted::Unsandboxed),
            _ => restrict::availability(self.env.sandbox.policy()),
        }
        .map_err(|why| {
            ToolError::Denied(format!(
                "This command runs without asking only because it looks read-only, and such commands must run \
                 read-only restricted, which is not possible here ({why}). Ask the user to allow it."
            ))
        })?;
        Ok(if background { restricted::background(command, &helper) } else { restricted::foreground(command, &helper) })
    }

    /// The session's shell state, created (and registered for `ToolSession::close`) on first use.
    fn of(ctx: &ToolContext) -> Result<Arc<ShellState>, ToolError> {
        let state = ctx.state();
        if let Some(existing) = state.existing::<ShellState>() {
            return Ok(existing);
        }
        let env = match (state.existing::<ShellEnvironment>(), state.existing::<ShellSetup>()) {
            (Some(env), _) => env,
            (None, Some(setup)) => {
                let env = (setup.0)().map_err(|reason| ToolError::Failed(format!("Commands cannot run: {reason}")))?;
                state.get_or_insert_with(|| env)
            }
            (None, None) => state.get_or_insert_with(|| ShellEnvironment::detect(ctx.workspace(), ctx.session_id())),
        };
        let queue = state.get::<Notifications>();
        let guard =
            Arc::new(protected::Guard::new(env.sandbox.policy(), state.get::<ProtectedChanges>(), queue.clone()));
        let notify = jobs::Notify { queue, events: state.get::<JobNotifications>() };
        let spill = ctx.spill_dir().clone();
        let workspace = ctx.workspace().to_owned();
        let made = state.resource_or_insert_with(move || ShellState {
            spill,
            jobs: JobTable::new(notify),
            guard,
            env,
            workspace,
            shell: tokio::sync::Mutex::new(None),
            shell_sessions: Mutex::new(None),
            closed: AtomicBool::new(false),
        });
        made.ok_or_else(|| ToolError::Failed(SESSION_ENDED.into()))
    }

    /// Starts a shell (the caller holds the lock).
    async fn start_shell(&self) -> Result<ShellProcess, ShellStartError> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(ShellStartError::Ended);
        }
        let shell = ShellProcess::start(&self.env, &self.workspace, self.spill.clone()).await?;
        *self.shell_sessions.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(shell.sessions().clone());
        Ok(shell)
    }

    /// Starts a background job in the shell's working directory with the variables exported
    /// in it (or in the workspace with the command environment, when no shell runs).
    async fn start_job(
        &self,
        command: &str,
        timeout: Option<Duration>,
    ) -> Result<Arc<jobs::Job>, tackle_core::ToolError> {
        let (mut cwd, exports) = self.shell_context().await;
        // A directory only the shell's sandbox has (its private /tmp) does not exist for the
        // job's own sandbox.
        let private_tmp = self.env.sandbox.kind() == SandboxKind::Bwrap
            && cwd.starts_with("/tmp")
            && !self.env.sandbox.policy().is_writable(&cwd);
        if private_tmp || !cwd.is_dir() {
            cwd = self.workspace.clone();
        }
        let timeout = timeout.unwrap_or(Duration::from_millis(jobs::DEFAULT_JOB_TIMEOUT_MS));
        self.jobs
            .start(jobs::JobStart {
                env: &self.env,
                cwd: &cwd,
                exports,
                log_dir: self.spill.child("jobs"),
                command,
                timeout,
                guard: Arc::clone(&self.guard),
            })
            .await
    }

    /// The running shell's working directory and exported variables.
    async fn shell_context(&self) -> (PathBuf, Vec<(OsString, OsString)>) {
        let mut guard = self.shell.lock().await;
        let Some(shell) = guard.as_mut().filter(|shell| shell.is_usable()) else {
            return (self.workspace.clone(), Vec::new());
        };
        let marker = format!("__tackle_env_{:032x}", rand::random::<u128>());
        let Some(bytes) = shell.query(EXPORTS_QUERY, &marker).await else {
            return (self.workspace.clone(), Vec::new());
        };
        let mut entries = bytes.split(|b| *b == 0);
        let cwd = entries.next().map_or_else(|| self.workspace.clone(), |cwd| PathBuf::from(OsStr::from_bytes(cwd)));
        let exports = entries
            .filter_map(|entry| {
                let eq = entry.iter().position(|b| *b == b'=').filter(|eq| *eq > 0)?;
                Some((OsStr::from_bytes(&entry[..eq]).to_owned(), OsStr::from_bytes(&entry[eq + 1..]).to_owned()))
            })
            .collect();
        (cwd, exports)
    }

    /// SIGKILL to the shell's processes and every job's, now, without waiting and without the
    /// shell's lock (a second Ctrl-C: Tackle exits right after). No shell or job starts after.
    pub fn kill_now(&self) {
        self.closed.store(true, Ordering::SeqCst);
        if let Some(sessions) = self.shell_sessions.lock().unwrap_or_else(std::sync::PoisonError::into_inner).as_ref() {
            sessions.kill_now();
        }
        self.jobs.kill_all_now();
        if let Some(leftovers) = self.leftovers() {
            leftovers.kill_now();
        }
    }

    /// Kills the shell and every job (the end of the session).
    async fn shutdown(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let sessions = self.shell_sessions.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take();
        let jobs = self.jobs.kill_all(self.env.kill_grace);
        let shell = async {
            match self.shell.try_lock() {
                Ok(mut guard) => {
                    if let Some(shell) = guard.take() {
                        shell.close().await;
                    }
                }
                // A call is still running: kill the shell's processes from outside.
                Err(_) => {
                    if let Some(sessions) = sessions {
                        sessions.kill_all(self.env.kill_grace).await;
                    }
                }
            }
        };
        futures::future::join(shell, jobs).await;
        // What escaped every shell and job (a `setsid` child of one that has exited) still
        // carries the session id in its environment.
        if let Some(leftovers) = self.leftovers() {
            leftovers.kill_all(self.env.kill_grace).await;
        }
    }

    /// Every process whose environment carries this session's `TACKLE_SESSION_ID`.
    fn leftovers(&self) -> Option<ProcessSessions> {
        let id = self.env.env.get(SESSION_ID_VAR)?;
        Some(ProcessSessions::carrying(SESSION_ID_VAR, id)).filter(|found| !found.pids.is_empty())
    }
}

impl Drop for ShellState {
    /// A session dropped without `close`: SIGKILL to everything that carries its id (the shell
    /// and the jobs also end through their own `Drop`s).
    fn drop(&mut self) {
        if !self.closed.load(Ordering::SeqCst)
            && let Some(leftovers) = self.leftovers()
        {
            leftovers.kill_now();
        }
    }
}

impl std::fmt::Debug for ShellState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShellState").field("workspace", &self.workspace).finish_non_exhaustive()
    }
}

impl SessionResource for ShellState {
    fn name(&self) -> &str {
        "shell"
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.shutdown())
    }
}
