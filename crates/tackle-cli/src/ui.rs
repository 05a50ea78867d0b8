//! What `tackle run` shows while it works. On a terminal: the model's text streamed as it
//! arrives, a spinner per running tool with its one-line summary and the live tail of its
//! output, and one line per answered call; the todo list (`todo_write`) stays below the
//! spinners, headed by the in-progress item's `activeForm`; each edit's diff below its line
//! (coloured unless `NO_COLOR`). Otherwise plain lines (the reply
//! when complete, one line per call, the todo list when it changes). With `--json`, nothing
//! but retries and notices on stderr.

use std::collections::HashMap;
use std::io::Write as _;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use tackle::agent::{AgentEvent, Observer, RunOutcome, RunStatus};
use tackle::agent::{ExecEvent, TodoItem, TodoStatus};

/// How output is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// stdout is a terminal.
    Rich,
    /// stdout is a file or pipe.
    Plain,
    /// `--json`.
    Json,
}

/// The observer of a `tackle run`.
pub struct RunUi {
    mode: Mode,
    multi: MultiProgress,
    spinners: Mutex<HashMap<String, ProgressBar>>,
    summaries: Mutex<HashMap<String, String>>,
    /// Plain mode: the reply so far. Rich mode: whether the current line has text.
    reply: Mutex<String>,
    /// Reasoning is being shown (the reply's text starts on a new line).
    thinking: AtomicBool,
    /// Rich mode: the todo list, below the spinners, while it has items.
    todos: Mutex<Option<ProgressBar>>,
    /// Rich mode: streamed text held back until its line ends, while the todo list or a
    /// spinner is drawn (indicatif draws its bars from the cursor's line on, so a bar drawn
    /// after half a line of text would be spliced into it).
    held: Mutex<String>,
    /// Colour the diffs of edits (rich mode, `NO_COLOR` unset).
    color: bool,
}

impl RunUi {
    pub fn new(mode: Mode) -> Self {
        let target = if mode == Mode::Rich { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() };
        RunUi {
            mode,
            multi: MultiProgress::with_draw_target(target),
            spinners: Mutex::new(HashMap::new()),
            summaries: Mutex::new(HashMap::new()),
            reply: Mutex::new(String::new()),
            thinking: AtomicBool::new(false),
            todos: Mutex::new(None),
            held: Mutex::new(String::new()),
            color: crate::tty::color(mode == Mode::Rich),
        }
    }

    /// Hides the spinners and the todo list while the person is asked something that takes
    /// several lines (an MCP server's form), and draws them again after.
    pub fn hold_bars(&self, hold: bool) {
        if self.mode != Mode::Rich {
            return;
        }
        if hold {
            let _ = self.multi.clear();
            self.multi.set_draw_target(ProgressDrawTarget::hidden());
        } else {
            self.multi.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    /// Whether the todo list or a spinner is drawn.
    fn bars_drawn(&self) -> bool {
        self.todos.lock().is_ok_and(|todos| todos.is_some())
            || self.spinners.lock().is_ok_and(|spinners| !spinners.is_empty())
    }

    /// Shows streamed text: at once when no bar is drawn, else whole lines only (the rest
    /// waits for its line's end or for [`RunUi::release_held`]).
    fn stream(&self, text: &str) {
        let Ok(mut held) = self.held.lock() else {
            return self.out(text);
        };
        held.push_str(text);
        let shown: String = if self.bars_drawn() {
            match held.rfind('\n') {
                Some(end) => held.drain(..=end).collect(),
                None => return,
            }
        } else {
            std::mem::take(&mut *held)
        };
        self.out(&shown);
    }

    /// Shows the streamed text held back so far.
    fn release_held(&self) {
        let Ok(mut held) = self.held.lock() else { return };
        if !held.is_empty() {
            let rest = std::mem::take(&mut *held);
            self.out(&rest);
        }
    }

    fn out(&self, text: &str) {
        self.multi.suspend(|| {
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(text.as_bytes());
            let _ = stdout.flush();
        });
    }

    fn err(&self, text: &str) {
        self.multi.suspend(|| diagln!("{text}"));
    }

    fn spinner(&self, call_id: &str, tool: &str) {
        let summary = self.summaries.lock().map(|s| s.get(call_id).cloned().unwrap_or_default()).unwrap_or_default();
        // Spinners go above the todo list, which stays at the bottom.
        let bar = match self.todos.lock().ok().and_then(|todos| todos.clone()) {
            Some(todos) => self.multi.insert_before(&todos, ProgressBar::new_spinner()),
            None => self.multi.add(ProgressBar::new_spinner()),
        };
        let style = ProgressStyle::with_template("{spinner} {prefix} {wide_msg:.dim}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        bar.set_style(style);
        bar.set_prefix(format!("{tool} {summary}").trim().to_owned());
        bar.enable_steady_tick(Duration::from_millis(100));
        if let Ok(mut spinners) = self.spinners.lock() {
            spinners.insert(call_id.to_owned(), bar);
        }
    }

    fn end_spinner(&self, call_id: &str) {
        if let Some(bar) = self.spinners.lock().ok().and_then(|mut s| s.remove(call_id)) {
            bar.finish_and_clear();
            self.multi.remove(&bar);
        }
    }

    /// Shows the todo list: in rich mode a bar below the spinners (its head the in-progress
    /// item's `activeForm`), removed when the list is cleared; in plain mode the list's lines.
    fn show_todos(&self, todos: &[TodoItem]) {
        if self.mode == Mode::Plain {
            let lines: Vec<String> = todos.iter().map(|item| format!("  {}", item.line())).collect();
            let shown = if lines.is_empty() { "(cleared)".to_owned() } else { format!("\n{}", lines.join("\n")) };
            self.out(&format!("[todos] {shown}\n"));
            return;
        }
        let Ok(mut slot) = self.todos.lock() else {
            return;
        };
        if todos.is_empty() {
            if let Some(bar) = slot.take() {
                bar.finish_and_clear();
                self.multi.remove(&bar);
            }
            return;
        }
        let bar = slot.get_or_insert_with(|| {
            let bar = self.multi.add(ProgressBar::new_spinner());
            let style = ProgressStyle::with_template("{spinner} {prefix:.bold}\n{msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            bar.set_style(style);
            bar.enable_steady_tick(Duration::from_millis(100));
            bar
        });
        let active = todos.iter().find(|item| item.status == TodoStatus::InProgress);
        let done = todos.iter().filter(|item| item.status == TodoStatus::Completed).count();
        bar.set_prefix(match active {
            Some(item) => format!("{}… ({done}/{} done)", item.label(), todos.len()),
            None => format!("Todos ({done}/{} done)", todos.len()),
        });
        let lines: Vec<String> = todos.iter().map(|item| format!("  {}", item.line())).collect();
        bar.set_message(lines.join("\n"));
    }

    /// The final line (stderr), or the JSON object (stdout); in JSON mode a run that did not
    /// succeed also says why on stderr, with the error class.
    pub fn finish(&self, outcome: &RunOutcome, end: &RunEnd) {
        // A reply cut off mid-line (Ctrl-C) ends its line before the summary.
        self.release_held();
        let open = self.reply.lock().map(|mut r| std::mem::take(&mut *r)).unwrap_or_default();
        if self.mode == Mode::Rich && !open.is_empty() && !open.ends_with('\n') {
            self.out("\n");
        }
        if let Some(bar) = self.todos.lock().ok().and_then(|mut todos| todos.take()) {
            bar.finish_and_clear();
            self.multi.remove(&bar);
        }
        let tokens = outcome.usage.total();
        let trajectory = outcome.trajectory.as_ref().map(|p| p.display().to_string());
        if self.mode == Mode::Json {
            let success = outcome.status == RunStatus::Success;
            // An incomplete run has the model's answer, and the denials as its error.
            let answered = success || outcome.status == RunStatus::Incomplete;
            let mut object = serde_json::json!({
                "status": outcome.status.name(), "steps": outcome.steps, "tokens": tokens,
                "duration_ms": outcome.duration_ms, "trajectory": trajectory, "denied": outcome.denied,
                "answer": if answered { Some(&outcome.final_result) } else { None },
            });
            if let Some(cost) = outcome.usage.cost {
                object["cost_usd"] = serde_json::json!(cost);
            }
            object["usage"] = usage_object(&outcome.usage);
            object["exit_code"] = serde_json::json!(end.exit_code);
            if let Some(diff) = &end.diff {
                object["diff"] = serde_json::json!(diff);
            }
            if let Some(output) = &outcome.output {
                object["output"] = output.clone();
            }
            if outcome.denied > 0 {
                object["denied_calls"] = serde_json::json!(outcome.denied_calls);
            }
            if outcome.status == RunStatus::Incomplete {
                object["error"] = serde_json::json!({"kind": "incomplete", "message": denied_summary(outcome)});
            } else if !success {
                let kind = outcome.error_kind.map_or(outcome.status.name(), |kind| kind.name());
                object["error"] = serde_json::json!({"kind": kind, "message": outcome.final_result});
            }
            self.out(&format!("{object}\n"));
            if outcome.status == RunStatus::Incomplete {
                diagln!("✗ incomplete · {}", denied_summary(outcome));
            } else if !success {
                let class = outcome.error_kind.as_ref().map(|kind| format!(" ({kind})")).unwrap_or_default();
                diagln!("✗ {}{class}: {}", outcome.status.name(), outcome.final_result);
            }
            return;
        }
        let answered = matches!(outcome.status, RunStatus::Success | RunStatus::Incomplete);
        if self.mode == Mode::Plain && !answered {
            self.out(&format!("{}\n", outcome.final_result));
        }
        let mark = if outcome.status == RunStatus::Success { "✓" } else { "✗" };
        let cost = outcome.usage.cost.map(|cost| format!(" · ${cost:.4}")).unwrap_or_default();
        let mut line = format!(
            "{mark} {} · {} step{} · {} tokens{cost} · {:.1} s",
            outcome.status.name(),
            outcome.steps,
            if outcome.steps == 1 { "" } else { "s" },
            thousands(tokens),
            outcome.duration_ms as f64 / 1000.0
        );
        if outcome.denied > 0 {
            line.push_str(&format!(" · {}", denied_count(outcome.denied)));
        }
        if let Some(path) = trajectory {
            line.push_str(&format!(" · {path}"));
        }
        // What stopped the run ("Interrupted by the user.") comes before the summary, which ends the output.
        if !answered && self.mode == Mode::Rich {
            line = format!("{}\n{line}", outcome.final_result);
        }
        // What was denied ends the output, where a person (or a CI log) looks last.
        if outcome.status == RunStatus::Incomplete {
            line.push_str(&format!("\n✗ incomplete · {}", denied_summary(outcome)));
        }
        self.err(&line);
    }
}

/// `1 call denied` / `2 calls denied`.
fn denied_count(denied: u32) -> String {
    format!("{denied} call{} denied", if denied == 1 { "" } else { "s" })
}

/// `1 call denied: Bash(python3 -m pytest -q)`: the count and the calls, for an incomplete run.
fn denied_summary(outcome: &RunOutcome) -> String {
    format!("{}: {}", denied_count(outcome.denied), outcome.denied_calls.join(", "))
}

/// Two spaces per level of nesting.
fn indent(depth: u32) -> String {
    "  ".repeat(depth as usize)
}

impl RunUi {
    /// A subagent's event, indented under the call that started it: its calls as they are
    /// answered (the text it streams is summed up by its final line instead).
    fn nested(&self, agent_id: &str, label: &str, depth: u32, event: &AgentEvent) {
        let key = |call_id: &str| format!("{agent_id}/{call_id}");
        match event {
            AgentEvent::CallQueued { call_id, summary, .. } => {
                if let Ok(mut summaries) = self.summaries.lock() {
                    summaries.insert(key(call_id), summary.clone());
                }
            }
            AgentEvent::CallAnswered { call_id, name, is_error, first_line, .. } => {
                let summary = self.summaries.lock().ok().and_then(|mut s| s.remove(&key(call_id))).unwrap_or_default();
                let call = if summary.is_empty() { name.clone() } else { format!("{name} {summary}") };
                let mark = if *is_error { format!("✗ {call}: {first_line}") } else { format!("✓ {call}") };
                self.out(&format!("{}[{label}] {mark}\n", indent(depth)));
            }
            AgentEvent::Retry { .. } | AgentEvent::Notice(_) => self.on_event(event),
            _ => {}
        }
    }
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl Observer for RunUi {
    fn on_event(&self, event: &AgentEvent) {
        match (self.mode, event) {
            (_, AgentEvent::Retry { attempt, error_class, status, delay_ms, message }) => {
                let status = status.map(|s| format!(" HTTP {s}")).unwrap_or_default();
                self.err(&format!(
                    "(attempt {attempt} failed: {error_class}{status}: {message}; retrying in {:.1} s)",
                    *delay_ms as f64 / 1000.0
                ));
            }
            (_, AgentEvent::Notice(text)) => self.err(text),
            (Mode::Json, _) => {}
            (Mode::Rich, AgentEvent::Text(text)) => {
                if self.thinking.swap(false, Ordering::SeqCst) {
                    self.multi.suspend(|| diagln!());
                }
                if let Ok(mut open) = self.reply.lock() {
                    open.push_str(text);
                }
                self.stream(text);
            }
            (Mode::Plain, AgentEvent::Text(text)) => {
                if let Ok(mut reply) = self.reply.lock() {
                    reply.push_str(text);
                }
            }
            (Mode::Rich, AgentEvent::Thinking(text)) => {
                self.thinking.store(true, Ordering::SeqCst);
                self.multi.suspend(|| diag!("\x1b[2m{text}\x1b[0m"));
            }
            (_, AgentEvent::StreamRestart) => {
                self.release_held();
                if let Ok(mut reply) = self.reply.lock() {
                    reply.clear();
                }
                if self.mode == Mode::Rich {
                    self.out("\n[the stream broke; the reply starts again]\n");
                }
            }
            (_, AgentEvent::Replied { .. }) => {
                self.release_held();
                let text = self.reply.lock().map(|mut r| std::mem::take(&mut *r)).unwrap_or_default();
                match self.mode {
                    Mode::Rich if !text.is_empty() && !text.ends_with('\n') => self.out("\n"),
                    Mode::Plain if !text.trim().is_empty() => self.out(&format!("{}\n", text.trim_end())),
                    _ => {}
                }
            }
            (_, AgentEvent::CallQueued { call_id, summary, .. }) => {
                if let Ok(mut summaries) = self.summaries.lock() {
                    summaries.insert(call_id.clone(), summary.clone());
                }
            }
            (Mode::Rich | Mode::Plain, AgentEvent::Todos(todos)) => self.show_todos(todos),
            (Mode::Rich, AgentEvent::Exec(ExecEvent::Started { call_id, tool })) => self.spinner(call_id, tool),
            (Mode::Rich, AgentEvent::Exec(ExecEvent::Progress { call_id, progress, .. })) => {
                if let (Some(message), Ok(spinners)) = (&progress.message, self.spinners.lock())
                    && let Some(bar) = spinners.get(call_id)
                {
                    bar.set_message(message.lines().last().unwrap_or_default().to_owned());
                }
            }
            (Mode::Rich, AgentEvent::Exec(ExecEvent::Finished { call_id, .. })) => self.end_spinner(call_id),
            (_, AgentEvent::SubagentStarted { agent_id, label, depth, background }) => {
                let how = if *background { " in the background" } else { "" };
                self.out(&format!("{}▸ subagent {agent_id} [{label}] started{how}\n", indent(depth.saturating_sub(1))));
            }
            (_, AgentEvent::SubagentFinished { agent_id, label, depth, is_error, footer }) => {
                let mark = if *is_error { "✗" } else { "✓" };
                self.out(&format!(
                    "{}{mark} subagent {agent_id} [{label}] {footer}\n",
                    indent(depth.saturating_sub(1))
                ));
            }
            (_, AgentEvent::Subagent { agent_id, label, depth, event }) => self.nested(agent_id, label, *depth, event),
            (Mode::Rich | Mode::Plain, AgentEvent::Edited { diff, .. }) => {
                self.out(&tackle::agent::render_diff(diff, tackle::agent::DIFF_SCREENFUL, self.color, "  "));
            }
            (_, AgentEvent::CallAnswered { call_id, name, is_error, first_line, duration_ms }) => {
                self.end_spinner(call_id);
                let summary = self.summaries.lock().ok().and_then(|mut s| s.remove(call_id)).unwrap_or_default();
                let seconds = duration_ms.map(|ms| format!(" ({:.1} s)", ms as f64 / 1000.0)).unwrap_or_default();
                let call = if summary.is_empty() { name.clone() } else { format!("{name} {summary}") };
                let line = match (self.mode, is_error) {
                    (Mode::Rich, false) => format!("\x1b[32m✓\x1b[0m {call}{seconds}"),
                    (Mode::Rich, true) => format!("\x1b[31m✗\x1b[0m {call}{seconds}: {first_line}"),
                    (_, false) => format!("[tool] {call} -> ok"),
                    (_, true) => format!("[tool] {call} -> error: {first_line}"),
                };
                self.out(&format!("{line}\n"));
            }
            _ => {}
        }
    }
}

/// What the command knows of a run's end besides its outcome.
#[derive(Debug, Clone, Default)]
pub struct RunEnd {
    /// The exit code the command ends with.
    pub exit_code: u8,
    /// The workspace's changes since the run started (`--json`), if measured.
    pub diff: Option<String>,
}

/// The `--json` result's `usage`: tokens, the cache's when the provider reports them, and the
/// cost when it is known (docs/reference/cli.md#the-json-result).
fn usage_object(usage: &tackle::llm::Usage) -> serde_json::Value {
    let mut object = serde_json::json!({"input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens});
    if let Some(read) = usage.cache_read {
        object["cache_read_tokens"] = serde_json::json!(read);
    }
    if let Some(write) = usage.cache_write {
        object["cache_write_tokens"] = serde_json::json!(write);
    }
    if let Some(cost) = usage.cost {
        object["cost_usd"] = serde_json::json!(cost);
    }
    object
}
