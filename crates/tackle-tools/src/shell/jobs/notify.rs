//! Finished background jobs as notifications (docs/reference/tools.md#background_run, docs/reference/providers.md#notifications).
//!
//! When a job ends on its own, its text goes into the session's [`Notifications`] queue, which
//! the agent loop drains into one `<notifications>` message before its next model request;
//! and the typed [`JobNotification`] is broadcast to whoever subscribed to the session's
//! [`JobNotifications`] (a front end that shows jobs, a test, a loop that waits for a job
//! when it has nothing else to do).
//!
//! [`Notifications`]: tackle_core::Notifications

use super::table::JobStatus;
use crate::shell::events::{Broadcast, Subscription};

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
pub type JobNotifications = Broadcast<JobNotification>;

/// One subscription to a session's job notifications.
pub type JobEvents = Subscription<JobNotification>;

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
