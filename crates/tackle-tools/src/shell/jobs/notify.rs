//! Finished background jobs, queued for the agent loop (tools.md §2, providers.md §6.4).
//!
//! The loop takes what is pending before each model request ([`JobNotifications::take_pending`])
//! and, when nothing else is left to do, may wait for the next one
//! ([`JobNotifications::next`]). The queue lives in the session state:
//! `session.state().get::<JobNotifications>()`.

use std::collections::VecDeque;
use std::sync::Mutex;

use tokio::sync::Notify;

use super::table::JobStatus;

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

/// The queue of job notifications of one session.
#[derive(Debug, Default)]
pub struct JobNotifications {
    queue: Mutex<VecDeque<JobNotification>>,
    arrived: Notify,
}

impl JobNotifications {
    /// Takes every pending notification, oldest first.
    pub fn take_pending(&self) -> Vec<JobNotification> {
        self.lock().drain(..).collect()
    }

    /// Waits for the next notification and takes it.
    pub async fn next(&self) -> JobNotification {
        loop {
            let arrived = self.arrived.notified();
            tokio::pin!(arrived);
            arrived.as_mut().enable();
            if let Some(notification) = self.lock().pop_front() {
                return notification;
            }
            arrived.await;
        }
    }

    /// Queues a notification.
    pub(crate) fn push(&self, notification: JobNotification) {
        self.lock().push_back(notification);
        self.arrived.notify_waiters();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<JobNotification>> {
        self.queue.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
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
    async fn pending_notifications_come_out_in_order_and_next_waits() {
        let queue = std::sync::Arc::new(JobNotifications::default());
        queue.push(note("job-1"));
        queue.push(note("job-2"));
        assert_eq!(queue.take_pending(), [note("job-1"), note("job-2")]);
        assert!(queue.take_pending().is_empty());
        let waiter = tokio::spawn({
            let queue = std::sync::Arc::clone(&queue);
            async move { queue.next().await }
        });
        tokio::task::yield_now().await;
        queue.push(note("job-3"));
        assert_eq!(waiter.await.unwrap(), note("job-3"));
        assert_eq!(
            note("job-1").text(),
            "Background job job-1 (make) finished: exited 0. Use job_output to read its output."
        );
    }
}
