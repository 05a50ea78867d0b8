//! The stream of things happening to calls (started, progress, finished), for any front end
//! to show: a terminal spinner, MCP progress notifications, a trajectory.
//!
//! Delivery is best-effort: a slow subscriber loses old events instead of slowing tools down.

use serde::Serialize;
use tokio::sync::broadcast;

/// How far a call has got.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Progress {
    /// A strictly increasing measure (seconds elapsed, bytes of output, steps done).
    pub progress: f64,
    /// The total, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// A short human message (for a shell: the last output line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

/// One event about a call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ExecEvent {
    /// The call passed admission and is about to run.
    Started { call_id: String, tool: String },
    /// The tool reported progress.
    Progress { call_id: String, tool: String, progress: Progress },
    /// The call produced its output.
    Finished { call_id: String, tool: String, is_error: bool, duration_ms: u64 },
}

/// The sending side of a session's event stream.
#[derive(Debug, Clone)]
pub struct EventSink {
    sender: broadcast::Sender<ExecEvent>,
}

impl EventSink {
    /// A sink whose stream keeps up to `capacity` unread events per subscriber.
    pub fn new(capacity: usize) -> Self {
        let (sender, _) = broadcast::channel(capacity.max(1));
        EventSink { sender }
    }

    /// Sends an event; without subscribers it is dropped.
    pub fn send(&self, event: ExecEvent) {
        if self.sender.receiver_count() > 0 {
            let _ = self.sender.send(event);
        }
    }

    /// A new subscription that sees events sent from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<ExecEvent> {
        self.sender.subscribe()
    }
}
