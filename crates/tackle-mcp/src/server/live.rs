//! One live tool session behind one MCP session: the core [`ToolSession`] (its shell, read
//! ledger, edit history, jobs), and the closing of its tools exactly once — when the MCP
//! session ends, or at shutdown through the [`Tracker`], which also waits for the sessions
//! that closed on their own, so that no shell or job outlives the server.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use rmcp::model::Tool;
use tackle_core::ToolSession;
use tokio_util::task::TaskTracker;

use super::listing;

/// A tool session in use by one MCP session.
pub struct LiveSession {
    session: Arc<ToolSession>,
    closed: AtomicBool,
    calls: AtomicU64,
    rendered: OnceLock<Arc<[Tool]>>,
    /// Where a close that runs in the background (see `Drop`) is tracked.
    closing: TaskTracker,
}

impl LiveSession {
    /// Wraps a fresh session and records it in `tracker`.
    pub fn new(session: ToolSession, tracker: &Tracker) -> Arc<Self> {
        let live = Arc::new(LiveSession {
            session: Arc::new(session),
            closed: AtomicBool::new(false),
            calls: AtomicU64::new(0),
            rendered: OnceLock::new(),
            closing: tracker.closing.clone(),
        });
        tracker.add(&live);
        live
    }

    /// The core session.
    pub fn session(&self) -> &ToolSession {
        &self.session
    }

    /// The session's tools as MCP tools (rendered once, and shared through `shared` with
    /// the sessions whose tools render alike).
    pub fn rendered_tools(&self, shared: &listing::Shared) -> &[Tool] {
        self.rendered.get_or_init(|| shared.share(listing::render(self.session.tools().specs())))
    }

    /// A fresh call id for this session.
    pub fn next_call_id(&self) -> String {
        format!("mcp_{}", self.calls.fetch_add(1, Ordering::Relaxed) + 1)
    }

    /// Closes every tool of the session (kills shells and jobs); later calls do nothing.
    pub async fn close(&self) {
        if !self.closed.swap(true, Ordering::SeqCst) {
            self.session.close().await;
        }
    }
}

impl Drop for LiveSession {
    /// A session whose MCP session ended (HTTP `DELETE`, idle expiry, eviction, a dropped
    /// transport) without an explicit close is closed in the background, where
    /// [`Tracker::close_all`] waits for it.
    fn drop(&mut self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        let session = Arc::clone(&self.session);
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                self.closing.spawn_on(async move { session.close().await }, &runtime);
            }
            Err(_) => tracing::warn!("a tool session ended outside the runtime and could not be closed"),
        }
    }
}

/// The live sessions of a server, so shutdown can close every one of them.
#[derive(Default)]
pub struct Tracker {
    sessions: Mutex<Vec<Weak<LiveSession>>>,
    closing: TaskTracker,
}

impl Tracker {
    fn add(&self, live: &Arc<LiveSession>) {
        let mut sessions = self.sessions.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        sessions.retain(|weak| weak.strong_count() > 0);
        sessions.push(Arc::downgrade(live));
    }

    /// The sessions still alive.
    pub fn live(&self) -> Vec<Arc<LiveSession>> {
        let sessions = self.sessions.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        sessions.iter().filter_map(Weak::upgrade).collect()
    }

    /// Closes every live session, and waits for those closing in the background.
    pub async fn close_all(&self) {
        futures::future::join_all(self.live().iter().map(|live| async move { live.close().await })).await;
        self.closing.close();
        self.closing.wait().await;
        self.closing.reopen();
    }
}
