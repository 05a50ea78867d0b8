//! Running one hook command (docs/reference/safety.md#hooks): `sh -c COMMAND` in the
//! workspace, in its own process group, with the event's JSON on stdin (then closed). Output
//! beyond [`MAX_HOOK_OUTPUT`] is read and dropped so a chatty hook cannot block or exhaust
//! memory; on timeout the whole process group is killed.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWriteExt as _};
use tokio::process::Command;

/// The most stdout or stderr kept from one hook run, in bytes.
pub const MAX_HOOK_OUTPUT: usize = 64 * 1024;

/// How one hook run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookRun {
    /// The exit code; `None` when it was killed (timeout) or could not start.
    pub code: Option<i32>,
    /// What it wrote to stdout (at most [`MAX_HOOK_OUTPUT`] bytes, lossily decoded as UTF-8).
    pub stdout: String,
    /// What it wrote to stderr (at most [`MAX_HOOK_OUTPUT`] bytes, lossily decoded as UTF-8).
    pub stderr: String,
    /// It ran past its timeout and its process group was killed.
    pub timed_out: bool,
    /// It could not be started (the message says why).
    pub failed_to_start: Option<String>,
}

/// Runs `command` with `input` on stdin and `env` added to the environment.
pub async fn run_hook(command: &str, input: &[u8], cwd: &Path, env: &[(String, String)], timeout: Duration) -> HookRun {
    let mut child = Command::new("sh");
    child
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match child.spawn() {
        Ok(child) => child,
        Err(err) => {
            return HookRun {
                code: None,
                stdout: String::new(),
                stderr: String::new(),
                timed_out: false,
                failed_to_start: Some(format!("cannot start `sh -c {command}`: {err}")),
            };
        }
    };
    let group = child.id();
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let input = input.to_vec();
    let feed = async move {
        if let Some(mut stdin) = stdin {
            // A hook that does not read its input closes the pipe: not an error.
            let _ = stdin.write_all(&input).await;
            let _ = stdin.shutdown().await;
        }
    };
    let run = async {
        let ((), out, err, status) = tokio::join!(feed, capped(stdout), capped(stderr), child.wait());
        (out, err, status)
    };
    match tokio::time::timeout(timeout, run).await {
        Ok((stdout, stderr, status)) => HookRun {
            code: status.ok().and_then(|s| s.code()),
            stdout,
            stderr,
            timed_out: false,
            failed_to_start: None,
        },
        Err(_) => {
            if let Some(pid) = group.and_then(|id| i32::try_from(id).ok()) {
                let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
            }
            HookRun { code: None, stdout: String::new(), stderr: String::new(), timed_out: true, failed_to_start: None }
        }
    }
}

/// Reads all of `stream`, keeping the first [`MAX_HOOK_OUTPUT`] bytes.
async fn capped(stream: Option<impl AsyncRead + Unpin>) -> String {
    let Some(mut stream) = stream else { return String::new() };
    let mut kept = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        match stream.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = MAX_HOOK_OUTPUT.saturating_sub(kept.len());
                kept.extend_from_slice(&buffer[..n.min(room)]);
            }
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}
