//! The persistent `bash --noprofile --norc` of a session (docs/reference/tools.md#bash).
//!
//! The shell runs a small loop (its `-c` script): read a command from the private control pipe
//! on fd 63, `eval` it in the shell itself (so `cd`, `export`, functions and aliases persist),
//! then read the call's random sentinel from the pipe and print it with `$?`, the `set -x` /
//! `set -v` flags and `$PWD` on the original stdout, and once more, with the command's DEBUG
//! trap, on the original stderr. During `eval`, fd 63, the copies of the original pipes
//! (61, 62) and the shell's own state pipe (59, 60) are closed, so commands inherit none of them and cannot read the sentinel before
//! it is printed. Before each `eval` the loop points fds 1 and 2 at the original pipes again,
//! so a command that redirects or closes the shell's own output (`exec >file`,
//! `exec 1>&- 2>&-`) affects only itself: later calls show their output and still end.
//! The command's DEBUG trap, `set -x` and `set -v` are put aside while the loop does its own
//! bookkeeping and given back by Tackle at the start of the next command (see [`BOOTSTRAP`]).
//! Job control (`set -m`) puts each foreground command in its own process group, which a
//! timeout or cancel signals without touching the shell.
//!
//! Every step of the loop is a builtin, and each redirection costs bash a handful of system
//! calls (it saves and restores each descriptor), so the loop keeps few of them: a call of
//! `echo hi` costs about 0.1 ms in all (docs/performance.md#shell-call).
//!
//! Both pipes are drained by reader tasks ([`super::stream`]); completion is the arrival of both
//! sentinels, signalled through a [`Notify`], with no polling.

use std::os::fd::AsRawFd as _;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tackle_core::spill::SpillDir;

use tackle_sandbox::process::{ProcessSessions, descendants, pipe, snapshot, spawn_session};
use tokio::io::AsyncWriteExt as _;
use tokio::net::unix::pipe;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::ShellEnvironment;

/// Why the shell could not start; the text follows `Error starting bash session: `.
#[derive(Debug, thiserror::Error)]
pub enum ShellStartError {
    /// The session was closed.
    #[error("the session has ended")]
    Ended,
    /// A control pipe could not be made.
    #[error("cannot create a pipe: {0}")]
    Pipe(#[source] std::io::Error),
    /// The sandbox could not be prepared for the shell.
    #[error(transparent)]
    Sandbox(#[from] tackle_sandbox::process::SandboxError),
    /// The shell (or the sandbox around it) could not be run.
    #[error("cannot run {program}: {source}")]
    Spawn {
        /// The program run: `bash`, or the sandbox's.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// The shell had no process id: it exited at once.
    #[error("the shell exited at once")]
    ExitedAtOnce,
    /// The shell's stdout or stderr pipe is missing.
    #[error("the shell's output pipes are missing")]
    NoPipes,
    /// The control pipe could not be registered.
    #[error(transparent)]
    Control(std::io::Error),
    /// The shell did not answer its first command, silently.
    #[error("the shell did not answer")]
    NoAnswer,
    /// The shell did not answer its first command; what it wrote to stderr.
    #[error("{0}")]
    Said(String),
}
use super::capture::{Capture, SpillTarget};
use super::stream::{self, CaptureFactory, SharedStream, StreamState};

/// The descriptor the shell reads commands from.
const CONTROL_FD: i32 = 63;

/// The two ends of the shell's own pipe, which it writes `trap -p DEBUG` into and reads back
/// (without the fork of a command substitution), so that each trailer leaves in one write that
/// a background process's output cannot split.
const STATE_READ_FD: i32 = 59;
const STATE_WRITE_FD: i32 = 60;

/// The loop the shell runs. `61`/`62` keep the original stdout/stderr for the sentinels. The
/// shell survives a SIGTERM to its own process group (`kill 0`); commands do not inherit the
/// trap.
///
/// Each message starts with `u` (the model's command) or `i` (Tackle's own: the handshake and
/// the query of exported variables) and ends with a NUL; the sentinel's 22 characters follow it
/// in the pipe ([`random_token`]). After a `u`
/// command the loop reports its `set -x` / `set -v` flags in the stdout trailer and its DEBUG
/// trap (`trap -p DEBUG`, read back through the state pipe, and only when one is set: `read -t
/// 0` sees whether `trap -p` wrote anything) in the stderr trailer, and clears them, with every trace of that
/// bookkeeping sent to `/dev/null`; Tackle gives them back in a first line of the next `u`
/// command ([`restore_line`]), also silenced, so neither the loop's own commands nor `i`
/// commands are ever traced. `set -e` is turned off after every command and not restored.
const BOOTSTRAP: &str = r#"set -m
trap : TERM
shopt -s expand_aliases
exec 61>&1 62>&2 1>/dev/null 2>&1
while IFS= builtin read -r -d '' -u 63 __tackle_cmd; do
  builtin eval "${__tackle_cmd:1}" 1>&61 2>&62 59<&- 60>&- 61>&- 62>&- 63<&-
  __tackle_rc=$?
  case $- in
    *[exv]*) builtin set +e; __tackle_flags=${-//[^xv]/}; builtin set +xv ;;
    *) __tackle_flags= ;;
  esac
  builtin read -r -N 22 -u 63 __tackle_sent
  __tackle_trap=
  if [[ $__tackle_cmd == u* ]]; then
    builtin trap -p DEBUG >&60
    if builtin read -t 0 -u 59; then
      builtin printf '\0' >&60
      IFS= builtin read -r -d '' -u 59 __tackle_trap
      builtin trap - DEBUG
    fi
  fi
  builtin printf '\n__tackle_done_%s%s\0' "$__tackle_sent" "$__tackle_trap" >&62
  builtin printf '\n__tackle_done_%s %d f%s %s\0' "$__tackle_sent" "$__tackle_rc" "$__tackle_flags" "$PWD" >&61
done
"#;

/// The first line of a `u` command that gives back the flags and DEBUG trap the previous one
/// left (empty when it left none), silenced so that it is never traced.
fn restore_line(flags: &str, trap: &str) -> String {
    let trap = trap.trim_end();
    if flags.is_empty() && trap.is_empty() {
        return String::new();
    }
    let mut line = String::from("{ ");
    if !flags.is_empty() {
        line.push_str(&format!("builtin set -{flags}\n"));
    }
    if !trap.is_empty() {
        line.push_str(&format!("builtin {trap}\n"));
    }
    line.push_str("} >/dev/null 2>&1\n");
    line
}

/// Who a command comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// The model: runs with the shell's saved traces and DEBUG trap.
    User,
    /// Tackle: runs with none of them, and leaves them as they were.
    Internal,
}

/// How long a new shell may take to answer its first (empty) command.
const START_TIMEOUT: Duration = Duration::from_secs(10);

/// Pipe capacity asked for the output pipes (fewer wake-ups for large outputs).
const PIPE_SIZE: libc::c_int = 1 << 20;

/// How a call ended.
#[derive(Debug)]
pub enum Ended {
    /// Both sentinels arrived: the exit code and the shell's working directory afterwards.
    Done { exit_code: i32, cwd: String },
    /// The shell exited (or closed its pipes) before the sentinel; `code` is its exit status.
    ShellExited { code: Option<i32> },
    /// The deadline passed or the call was cancelled; the command's processes were killed.
    /// `kept` says whether the shell answered afterwards.
    Interrupted { timed_out: bool, kept: bool, cwd: Option<String> },
}

/// The streams and end of one call.
#[derive(Debug)]
pub struct CallResult {
    pub stdout: Capture,
    pub stderr: Capture,
    pub ended: Ended,
}

/// Why waiting stopped.
enum Wait {
    Finished,
    Exited,
    TimedOut,
    Cancelled,
}

/// A running shell.
pub struct ShellProcess {
    control: Option<pipe::Sender>,
    stdout: SharedStream,
    stderr: SharedStream,
    events: Arc<Notify>,
    exit: Arc<Mutex<Option<Option<i32>>>>,
    tasks: Vec<JoinHandle<()>>,
    sessions: ProcessSessions,
    kill_grace: Duration,
    spill: SpillDir,
    abandoned: bool,
    /// The first line of the next `u` command: the flags and DEBUG trap the last one left.
    restore: String,
}

impl ShellProcess {
    /// The shell's stdout, for watching a running command's output.
    pub fn stdout_stream(&self) -> SharedStream {
        Arc::clone(&self.stdout)
    }

    /// Starts a shell in the workspace, inside the session's sandbox, and waits until it
    /// answers. `Err` is the reason for `Error starting bash session: {reason}`.
    pub async fn start(
        env: &ShellEnvironment,
        workspace: &Path,
        spill: SpillDir,
    ) -> Result<ShellProcess, ShellStartError> {
        // The sandbox protects `.tackle` only if it exists when the sandbox starts (made
        // beneath the workspace; a link there is refused with a notice, never followed).
        if let Err(err) = tackle_core::fs::state::TACKLE.open_dir(workspace, "", true) {
            err.notice();
        }
        let (control_read, control_write) = pipe().map_err(ShellStartError::Pipe)?;
        let (state_read, state_write) = pipe().map_err(ShellStartError::Pipe)?;
        let args = [
            std::ffi::OsStr::new("--noprofile"),
            std::ffi::OsStr::new("--norc"),
            std::ffi::OsStr::new("-c"),
            std::ffi::OsStr::new(BOOTSTRAP),
        ];
        let sandboxed = env.sandbox.command("bash", &args, workspace, &env.env)?;
        let (mut command, mut pass_fds) = (sandboxed.command, sandboxed.pass_fds);
        command
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let program = command.get_program().to_string_lossy().into_owned();
        pass_fds.extend([(control_read, CONTROL_FD), (state_read, STATE_READ_FD), (state_write, STATE_WRITE_FD)]);
        let mut child =
            spawn_session(command, pass_fds).await.map_err(|source| ShellStartError::Spawn { program, source })?;
        let root = child.id().and_then(|id| i32::try_from(id).ok()).ok_or(ShellStartError::ExitedAtOnce)?;
        let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
            return Err(ShellStartError::NoPipes);
        };
        for fd in [out.as_raw_fd(), err.as_raw_fd()] {
            // SAFETY: F_SETPIPE_SZ on a pipe we own; failure only leaves the default size.
            unsafe {
                libc::fcntl(fd, libc::F_SETPIPE_SZ, PIPE_SIZE);
            }
        }
        let control = pipe::Sender::from_owned_fd(control_write).map_err(ShellStartError::Control)?;
        let factory = |stream: &str| {
            let name = format!("between-calls.{stream}.txt");
            CaptureFactory {
                head_limit: env.memory_per_part(),
                tail_limit: env.memory_per_part(),
                idle_target: SpillTarget::new(&spill, name),
            }
        };
        let stdout: SharedStream = Arc::new(Mutex::new(StreamState::new(factory("stdout"))));
        let stderr: SharedStream = Arc::new(Mutex::new(StreamState::new(factory("stderr"))));
        let events = Arc::new(Notify::new());
        let exit = Arc::new(Mutex::new(None));
        let tasks = vec![
            tokio::spawn(stream::drain(out, Arc::clone(&stdout), Arc::clone(&events))),
            tokio::spawn(stream::drain(err, Arc::clone(&stderr), Arc::clone(&events))),
            tokio::spawn({
                let (exit, events) = (Arc::clone(&exit), Arc::clone(&events));
                async move {
                    let status = child.wait().await.ok();
                    let code = status.and_then(|s| {
                        use std::os::unix::process::ExitStatusExt as _;
                        s.code().or_else(|| s.signal().map(|sig| 128 + sig))
                    });
                    *exit.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(code);
                    events.notify_waiters();
                }
            }),
        ];
        let mut shell = ShellProcess {
            control: Some(control),
            stdout,
            stderr,
            events,
            exit,
            tasks,
            sessions: ProcessSessions::default(),
            kill_grace: env.kill_grace,
            spill,
            abandoned: false,
            restore: String::new(),
        };
        shell.sessions = ProcessSessions::of_tree(root);
        shell.sessions.keep.insert(root);
        let started = shell.handshake(root).await;
        if let Err(reason) = started {
            shell.sessions.kill_now();
            return Err(reason);
        }
        Ok(shell)
    }

    /// Runs `:` and, once the shell answers, records the processes that make up the shell
    /// itself (the sandbox's and the shell's own), which a timeout must spare.
    async fn handshake(&mut self, root: i32) -> Result<(), ShellStartError> {
        let never = CancellationToken::new();
        let result = self.run_as(Origin::Internal, ":", "start", Instant::now() + START_TIMEOUT, &never).await;
        match result.ended {
            Ended::Done { .. } => {
                let processes = snapshot();
                let below = descendants(&processes, root);
                self.sessions.sids.extend(below.iter().map(|p| p.sid));
                self.sessions.keep.extend(below.iter().map(|p| p.pid));
                Ok(())
            }
            _ => {
                let stderr = result.stderr.finish();
                let text = String::from_utf8_lossy(stderr.whole().unwrap_or(&stderr.head)).trim().to_owned();
                Err(if text.is_empty() { ShellStartError::NoAnswer } else { ShellStartError::Said(text) })
            }
        }
    }

    /// Runs one command. `call_id` names the spill files. Returns when both sentinels have
    /// arrived, the shell has exited, or the command was interrupted (at `deadline` or by
    /// `cancel`) and the kill procedure ran.
    pub async fn run(
        &mut self,
        command: &str,
        call_id: &str,
        deadline: Instant,
        cancel: &CancellationToken,
    ) -> CallResult {
        self.run_as(Origin::User, command, call_id, deadline, cancel).await
    }

    async fn run_as(
        &mut self,
        origin: Origin,
        command: &str,
        call_id: &str,
        deadline: Instant,
        cancel: &CancellationToken,
    ) -> CallResult {
        let token = random_token();
        let pattern = format!("\n{SENTINEL_PREFIX}{token}");
        let stem = tackle_core::spill::safe_file_stem(call_id);
        for (stream, name) in [(&self.stdout, "stdout"), (&self.stderr, "stderr")] {
            let file = format!("{stem}.{name}.txt");
            let target = SpillTarget::new(&self.spill, file);
            stream::lock(stream).arm(pattern.as_bytes(), target);
        }
        let restore = if origin == Origin::User { self.restore.as_str() } else { "" };
        let mut message = Vec::with_capacity(restore.len() + command.len() + token.len() + 4);
        message.push(if origin == Origin::User { b'u' } else { b'i' });
        message.extend_from_slice(restore.as_bytes());
        message.extend_from_slice(command.as_bytes());
        message.extend_from_slice(b"\n\0");
        message.extend_from_slice(token.as_bytes());
        // Until the call ends, the shell counts as abandoned: a caller that drops this future
        // mid-way (an executor deadline) leaves a shell whose state no one knows.
        self.abandoned = true;
        let sent = match self.control.as_mut() {
            Some(control) => control.write_all(&message).await.is_ok(),
            None => false,
        };
        let wait = if sent { self.wait(deadline, Some(cancel)).await } else { Wait::Exited };
        let result = match wait {
            Wait::Finished => self.collect_done(origin),
            Wait::Exited => self.collect_exited().await,
            Wait::TimedOut | Wait::Cancelled => self.interrupt(matches!(wait, Wait::TimedOut), origin).await,
        };
        self.abandoned = false;
        result
    }

    /// Waits until both sentinels arrived, the shell is gone, `deadline` passes or `cancel`
    /// fires.
    async fn wait(&self, deadline: Instant, cancel: Option<&CancellationToken>) -> Wait {
        self.wait_for(deadline, cancel, || {
            if stream::lock(&self.stdout).has_finished() && stream::lock(&self.stderr).has_finished() {
                Some(Wait::Finished)
            } else if self.exited().is_some() || stream::lock(&self.stdout).is_eof() {
                Some(Wait::Exited)
            } else {
                None
            }
        })
        .await
    }

    /// Waits until `check` answers, re-checking whenever a reader or the exit watcher reports
    /// something; `deadline` and `cancel` end the wait early.
    async fn wait_for(
        &self,
        deadline: Instant,
        cancel: Option<&CancellationToken>,
        check: impl Fn() -> Option<Wait>,
    ) -> Wait {
        let deadline = tokio::time::Instant::from_std(deadline);
        loop {
            let notified = self.events.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(answer) = check() {
                return answer;
            }
            let cancelled = async {
                match cancel {
                    Some(token) => token.cancelled().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = &mut notified => {}
                () = tokio::time::sleep_until(deadline) => return Wait::TimedOut,
                () = cancelled => return Wait::Cancelled,
            }
        }
    }

    fn exited(&self) -> Option<Option<i32>> {
        *self.exit.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes a call that ended with both sentinels. The stdout trailer is ` CODE fFLAGS PWD`;
    /// after a `u` command the stderr trailer is its DEBUG trap, which with the flags makes the
    /// next `u` command's [`restore_line`].
    fn collect_done(&mut self, origin: Origin) -> CallResult {
        let out = stream::lock(&self.stdout).take_finished();
        let err = stream::lock(&self.stderr).take_finished();
        let (Some(out), Some(err)) = (out, err) else {
            return CallResult {
                stdout: stream::lock(&self.stdout).take_partial(),
                stderr: stream::lock(&self.stderr).take_partial(),
                ended: Ended::ShellExited { code: None },
            };
        };
        let trailer = String::from_utf8_lossy(&out.trailer);
        let mut parts = trailer.trim_start_matches(' ').splitn(3, ' ');
        let exit_code = parts.next().and_then(|code| code.parse().ok()).unwrap_or(-1);
        let flags = parts.next().and_then(|flags| flags.strip_prefix('f')).unwrap_or_default();
        let cwd = parts.next().unwrap_or_default().to_owned();
        if origin == Origin::User {
            let flags: String = flags.chars().filter(|c| matches!(c, 'x' | 'v')).collect();
            self.restore = restore_line(&flags, &String::from_utf8_lossy(&err.trailer));
        }
        CallResult { stdout: out.capture, stderr: err.capture, ended: Ended::Done { exit_code, cwd } }
    }

    /// The shell is gone: end what it left in its sessions so the pipes close, then take the
    /// output that arrived.
    async fn collect_exited(&mut self) -> CallResult {
        // Closed pipes come first when a shell exits (the kernel closes its files before it
        // hands its children to a new parent): wait, bounded, until it is reaped, so a child it
        // started in a session of its own is not caught mid-exit as its descendant. Such a
        // child has escaped, and the session's end sweeps it (`ShellState::shutdown`).
        let reaped = Instant::now() + self.kill_grace;
        self.wait_for(reaped, None, || self.exited().map(|_| Wait::Exited)).await;
        self.sessions.kill_all(self.kill_grace).await;
        let drained = Instant::now() + self.kill_grace;
        let closed = || {
            let closed = stream::lock(&self.stdout).is_eof() && stream::lock(&self.stderr).is_eof();
            (closed && self.exited().is_some()).then_some(Wait::Finished)
        };
        self.wait_for(drained, None, closed).await;
        CallResult {
            stdout: stream::lock(&self.stdout).take_partial(),
            stderr: stream::lock(&self.stderr).take_partial(),
            ended: Ended::ShellExited { code: self.exited().flatten() },
        }
    }

    /// Kills the command's processes (every process of the shell's sessions but the shell and
    /// its sandbox): SIGTERM to their groups, SIGKILL after the grace period; then gives the
    /// shell the grace period to print the sentinel. If it does, the session is kept.
    async fn interrupt(&mut self, timed_out: bool, origin: Origin) -> CallResult {
        self.sessions.kill_children(self.kill_grace).await;
        let probe = Instant::now() + self.kill_grace;
        let answered = matches!(self.wait(probe, None).await, Wait::Finished);
        if answered {
            let done = self.collect_done(origin);
            let cwd = match done.ended {
                Ended::Done { cwd, .. } => Some(cwd),
                _ => None,
            };
            return CallResult { ended: Ended::Interrupted { timed_out, kept: true, cwd }, ..done };
        }
        CallResult {
            stdout: stream::lock(&self.stdout).take_partial(),
            stderr: stream::lock(&self.stderr).take_partial(),
            ended: Ended::Interrupted { timed_out, kept: false, cwd: None },
        }
    }

    /// Runs an internal command and returns its raw stdout; output from earlier background
    /// processes that arrived meanwhile is handed to the next call. `None` if the shell did
    /// not answer in time.
    pub async fn query(&mut self, command: &str, marker: &str) -> Option<Vec<u8>> {
        let never = CancellationToken::new();
        let command = format!("builtin printf '%s' '{marker}'; {command}");
        let result = self.run_as(Origin::Internal, &command, "query", Instant::now() + START_TIMEOUT, &never).await;
        let Ended::Done { .. } = result.ended else { return None };
        let out = result.stdout.finish();
        let err = result.stderr.finish();
        let out_bytes = out.whole()?.to_vec();
        let at = memchr::memmem::find(&out_bytes, marker.as_bytes())?;
        stream::lock(&self.stdout).push_idle(&out_bytes[..at]);
        stream::lock(&self.stderr).push_idle(err.whole().unwrap_or_default());
        Some(out_bytes[at + marker.len()..].to_vec())
    }

    /// Whether the shell process has exited.
    pub fn is_dead(&self) -> bool {
        self.exited().is_some()
    }

    /// Whether a call was dropped before it ended (the shell may still be running it).
    pub fn is_abandoned(&self) -> bool {
        self.abandoned
    }

    /// Whether the shell can take another command: it has not exited and no call was dropped.
    pub fn is_usable(&self) -> bool {
        !self.is_dead() && !self.is_abandoned()
    }

    /// The process sessions of this shell (for tests and for killing it from outside).
    pub fn sessions(&self) -> &ProcessSessions {
        &self.sessions
    }

    /// Ends the shell and everything it started: first every process below the shell (the
    /// shell holds the orphans it adopted only while it lives), then the control pipe closes
    /// (the loop ends), then whatever is left of its sessions. Each kill is SIGTERM and, after
    /// the grace period, SIGKILL.
    pub async fn close(mut self) {
        self.sessions.kill_children(self.kill_grace).await;
        self.control.take();
        let quit = Instant::now() + Duration::from_millis(200);
        self.wait_for(quit, None, || self.exited().map(|_| Wait::Exited)).await;
        self.sessions.kill_all(self.kill_grace).await;
    }
}

impl ShellProcess {
    /// Ends an unresponsive shell at once: SIGKILL to every process of its sessions.
    pub async fn kill(self) {
        self.sessions.kill_all(Duration::ZERO).await;
    }
}

impl Drop for ShellProcess {
    fn drop(&mut self) {
        self.sessions.kill_now();
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// What every sentinel starts with; the shell prints it before the call's token.
const SENTINEL_PREFIX: &str = "__tackle_done_";

/// A fresh random sentinel token: 128 bits in 22 characters, which the loop reads with one
/// `read -N 22` (a read up to a delimiter takes a system call per byte on a pipe).
fn random_token() -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(rand::random::<[u8; 16]>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_the_22_characters_the_loop_reads() {
        let (a, b) = (random_token(), random_token());
        assert_ne!(a, b);
        for token in [a, b] {
            assert_eq!(token.len(), 22);
            assert!(token.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'), "{token}");
        }
        assert!(BOOTSTRAP.contains("read -r -N 22 "));
    }

    #[test]
    fn the_restore_line_gives_back_flags_and_trap() {
        assert_eq!(restore_line("", ""), "");
        assert_eq!(restore_line("", "\n"), "");
        assert_eq!(restore_line("x", ""), "{ builtin set -x\n} >/dev/null 2>&1\n");
        assert_eq!(
            restore_line("xv", "trap -- 'echo \"a\"' DEBUG\n"),
            "{ builtin set -xv\nbuiltin trap -- 'echo \"a\"' DEBUG\n} >/dev/null 2>&1\n"
        );
    }
}
