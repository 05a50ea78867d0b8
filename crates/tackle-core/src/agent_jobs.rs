//! Background subagents as jobs: ids `agent-1`, `agent-2`, … in the session, next to the
//! shell's `job-N`. The `subagent` tool (in `tackle-agent`) starts a child in the background
//! and records it here; `job_output` and `job_kill` (in `tackle-tools`) find it here by its
//! id, so neither crate depends on the other. When a child ends, its result goes into the
//! session's [`Notifications`] (the path finished shell jobs take), and the model hears it
//! before its next request. Closing the session cancels every child still running.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::error::ToolError;
use crate::notify::Notifications;
use crate::resource::SessionResource;
use crate::tool::BoxFuture;

/// How long closing the session waits for cancelled children to wind down.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// Where a background subagent stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentJobStatus {
    /// Still working.
    Running,
    /// Finished with a final answer.
    Done,
    /// Finished with an error (its turn limit, a provider failure).
    Failed,
    /// Cancelled (`job_kill`, Ctrl-C, the end of the session).
    Cancelled,
}

impl std::fmt::Display for AgentJobStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AgentJobStatus::Running => "running",
            AgentJobStatus::Done => "done",
            AgentJobStatus::Failed => "failed",
            AgentJobStatus::Cancelled => "cancelled",
        })
    }
}

/// One background subagent.
#[derive(Debug)]
pub struct AgentJob {
    /// `agent-N`.
    pub id: String,
    /// What it was asked to do (its type and description), for listings and notifications.
    pub label: String,
    status: watch::Sender<AgentJobStatus>,
    result: Mutex<Option<String>>,
    cancel: CancellationToken,
}

impl AgentJob {
    /// Where it stands now.
    pub fn status(&self) -> AgentJobStatus {
        *self.status.borrow()
    }

    /// The token the child runs under; cancelling it stops the child.
    pub fn cancel_token(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Its result, once it finished.
    pub fn result(&self) -> Option<String> {
        self.result.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Waits until it finishes or `timeout` passes; the status then.
    pub async fn wait(&self, timeout: Duration) -> AgentJobStatus {
        let mut receiver = self.status.subscribe();
        let _ = tokio::time::timeout(timeout, receiver.wait_for(|s| *s != AgentJobStatus::Running)).await;
        self.status()
    }

    /// The text `job_output` answers with: a header line, then the result or `(still running)`.
    pub fn report(&self) -> String {
        let body = self.result().unwrap_or_else(|| "(still running)".to_owned());
        format!("Job {} [{}]: {}\n{body}", self.id, self.status(), self.label)
    }
}

/// The session's background subagents.
#[derive(Debug, Default)]
pub struct AgentJobs {
    jobs: Mutex<Vec<Arc<AgentJob>>>,
    queue: Arc<Notifications>,
    /// The session closed: a child recorded after that (its build was awaited across the
    /// close) starts cancelled, so nothing outlives the session.
    closed: std::sync::atomic::AtomicBool,
}

impl AgentJobs {
    /// A table that announces finished children in `queue`.
    pub fn new(queue: Arc<Notifications>) -> AgentJobs {
        AgentJobs { jobs: Mutex::new(Vec::new()), queue, closed: std::sync::atomic::AtomicBool::new(false) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Arc<AgentJob>>> {
        self.jobs.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records a new child `id` (`agent-N`, numbered by the caller across the session's whole
    /// tree of agents), running under `cancel`; after the session closed, `cancel` is
    /// cancelled at once.
    pub fn start(&self, id: String, label: String, cancel: CancellationToken) -> Arc<AgentJob> {
        let job = Arc::new(AgentJob {
            id,
            label,
            status: watch::Sender::new(AgentJobStatus::Running),
            result: Mutex::new(None),
            cancel,
        });
        let mut jobs = self.lock();
        jobs.push(Arc::clone(&job));
        // Read under the table's lock, which `close` takes after setting it.
        if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
            job.cancel.cancel();
        }
        drop(jobs);
        job
    }

    /// Records how `job` ended and tells the model in the next notifications.
    pub fn finish(&self, job: &AgentJob, status: AgentJobStatus, result: String) {
        let text = format!(
            "Background subagent {} ({}) finished: {status}. Its result (also job_output {}):\n{result}",
            job.id, job.label, job.id
        );
        *job.result.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(result);
        // Queued before the status changes: whoever waited for the end (`job_output` with
        // `block`) finds the notification already there for the next request.
        self.queue.push(text);
        job.status.send_replace(status);
    }

    /// The child `id`, if this table has it.
    pub fn find(&self, id: &str) -> Option<Arc<AgentJob>> {
        self.lock().iter().find(|job| job.id == id).map(Arc::clone)
    }

    /// The child `id`, or the model-facing error listing the children there are.
    pub fn get(&self, id: &str) -> Result<Arc<AgentJob>, ToolError> {
        if let Some(job) = self.find(id) {
            return Ok(job);
        }
        let listed: Vec<String> = self.lock().iter().map(|job| format!("{} [{}]", job.id, job.status())).collect();
        let listed = if listed.is_empty() { "none".to_owned() } else { listed.join(", ") };
        Err(ToolError::NotFound(format!("Unknown job id: {id}. Jobs: {listed}")))
    }

    /// Cancels every child still running.
    pub fn cancel_all(&self) {
        for job in self.lock().iter() {
            job.cancel.cancel();
        }
    }

    /// How many are running.
    pub fn running(&self) -> usize {
        self.lock().iter().filter(|job| job.status() == AgentJobStatus::Running).count()
    }
}

impl SessionResource for AgentJobs {
    fn name(&self) -> &str {
        "subagents"
    }

    /// Cancels every running child and waits (a few seconds at most) for each to record its end.
    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
            self.cancel_all();
            let jobs: Vec<Arc<AgentJob>> = self.lock().clone();
            futures::future::join_all(jobs.iter().map(|job| job.wait(CLOSE_WAIT))).await;
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn ids_count_up_and_a_finish_is_announced_once() {
        let queue = Arc::new(Notifications::default());
        let jobs = AgentJobs::new(Arc::clone(&queue));
        let first = jobs.start("agent-1".into(), "explore: find x".into(), CancellationToken::new());
        let second = jobs.start("agent-2".into(), "plan: y".into(), CancellationToken::new());
        assert_eq!((first.id.as_str(), second.id.as_str()), ("agent-1", "agent-2"));
        assert_eq!(jobs.running(), 2);
        jobs.finish(&first, AgentJobStatus::Done, "found x".into());
        assert_eq!(first.wait(Duration::from_secs(1)).await, AgentJobStatus::Done);
        assert_eq!(first.report(), "Job agent-1 [done]: explore: find x\nfound x");
        let notes = queue.drain();
        assert_eq!(notes.len(), 1);
        assert!(notes[0].starts_with("Background subagent agent-1 (explore: find x) finished: done."), "{notes:?}");
        assert!(jobs.get("agent-9").unwrap_err().to_string().contains("agent-1 [done], agent-2 [running]"));
        let jobs = Arc::new(jobs);
        let watcher = {
            let (jobs, second) = (Arc::clone(&jobs), Arc::clone(&second));
            tokio::spawn(async move {
                second.cancel_token().cancelled().await;
                jobs.finish(&second, AgentJobStatus::Cancelled, "cancelled".into());
            })
        };
        jobs.close().await;
        watcher.await.unwrap();
        assert_eq!(second.status(), AgentJobStatus::Cancelled);
        // A child whose build was awaited across the close starts cancelled.
        let late = jobs.start("agent-3".into(), "teammate t".into(), CancellationToken::new());
        assert!(late.cancel_token().is_cancelled());
    }
}
