//! A session's typed event streams for front ends: finished background jobs
//! ([`super::JobNotifications`]) and changes to protected paths ([`super::ProtectedChanges`]).
//! Each is a broadcast that a subscriber reads at its own pace; one that falls more than
//! [`CAPACITY`] events behind loses the oldest. Nothing waits for subscribers, and there may be
//! none.

use tokio::sync::broadcast;

/// How many events a slow subscriber may fall behind before it loses the oldest.
pub const CAPACITY: usize = 256;

/// The sending side of one stream, kept in the session state.
#[derive(Debug)]
pub struct Broadcast<T> {
    sender: broadcast::Sender<T>,
}

impl<T: Clone> Default for Broadcast<T> {
    fn default() -> Self {
        Broadcast { sender: broadcast::channel(CAPACITY).0 }
    }
}

impl<T: Clone> Broadcast<T> {
    /// A subscription to the events sent from now on.
    pub fn subscribe(&self) -> Subscription<T> {
        Subscription { receiver: self.sender.subscribe() }
    }

    /// Sends an event to the subscribers (none is fine).
    pub(crate) fn send(&self, event: T) {
        let _ = self.sender.send(event);
    }
}

/// One subscription to a stream.
#[derive(Debug)]
pub struct Subscription<T> {
    receiver: broadcast::Receiver<T>,
}

impl<T: Clone> Subscription<T> {
    /// Takes every event that arrived and was not taken yet, oldest first.
    pub fn take_pending(&mut self) -> Vec<T> {
        let mut pending = Vec::new();
        loop {
            match self.receiver.try_recv() {
                Ok(event) => pending.push(event),
                Err(broadcast::error::TryRecvError::Lagged(_)) => {}
                Err(_) => return pending,
            }
        }
    }

    /// Waits for the next event; `None` once the stream's sender is gone.
    pub async fn next(&mut self) -> Option<T> {
        loop {
            match self.receiver.recv().await {
                Ok(event) => return Some(event),
                Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}
