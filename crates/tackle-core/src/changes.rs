//! Announcements of changed files, so state derived from files (the code index) follows the
//! session's own edits without the tools that write files knowing who keeps it.
//!
//! The file tools announce each path they wrote or removed through [`announce`]; whoever
//! keeps such state subscribes a listener to the session's [`FileChanges`] (kept in its
//! [`SessionState`]) on first use. A session where nobody subscribed pays one map lookup per
//! write.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use crate::context::SessionState;

/// Hears about a changed path (absolute, as the path policy resolved it). It runs on the
/// writing tool's thread, after the write: keep it quick, and never fail the write.
pub type ChangeListener = Arc<dyn Fn(&Path) + Send + Sync>;

/// The listeners of one session.
#[derive(Default)]
pub struct FileChanges {
    listeners: Mutex<Vec<ChangeListener>>,
}

impl FileChanges {
    /// Adds a listener.
    pub fn subscribe(&self, listener: ChangeListener) {
        self.listeners.lock().unwrap_or_else(PoisonError::into_inner).push(listener);
    }

    /// Tells every listener that `path` changed.
    pub fn announce(&self, path: &Path) {
        // Call outside the lock, so a listener may subscribe another.
        let listeners = self.listeners.lock().unwrap_or_else(PoisonError::into_inner).clone();
        for listener in listeners {
            listener(path);
        }
    }
}

impl std::fmt::Debug for FileChanges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let count = self.listeners.lock().unwrap_or_else(PoisonError::into_inner).len();
        f.debug_struct("FileChanges").field("listeners", &count).finish()
    }
}

/// Announces that `path` changed to the listeners of the session owning `state`, if any.
pub fn announce(state: &SessionState, path: &Path) {
    if let Some(changes) = state.existing::<FileChanges>() {
        changes.announce(path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listeners_hear_announcements_of_their_session_only() {
        let (one, other) = (SessionState::default(), SessionState::default());
        let heard = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&heard);
        one.get::<FileChanges>().subscribe(Arc::new(move |path: &Path| sink.lock().unwrap().push(path.to_owned())));
        announce(&one, Path::new("/w/a.py"));
        announce(&other, Path::new("/w/b.py"));
        assert_eq!(*heard.lock().unwrap(), vec![Path::new("/w/a.py").to_owned()]);
    }
}
