//! Work items shared by a few threads, each item free to add more (a directory adds its
//! subdirectories and its files): the engine of the walk ([`crate::search::walk`]), as
//! ripgrep's walker runs its own on several threads.
//!
//! Items are taken last-in first-out, so a walk goes depth first and keeps few directories
//! open at once. The work ends when no item is queued and none is being processed, or when
//! the cancellation token fires.

use std::sync::{Condvar, Mutex, PoisonError};

use tokio_util::sync::CancellationToken;

/// The most threads a pool uses (ripgrep's walker stops at 12 too).
const MAX_THREADS: usize = 12;

/// The queue of a running pool, through which work adds work.
#[derive(Debug)]
pub struct Queue<W> {
    state: Mutex<State<W>>,
    changed: Condvar,
}

#[derive(Debug)]
struct State<W> {
    items: Vec<W>,
    /// Items queued or being processed.
    pending: usize,
    /// Threads waiting for an item (woken only when there are some: a wake is a system call).
    waiting: usize,
    quit: bool,
}

impl<W> Queue<W> {
    /// Adds an item.
    pub fn push(&self, item: W) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.items.push(item);
        state.pending += 1;
        let wake = state.waiting > 0;
        drop(state);
        if wake {
            self.changed.notify_one();
        }
    }

    /// The next item, waiting while others may still add some; `None` when the work is done.
    fn next(&self, cancel: &CancellationToken) -> Option<W> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        loop {
            if cancel.is_cancelled() {
                state.quit = true;
                self.changed.notify_all();
            }
            if state.quit {
                return None;
            }
            if let Some(item) = state.items.pop() {
                return Some(item);
            }
            if state.pending == 0 {
                return None;
            }
            state.waiting += 1;
            state = self.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
            state.waiting -= 1;
        }
    }

    /// One item is processed.
    fn done(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.pending -= 1;
        if state.pending == 0 && state.waiting > 0 {
            self.changed.notify_all();
        }
    }
}

/// Processes `first` and everything it adds on up to [`MAX_THREADS`] threads (the current
/// one among them), and returns what `process` produced, in no particular order. Each thread
/// has its own state (made by `new_state`), so costly things such as a searcher and its
/// buffers are made once per thread. Stops early when `cancel` fires.
pub fn run<W, S, T>(
    first: W,
    cancel: &CancellationToken,
    new_state: impl Fn() -> S + Sync,
    process: impl Fn(&mut S, W, &Queue<W>, &mut Vec<T>) + Sync,
) -> Vec<T>
where
    W: Send,
    T: Send,
{
    let state = State { items: Vec::new(), pending: 0, waiting: 0, quit: false };
    let queue = Queue { state: Mutex::new(state), changed: Condvar::new() };
    queue.push(first);
    let threads = std::thread::available_parallelism().map_or(1, std::num::NonZero::get).min(MAX_THREADS);
    let worker = || {
        let mut state = new_state();
        let mut found = Vec::new();
        while let Some(item) = queue.next(cancel) {
            let processing = Processing(&queue);
            process(&mut state, item, &queue, &mut found);
            drop(processing);
        }
        found
    };
    std::thread::scope(|scope| {
        let others: Vec<_> = (1..threads).map(|_| scope.spawn(worker)).collect();
        let mut found = worker();
        for other in others {
            match other.join() {
                Ok(mut part) => found.append(&mut part),
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
        found
    })
}

/// Marks an item processed when dropped; a panic while processing it ends the work for every
/// thread (instead of leaving them waiting for an item that never finishes).
struct Processing<'a, W>(&'a Queue<W>);

impl<W> Drop for Processing<'_, W> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut state = self.0.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.quit = true;
            drop(state);
            self.0.changed.notify_all();
        }
        self.0.done();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_added_is_processed_once() {
        // A tree of numbers: n adds 2n and 2n+1 below 1,000.
        let mut found: Vec<u32> = run(
            1u32,
            &CancellationToken::new(),
            || (),
            |(), n, queue, found| {
                found.push(n);
                for child in [2 * n, 2 * n + 1] {
                    if child < 1000 {
                        queue.push(child);
                    }
                }
            },
        );
        found.sort_unstable();
        assert_eq!(found, (1..1000).collect::<Vec<_>>());
    }

    #[test]
    fn a_panic_in_one_thread_ends_the_run_and_is_passed_on() {
        let result = std::panic::catch_unwind(|| {
            run(
                1u32,
                &CancellationToken::new(),
                || (),
                |(), n, queue, found: &mut Vec<u32>| {
                    assert!(n != 500, "item 500");
                    found.push(n);
                    for child in [2 * n, 2 * n + 1] {
                        if child < 1000 {
                            queue.push(child);
                        }
                    }
                },
            )
        });
        assert!(result.is_err());
    }

    #[test]
    fn a_cancelled_run_stops() {
        let cancel = CancellationToken::new();
        cancel.cancel();
        let found: Vec<u32> = run(
            1u32,
            &cancel,
            || (),
            |(), n, queue, found| {
                found.push(n);
                queue.push(n + 1);
            },
        );
        assert!(found.is_empty(), "{found:?}");
    }
}
