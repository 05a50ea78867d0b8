//! bubblewrap: the argument list (docs/shell.md, "The process sandbox"), and the probe that
//! decides whether it works here (`bwrap` with the real arguments, running `true`).
//!
//! One `bwrap` runs per shell session, so the persistent shell lives inside it; background jobs
//! get their own. `--cap-drop ALL` is never left out: Tackle may run as root, and bwrap would
//! otherwise keep every capability inside, `CAP_SYS_ADMIN` included (enough to remount `/`
//! writable). With the network off, bwrap installs the seccomp filter of [`super::seccomp`]
//! (read from [`SECCOMP_FD`]) on the command, so no Unix socket outside is reachable either.

use std::ffi::OsString;
use std::io::Write as _;
use std::os::fd::{AsRawFd as _, OwnedFd};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::policy::SandboxPolicy;
use super::seccomp;

/// The bubblewrap program.
pub const BWRAP: &str = "bwrap";

/// The descriptor bubblewrap reads the seccomp program from (`--seccomp 3`); it closes it
/// before the command starts.
pub const SECCOMP_FD: i32 = 3;

/// The bubblewrap options for a command started in `cwd` (everything before `--`). With
/// `seccomp`, the command must inherit the program on [`SECCOMP_FD`] (`seccomp_pipe`).
pub fn args(policy: &SandboxPolicy, cwd: &Path, seccomp: bool) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    let mut push = |parts: &[&std::ffi::OsStr]| args.extend(parts.iter().map(|p| p.to_os_string()));
    push(&["--die-with-parent".as_ref(), "--new-session".as_ref(), "--unshare-all".as_ref()]);
    push(&["--cap-drop".as_ref(), "ALL".as_ref()]);
    if policy.network {
        push(&["--share-net".as_ref()]);
    }
    push(&["--ro-bind".as_ref(), "/".as_ref(), "/".as_ref()]);
    push(&["--dev".as_ref(), "/dev".as_ref()]);
    push(&["--proc".as_ref(), "/proc".as_ref()]);
    push(&["--tmpfs".as_ref(), "/tmp".as_ref()]);
    // After `--tmpfs /tmp`, so a workspace under /tmp stays visible.
    let extra_outside_roots =
        policy.extra_writable.iter().filter(|p| !policy.writable_roots.iter().any(|root| p.starts_with(root)));
    for root in &policy.writable_roots {
        push(&["--bind".as_ref(), root.as_os_str(), root.as_os_str()]);
    }
    for path in extra_outside_roots {
        push(&["--bind-try".as_ref(), path.as_os_str(), path.as_os_str()]);
    }
    for path in policy.protected_paths() {
        push(&["--ro-bind-try".as_ref(), path.as_os_str(), path.as_os_str()]);
    }
    // On top of the read-only paths, what `extra_writable` opens inside them.
    for path in policy.reopened_paths() {
        push(&["--bind-try".as_ref(), path.as_os_str(), path.as_os_str()]);
    }
    for hidden in &policy.hide {
        if hidden.exists() && !policy.is_writable(hidden) {
            push(&["--tmpfs".as_ref(), hidden.as_os_str()]);
        }
    }
    // The read-only wrapper (`super::restrict`), wherever the binary lies; not one inside a
    // writable path (which is not used, and whose build must be able to replace it).
    if let Some(helper) = super::restrict::helper().filter(|helper| helper.is_file() && !policy.is_writable(helper)) {
        push(&["--ro-bind".as_ref(), helper.as_os_str(), helper.as_os_str()]);
    }
    if seccomp {
        push(&["--seccomp".as_ref(), SECCOMP_FD.to_string().as_ref()]);
    }
    push(&["--chdir".as_ref(), cwd.as_os_str()]);
    args
}

/// Whether commands under `policy` get the seccomp filter: with the network off, where the
/// kernel has seccomp.
pub fn uses_seccomp(policy: &SandboxPolicy) -> bool {
    !policy.network && seccomp::available()
}

/// A pipe holding the seccomp program for a network that is off, for bubblewrap to read; the
/// child must inherit the returned end as [`SECCOMP_FD`].
pub fn seccomp_pipe() -> std::io::Result<OwnedFd> {
    let bytes = seccomp::bytes(&seccomp::program(seccomp::NAMESPACED_FAMILIES));
    let (read, write) = super::spawn::pipe()?;
    // The program is far smaller than a pipe's buffer, so the write does not block.
    std::fs::File::from(write).write_all(&bytes)?;
    Ok(read)
}

/// Why bubblewrap cannot be used here; the text ends up in the no-sandbox warning or the
/// `[sandbox] mode = "bwrap"` error.
#[derive(Debug, Clone, thiserror::Error)]
pub enum BwrapUnusable {
    /// No `bwrap` on `PATH`.
    #[error("bubblewrap (bwrap) is not installed")]
    NotInstalled,
    /// The seccomp program could not be handed over.
    #[error("cannot pass the seccomp filter to bubblewrap: {0}")]
    Seccomp(#[source] std::sync::Arc<std::io::Error>),
    /// The probe failed without a message (its exit status).
    #[error("bubblewrap failed ({0})")]
    Failed(std::process::ExitStatus),
    /// The probe failed; the first line of its stderr.
    #[error("bubblewrap failed: {0}")]
    FailedWith(String),
    /// `bwrap` could not be started.
    #[error("bubblewrap cannot be started: {0}")]
    CannotStart(#[source] std::sync::Arc<std::io::Error>),
}

/// The `bwrap` program on Tackle's own `PATH` (commands may get another `PATH`).
pub fn program() -> Result<PathBuf, BwrapUnusable> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(BWRAP))
        .find(|candidate| candidate.is_file())
        .ok_or(BwrapUnusable::NotInstalled)
}

/// Runs `bwrap` with the real arguments and `true`; `Err` says why it cannot be used.
pub fn probe(bwrap: &Path, policy: &SandboxPolicy) -> Result<(), BwrapUnusable> {
    let seccomp = uses_seccomp(policy);
    let mut command = Command::new(bwrap);
    command.args(args(policy, &policy.workspace, seccomp)).arg("--").arg("true");
    let program = seccomp.then(seccomp_pipe).transpose().map_err(|err| BwrapUnusable::Seccomp(err.into()))?;
    if let Some(program) = &program {
        let source = program.as_raw_fd();
        // SAFETY: dup2 and fcntl are async-signal-safe; `program` stays open in the parent
        // until the child has started.
        unsafe {
            command.pre_exec(move || {
                let done = if source == SECCOMP_FD {
                    libc::fcntl(source, libc::F_SETFD, 0)
                } else {
                    libc::dup2(source, SECCOMP_FD)
                };
                if done < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let output = command.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).output();
    drop(program);
    finish_probe(output)
}

/// The probe's verdict from bwrap's exit.
fn finish_probe(output: std::io::Result<std::process::Output>) -> Result<(), BwrapUnusable> {
    match output {
        Ok(output) if output.status.success() => Ok(()),
        Ok(output) => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let first = stderr.lines().next().unwrap_or_default().trim();
            Err(if first.is_empty() {
                BwrapUnusable::Failed(output.status)
            } else {
                BwrapUnusable::FailedWith(first.to_owned())
            })
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Err(BwrapUnusable::NotInstalled),
        Err(err) => Err(BwrapUnusable::CannotStart(err.into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::path::PathBuf;

    #[test]
    fn the_argument_list_is_the_specified_one() {
        let home = tempfile::tempdir().unwrap();
        let ssh = home.path().join(".ssh");
        std::fs::create_dir(&ssh).unwrap();
        let mut policy = SandboxPolicy::new("/ws");
        policy.hide = vec![ssh.clone(), home.path().join(".aws"), PathBuf::from("/ws/inside")];
        policy.extra_writable = vec![PathBuf::from("/cache"), PathBuf::from("/ws/.git/hooks")];
        let args: Vec<String> =
            args(&policy, Path::new("/ws/sub"), true).into_iter().map(|a| a.into_string().unwrap()).collect();
        let mut expected: Vec<String> = [
            "--die-with-parent",
            "--new-session",
            "--unshare-all",
            "--cap-drop",
            "ALL",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
            "--bind",
            "/ws",
            "/ws",
            "--bind-try",
            "/cache",
            "/cache",
        ]
        .map(String::from)
        .to_vec();
        for protected in [".tackle", "tackle.toml", ".mcp.json", ".claude", ".git"] {
            expected.extend(["--ro-bind-try".to_owned(), format!("/ws/{protected}"), format!("/ws/{protected}")]);
        }
        // An extra writable path inside a protected one is bound again, on top of it.
        expected.extend(["--bind-try", "/ws/.git/hooks", "/ws/.git/hooks"].map(String::from));
        let ssh = ssh.to_str().unwrap().to_owned();
        expected.extend(["--tmpfs".to_owned(), ssh]);
        expected.extend(["--seccomp", "3", "--chdir", "/ws/sub"].map(String::from));
        assert_eq!(args, expected);

        policy.network = true;
        let with_net = super::args(&policy, Path::new("/ws"), false);
        assert_eq!(with_net[5], "--share-net");
        assert!(!with_net.iter().any(|arg| arg == "--seccomp"));
    }
}
