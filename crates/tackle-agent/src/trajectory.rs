//! The trajectory: one JSON object per line, appended and flushed as each event happens and
//! never rewritten (providers.md §7), so a crash loses at most the event in flight and a
//! long run costs O(events) to record. [`check`] validates a file as `tackle replay --check`
//! does.

use std::fs::File;
use std::io::{BufRead, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Instant, SystemTime};

use serde::Deserialize as _;
use serde_json::{Map, Value, json};
use tackle_core::executor::CANCELLED;
use tackle_llm::Usage;

use crate::agent::INTERRUPTED;
use crate::time::{file_stamp, rfc3339_millis};

/// The default trajectory path of a session: `.tackle/trajectories/{stamp}-{session}.jsonl`.
pub fn default_path(workspace: &Path, session_id: &str) -> PathBuf {
    workspace.join(".tackle").join("trajectories").join(format!("{}-{session_id}.jsonl", file_stamp(SystemTime::now())))
}

struct Inner {
    file: File,
    seq: u64,
    failed: bool,
    /// `session_end` is written: later events are dropped.
    ended: bool,
    ledger: Ledger,
}

/// What the file says so far, enough to close it without the loop ([`Trajectory::end_now`]).
#[derive(Default)]
struct Ledger {
    started: Option<Instant>,
    step: u64,
    usage: Usage,
    /// Calls with a `tool_call` and no `tool_output` yet: (call id, step, when it was recorded).
    open: Vec<(String, u64, Instant)>,
}

impl Ledger {
    fn note(&mut self, kind: &str, fields: &Map<String, Value>) {
        let call_id = || fields.get("call_id").and_then(Value::as_str).unwrap_or_default().to_owned();
        match kind {
            "session_start" => self.started = Some(Instant::now()),
            "llm_request" => self.step = fields.get("step").and_then(Value::as_u64).unwrap_or(self.step),
            "llm_response" => {
                if let Some(usage) = fields.get("usage").and_then(|u| Usage::deserialize(u).ok()) {
                    self.usage.add(&usage);
                }
            }
            "tool_call" => {
                let step = fields.get("step").and_then(Value::as_u64).unwrap_or(self.step);
                self.open.push((call_id(), step, Instant::now()));
            }
            "tool_output" => {
                let id = call_id();
                self.open.retain(|(open, _, _)| *open != id);
            }
            _ => {}
        }
    }
}

/// An open trajectory file.
pub struct Trajectory {
    path: PathBuf,
    agent_id: String,
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
        let inner = Inner { file, seq: 0, failed: false, ended: false, ledger: Ledger::default() };
        Ok(Trajectory { path, agent_id: "main".to_owned(), inner: Mutex::new(inner) })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one event: `seq`, `t`, `type` and `agent_id` first, then `fields` (an object).
    /// A write failure is logged once and later events are dropped; the run goes on.
    pub fn event(&self, kind: &str, fields: Value) {
        let mut inner = self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        self.write(&mut inner, kind, fields);
    }

    /// Closes the file for a run that stops without its loop (a second Ctrl-C exits at once):
    /// each call still running gets `Cancelled by the user.`, then `session_end` says
    /// `interrupted` with the steps, usage and time recorded so far. Events after this (the
    /// loop still winding down) are dropped, so the file stays valid.
    pub fn end_now(&self) {
        let mut inner = self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        for (call_id, step, called) in std::mem::take(&mut inner.ledger.open) {
            let event = json!({"step": step, "call_id": call_id, "is_error": true, "content": CANCELLED,
                               "meta": {"duration_ms": millis(called), "truncated": false}});
            self.write(&mut inner, "tool_output", event);
        }
        let ledger = &inner.ledger;
        let duration_ms = ledger.started.map_or(0, millis);
        let end = json!({"status": "interrupted", "steps": ledger.step, "final_result": INTERRUPTED,
                         "usage_total": ledger.usage, "duration_ms": duration_ms});
        self.write(&mut inner, "session_end", end);
    }

    fn write(&self, inner: &mut Inner, kind: &str, fields: Value) {
        if inner.failed || inner.ended {
            return;
        }
        let mut object = Map::new();
        object.insert("seq".into(), json!(inner.seq));
        object.insert("t".into(), json!(rfc3339_millis(SystemTime::now())));
        object.insert("type".into(), json!(kind));
        object.insert("agent_id".into(), json!(self.agent_id));
        if let Value::Object(fields) = fields {
            inner.ledger.note(kind, &fields);
            object.extend(fields);
        }
        inner.ended = kind == "session_end";
        let mut line = Value::Object(object).to_string();
        line.push('\n');
        // One write per event: the line reaches the file (and survives a crash of Tackle)
        // before the next event happens.
        match inner.file.write_all(line.as_bytes()) {
            Ok(()) => inner.seq += 1,
            Err(err) => {
                inner.failed = true;
                tracing::warn!("cannot write the trajectory {}: {err}; recording stops", self.path.display());
            }
        }
    }
}

fn millis(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// The first rule a trajectory breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct Violation {
    /// 1-based line number (the last line + 1 for problems found at the end).
    pub line: usize,
    pub message: String,
}

/// What a valid trajectory holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckSummary {
    pub events: usize,
    pub tool_calls: usize,
    pub ended: bool,
}

/// Validates a trajectory (providers.md §7): every line parses; `seq` is dense from 0; one
/// `session_start`, at most one `session_end` and it is last; every `tool_call` has exactly
/// one later `tool_output`; every tool call of an `llm_response` has a `tool_call`.
pub fn check(reader: impl BufRead) -> Result<CheckSummary, Violation> {
    let mut summary = CheckSummary::default();
    let mut starts = 0;
    let mut calls: Vec<(String, usize, usize)> = Vec::new(); // (id, line, outputs)
    let mut announced: Vec<(String, usize)> = Vec::new(); // llm_response calls (id, line)
    let mut last_line = 0;
    for (index, line) in reader.lines().enumerate() {
        let number = index + 1;
        last_line = number;
        let violation = |message: String| Violation { line: number, message };
        let line = line.map_err(|e| violation(format!("cannot read: {e}")))?;
        let event: Value = serde_json::from_str(&line).map_err(|e| violation(format!("not valid JSON: {e}")))?;
        if summary.ended {
            return Err(violation("an event follows session_end".into()));
        }
        let seq = event.get("seq").and_then(Value::as_u64);
        if seq != Some(summary.events as u64) {
            return Err(violation(format!("seq should be {}, found {}", summary.events, display(event.get("seq")))));
        }
        summary.events += 1;
        let kind = event.get("type").and_then(Value::as_str).unwrap_or_default();
        let call_id = || event.get("call_id").and_then(Value::as_str).unwrap_or_default().to_owned();
        match kind {
            "session_start" => {
                starts += 1;
                if starts > 1 {
                    return Err(violation("a second session_start".into()));
                }
            }
            _ if starts == 0 => return Err(violation(format!("{kind} before session_start"))),
            "session_end" => summary.ended = true,
            "tool_call" => {
                let id = call_id();
                if calls.iter().any(|(c, _, _)| *c == id) {
                    return Err(violation(format!("a second tool_call with call_id {id}")));
                }
                announced.retain(|(c, _)| *c != id);
                calls.push((id, number, 0));
                summary.tool_calls += 1;
            }
            "tool_output" => {
                let id = call_id();
                match calls.iter_mut().find(|(c, _, _)| *c == id) {
                    Some((_, _, outputs)) if *outputs > 0 => {
                        return Err(violation(format!("a second tool_output for call_id {id}")));
                    }
                    Some((_, _, outputs)) => *outputs += 1,
                    None => return Err(violation(format!("tool_output for call_id {id} has no earlier tool_call"))),
                }
            }
            "llm_response" => {
                for call in event.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                    let id = call.get("id").and_then(Value::as_str).unwrap_or_default().to_owned();
                    announced.push((id, number));
                }
            }
            "" => return Err(violation("an event without a type".into())),
            _ => {}
        }
    }
    if starts == 0 {
        return Err(Violation { line: last_line + 1, message: "no session_start".into() });
    }
    if let Some((id, line, _)) = calls.iter().find(|(_, _, outputs)| *outputs == 0) {
        return Err(Violation { line: *line, message: format!("tool_call {id} has no tool_output") });
    }
    if let Some((id, line)) = announced.first() {
        return Err(Violation {
            line: *line,
            message: format!("tool call {id} of this llm_response has no tool_call"),
        });
    }
    Ok(summary)
}

fn display(value: Option<&Value>) -> String {
    value.map_or_else(|| "nothing".to_owned(), Value::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn lines(events: &[Value]) -> String {
        events.iter().map(|e| format!("{e}\n")).collect()
    }

    fn ev(seq: u64, kind: &str, extra: Value) -> Value {
        let mut base = json!({"seq": seq, "t": "x", "type": kind, "agent_id": "main"});
        if let (Value::Object(base), Value::Object(extra)) = (&mut base, extra) {
            base.extend(extra);
        }
        base
    }

    #[test]
    fn the_writer_appends_valid_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deep/t.jsonl");
        let trajectory = Trajectory::create(&path).unwrap();
        trajectory.event("session_start", json!({"task": "x"}));
        trajectory.event("tool_call", json!({"call_id": "c1"}));
        // Visible at once, before anything else is written or closed.
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 2);
        trajectory.event("tool_output", json!({"call_id": "c1"}));
        trajectory.event("session_end", json!({"status": "success"}));
        let text = std::fs::read_to_string(&path).unwrap();
        let summary = check(text.as_bytes()).unwrap();
        assert_eq!(summary, CheckSummary { events: 4, tool_calls: 1, ended: true });
        let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
        assert_eq!(first["agent_id"], "main");
        assert!(first["t"].as_str().unwrap().ends_with('Z'));
    }

    #[test]
    fn ending_now_answers_the_running_calls_and_drops_later_events() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let trajectory = Trajectory::create(&path).unwrap();
        trajectory.event("session_start", json!({"task": "x"}));
        trajectory.event("llm_request", json!({"step": 1}));
        trajectory.event("llm_response", json!({"step": 1, "usage": {"input_tokens": 7, "output_tokens": 3}}));
        for id in ["a", "b", "c"] {
            trajectory.event("tool_call", json!({"step": 1, "call_id": id}));
        }
        trajectory.event("tool_output", json!({"step": 1, "call_id": "b", "content": "done"}));
        trajectory.end_now();
        // The loop, still winding down, cannot add to a closed file.
        trajectory.event("tool_output", json!({"step": 1, "call_id": "a", "content": "late"}));
        trajectory.end_now();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(check(text.as_bytes()).unwrap(), CheckSummary { events: 10, tool_calls: 3, ended: true });
        let events: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        let cancelled: Vec<(&Value, &Value)> = events[7..9].iter().map(|e| (&e["call_id"], &e["content"])).collect();
        assert_eq!(
            cancelled,
            [(&json!("a"), &json!("Cancelled by the user.")), (&json!("c"), &json!("Cancelled by the user."))]
        );
        assert_eq!(
            (&events[9]["status"], &events[9]["steps"], &events[9]["usage_total"]),
            (&json!("interrupted"), &json!(1), &json!({"input_tokens": 7, "output_tokens": 3}))
        );
    }

    #[test]
    fn every_rule_is_checked_with_its_line() {
        let start = ev(0, "session_start", json!({}));
        let cases = [
            (format!("{start}\nnot json\n"), 2, "not valid JSON"),
            (lines(&[start.clone(), ev(2, "error", json!({}))]), 2, "seq should be 1, found 2"),
            (lines(&[ev(0, "tool_call", json!({"call_id": "a"}))]), 1, "tool_call before session_start"),
            (lines(&[start.clone(), ev(1, "session_start", json!({}))]), 2, "a second session_start"),
            (
                lines(&[start.clone(), ev(1, "session_end", json!({})), ev(2, "error", json!({}))]),
                3,
                "an event follows session_end",
            ),
            (lines(&[start.clone(), ev(1, "tool_call", json!({"call_id": "a"}))]), 2, "tool_call a has no tool_output"),
            (
                lines(&[start.clone(), ev(1, "tool_output", json!({"call_id": "a"}))]),
                2,
                "tool_output for call_id a has no earlier tool_call",
            ),
            (
                lines(&[
                    start.clone(),
                    ev(1, "tool_call", json!({"call_id": "a"})),
                    ev(2, "tool_output", json!({"call_id": "a"})),
                    ev(3, "tool_output", json!({"call_id": "a"})),
                ]),
                4,
                "a second tool_output for call_id a",
            ),
            (
                lines(&[start.clone(), ev(1, "llm_response", json!({"tool_calls": [{"id": "z"}]}))]),
                2,
                "tool call z of this llm_response has no tool_call",
            ),
            (String::new(), 1, "no session_start"),
        ];
        for (text, line, message) in cases {
            let violation = check(text.as_bytes()).unwrap_err();
            assert_eq!(violation.line, line, "{message}");
            assert!(violation.message.starts_with(message), "{} vs {message}", violation.message);
        }
    }
}
