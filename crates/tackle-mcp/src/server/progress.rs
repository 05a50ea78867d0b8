//! Progress notifications for a `tools/call` that asked for them (docs/mcp.md#calls): the call's
//! `ExecEvent::Progress` events become `notifications/progress` whose `progress` strictly
//! increases, at most ten a second, with messages cut to 200 characters, and none after the
//! result (the forwarding stops before the result is returned).

use std::future::Future;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::Peer;
use tackle_core::{ExecEvent, Progress, ToolOutput};
use tokio::sync::broadcast;
use tokio::time::Instant;

/// The shortest gap between two notifications of one call.
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);

/// The longest `message` sent.
pub const MAX_MESSAGE_CHARS: usize = 200;

/// Decides which progress reports are sent, and when.
#[derive(Debug, Default)]
pub struct Limiter {
    last_progress: Option<f64>,
    last_sent: Option<Instant>,
    pending: Option<Progress>,
}

impl Limiter {
    /// Offers a report at `now`: returns it if it may go out now; otherwise it is kept (if
    /// it advances) for [`Limiter::take_due`].
    pub fn offer(&mut self, progress: Progress, now: Instant) -> Option<Progress> {
        if !progress.progress.is_finite() || self.last_progress.is_some_and(|last| progress.progress <= last) {
            return None;
        }
        match self.last_sent {
            Some(sent) if now < sent + MIN_INTERVAL => {
                self.pending = Some(progress);
                None
            }
            _ => Some(self.mark_sent(progress, now)),
        }
    }

    /// When a kept report becomes due.
    pub fn due_at(&self) -> Option<Instant> {
        self.pending.as_ref().and(self.last_sent).map(|sent| sent + MIN_INTERVAL)
    }

    /// The kept report, if it is due at `now`.
    pub fn take_due(&mut self, now: Instant) -> Option<Progress> {
        if self.due_at().is_some_and(|due| now >= due) {
            let progress = self.pending.take()?;
            return Some(self.mark_sent(progress, now));
        }
        None
    }

    fn mark_sent(&mut self, mut progress: Progress, now: Instant) -> Progress {
        self.last_progress = Some(progress.progress);
        self.last_sent = Some(now);
        if let Some(message) = &mut progress.message
            && message.chars().count() > MAX_MESSAGE_CHARS
        {
            *message = message.chars().take(MAX_MESSAGE_CHARS).collect();
        }
        progress
    }
}

/// Runs `run` while forwarding its progress events (those of `call_id` on `events`) to the
/// client as notifications for `token`.
pub async fn forward<F>(
    run: F,
    mut events: broadcast::Receiver<ExecEvent>,
    call_id: &str,
    token: ProgressToken,
    peer: &Peer<RoleServer>,
) -> ToolOutput
where
    F: Future<Output = ToolOutput>,
{
    let mut run = std::pin::pin!(run);
    let mut limiter = Limiter::default();
    let mut events_open = true;
    loop {
        let due = limiter.due_at();
        let ready = tokio::select! {
            biased;
            output = &mut run => {
                // Reports made before the result still go out (within the rate); a report
                // held back by the rate is dropped, never sent after the result.
                while let Ok(event) = events.try_recv() {
                    if let Some(progress) = offer(&mut limiter, event, call_id) {
                        notify(peer, &token, progress).await;
                    }
                }
                return output;
            }
            event = events.recv(), if events_open => match event {
                Ok(event) => offer(&mut limiter, event, call_id),
                Err(broadcast::error::RecvError::Lagged(_)) => None,
                Err(broadcast::error::RecvError::Closed) => {
                    events_open = false;
                    None
                }
            },
            () = sleep_until(due), if due.is_some() => limiter.take_due(Instant::now()),
        };
        if let Some(progress) = ready {
            notify(peer, &token, progress).await;
        }
    }
}

fn offer(limiter: &mut Limiter, event: ExecEvent, call_id: &str) -> Option<Progress> {
    match event {
        ExecEvent::Progress { call_id: id, progress, .. } if id == call_id => limiter.offer(progress, Instant::now()),
        _ => None,
    }
}

async fn notify(peer: &Peer<RoleServer>, token: &ProgressToken, progress: Progress) {
    let mut param = ProgressNotificationParam::new(token.clone(), progress.progress);
    param.total = progress.total;
    param.message = progress.message;
    if let Err(err) = peer.notify_progress(param).await {
        tracing::debug!("cannot send a progress notification: {err}");
    }
}

async fn sleep_until(due: Option<Instant>) {
    if let Some(due) = due {
        tokio::time::sleep_until(due).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(progress: f64, message: Option<&str>) -> Progress {
        Progress { progress, total: None, message: message.map(str::to_owned) }
    }

    #[test]
    fn progress_strictly_increases_and_is_rate_limited() {
        let start = Instant::now();
        let mut limiter = Limiter::default();
        assert_eq!(limiter.offer(report(1.0, None), start).map(|p| p.progress), Some(1.0));
        assert_eq!(limiter.offer(report(1.0, None), start + Duration::from_millis(500)), None, "equal");
        assert_eq!(limiter.offer(report(0.5, None), start + Duration::from_millis(500)), None, "smaller");
        assert_eq!(limiter.offer(report(f64::NAN, None), start + Duration::from_millis(500)), None, "NaN");
        // Two reports within 100 ms: the first goes, the second waits, and a third replaces it.
        let t = start + Duration::from_millis(1000);
        assert_eq!(limiter.offer(report(2.0, None), t).map(|p| p.progress), Some(2.0));
        assert_eq!(limiter.offer(report(3.0, None), t + Duration::from_millis(10)), None);
        assert_eq!(limiter.offer(report(4.0, None), t + Duration::from_millis(20)), None);
        assert_eq!(limiter.due_at(), Some(t + MIN_INTERVAL));
        assert!(limiter.take_due(t + Duration::from_millis(50)).is_none());
        assert_eq!(limiter.take_due(t + MIN_INTERVAL).map(|p| p.progress), Some(4.0));
        assert_eq!(limiter.due_at(), None);
    }

    #[test]
    fn long_messages_are_cut_to_200_characters() {
        let mut limiter = Limiter::default();
        let long = "é".repeat(500);
        let sent = limiter.offer(report(1.0, Some(&long)), Instant::now()).unwrap();
        assert_eq!(sent.message.unwrap().chars().count(), MAX_MESSAGE_CHARS);
    }
}
