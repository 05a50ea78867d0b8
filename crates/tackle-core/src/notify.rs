//! Things that happen between model requests and that the model should hear about: a
//! background job finished, an MCP server's tool list changed, a subagent returned. Tools
//! and connections queue them in the session's state (`ctx.state().get::<Notifications>()`),
//! and the agent loop drains the queue into one `<notifications>` message before its next
//! request (docs/reference/providers.md#notifications). Notices meant only for the person do not go here.

use std::sync::Mutex;

/// The session's queue of notifications for the model.
#[derive(Debug, Default)]
pub struct Notifications {
    queue: Mutex<Vec<String>>,
}

impl Notifications {
    /// Queues one notification (one line or short paragraph).
    pub fn push(&self, text: impl Into<String>) {
        self.queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(text.into());
    }

    /// Takes every queued notification, oldest first.
    pub fn drain(&self) -> Vec<String> {
        std::mem::take(&mut *self.queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.queue.lock().unwrap_or_else(std::sync::PoisonError::into_inner).is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drains_in_order_once() {
        let queue = Notifications::default();
        queue.push("a");
        queue.push("b");
        assert!(!queue.is_empty());
        assert_eq!(queue.drain(), vec!["a".to_owned(), "b".to_owned()]);
        assert!(queue.drain().is_empty());
    }
}
