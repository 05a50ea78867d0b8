//! Starting a command in its own process session, from one long-lived thread.
//!
//! `PR_SET_PDEATHSIG` (which bubblewrap's `--die-with-parent` uses) fires when the *thread*
//! that forked the child exits, and tokio's blocking-pool threads exit when idle. So every
//! sandboxed process is forked by one thread that lives as long as Tackle; the child also
//! asks for SIGKILL when that thread (and so Tackle) goes away. Tackle still kills every
//! session it started on close, so nothing depends on the signal.
//!
//! The child is also a child subreaper (`PR_SET_CHILD_SUBREAPER`, kept across `execve`): an
//! orphan below it — `setsid sleep 100 &`, whose `setsid` parent exits at once — is re-parented
//! to it instead of to init, so it stays a descendant that a timeout or `close` finds
//! ([`super::ProcessSessions`]). bash reaps the children it adopts like its own; bubblewrap
//! never adopts any (its PID namespace has its own init).

use std::io;
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
use std::os::unix::process::CommandExt as _;
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};

type Job = Box<dyn FnOnce() + Send>;

/// The sending side of the spawner thread's queue.
fn spawner() -> io::Result<mpsc::Sender<Job>> {
    static SPAWNER: OnceLock<Mutex<Option<mpsc::Sender<Job>>>> = OnceLock::new();
    let slot = SPAWNER.get_or_init(|| Mutex::new(None));
    let mut slot = slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(sender) = slot.as_ref() {
        return Ok(sender.clone());
    }
    let (sender, receiver) = mpsc::channel::<Job>();
    std::thread::Builder::new().name("tackle-spawner".into()).spawn(move || {
        for job in receiver {
            job();
        }
    })?;
    *slot = Some(sender.clone());
    Ok(sender)
}

/// Spawns `command` in a new process session (its pid is its session and group id), as a
/// child subreaper with SIGKILL as its parent-death signal, registered with the current tokio
/// runtime.
///
/// The child inherits no descriptor but its stdio and the `(source, target)` pairs of
/// `pass_fds` (each `source` is duplicated onto `target`): whatever else Tackle's own process
/// inherited or opened stays out of reach of the command. Stdio and environment are the
/// caller's; the sandbox (bubblewrap arguments or a Landlock hook) is already part of
/// `command`.
pub async fn spawn_session(
    command: std::process::Command,
    pass_fds: Vec<(OwnedFd, i32)>,
) -> io::Result<tokio::process::Child> {
    // Every source goes above every target first, so no `dup2` onto one target can replace a
    // source that is still to be passed.
    let floor = pass_fds.iter().map(|(_, target)| target + 1).max().unwrap_or(0);
    let pass_fds = pass_fds
        .into_iter()
        .map(|(fd, target)| {
            // SAFETY: F_DUPFD_CLOEXEC on a descriptor we own returns a new one or -1.
            let raised = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, floor) };
            if raised < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `raised` was just created and is owned by nothing else.
            Ok((unsafe { OwnedFd::from_raw_fd(raised) }, target))
        })
        .collect::<io::Result<Vec<_>>>()?;
    let runtime = tokio::runtime::Handle::current();
    let (reply, answer) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        let _entered = runtime.enter();
        let mut command = command;
        let mapping: Vec<(i32, i32)> = pass_fds.iter().map(|(fd, target)| (fd.as_raw_fd(), *target)).collect();
        // SAFETY: setsid, prctl, close_range, fcntl and dup2 are async-signal-safe and touch
        // no memory of the parent; `mapping` was allocated before the fork.
        unsafe {
            command.pre_exec(move || {
                if libc::setsid() < 0 {
                    return Err(io::Error::last_os_error());
                }
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(io::Error::last_os_error());
                }
                if libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) != 0 {
                    return Err(io::Error::last_os_error());
                }
                close_inherited_descriptors();
                for &(source, target) in &mapping {
                    if libc::dup2(source, target) < 0 {
                        return Err(io::Error::last_os_error());
                    }
                }
                Ok(())
            });
        }
        let spawned = tokio::process::Command::from(command).spawn();
        drop(pass_fds);
        let _ = reply.send(spawned);
    });
    spawner()?.send(job).map_err(|_| io::Error::other("the process spawner thread has stopped"))?;
    answer.await.map_err(|_| io::Error::other("the process spawner thread dropped the request"))?
}

/// Marks every descriptor from 3 up close-on-exec (in a child between fork and exec).
fn close_inherited_descriptors() {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: close_range only changes descriptor flags; on kernels without it (before 5.11)
    // each descriptor is marked with fcntl, where EBADF for unused numbers is harmless.
    unsafe {
        if libc::syscall(libc::SYS_close_range, 3 as libc::c_uint, libc::c_uint::MAX, CLOSE_RANGE_CLOEXEC) != 0 {
            for fd in 3..4096 {
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            }
        }
    }
}

/// A pipe whose two ends are close-on-exec (a child gets an end only through its stdio or an
/// explicit `dup2`).
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array on success.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nothing else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}
