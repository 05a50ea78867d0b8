//! The signals that end a command gracefully: Ctrl-C (SIGINT), SIGTERM and SIGHUP.
//!
//! Each cancels the running calls instead of killing `tackle` at once, so the command still
//! closes its session, which kills every process the session's shells and jobs started
//! (docs/reference/safety.md#command-environment: "Tackle also kills every session it started on exit"). A command then exits
//! with 128 + the signal's number.

use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

/// SIGTERM and SIGHUP (`tackle run` handles Ctrl-C itself: a second press exits at once).
pub const TERM_AND_HUP: [SignalKind; 2] = [SignalKind::terminate(), SignalKind::hangup()];

/// A cancellation token and the first of the watched signals that cancelled it.
#[derive(Debug, Clone)]
pub struct Interrupt {
    pub token: CancellationToken,
    received: Arc<AtomicI32>,
}

impl Interrupt {
    /// 128 + the number of the signal that arrived, if one did.
    pub fn exit_code(&self) -> Option<u8> {
        let signal = self.received.load(Ordering::SeqCst);
        (signal > 0).then(|| u8::try_from(128 + signal).unwrap_or(u8::MAX))
    }
}

/// Cancels `token` on the first of `kinds` to arrive. The handlers are installed before this
/// returns (a signal that comes a moment later is not lost to the default action).
pub fn cancel_on(token: CancellationToken, kinds: &[SignalKind]) -> Interrupt {
    let received = Arc::new(AtomicI32::new(0));
    for &kind in kinds {
        let Ok(mut stream) = signal(kind) else { continue };
        let (token, received) = (token.clone(), Arc::clone(&received));
        tokio::spawn(async move {
            if stream.recv().await.is_some() {
                let _ = received.compare_exchange(0, kind.as_raw_value(), Ordering::SeqCst, Ordering::SeqCst);
                token.cancel();
            }
        });
    }
    Interrupt { token, received }
}

/// A fresh token cancelled by SIGINT, SIGTERM or SIGHUP.
pub fn interrupt() -> Interrupt {
    cancel_on(CancellationToken::new(), &[SignalKind::interrupt(), TERM_AND_HUP[0], TERM_AND_HUP[1]])
}

/// Completes when SIGINT, SIGTERM or SIGHUP arrives.
pub async fn terminated() {
    interrupt().token.cancelled_owned().await;
}

/// Builds something that installs its own SIGINT handler (rustyline's editor does, for its
/// whole life, when stdin and stdout are terminals) and puts tokio's back, so Ctrl-C while a
/// task runs still reaches the interrupt handler of `tackle chat`. At the prompt the editor
/// reads Ctrl-C as a key (the terminal is in raw mode), so it loses nothing.
pub fn keeping_sigint<T>(build: impl FnOnce() -> T) -> T {
    // tokio installs its process-wide handler with the first SIGINT stream; later streams
    // reuse it without installing it again, so it must exist before `build` replaces it.
    let _stream = signal(SignalKind::interrupt());
    // SAFETY: sigaction with a null new action only reads the current one into `tokio`.
    let mut tokio: libc::sigaction = unsafe { std::mem::zeroed() };
    let read = unsafe { libc::sigaction(libc::SIGINT, std::ptr::null(), &raw mut tokio) };
    let built = build();
    if read == 0 {
        // SAFETY: `tokio` is the complete action read above; the old action is not wanted.
        unsafe { libc::sigaction(libc::SIGINT, &raw const tokio, std::ptr::null_mut()) };
    }
    built
}
