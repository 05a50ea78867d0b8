//! Finished background jobs as notifications (tools.md §2, providers.md §6.4).
//!
//! When a job ends on its own, its text goes into the session's [`Notifications`] queue, which
//! the agent loop drains into one `<notifications>` message before its next model request;
//! and the typed [`JobNotification`] is broadcast to whoever subscribed to the session's
//! [`JobNotifications`] (a front end that shows jobs, a test, a loop that waits for a job
//! when it has nothing else to do).
//!
//! [`Notifications`]: tackle_core::Notifications

use tokio::sync::broadcast;

use super::table::JobStatus;

/// How many notifications a slow subscriber may fall behind before it loses the oldest.
const CAPACITY: usize = 256;

/// One job that ended on its own (exited or timed out). Jobs stopped with `job_kill` or by the
/// end of the session are not notified: whoever stopped them already knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobNotification {
    /// `job-1`, `job-2`, …
    pub job_id: String,
    /// The command the job ran.
    pub command: String,
    /// How it ended.
    pub status: JobStatus,
}

impl JobNotification {
    /// The text the loop shows the model:
    /// `Background job {job_id} ({command}) finished: {status}. Use job_output to read its output.`
    pub fn text(&self) -> String {
        format!(
            "Background job {} ({}) finished: {}. Use job_output to read its output.",
            self.job_id, self.command, self.status
        )
    }
}

/// The job notifications of one session, as an event stream
/// (`session.state().get::<JobNotifications>().subscribe()`).
#[derive(Debug)]
pub struct JobNotifications {
    sender: broadcast::Sender<JobNotification>,
}

impl Default for JobNotifications {
    fn default() -> Self {
        JobNotifications { sender: broadcast::channel(CAPACITY).0 }
    }
}

impl JobNotifications {
    /// A subscription to the notifications of jobs that end from now on.
    pub fn subscribe(&self) -> JobEvents {
        JobEvents { receiver: self.sender.subscribe() }
    }

    /// Broadcasts a notification to the subscribers (none is fine).
    pub(crate) fn send(&self, notification: JobNotification) {
        let _ = self.sender.send(notification);
    }
}

/// One subscription to a session's job notifications.
#[derive(Debug)]
pub struct JobEvents {
    receiver: broadcast::Receiver<JobNotification>,
}

impl JobEvents {
    /// Takes every notification that arrived and was not taken yet, oldest first.
    pub fn take_pending(&mut self) -> Vec<JobNotification> {
        let mut pending = Vec::new();
        loop {
            match self.receiver.try_recv() {
                Ok(notification) => pending.push(notification),
                Err(broadcast::error::TryRecvError::Lagged(_)) => {}
                Err(_) => return pending,
            }
        }
    }

    /// Waits for the next notification; `None` once the session's job table is gone.
    pub async fn next(&mut self) -> Option<JobNotification> {
        loop {
            match self.receiver.recv().await {
                Ok(notification) => return Some(notification),
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn note(id: &str) -> JobNotification {
        JobNotification { job_id: id.into(), command: "make".into(), status: JobStatus::Exited(0) }
    }

    #[tokio::test]
    async fn subscribers_see_notifications_in_order_and_next_waits() {
        let queue = std::sync::Arc::new(JobNotifications::default());
        queue.send(note("job-0"));
        let mut events = queue.subscribe();
        queue.send(note("job-1"));
        queue.send(note("job-2"));
        assert_eq!(events.take_pending(), [note("job-1"), note("job-2")]);
        assert!(events.take_pending().is_empty());
        let waiter = tokio::spawn(async move { events.next().await });
        tokio::task::yield_now().await;
        queue.send(note("job-3"));
        assert_eq!(waiter.await.unwrap(), Some(note("job-3")));
        assert_eq!(
            note("job-1").text(),
            "Background job job-1 (make) finished: exited 0. Use job_output to read its output."
        );
    }
}
