//! Changes to protected paths that a command or background job made and the sandbox could not
//! stop (docs/shell.md, "Protected paths"): a new `tackle.toml` under bubblewrap, anything under
//! Landlock or without a sandbox.
//!
//! Around each `bash` command and each job, [`Guard`] compares the protected paths' `lstat`
//! before and after (`tackle_sandbox::process::ProtectedWatch`). A change is told to the model
//! (a line appended to the call's output, or for a job a line in the session's
//! `tackle_core::Notifications`), to the person (a warning on the log, which the command line
//! shows on stderr), and to front ends as a typed event ([`ProtectedChanges::subscribe`]); and
//! it is recorded for the rest of the session ([`ProtectedChanges::all`]). A change seen by two
//! overlapping windows (a job's and a command's) is reported once.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tackle_core::Notifications;
use tackle_sandbox::process::{ChangeKind, PathStat, ProtectedWatch, SandboxPolicy, Snapshot};

use super::events::{Broadcast, Subscription};

/// One change a command or job made to a protected path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedChange {
    /// The absolute path.
    pub path: PathBuf,
    pub kind: ChangeKind,
    /// Who changed it: `a bash command` or `background job job-2`.
    pub by: String,
}

/// The protected-path changes of a session (`session.state().get::<ProtectedChanges>()`): the
/// record, and a stream of them for front ends.
#[derive(Debug, Default)]
pub struct ProtectedChanges {
    /// Every change so far, with the path's state after it (to report each change once).
    record: Mutex<Vec<(ProtectedChange, Option<PathStat>)>>,
    events: Broadcast<ProtectedChange>,
}

impl ProtectedChanges {
    /// Every change reported in this session, oldest first.
    pub fn all(&self) -> Vec<ProtectedChange> {
        self.lock().iter().map(|(change, _)| change.clone()).collect()
    }

    /// A subscription to the changes reported from now on.
    pub fn subscribe(&self) -> Subscription<ProtectedChange> {
        self.events.subscribe()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(ProtectedChange, Option<PathStat>)>> {
        self.record.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Watches the protected paths around the commands and jobs of one session.
#[derive(Debug)]
pub(crate) struct Guard {
    watch: ProtectedWatch,
    workspace: PathBuf,
    changes: Arc<ProtectedChanges>,
    queue: Arc<Notifications>,
}

impl Guard {
    /// The guard of a session whose sandbox enforces `policy`.
    pub(crate) fn new(policy: &SandboxPolicy, changes: Arc<ProtectedChanges>, queue: Arc<Notifications>) -> Guard {
        Guard { watch: ProtectedWatch::new(policy), workspace: policy.workspace.clone(), changes, queue }
    }

    /// The protected paths' state now (before a command or job).
    pub(crate) fn before(&self) -> Snapshot {
        self.watch.snapshot()
    }

    /// Compares with `before`, after a `bash` command: new changes are recorded and told to the
    /// person; the returned line is for the call's output.
    pub(crate) fn after_command(&self, before: &Snapshot) -> Option<String> {
        let listed = self.report(before, "a bash command")?;
        Some(format!("[Protected files changed during this command: {listed}. The user has been notified.]"))
    }

    /// Compares with `before`, after the background job `job_id` ended: new changes are
    /// recorded, told to the person, and queued for the model.
    pub(crate) fn after_job(&self, before: &Snapshot, job_id: &str) {
        if let Some(listed) = self.report(before, &format!("background job {job_id}")) {
            self.queue.push(format!(
                "Background job {job_id} changed protected files: {listed}. The user has been notified."
            ));
        }
    }

    /// Records and announces what changed since `before` and was not reported yet; returns the
    /// changes as `path (kind), …` when there are any.
    fn report(&self, before: &Snapshot, by: &str) -> Option<String> {
        let found = self.watch.changes(before, &self.watch.snapshot());
        if found.is_empty() {
            return None;
        }
        let mut fresh = Vec::new();
        {
            let mut record = self.changes.lock();
            for change in found {
                let reported = record.iter().rev().find(|(seen, _)| seen.path == change.path);
                if reported.is_some_and(|(_, after)| *after == change.after) {
                    continue;
                }
                let entry = ProtectedChange { path: change.path, kind: change.kind, by: by.to_owned() };
                record.push((entry.clone(), change.after));
                fresh.push(entry);
            }
        }
        if fresh.is_empty() {
            return None;
        }
        let listed = fresh
            .iter()
            .map(|change| format!("{} ({})", shown(&change.path, &self.workspace), change.kind.name()))
            .collect::<Vec<_>>()
            .join(", ");
        tracing::warn!(
            "{by} changed protected files in {}: {listed}; check them before running git or trusting this workspace \
             again",
            self.workspace.display()
        );
        for change in fresh {
            self.changes.events.send(change);
        }
        Some(listed)
    }
}

/// A path as notices show it: relative to the workspace when inside it.
fn shown(path: &Path, workspace: &Path) -> String {
    path.strip_prefix(workspace).unwrap_or(path).display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_change_seen_by_two_windows_is_reported_once_and_a_later_one_again() {
        let dir = tempfile::tempdir().unwrap();
        let changes = Arc::new(ProtectedChanges::default());
        let queue = Arc::new(Notifications::default());
        let guard = Guard::new(&SandboxPolicy::new(dir.path()), Arc::clone(&changes), Arc::clone(&queue));
        let mut events = changes.subscribe();
        let job_started = guard.before();
        let command_started = guard.before();
        assert_eq!(guard.after_command(&command_started), None);
        std::fs::write(dir.path().join("tackle.toml"), "").unwrap();
        assert_eq!(
            guard.after_command(&command_started).as_deref(),
            Some("[Protected files changed during this command: tackle.toml (created). The user has been notified.]")
        );
        guard.after_job(&job_started, "job-1");
        assert!(queue.is_empty());

        std::fs::write(dir.path().join("tackle.toml"), "[sandbox]\n").unwrap();
        guard.after_job(&job_started, "job-1");
        assert_eq!(
            queue.drain(),
            ["Background job job-1 changed protected files: tackle.toml (created). The user has been notified."]
        );
        let by: Vec<String> = changes.all().into_iter().map(|change| change.by).collect();
        assert_eq!(by, ["a bash command", "background job job-1"]);
        assert_eq!(events.take_pending().len(), 2);
    }
}
