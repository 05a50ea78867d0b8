//! The order in which the `tools/call` requests of one MCP session run: concurrency-safe calls
//! share, every other call runs alone, and each waits for the calls that arrived before it
//! (docs/mcp.md, "Calls").
//!
//! The place in line is taken when the request is read, not when its handler starts. rmcp
//! spawns one task per request, and tokio runs a task spawned from a worker thread next on
//! that thread (its LIFO slot) or lets another thread steal it; so two requests read in one
//! order reached a fair lock taken by their handlers in either order (a `background_run` sent
//! before a `bash` call was answered after it in most runs). [`super::intake`] hands each
//! `tools/call` a [`Ticket`] while messages are still in arrival order, before rmcp sees
//! them, and the handler waits on the ticket.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

/// The calls of one MCP session that have arrived and not ended, in arrival order.
#[derive(Debug, Default)]
pub struct Scheduler {
    line: Mutex<Line>,
    changed: Notify,
}

#[derive(Debug, Default)]
struct Line {
    next: u64,
    waiting: BTreeMap<u64, Kind>,
}

/// What is known of a call in line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Read, but its handler has not said yet whether it is concurrency-safe.
    Unknown,
    Shared,
    Alone,
}

/// One call's place in line; dropping it ends the call's turn (or gives up its place).
#[derive(Debug)]
pub struct Ticket {
    scheduler: Arc<Scheduler>,
    place: u64,
}

impl Scheduler {
    /// An empty line.
    pub fn new() -> Arc<Self> {
        Arc::new(Scheduler::default())
    }

    /// The next place in line, for a call that has just been read.
    pub fn arrive(self: &Arc<Self>) -> Ticket {
        let mut line = self.lock();
        let place = line.next;
        line.next += 1;
        line.waiting.insert(place, Kind::Unknown);
        Ticket { scheduler: Arc::clone(self), place }
    }

    fn lock(&self) -> MutexGuard<'_, Line> {
        self.line.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether the call at `place` may run now.
    fn may_run(&self, place: u64) -> bool {
        let line = self.lock();
        let mut earlier = line.waiting.range(..place).map(|(_, kind)| *kind);
        match line.waiting.get(&place) {
            Some(Kind::Shared) => earlier.all(|kind| kind == Kind::Shared),
            Some(Kind::Alone | Kind::Unknown) => earlier.next().is_none(),
            None => true,
        }
    }

    fn set(&self, place: u64, kind: Option<Kind>) {
        {
            let mut line = self.lock();
            match kind {
                Some(kind) => line.waiting.insert(place, kind),
                None => line.waiting.remove(&place),
            };
        }
        self.changed.notify_waiters();
    }
}

impl Ticket {
    /// Waits until the call may run: a concurrency-safe call once every call that arrived
    /// before it is concurrency-safe too, any other call once every earlier call has ended.
    /// The turn lasts until the ticket is dropped.
    pub async fn turn(&self, concurrency_safe: bool) {
        let scheduler = &self.scheduler;
        scheduler.set(self.place, Some(if concurrency_safe { Kind::Shared } else { Kind::Alone }));
        loop {
            // Registered before the check, so a change between the two is not missed.
            let changed = scheduler.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if scheduler.may_run(self.place) {
                return;
            }
            changed.await;
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.scheduler.set(self.place, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::future::Future;
    use std::pin::pin;
    use std::task::{Context, Poll, Waker};

    fn ready(future: impl Future<Output = ()>) -> bool {
        let mut future = pin!(future);
        future.as_mut().poll(&mut Context::from_waker(Waker::noop())) == Poll::Ready(())
    }

    #[test]
    fn unsafe_calls_wait_for_every_earlier_call_and_safe_calls_share() {
        let scheduler = Scheduler::new();
        let (first, second, third, fourth) =
            (scheduler.arrive(), scheduler.arrive(), scheduler.arrive(), scheduler.arrive());
        // The second call is unsafe; the first has not even been classified yet.
        assert!(!ready(second.turn(false)));
        // The first one is safe, and so is the fourth, which still waits behind the second.
        assert!(ready(first.turn(true)));
        assert!(!ready(fourth.turn(true)));
        assert!(!ready(second.turn(false)));
        drop(first);
        assert!(ready(second.turn(false)));
        assert!(!ready(third.turn(true)));
        drop(second);
        assert!(ready(third.turn(true)));
        assert!(ready(fourth.turn(true)), "safe calls share");
    }

    #[test]
    fn a_dropped_ticket_gives_up_its_place() {
        let scheduler = Scheduler::new();
        let (first, second) = (scheduler.arrive(), scheduler.arrive());
        assert!(!ready(second.turn(false)));
        drop(first);
        assert!(ready(second.turn(false)));
        assert!(scheduler.lock().waiting.len() == 1);
        drop(second);
        assert!(scheduler.lock().waiting.is_empty());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn waiting_calls_wake_in_arrival_order() {
        let scheduler = Scheduler::new();
        let order = Arc::new(Mutex::new(Vec::new()));
        let blocker = scheduler.arrive();
        blocker.turn(false).await;
        let tickets: Vec<Ticket> = (0..8).map(|_| scheduler.arrive()).collect();
        // Spawned in reverse, so the tasks start in the wrong order.
        let tasks: Vec<_> = tickets
            .into_iter()
            .enumerate()
            .rev()
            .map(|(n, ticket)| {
                let order = Arc::clone(&order);
                tokio::spawn(async move {
                    ticket.turn(false).await;
                    order.lock().unwrap().push(n);
                })
            })
            .collect();
        tokio::task::yield_now().await;
        drop(blocker);
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), (0..8).collect::<Vec<_>>());
    }
}
