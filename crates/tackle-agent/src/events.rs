//! What a run reports while it happens, for a front end to show (streamed text, spinners,
//! retries, the final line). The trajectory is written separately; observers only display.

use serde_json::Value;
use tackle_core::{ExecEvent, TodoItem, ToolSpec};
use tackle_llm::ErrorClass;

/// One thing that happened in a run.
#[derive(Debug, Clone, PartialEq)]
// Each variant's doc says what its fields carry; they are named for what they hold (`step`,
// `call_id`, `agent_id`, ...), as the trajectory's keys are (docs/agent.md#trajectory-format).
#[allow(missing_docs)]
pub enum AgentEvent {
    /// A model request starts.
    Step { step: u32 },
    /// Visible model text, as it streams.
    Text(String),
    /// Model reasoning, as it streams (shown, never sent back).
    Thinking(String),
    /// The stream broke after it had started; what was shown of this reply is void.
    StreamRestart,
    /// A request failed and is tried again.
    Retry { attempt: u32, error_class: ErrorClass, status: Option<u16>, delay_ms: u64, message: String },
    /// The model's reply is complete.
    Replied { step: u32, text: String, calls: usize },
    /// A call is about to go through the executor.
    CallQueued { call_id: String, name: String, summary: String },
    /// The executor's events (started, progress such as a shell's last line, finished).
    Exec(ExecEvent),
    /// A call's output, in call order once the reply's calls are all answered.
    CallAnswered { call_id: String, name: String, is_error: bool, first_line: String, duration_ms: Option<u64> },
    /// What a successful file edit changed, as a unified diff (after its `CallAnswered`).
    Edited { call_id: String, diff: String },
    /// A notice for the person (never for the model).
    Notice(String),
    /// The session's todo list after a call changed it (`todo_write`).
    Todos(Vec<TodoItem>),
    /// A subagent started (`label`: its type and description).
    SubagentStarted { agent_id: String, label: String, depth: u32, background: bool },
    /// One event of a subagent's run, shown nested under the call that started it.
    Subagent { agent_id: String, label: String, depth: u32, event: Box<AgentEvent> },
    /// A subagent ended; `footer` is its result's last line (`[subagent …]`) or its error.
    SubagentFinished { agent_id: String, label: String, depth: u32, is_error: bool, footer: String },
}

/// Receives a run's events.
pub trait Observer: Send + Sync {
    /// Shows `event`; called on the run's task, so it must not block.
    fn on_event(&self, event: &AgentEvent);
}

/// An observer that shows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Observer for Silent {
    fn on_event(&self, _event: &AgentEvent) {}
}

/// A one-line summary of a call for a spinner or a log line: the command of a tool that runs
/// one, the path of a file call (after its `command` or `operation`, as in `view src/a.rs`),
/// the pattern of a search, else the first string argument. `spec` is the tool's, when the
/// name resolved.
pub fn call_summary(spec: Option<&ToolSpec>, args: &Value) -> String {
    let get = |key: &str| args.get(key).and_then(Value::as_str);
    let path = || {
        let path = spec?.path_params.iter().find_map(|param| get(&param.name))?;
        let verb = get("command").or_else(|| get("operation")).unwrap_or_default();
        Some(format!("{verb} {path}").trim().to_owned())
    };
    let summary = spec
        .and_then(|spec| spec.command(args))
        .map(str::to_owned)
        .or_else(path)
        .or_else(|| ["file_path", "path", "pattern", "query", "job_id"].iter().find_map(|k| get(k)).map(str::to_owned))
        .or_else(|| args.as_object().and_then(|m| m.values().find_map(Value::as_str)).map(str::to_owned))
        .unwrap_or_default();
    let line = summary.lines().next().unwrap_or_default();
    let mut short: String = line.chars().take(80).collect();
    if short.len() < line.len() || summary.lines().nth(1).is_some() {
        short.push('…');
    }
    short
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tackle_core::spec::PathAccess;

    #[test]
    fn summaries_pick_the_telling_argument() {
        let shell = ToolSpec::new("bash", "").command_param("command");
        let editor = ToolSpec::new("str_replace_based_edit_tool", "").path_param("path", PathAccess::Write);
        let reader = ToolSpec::new("read_file", "").path_param("file_path", PathAccess::Read);
        assert_eq!(call_summary(Some(&shell), &json!({"command": "cargo test\necho done"})), "cargo test…");
        assert_eq!(call_summary(Some(&reader), &json!({"file_path": "src/a.rs", "limit": 3})), "src/a.rs");
        assert_eq!(call_summary(Some(&editor), &json!({"command": "view", "path": "a"})), "view a");
        // A tool that runs no shell command: its `command` argument is not the summary.
        assert_eq!(call_summary(Some(&editor), &json!({"command": "undo_edit"})), "undo_edit");
        assert_eq!(call_summary(None, &json!({"thought": "x".repeat(100)})).chars().count(), 81);
        assert_eq!(call_summary(None, &json!({})), "");
    }
}
