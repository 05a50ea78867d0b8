//! One live tool session behind one MCP session: the core [`Session`] (its shell, read
//! ledger, edit history, jobs), the scheduler that makes concurrent `tools/call` requests
//! behave like calls of one turn, and the closing of its tools exactly once — when the MCP
//! session ends, or at shutdown through the [`Tracker`].

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use rmcp::model::Tool;
use tackle_core::Session;
use tokio::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::listing;

/// A tool session in use by one MCP session.
pub struct LiveSession {
    session: Arc<Session>,
    closed: AtomicBool,
    /// Concurrency-safe calls share it, every other call holds it alone. The lock is fair,
    /// so calls that must run alone keep their arrival order.
    scheduler: RwLock<()>,
    calls: AtomicU64,
    rendered: OnceLock<Vec<Tool>>,
}

/// Permission to run one call.
#[derive(Debug)]
pub enum Turn<'a> {
    Shared(#[allow(dead_code)] RwLockReadGuard<'a, ()>),
    Alone(#[allow(dead_code)] RwLockWriteGuard<'a, ()>),
}

impl LiveSession {
    /// Wraps a fresh session and records it in `tracker`.
    pub fn new(session: Session, tracker: &Tracker) -> Arc<Self> {
        let live = Arc::new(LiveSession {
            session: Arc::new(session),
            closed: AtomicBool::new(false),
            scheduler: RwLock::new(()),
            calls: AtomicU64::new(0),
            rendered: OnceLock::new(),
        });
        tracker.add(&live);
        live
    }

    /// The core session.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The session's tools as MCP tools (rendered once).
    pub fn rendered_tools(&self) -> &[Tool] {
        self.rendered.get_or_init(|| listing::render(self.session.tools().specs()))
    }

    /// A fresh call id for this session.
    pub fn next_call_id(&self) -> String {
        format!("mcp_{}", self.calls.fetch_add(1, Ordering::Relaxed) + 1)
    }

    /// Waits for the call's turn.
    pub async fn schedule(&self, concurrency_safe: bool) -> Turn<'_> {
        if concurrency_safe {
            Turn::Shared(self.scheduler.read().await)
        } else {
            Turn::Alone(self.scheduler.write().await)
        }
    }

    /// Closes every tool of the session (kills shells and jobs); later calls do nothing.
    pub async fn close(&self) {
        if !self.closed.swap(true, Ordering::SeqCst) {
            self.session.close().await;
        }
    }
}

impl Drop for LiveSession {
    /// A session whose MCP session ended (HTTP `DELETE`, idle timeout, a dropped transport)
    /// without an explicit close is closed in the background.
    fn drop(&mut self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        let session = Arc::clone(&self.session);
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move { session.close().await });
            }
            Err(_) => tracing::warn!("a tool session ended outside the runtime and could not be closed"),
        }
    }
}

/// The live sessions of a server, so shutdown can close every one of them.
#[derive(Default)]
pub struct Tracker {
    sessions: Mutex<Vec<Weak<LiveSession>>>,
}

impl Tracker {
    fn add(&self, live: &Arc<LiveSession>) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        sessions.retain(|weak| weak.strong_count() > 0);
        sessions.push(Arc::downgrade(live));
    }

    /// The sessions still alive.
    pub fn live(&self) -> Vec<Arc<LiveSession>> {
        let sessions = self.sessions.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        sessions.iter().filter_map(Weak::upgrade).collect()
    }

    /// Closes every live session.
    pub async fn close_all(&self) {
        futures::future::join_all(self.live().iter().map(|live| async move { live.close().await })).await;
    }
}
