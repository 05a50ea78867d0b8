//! The stream of things happening to calls (started, progress, finished), for any front end
//! to show: a terminal spinner, MCP progress notifications, a trajectory.
//!
//! Delivery is best-effort: a slow subscriber loses old events instead of slowing tools down.

use std::sync::{Arc, OnceLock};

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
    Started {
        /// The id the model gave the call.
        call_id: String,
        /// The tool's name.
        tool: String,
    },
    /// The tool reported progress.
    Progress {
        /// The id the model gave the call.
        call_id: String,
        /// The tool's name.
        tool: String,
        /// How far the call has got.
        progress: Progress,
    },
    /// The call produced its output.
    Finished {
        /// The id the model gave the call.
        call_id: String,
        /// The tool's name.
        tool: String,
        /// The output is an error (the call failed, was denied, timed out or was cancelled).
        is_error: bool,
        /// Wall time from admission to the finished output, in milliseconds.
        duration_ms: u64,
    },
}

/// The sending side of a session's event stream.
#[derive(Debug, Clone)]
pub struct EventSink {
    /// Made by the first subscription: the channel's ring of `capacity` slots is allocated
    /// up front (about 100 KB for 1,024 events), and a session nobody watches (most sessions
    /// of `tackle mcp serve`) should not hold it. Clones share it.
    sender: Arc<OnceLock<broadcast::Sender<ExecEvent>>>,
    capacity: usize,
}

impl EventSink {
    /// A sink whose stream keeps up to `capacity` unread events per subscriber.
    pub fn new(capacity: usize) -> Self {
        EventSink { sender: Arc::new(OnceLock::new()), capacity: capacity.max(1) }
    }

    /// Sends an event; without subscribers it is dropped.
    pub fn send(&self, event: ExecEvent) {
        if let Some(sender) = self.sender.get()
            && sender.receiver_count() > 0
        {
            let _ = sender.send(event);
        }
    }

    /// A new subscription that sees events sent from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<ExecEvent> {
        self.sender.get_or_init(|| broadcast::channel(self.capacity).0).subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn started(id: &str) -> ExecEvent {
        ExecEvent::Started { call_id: id.into(), tool: "t".into() }
    }

    #[test]
    fn subscribers_see_what_is_sent_after_they_subscribe_through_any_clone() {
        let sink = EventSink::new(4);
        sink.send(started("before anyone listened"));
        let clone = sink.clone();
        let mut first = sink.subscribe();
        clone.send(started("a"));
        let mut second = clone.subscribe();
        sink.send(started("b"));
        assert_eq!(first.try_recv().unwrap(), started("a"));
        assert_eq!(first.try_recv().unwrap(), started("b"));
        assert_eq!(second.try_recv().unwrap(), started("b"));
        assert!(first.try_recv().is_err() && second.try_recv().is_err());
    }
}
