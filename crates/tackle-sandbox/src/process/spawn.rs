//! Starting a command in its own process session, from one long-lived thread.
//!
//! `PR_SET_PDEATHSIG` (which bubblewrap's `--die-with-parent` uses) fires when the *thread*
//! that forked the child exits, and tokio's blocking-pool threads exit when idle. So every
//! sandboxed process is forked by one thread that lives as long as Tackle; the child also
//! asks for SIGKILL when that thread (and so Tackle) goes away. Tackle still kills every
//! session it started on close, so nothing depends on the signal.

use std::io;
use std::os::unix::process::CommandExt as _;
use std::sync::mpsc;
use std::sync::{Mutex, OnceLock};

type Job = Box<dyn FnOnce() + Send>;

/// The sending side of the spawner thread's queue.
fn spawner() -> io::Result<mpsc::Sender<Job>> {
    static SPAWNER: OnceLock<Mutex<Option<mpsc::Sender<Job>>>> = OnceLock::new();
    let slot = SPAWNER.get_or_init(|| Mutex::new(None));
    let mut slot = slot.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
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

/// Spawns `command` in a new process session (its pid is its session and group id), with
/// SIGKILL as its parent-death signal, registered with the current tokio runtime.
///
/// Stdio and environment are the caller's; the sandbox (bubblewrap arguments or a Landlock
/// hook) is already part of `command`.
pub async fn spawn_session(command: std::process::Command) -> io::Result<tokio::process::Child> {
    let runtime = tokio::runtime::Handle::current();
    let (reply, answer) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        let _entered = runtime.enter();
        let mut command = command;
        // SAFETY: setsid and prctl are async-signal-safe and touch no memory of the parent.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 {
                    return Err(io::Error::last_os_error());
                }
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let _ = reply.send(tokio::process::Command::from(command).spawn());
    });
    spawner()?.send(job).map_err(|_| io::Error::other("the process spawner thread has stopped"))?;
    answer.await.map_err(|_| io::Error::other("the process spawner thread dropped the request"))?
}
