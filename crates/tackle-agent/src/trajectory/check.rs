//! `tackle replay --check`: the rules a trajectory file keeps (docs/agent.md, "Trajectory
//! format"), checked line by line so the first one broken is named with its line number.

use std::io::BufRead;

use serde_json::Value;

use super::event::{Line, TrajectoryEvent};

/// The first rule a trajectory breaks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct Violation {
    /// 1-based line number (the last line + 1 for problems found at the end).
    pub line: usize,
    /// The rule broken.
    pub message: String,
}

/// What a valid trajectory holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckSummary {
    /// Events read.
    pub events: usize,
    /// `tool_call` events among them.
    pub tool_calls: usize,
    /// The last run has its `session_end`.
    pub ended: bool,
    /// The types of events this version does not know (from a newer Tackle), each once, in
    /// the order they first appear. They break no rule; `replay` skips them with a note.
    pub unknown: Vec<String>,
}

/// What the rules track for one agent of the file (`main`, or a subagent by its `agent_id`).
#[derive(Default)]
struct AgentTrack {
    starts: usize,
    ended: bool,
    calls: Vec<(String, usize, usize)>, // (id, line, outputs)
    announced: Vec<(String, usize)>,    // llm_response calls (id, line)
}

/// Validates a trajectory: every line is an event of the format (a known type with fields of
/// the right types, or a type this version does not know); `seq` is dense from 0 across the
/// file. Then for each agent (`main` and each subagent, by `agent_id`): one `session_start`;
/// a `session_end` is last of its events or followed by a `task` (the next task of the same
/// conversation), which needs one before it; every `tool_call` has exactly one later
/// `tool_output`; every tool call of an `llm_response` has a `tool_call`. The main agent's
/// `session_start` comes first.
pub fn check(reader: impl BufRead) -> Result<CheckSummary, Violation> {
    let mut summary = CheckSummary::default();
    let mut agents: Vec<(String, AgentTrack)> = Vec::new();
    let mut last_line = 0;
    for (index, text) in reader.lines().enumerate() {
        let number = index + 1;
        last_line = number;
        let violation = |message: String| Violation { line: number, message };
        let text = text.map_err(|e| violation(format!("cannot read: {e}")))?;
        let value: Value = serde_json::from_str(&text).map_err(|e| violation(format!("not valid JSON: {e}")))?;
        let seq = value.get("seq").and_then(Value::as_u64);
        if seq != Some(summary.events as u64) {
            return Err(violation(format!("seq should be {}, found {}", summary.events, display(value.get("seq")))));
        }
        let line = Line::from_value(&value).map_err(|e| violation(e.to_string()))?;
        // Lines without an `agent_id` (written by hand, or by an older Tackle) are the main agent's.
        let agent = if line.agent_id.is_empty() { "main" } else { line.agent_id.as_str() };
        if agents.is_empty() && agent != "main" {
            return Err(violation(format!("{} of {agent} before the main agent's session_start", line.kind)));
        }
        let position = match agents.iter().position(|(id, _)| id == agent) {
            Some(position) => position,
            None => {
                agents.push((agent.to_owned(), AgentTrack::default()));
                agents.len() - 1
            }
        };
        let track = &mut agents[position].1;
        let next_task = matches!(line.event, TrajectoryEvent::Task { .. });
        if track.ended && !next_task {
            return Err(violation("an event other than task follows session_end".into()));
        }
        summary.events += 1;
        match line.event {
            TrajectoryEvent::SessionStart { .. } => {
                track.starts += 1;
                if track.starts > 1 {
                    return Err(violation("a second session_start".into()));
                }
            }
            _ if track.starts == 0 => return Err(violation(format!("{} before session_start", line.kind))),
            TrajectoryEvent::SessionEnd { .. } => track.ended = true,
            TrajectoryEvent::Task { .. } if !track.ended => {
                return Err(violation("a task before the previous task's session_end".into()));
            }
            TrajectoryEvent::Task { .. } => track.ended = false,
            TrajectoryEvent::ToolCall { call_id: id, .. } => {
                if track.calls.iter().any(|(c, _, _)| *c == id) {
                    return Err(violation(format!("a second tool_call with call_id {id}")));
                }
                track.announced.retain(|(c, _)| *c != id);
                track.calls.push((id, number, 0));
                summary.tool_calls += 1;
            }
            TrajectoryEvent::ToolOutput { call_id: id, .. } => {
                match track.calls.iter_mut().find(|(c, _, _)| *c == id) {
                    Some((_, _, outputs)) if *outputs > 0 => {
                        return Err(violation(format!("a second tool_output for call_id {id}")));
                    }
                    Some((_, _, outputs)) => *outputs += 1,
                    None => return Err(violation(format!("tool_output for call_id {id} has no earlier tool_call"))),
                }
            }
            TrajectoryEvent::LlmResponse { tool_calls, .. } => {
                track.announced.extend(tool_calls.into_iter().map(|call| (call.id, number)));
            }
            TrajectoryEvent::Unknown => {
                if !summary.unknown.contains(&line.kind) {
                    summary.unknown.push(line.kind);
                }
            }
            TrajectoryEvent::LlmRequest { .. }
            | TrajectoryEvent::LlmRetry { .. }
            | TrajectoryEvent::Permission { .. }
            | TrajectoryEvent::Notification { .. }
            | TrajectoryEvent::Todos { .. }
            | TrajectoryEvent::Conversation { .. }
            | TrajectoryEvent::Error { .. } => {}
        }
    }
    if agents.is_empty() {
        return Err(Violation { line: last_line + 1, message: "no session_start".into() });
    }
    summary.ended = agents[0].1.ended;
    for (agent, track) in &agents {
        let whose = if agent == "main" { String::new() } else { format!(" (agent {agent})") };
        if let Some((id, line, _)) = track.calls.iter().find(|(_, _, outputs)| *outputs == 0) {
            return Err(Violation { line: *line, message: format!("tool_call {id} has no tool_output{whose}") });
        }
        if let Some((id, line)) = track.announced.first() {
            return Err(Violation {
                line: *line,
                message: format!("tool call {id} of this llm_response has no tool_call{whose}"),
            });
        }
    }
    Ok(summary)
}

fn display(value: Option<&Value>) -> String {
    value.map_or_else(|| "nothing".to_owned(), Value::to_string)
}

#[cfg(test)]
mod subagent_tests {
    use super::*;
    use serde_json::json;

    fn line(seq: u64, kind: &str, agent: &str, fields: Value) -> String {
        let mut base = json!({"seq": seq, "t": "x", "type": kind, "agent_id": agent});
        if let (Some(base), Some(fields)) = (base.as_object_mut(), fields.as_object()) {
            base.extend(fields.clone());
        }
        base.to_string()
    }

    fn start(seq: u64, agent: &str) -> String {
        line(
            seq,
            "session_start",
            agent,
            json!({"tackle_version": "0", "task": "t", "provider": "p", "model": "m", "base_url": "", "call_format": "tool",
                   "tools": [], "permission_mode": "default", "workspace": "/w", "max_steps": 1, "sandbox": "none", "session_id": "s"}),
        )
    }

    fn end(seq: u64, agent: &str) -> String {
        line(
            seq,
            "session_end",
            agent,
            json!({"status": "success", "steps": 1, "final_result": "", "duration_ms": 1,
            "usage_total": {"input_tokens": 0, "output_tokens": 0, "cache_read": 0, "cache_write": 0}}),
        )
    }

    #[test]
    fn each_agent_keeps_the_rules_in_its_own_part() {
        let call =
            |seq, agent| line(seq, "tool_call", agent, json!({"step": 1, "call_id": "c1", "name": "x", "args": {}}));
        let output = |seq, agent| line(seq, "tool_output", agent, json!({"step": 1, "call_id": "c1"}));
        // The same call id in the parent and its child; the child ends before the parent.
        let good = [
            start(0, "main"),
            call(1, "main"),
            start(2, "agent-1"),
            call(3, "agent-1"),
            output(4, "agent-1"),
            end(5, "agent-1"),
            output(6, "main"),
            end(7, "main"),
        ]
        .join("\n");
        let summary = check(good.as_bytes()).unwrap();
        assert_eq!((summary.events, summary.tool_calls, summary.ended), (8, 2, true));
        let open = [start(0, "main"), start(1, "agent-1"), call(2, "agent-1"), end(3, "main")].join("\n");
        assert_eq!(check(open.as_bytes()).unwrap_err().message, "tool_call c1 has no tool_output (agent agent-1)");
        let early = [start(0, "agent-1")].join("\n");
        assert!(check(early.as_bytes()).unwrap_err().message.contains("before the main agent's session_start"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

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
    fn every_rule_is_checked_with_its_line() {
        let start = ev(0, "session_start", json!({}));
        let end = json!({"status": "success"});
        let cases = [
            (format!("{start}\nnot json\n"), 2, "not valid JSON"),
            (lines(&[start.clone(), ev(2, "error", json!({}))]), 2, "seq should be 1, found 2"),
            (lines(&[ev(0, "tool_call", json!({"call_id": "a"}))]), 1, "tool_call before session_start"),
            (lines(&[start.clone(), ev(1, "session_start", json!({}))]), 2, "a second session_start"),
            (
                lines(&[start.clone(), ev(1, "session_end", end), ev(2, "error", json!({}))]),
                3,
                "an event other than task follows session_end",
            ),
            (
                lines(&[start.clone(), ev(1, "task", json!({"task": "t"}))]),
                2,
                "a task before the previous task's session_end",
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
            (lines(&[start.clone(), json!({"seq": 1, "call_id": "a"})]), 2, "an event without a type"),
            (
                lines(&[start.clone(), ev(1, "tool_output", json!({"content": "x"}))]),
                2,
                "this tool_output event does not match the trajectory format: missing field `call_id`",
            ),
            (
                lines(&[start, ev(1, "session_end", json!({"status": "done"}))]),
                2,
                "this session_end event does not match the trajectory format: unknown variant `done`",
            ),
            (lines(&[ev(0, "plan_update", json!({}))]), 1, "plan_update before session_start"),
        ];
        for (text, line, message) in cases {
            let violation = check(text.as_bytes()).unwrap_err();
            assert_eq!(violation.line, line, "{message}");
            assert!(violation.message.starts_with(message), "{} vs {message}", violation.message);
        }
    }

    #[test]
    fn events_of_a_newer_version_break_no_rule_and_are_reported() {
        let text = lines(&[
            ev(0, "session_start", json!({})),
            ev(1, "plan_update", json!({"plan": ["a"]})),
            ev(2, "tool_call", json!({"call_id": "a"})),
            ev(3, "subagent_spawn", json!({})),
            ev(4, "plan_update", json!({"plan": []})),
            ev(5, "tool_output", json!({"call_id": "a"})),
            ev(6, "session_end", json!({"status": "success"})),
        ]);
        let summary = check(text.as_bytes()).unwrap();
        let expected = CheckSummary {
            events: 7,
            tool_calls: 1,
            ended: true,
            unknown: vec!["plan_update".into(), "subagent_spawn".into()],
        };
        assert_eq!(summary, expected);
    }
}
