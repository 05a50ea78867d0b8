//! The background jobs of a session (docs/reference/tools.md#background_run): each is `bash -c {command}` in its own
//! process session (and, with bubblewrap, its own sandbox), stdout and stderr merged into
//! `.tackle/outputs/{session}/jobs/{job_id}.log` by Tackle itself, outside the sandbox. A
//! supervisor task per job waits for the exit, the job's timeout or a kill request, ends every
//! process of the job's sessions, and records the status.

use std::ffi::OsString;
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tackle_core::spill::SpillDir;

use tackle_core::{Notifications, ToolError, ToolOutput};
use tackle_sandbox::process::{ProcessSessions, pipe, spawn_session};
use tokio::io::AsyncReadExt as _;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::shell::ShellEnvironment;
use crate::shell::capture::{Capture, Captured, SpillState};
use crate::shell::protected::Guard;

use super::notify::{JobNotification, JobNotifications};

/// At most this many jobs run at once.
pub const MAX_RUNNING_JOBS: usize = 16;

/// The largest job log; output beyond it is dropped with a note.
const LOG_CAP: u64 = crate::shell::capture::SPILL_CAP;

/// How a job stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobStatus {
    Running,
    /// Exited with this code (128 + n for a signal Tackle did not send).
    Exited(i32),
    /// Stopped by `job_kill` or the end of the session.
    Killed,
    /// Ran past its timeout and was killed.
    TimedOut,
}

impl std::fmt::Display for JobStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JobStatus::Running => f.write_str("running"),
            JobStatus::Exited(code) => write!(f, "exited {code}"),
            JobStatus::Killed => f.write_str("killed"),
            JobStatus::TimedOut => f.write_str("timed out"),
        }
    }
}

/// One background job.
#[derive(Debug)]
pub struct Job {
    /// `job-1`, `job-2`, …
    pub id: String,
    /// The command as given.
    pub command: String,
    /// The directory it runs in.
    pub cwd: PathBuf,
    /// The log's directory (a session's spill directory's `jobs/`) and name in it: opened
    /// beneath the workspace, never through a link.
    log_dir: SpillDir,
    log_name: String,
    log_rel: String,
    status: watch::Sender<JobStatus>,
    read_offset: Mutex<u64>,
    kill: CancellationToken,
    /// Set when the job is stopped on purpose (no notification then).
    quiet: AtomicBool,
    /// The pid of the job's first process (its session id).
    root: i32,
}

impl Job {
    /// The answer to the call that started the job (docs/reference/tools.md#background_run).
    pub fn started_output(&self) -> ToolOutput {
        ToolOutput::text(format!(
            "Started background job {}: {}. Use job_output to read its output and job_kill to stop it.",
            self.id, self.command
        ))
        .with_structured(serde_json::json!({ "job_id": self.id }))
    }

    /// The current status.
    pub fn status(&self) -> JobStatus {
        *self.status.borrow()
    }

    /// Waits until the job has ended or `timeout` passes.
    pub async fn wait(&self, timeout: Duration) -> JobStatus {
        let mut updates = self.status.subscribe();
        let _ = tokio::time::timeout(timeout, updates.wait_for(|status| *status != JobStatus::Running)).await;
        self.status()
    }

    /// Asks the supervisor to kill the job, quietly, and waits until it has ended.
    pub async fn kill(&self, grace: Duration) -> JobStatus {
        self.request_stop();
        self.wait(grace * 2 + Duration::from_secs(2)).await
    }

    /// SIGKILL to every process of the job now, without waiting (Tackle is about to exit).
    pub fn kill_now(&self) {
        // Quiet before the SIGKILL, so a supervisor that sees the exit does not announce it.
        self.quiet.store(true, Ordering::SeqCst);
        if self.status() == JobStatus::Running {
            ProcessSessions::of_session(self.root).kill_now();
        }
        self.request_stop();
    }

    /// Marks the job as stopped on purpose (no notification) and asks its supervisor to end it.
    fn request_stop(&self) {
        self.quiet.store(true, Ordering::SeqCst);
        self.kill.cancel();
    }

    /// The output since the previous read (or from the start), fitted to `budget` characters
    /// by the caller; the job log is its spill file.
    pub fn read_new(&self, from_start: bool, memory: usize) -> std::io::Result<Option<Captured>> {
        let mut offset = self.read_offset.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let dir = self.log_dir.open()?;
        let mut file =
            tackle_core::fs::state::open_in(&dir, &self.log_dir.rel, &self.log_name, rustix::fs::OFlags::RDONLY)
                .map_err(|err| std::io::Error::other(err.to_string()))?;
        let end = file.metadata()?.len();
        let start = if from_start { 0 } else { (*offset).min(end) };
        *offset = end;
        if start == end {
            return Ok(None);
        }
        file.seek(SeekFrom::Start(start))?;
        let mut capture = Capture::new(memory, memory, None);
        let mut buf = vec![0u8; 256 * 1024];
        let mut left = end - start;
        while left > 0 {
            let want = usize::try_from(left).unwrap_or(usize::MAX).min(buf.len());
            let n = file.read(&mut buf[..want])?;
            if n == 0 {
                break;
            }
            capture.push(&buf[..n]);
            left -= n as u64;
        }
        let mut captured = capture.finish();
        captured.spill = Some(SpillState::Saved { rel: self.log_rel.clone(), capped: end >= LOG_CAP });
        Ok(Some(captured))
    }
}

/// Where and how a job is started.
#[derive(Debug)]
pub struct JobStart<'a> {
    pub env: &'a ShellEnvironment,
    pub cwd: &'a Path,
    /// Variables exported in the session shell, added to the command environment.
    pub exports: Vec<(OsString, OsString)>,
    /// The directory of job logs, absolute and workspace-relative.
    pub log_dir: SpillDir,
    pub command: &'a str,
    pub timeout: Duration,
    /// Notices what the job changed of the protected paths.
    pub guard: Arc<Guard>,
}

/// The jobs of a session.
#[derive(Debug)]
pub struct JobTable {
    next: AtomicU64,
    jobs: Mutex<Vec<Arc<Job>>>,
    notify: Notify,
    closed: AtomicBool,
    /// Held shared by each start from its `closed` check until its job is in the table, and
    /// alone by [`JobTable::kill_all`] to set `closed`: so the end of the session waits for a
    /// start under way and then kills that job too, instead of missing one that was being
    /// spawned (`tackle mcp serve` ended by a signal right after a `background_run`).
    starting: tokio::sync::RwLock<()>,
}

/// Where finished jobs are announced: the session's queue for the model and the typed stream.
#[derive(Debug, Clone)]
pub struct Notify {
    pub queue: Arc<Notifications>,
    pub events: Arc<JobNotifications>,
}

impl Notify {
    fn send(&self, notification: JobNotification) {
        self.queue.push(notification.text());
        self.events.send(notification);
    }
}

impl JobTable {
    /// An empty table that announces finished jobs through `notify`.
    pub fn new(notify: Notify) -> JobTable {
        JobTable {
            next: AtomicU64::new(1),
            jobs: Mutex::new(Vec::new()),
            notify,
            closed: AtomicBool::new(false),
            starting: tokio::sync::RwLock::new(()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arc<Job>>> {
        self.jobs.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Starts a job.
    pub async fn start(&self, start: JobStart<'_>) -> Result<Arc<Job>, ToolError> {
        let _starting = self.starting.read().await;
        if self.closed.load(Ordering::SeqCst) {
            return Err(ToolError::Failed("The session has ended; no background job can start.".into()));
        }
        let running = self.lock().iter().filter(|job| job.status() == JobStatus::Running).count();
        if running >= MAX_RUNNING_JOBS {
            return Err(ToolError::Failed(format!(
                "Too many background jobs running ({MAX_RUNNING_JOBS}); stop one with job_kill first."
            )));
        }
        let id = format!("job-{}", self.next.fetch_add(1, Ordering::SeqCst));
        let log_dir = start.log_dir.clone();
        let log_name = format!("{id}.log");
        let log_rel = log_dir.rel_of(&log_name);
        let failed = |what: &str, err: &dyn std::fmt::Display| {
            ToolError::Failed(format!("Cannot start the background job: {what}: {err}"))
        };
        let dir = log_dir.open().map_err(|e| failed("cannot create the log directory", &e))?;
        let flags = rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::CREATE | rustix::fs::OFlags::TRUNC;
        let log = tackle_core::fs::state::open_in(&dir, &log_dir.rel, &log_name, flags).map_err(|e| {
            e.notice();
            failed("cannot create the log", &e)
        })?;
        let (read_end, write_end) = pipe().map_err(|e| failed("cannot create a pipe", &e))?;
        let env = start.env.env.with_vars(start.exports);
        let args = [std::ffi::OsStr::new("-c"), std::ffi::OsStr::new(start.command)];
        let mut sandboxed =
            start.env.sandbox.command("bash", &args, start.cwd, &env).map_err(|e| failed("sandbox", &e))?;
        let write_clone = write_end.try_clone().map_err(|e| failed("cannot create a pipe", &e))?;
        sandboxed.command.stdin(std::process::Stdio::null()).stdout(write_end).stderr(write_clone);
        let before = start.guard.before();
        let child =
            spawn_session(sandboxed.command, sandboxed.pass_fds).await.map_err(|e| failed("cannot start bash", &e))?;
        let root = child.id().and_then(|pid| i32::try_from(pid).ok()).unwrap_or(0);
        let reader = tokio::net::unix::pipe::Receiver::from_owned_fd(read_end)
            .map_err(|e| failed("cannot read the job's output", &e))?;
        let job = Arc::new(Job {
            id,
            command: start.command.to_owned(),
            cwd: start.cwd.to_owned(),
            log_dir,
            log_name,
            log_rel,
            status: watch::Sender::new(JobStatus::Running),
            read_offset: Mutex::new(0),
            kill: CancellationToken::new(),
            quiet: AtomicBool::new(false),
            root,
        });
        let writer = tokio::spawn(write_log(reader, log));
        let supervisor = Supervisor {
            job: Arc::clone(&job),
            timeout: start.timeout,
            grace: start.env.kill_grace,
            notify: self.notify.clone(),
            protected: (start.guard, before),
        };
        tokio::spawn(supervisor.run(child, writer));
        self.lock().push(Arc::clone(&job));
        Ok(job)
    }

    /// The job `id`, or the model-facing error listing the jobs there are.
    pub fn get(&self, id: &str) -> Result<Arc<Job>, ToolError> {
        let jobs = self.lock();
        if let Some(job) = jobs.iter().find(|job| job.id == id) {
            return Ok(Arc::clone(job));
        }
        let listed: Vec<String> = jobs.iter().map(|job| format!("{} [{}]", job.id, job.status())).collect();
        let listed = if listed.is_empty() { "none".to_owned() } else { listed.join(", ") };
        Err(ToolError::NotFound(format!("Unknown job id: {id}. Jobs: {listed}")))
    }

    /// Kills every running job (the end of the session) and refuses new ones.
    pub async fn kill_all(&self, grace: Duration) {
        {
            let _no_start = self.starting.write().await;
            self.closed.store(true, Ordering::SeqCst);
        }
        let jobs: Vec<Arc<Job>> = self.lock().clone();
        futures::future::join_all(jobs.iter().map(|job| job.kill(grace))).await;
    }

    /// [`Job::kill_now`] for every job, and refuses new ones.
    pub fn kill_all_now(&self) {
        self.closed.store(true, Ordering::SeqCst);
        for job in self.lock().iter() {
            job.kill_now();
        }
    }
}

/// Watches one job until it ends.
struct Supervisor {
    job: Arc<Job>,
    timeout: Duration,
    grace: Duration,
    notify: Notify,
    /// The protected paths' watch and their state when the job started.
    protected: (Arc<Guard>, tackle_sandbox::process::Snapshot),
}

impl Supervisor {
    async fn run(self, mut child: tokio::process::Child, writer: tokio::task::JoinHandle<()>) {
        let mut guard = KillOnDrop { root: self.job.root, armed: true };
        let ended = tokio::select! {
            status = child.wait() => Some(exit_code(status)),
            () = tokio::time::sleep(self.timeout) => None,
            () = self.job.kill.cancelled() => None,
        };
        let status = match ended {
            Some(code) => {
                // Whatever the job left running in its session goes with it.
                ProcessSessions::of_session(self.job.root).kill_all(self.grace).await;
                JobStatus::Exited(code)
            }
            None => {
                ProcessSessions::of_session(self.job.root).kill_all(self.grace).await;
                let _ = tokio::time::timeout(self.grace, child.wait()).await;
                if self.job.kill.is_cancelled() { JobStatus::Killed } else { JobStatus::TimedOut }
            }
        };
        // The log is complete once every holder of the pipe is gone.
        let _ = tokio::time::timeout(self.grace, writer).await;
        guard.armed = false;
        self.job.status.send_replace(status);
        if !self.job.quiet.load(Ordering::SeqCst) {
            self.notify.send(JobNotification {
                job_id: self.job.id.clone(),
                command: self.job.command.clone(),
                status,
            });
        }
        let (watch, before) = &self.protected;
        watch.after_job(before, &self.job.id);
    }
}

/// Kills a job's processes when its supervisor is dropped before the job ended (the runtime
/// shut down).
struct KillOnDrop {
    root: i32,
    armed: bool,
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if self.armed {
            ProcessSessions::of_session(self.root).kill_now();
        }
    }
}

impl Drop for JobTable {
    /// A session dropped without `close` still ends its jobs (their supervisors kill them).
    fn drop(&mut self) {
        for job in self.jobs.get_mut().unwrap_or_else(|p| p.into_inner()).iter() {
            job.request_stop();
        }
    }
}

fn exit_code(status: std::io::Result<std::process::ExitStatus>) -> i32 {
    use std::os::unix::process::ExitStatusExt as _;
    match status {
        Ok(status) => status.code().or_else(|| status.signal().map(|signal| 128 + signal)).unwrap_or(-1),
        Err(_) => -1,
    }
}

/// Copies the job's merged output into its log, up to [`LOG_CAP`].
async fn write_log(mut reader: tokio::net::unix::pipe::Receiver, mut log: std::fs::File) {
    let mut buf = vec![0u8; 256 * 1024];
    let mut written = 0u64;
    let mut capped = false;
    loop {
        let n = match reader.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if capped {
            continue;
        }
        let room = usize::try_from(LOG_CAP - written).unwrap_or(usize::MAX).min(n);
        if log.write_all(&buf[..room]).is_err() {
            capped = true;
            continue;
        }
        written += room as u64;
        if room < n {
            let _ = log.write_all(b"\n[tackle: output beyond 64 MiB was not saved]\n");
            capped = true;
        }
    }
}
