//! The trajectory: one JSON object per line, appended and flushed as each event happens and
//! never rewritten (docs/agent.md, "Trajectory format"), so a crash loses at most the event in
//! flight and a long run costs O(events) to record. The events are [`TrajectoryEvent`]s
//! ([`event`]); [`check`] validates a file as `tackle replay --check` does; [`atif`] converts
//! one to Harbor's Agent Trajectory Interchange Format (`tackle replay --format atif`).

pub mod atif;
mod check;
pub mod event;
pub mod read;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Instant, SystemTime};

use tackle_core::ToolOutput;
use tackle_core::executor::CANCELLED;
use tackle_llm::Usage;

pub use check::{CheckSummary, Violation, check};
pub use event::{Line, LineError, TrajectoryEvent};

use crate::outcome::{INTERRUPTED, RunStatus};
use crate::time::{file_stamp, rfc3339_millis};

/// The trajectory written last in `workspace`'s `.tackle/trajectories/` (by modification
/// time), for `tackle run --continue`.
pub fn latest(workspace: &Path) -> Option<PathBuf> {
    use tackle_core::fs::state::TRAJECTORIES;
    if let Err(err) = TRAJECTORIES.refuse_link(workspace) {
        err.notice();
        return None;
    }
    std::fs::read_dir(TRAJECTORIES.path(workspace))
        .ok()?
        .flatten()
        .filter(|entry| entry.path().extension().is_some_and(|ext| ext == "jsonl"))
        .filter_map(|entry| Some((entry.metadata().ok()?.modified().ok()?, entry.path())))
        .max()
        .map(|(_, path)| path)
}

/// Why a trajectory's conversation cannot be carried on.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    /// The trajectory cannot be read.
    #[error(transparent)]
    Read(#[from] read::ReadError),
    /// It holds no `conversation` event.
    #[error(
        "{0} holds no conversation to carry on (its run was ended by a second Ctrl-C, or written by an older Tackle); start a new run"
    )]
    NoConversation(PathBuf),
}

/// The conversation a trajectory ended with (its last `conversation` event), to carry on in a
/// new run.
/// Images the conversation refers to are put back from where the file recorded them.
pub fn conversation(path: &Path) -> Result<Vec<tackle_llm::Message>, ResumeError> {
    let events = read::read_events(path)?;
    let mut recorded: HashMap<String, String> = HashMap::new();
    let mut last = None;
    for line in events {
        match line.event {
            TrajectoryEvent::ToolOutput { images, .. } => {
                recorded.extend(images.into_iter().map(|image| (image.sha256, image.data)));
            }
            TrajectoryEvent::Conversation { mut messages } => {
                for image in event::result_images(&mut messages) {
                    if !image.data.starts_with(event::IMAGE_REFERENCE) {
                        recorded.insert(event::image_digest(&image.data), image.data.clone());
                    }
                }
                last = Some(messages);
            }
            _ => {}
        }
    }
    let mut messages = last.ok_or_else(|| ResumeError::NoConversation(path.to_owned()))?;
    event::resolve_image_references(&mut messages, &recorded);
    Ok(messages)
}

/// The default trajectory path of a session: `.tackle/trajectories/{stamp}-{session}.jsonl`.
pub fn default_path(workspace: &Path, session_id: &str) -> PathBuf {
    tackle_core::fs::state::TRAJECTORIES
        .path(workspace)
        .join(format!("{}-{session_id}.jsonl", file_stamp(SystemTime::now())))
}

/// The file and its line numbering, shared by the main agent's trajectory and its
/// subagents' ([`Trajectory::for_agent`]).
struct Sink {
    file: File,
    seq: u64,
    failed: bool,
    /// Digests of the images whose data the file holds (each is written once; a
    /// `conversation` event refers to one already written, docs/agent.md).
    images: HashSet<String>,
}

/// One agent's part of the file.
#[derive(Default)]
struct Inner {
    /// `session_end` is written: later events are dropped, except a `task` that starts the
    /// next task of the conversation.
    ended: bool,
    /// [`Trajectory::end_now`] closed the file: every later event is dropped.
    closed: bool,
    ledger: Ledger,
}

/// What the file says so far, enough to close it without the loop ([`Trajectory::end_now`]).
#[derive(Default)]
struct Ledger {
    started: Option<Instant>,
    step: u32,
    usage: Usage,
    /// Calls with a `tool_call` and no `tool_output` yet: (call id, step, when it was recorded).
    open: Vec<(String, u32, Instant)>,
}

impl Ledger {
    fn note(&mut self, event: &TrajectoryEvent) {
        match event {
            TrajectoryEvent::SessionStart { .. } => self.started = Some(Instant::now()),
            TrajectoryEvent::LlmRequest { step, .. } => self.step = *step,
            TrajectoryEvent::LlmResponse { usage, .. } => self.usage.add(usage),
            TrajectoryEvent::ToolCall { step, call_id, .. } => self.open.push((call_id.clone(), *step, Instant::now())),
            TrajectoryEvent::ToolOutput { call_id, .. } => self.open.retain(|(open, _, _)| open != call_id),
            _ => {}
        }
    }
}

/// An open trajectory file.
pub struct Trajectory {
    path: PathBuf,
    agent_id: String,
    sink: Arc<Mutex<Sink>>,
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for Trajectory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Trajectory").field("path", &self.path).finish_non_exhaustive()
    }
}

impl Trajectory {
    /// Creates (or truncates) the file, creating its directory.
    pub fn create(path: impl Into<PathBuf>) -> std::io::Result<Trajectory> {
        let path = path.into();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        let file = File::create(&path)?;
        Ok(Trajectory::over(path, file))
    }

    /// Creates (or truncates) the file `path`, which lies in `workspace`: it and its
    /// directories are made beneath the workspace without following any link (a trajectory
    /// is one of Tackle's state files, `tackle_core::fs::state::TRAJECTORIES`); a link on the
    /// way is refused with a notice.
    pub fn create_in_workspace(workspace: &Path, path: impl Into<PathBuf>) -> std::io::Result<Trajectory> {
        use tackle_core::fs::state;
        let path = path.into();
        let refused = |err: state::StateError| {
            err.notice();
            std::io::Error::other(err.to_string())
        };
        let rel = path.strip_prefix(workspace).map_err(|_| std::io::Error::other("not in the workspace"))?;
        let (Some(parent), Some(name)) = (rel.parent(), rel.file_name().and_then(|n| n.to_str())) else {
            return Err(std::io::Error::other("not a file name"));
        };
        let parent = parent.to_str().ok_or_else(|| std::io::Error::other("not a UTF-8 path"))?;
        let dir = state::open_dir(workspace, parent, true)
            .map_err(refused)?
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))?;
        let flags = rustix::fs::OFlags::WRONLY | rustix::fs::OFlags::CREATE | rustix::fs::OFlags::TRUNC;
        let file = state::open_in(&dir, parent, name, flags).map_err(refused)?;
        Ok(Trajectory::over(path, file))
    }

    fn over(path: PathBuf, file: File) -> Trajectory {
        let sink = Arc::new(Mutex::new(Sink { file, seq: 0, failed: false, images: HashSet::new() }));
        Trajectory { path, agent_id: "main".to_owned(), sink, inner: Mutex::new(Inner::default()) }
    }

    /// The part of the same file a subagent writes: its events carry `agent_id` and are
    /// numbered with the parent's in one sequence; its own `session_start` / `session_end`
    /// frame them.
    pub fn for_agent(&self, agent_id: &str) -> Trajectory {
        Trajectory {
            path: self.path.clone(),
            agent_id: agent_id.to_owned(),
            sink: Arc::clone(&self.sink),
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The id its events carry (`main`, or a subagent's `agent-N`).
    pub fn agent_id(&self) -> &str {
        &self.agent_id
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one event: `seq`, `t`, `type` and `agent_id` first, then the event's fields.
    /// A write failure is logged once and later events are dropped; the run goes on.
    pub fn record(&self, event: TrajectoryEvent) {
        let mut inner = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        self.write(&mut inner, &event);
    }

    /// Closes the file for a run that stops without its loop (a second Ctrl-C exits at once):
    /// each call still running gets `Cancelled by the user.`, then `session_end` says
    /// `interrupted` with the steps, usage and time recorded so far. Events after this (the
    /// loop still winding down) are dropped, so the file stays valid.
    pub fn end_now(&self) {
        let mut inner = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for (call_id, step, called) in std::mem::take(&mut inner.ledger.open) {
            let mut cancelled = ToolOutput::error(CANCELLED);
            cancelled.call_id = call_id;
            cancelled.meta.duration_ms = Some(millis(called));
            self.write(&mut inner, &TrajectoryEvent::tool_output(step, &cancelled));
        }
        let ledger = &inner.ledger;
        let end = TrajectoryEvent::SessionEnd {
            status: RunStatus::Interrupted,
            steps: ledger.step,
            final_result: INTERRUPTED.to_owned(),
            usage_total: ledger.usage,
            duration_ms: ledger.started.map_or(0, millis),
        };
        self.write(&mut inner, &end);
        inner.closed = true;
    }

    fn write(&self, inner: &mut Inner, event: &TrajectoryEvent) {
        let next_task = matches!(event, TrajectoryEvent::Task { .. });
        let mut sink = self.sink.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if sink.failed || inner.closed || (inner.ended && !next_task) {
            return;
        }
        let mut known = sink.images.clone();
        let event: Cow<'_, TrajectoryEvent> = match event {
            TrajectoryEvent::Conversation { messages } => Cow::Owned(TrajectoryEvent::Conversation {
                messages: event::conversation_with_references(messages, &mut known),
            }),
            TrajectoryEvent::ToolOutput { images, .. } => {
                known.extend(images.iter().map(|image| image.sha256.clone()));
                Cow::Borrowed(event)
            }
            other => Cow::Borrowed(other),
        };
        let event = event.as_ref();
        let mut line = match event.to_line(sink.seq, &rfc3339_millis(SystemTime::now()), &self.agent_id) {
            Ok(line) => line,
            Err(err) => {
                tracing::warn!("cannot record a trajectory event ({err}); it is left out");
                return;
            }
        };
        inner.ledger.note(event);
        inner.ended = matches!(event, TrajectoryEvent::SessionEnd { .. });
        line.push('\n');
        // One write per event: the line reaches the file (and survives a crash of Tackle)
        // before the next event happens.
        match sink.file.write_all(line.as_bytes()) {
            Ok(()) => {
                sink.seq += 1;
                sink.images = known;
            }
            Err(err) => {
                sink.failed = true;
                tracing::warn!("cannot write the trajectory {}: {err}; recording stops", self.path.display());
            }
        }
    }
}

fn millis(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::{Value, json};

    fn start() -> TrajectoryEvent {
        serde_json::from_value(json!({"type": "session_start", "task": "x"})).unwrap()
    }

    fn call(step: u32, id: &str) -> TrajectoryEvent {
        serde_json::from_value(json!({"type": "tool_call", "step": step, "call_id": id, "name": "echo"})).unwrap()
    }

    fn output(step: u32, id: &str, content: &str) -> TrajectoryEvent {
        let mut output = ToolOutput::text(content);
        output.call_id = id.to_owned();
        TrajectoryEvent::tool_output(step, &output)
    }

    #[test]
    fn the_writer_appends_valid_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deep/t.jsonl");
        let trajectory = Trajectory::create(&path).unwrap();
        trajectory.record(start());
        trajectory.record(call(1, "c1"));
        // Visible at once, before anything else is written or closed.
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2);
        trajectory.record(output(1, "c1", "ok"));
        let end = json!({"type": "session_end", "status": "success"});
        trajectory.record(serde_json::from_value(end).unwrap());
        let text = std::fs::read_to_string(&path).unwrap();
        let summary = check(text.as_bytes()).unwrap();
        assert_eq!(summary, CheckSummary { events: 4, tool_calls: 1, ended: true, unknown: Vec::new() });
        let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        let keys: Vec<&str> = first.as_object().unwrap().keys().map(String::as_str).take(5).collect();
        assert_eq!(keys, ["seq", "t", "type", "agent_id", "tackle_version"]);
        assert_eq!(first["agent_id"], "main");
        assert!(first["t"].as_str().unwrap().ends_with('Z'));
    }

    #[test]
    fn ending_now_answers_the_running_calls_and_drops_later_events() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let trajectory = Trajectory::create(&path).unwrap();
        trajectory.record(start());
        trajectory.record(serde_json::from_value(json!({"type": "llm_request", "step": 1})).unwrap());
        let response = json!({"type": "llm_response", "step": 1, "usage": {"input_tokens": 7, "output_tokens": 3}});
        trajectory.record(serde_json::from_value(response).unwrap());
        for id in ["a", "b", "c"] {
            trajectory.record(call(1, id));
        }
        trajectory.record(output(1, "b", "done"));
        trajectory.end_now();
        // The loop, still winding down, cannot add to a closed file.
        trajectory.record(output(1, "a", "late"));
        trajectory.end_now();
        let text = std::fs::read_to_string(&path).unwrap();
        let summary = check(text.as_bytes()).unwrap();
        assert_eq!(summary, CheckSummary { events: 10, tool_calls: 3, ended: true, unknown: Vec::new() });
        let events: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let cancelled: Vec<(&Value, &Value)> = events[7..9].iter().map(|e| (&e["call_id"], &e["content"])).collect();
        assert_eq!(
            cancelled,
            [(&json!("a"), &json!("Cancelled by the user.")), (&json!("c"), &json!("Cancelled by the user."))]
        );
        assert!(events[7]["meta"]["duration_ms"].is_u64(), "{}", events[7]);
        assert_eq!(
            (&events[9]["status"], &events[9]["steps"], &events[9]["usage_total"]),
            (&json!("interrupted"), &json!(1), &json!({"input_tokens": 7, "output_tokens": 3}))
        );
    }
}
