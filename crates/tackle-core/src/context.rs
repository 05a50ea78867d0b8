//! What a running tool can reach: its session (workspace, path policy, shared state), its
//! cancellation token and its progress sink.
//!
//! Session state is a type-keyed map so that core stays free of concrete tools: the file
//! tools keep their read ledger and edit history there, the shell its session and jobs, each
//! under its own type.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tokio_util::sync::CancellationToken;

use crate::error::ToolError;
use crate::events::{EventSink, ExecEvent, Progress};
use crate::paths::{Access, PathPolicy};
use crate::resource::SessionResource;
use crate::spill::SpillDir;

/// Per-session state shared by the tools of one session, keyed by type, and the resources the
/// session owns (closed by [`crate::ToolSession::close`]).
#[derive(Default)]
pub struct SessionState {
    items: Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
    resources: Mutex<Resources>,
}

/// The resources registered so far, and whether the session has taken them to close them.
#[derive(Default)]
struct Resources {
    list: Vec<Arc<dyn SessionResource>>,
    closed: bool,
}

impl SessionState {
    /// Puts `value` in as the session's `T`, replacing any earlier one. Whoever assembles a
    /// session gives each tool family its settings this way before the session is created
    /// ([`crate::ToolSession::with_state`]).
    pub fn insert<T: Any + Send + Sync>(&self, value: T) -> Arc<T> {
        let value = Arc::new(value);
        let mut items = self.items.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        items.insert(TypeId::of::<T>(), Arc::clone(&value) as Arc<dyn Any + Send + Sync>);
        value
    }

    /// Puts an already shared `value` in as the session's `T` (something several sessions
    /// use, such as MCP connections).
    pub fn insert_shared<T: Any + Send + Sync>(&self, value: Arc<T>) {
        let mut items = self.items.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        items.insert(TypeId::of::<T>(), value as Arc<dyn Any + Send + Sync>);
    }

    /// Registers something the session owns; [`crate::ToolSession::close`] closes it once, in
    /// reverse order of registration.
    pub fn add_resource(&self, resource: Arc<dyn SessionResource>) {
        self.lock_resources().list.push(resource);
    }

    fn lock_resources(&self) -> std::sync::MutexGuard<'_, Resources> {
        self.resources.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The session's `T`, created with `init` on first use and then registered as a resource
    /// (in one step, so a `T` made by two racing calls is registered once). `None` when the
    /// session has closed and `T` was not made before: a call that was still on its way then
    /// must not make something (a shell, a job) that nothing would close.
    pub fn resource_or_insert_with<T: SessionResource>(&self, init: impl FnOnce() -> T) -> Option<Arc<T>> {
        let mut items = self.items.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = TypeId::of::<T>();
        if let Some(item) = items.get(&key).and_then(|item| Arc::clone(item).downcast::<T>().ok()) {
            return Some(item);
        }
        let mut resources = self.lock_resources();
        if resources.closed {
            return None;
        }
        let fresh = Arc::new(init());
        items.insert(key, Arc::clone(&fresh) as Arc<dyn Any + Send + Sync>);
        resources.list.push(Arc::clone(&fresh) as Arc<dyn SessionResource>);
        Some(fresh)
    }

    /// Takes every registered resource, latest first (the session is closing); from now on
    /// [`SessionState::resource_or_insert_with`] makes no new one.
    pub(crate) fn take_resources(&self) -> Vec<Arc<dyn SessionResource>> {
        let mut resources = self.lock_resources();
        resources.closed = true;
        let mut taken = std::mem::take(&mut resources.list);
        taken.reverse();
        taken
    }

    /// The session's `T`, created with `T::default()` on first use.
    pub fn get<T: Any + Send + Sync + Default>(&self) -> Arc<T> {
        self.get_or_insert_with(T::default)
    }

    /// The session's `T`, created with `init` on first use.
    pub fn get_or_insert_with<T: Any + Send + Sync>(&self, init: impl FnOnce() -> T) -> Arc<T> {
        let mut items = self.items.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let key = TypeId::of::<T>();
        if let Some(item) = items.get(&key).and_then(|item| Arc::clone(item).downcast::<T>().ok()) {
            return item;
        }
        let fresh = Arc::new(init());
        items.insert(key, Arc::clone(&fresh) as Arc<dyn Any + Send + Sync>);
        fresh
    }

    /// The session's `T`, if some tool created it.
    pub fn existing<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        let items = self.items.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        items.get(&TypeId::of::<T>()).and_then(|item| Arc::clone(item).downcast::<T>().ok())
    }
}

impl std::fmt::Debug for SessionState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionState").finish_non_exhaustive()
    }
}

/// Facts about the session a tool may need.
#[derive(Debug)]
pub struct SessionInfo {
    /// The session id (used in spill paths and the shell environment).
    pub id: String,
    /// The workspace root.
    pub workspace: PathBuf,
    /// Where cut outputs are saved whole.
    pub spill: SpillDir,
}

/// Everything a running call can reach.
#[derive(Clone)]
pub struct ToolContext {
    pub(crate) call_id: Arc<str>,
    pub(crate) tool: Arc<str>,
    pub(crate) info: Arc<SessionInfo>,
    pub(crate) state: Arc<SessionState>,
    pub(crate) paths: Arc<dyn PathPolicy>,
    pub(crate) cancel: CancellationToken,
    pub(crate) events: EventSink,
    pub(crate) read_only_restricted: bool,
}

impl ToolContext {
    /// Whether the call runs only because it was judged read-only
    /// ([`crate::permission::Decision::AllowReadOnly`]): a tool that runs commands must run it
    /// under the read-only restriction, or refuse (docs/shell.md, "Read-only commands run
    /// restricted").
    pub fn read_only_restricted(&self) -> bool {
        self.read_only_restricted
    }

    /// This context for a call that must run read-only restricted (the executor sets it; so
    /// may a program that runs tools itself).
    pub fn restricted_to_read_only(mut self) -> Self {
        self.read_only_restricted = true;
        self
    }

    /// The id of the call being run.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The wire name of the tool being run.
    pub fn tool_name(&self) -> &str {
        &self.tool
    }

    /// The session id.
    pub fn session_id(&self) -> &str {
        &self.info.id
    }

    /// The workspace root.
    pub fn workspace(&self) -> &Path {
        &self.info.workspace
    }

    /// Facts about the session.
    pub fn session(&self) -> &SessionInfo {
        &self.info
    }

    /// The session's spill directory, for a tool that keeps its own output within the budget
    /// and saves the full text itself.
    pub fn spill_dir(&self) -> &SpillDir {
        &self.info.spill
    }

    /// The session's shared state.
    pub fn state(&self) -> &SessionState {
        &self.state
    }

    /// The path policy file tools must resolve every path with.
    pub fn paths(&self) -> &dyn PathPolicy {
        self.paths.as_ref()
    }

    /// Resolves a path argument for reading or writing through the path policy.
    pub fn resolve_path(&self, raw: &str, access: Access) -> Result<PathBuf, ToolError> {
        self.paths.resolve(raw, access)
    }

    /// The token that fires when the call is cancelled or times out.
    pub fn cancel_token(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Whether the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// Reports progress (shown by terminals, sent as MCP progress notifications).
    pub fn progress(&self, progress: Progress) {
        self.events.send(ExecEvent::Progress {
            call_id: self.call_id.to_string(),
            tool: self.tool.to_string(),
            progress,
        });
    }
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("call_id", &self.call_id)
            .field("tool", &self.tool)
            .field("session", &self.info.id)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::BoxFuture;

    struct Shell;
    struct Index;

    impl SessionResource for Shell {
        fn name(&self) -> &str {
            "shell"
        }
        fn close(&self) -> BoxFuture<'_, ()> {
            Box::pin(async {})
        }
    }

    impl SessionResource for Index {
        fn name(&self) -> &str {
            "index"
        }
        fn close(&self) -> BoxFuture<'_, ()> {
            Box::pin(async {})
        }
    }

    #[test]
    fn a_resource_is_made_once_and_never_after_the_session_took_them_to_close() {
        let state = SessionState::default();
        let shell = state.resource_or_insert_with(|| Shell).unwrap();
        assert!(Arc::ptr_eq(&shell, &state.resource_or_insert_with(|| Shell).unwrap()));
        assert_eq!(state.take_resources().len(), 1);
        // What was made before stays the session's (and was closed); nothing new is made.
        assert!(state.resource_or_insert_with(|| Shell).is_some_and(|again| Arc::ptr_eq(&shell, &again)));
        assert!(state.resource_or_insert_with(|| Index).is_none());
        assert!(state.existing::<Index>().is_none());
        assert!(state.take_resources().is_empty());
    }
}
