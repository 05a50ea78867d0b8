//! Reading a trajectory back (`tackle replay`): a readable transcript, and a re-run of the
//! recorded tool calls that reports each call whose result differs from the recorded one.

use std::collections::HashSet;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde_json::Value;
use tackle_core::{Executor, Session, ToolCall};
use tokio_util::sync::CancellationToken;

/// A trajectory that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path} line {line} is not valid JSON: {message}")]
    Json { path: PathBuf, line: usize, message: String },
    #[error("{0}")]
    Setup(String),
}

/// Reads every event of a trajectory file.
pub fn read_events(path: &Path) -> Result<Vec<Value>, ReplayError> {
    let file = std::fs::File::open(path).map_err(|source| ReplayError::Read { path: path.to_owned(), source })?;
    let mut events = Vec::new();
    for (index, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line.map_err(|source| ReplayError::Read { path: path.to_owned(), source })?;
        if line.trim().is_empty() {
            continue;
        }
        let event = serde_json::from_str(&line).map_err(|e| ReplayError::Json {
            path: path.to_owned(),
            line: index + 1,
            message: e.to_string(),
        })?;
        events.push(event);
    }
    Ok(events)
}

fn text<'a>(event: &'a Value, key: &str) -> &'a str {
    event.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn indent(text: &str, prefix: &str, max_lines: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = lines.iter().take(max_lines).map(|l| format!("{prefix}{l}")).collect();
    if lines.len() > max_lines {
        out.push(format!("{prefix}[... {} more lines]", lines.len() - max_lines));
    }
    out.join("\n")
}

/// The run as a readable transcript.
pub fn transcript(events: &[Value]) -> String {
    let mut out = String::new();
    for event in events {
        let line = match text(event, "type") {
            "session_start" => format!(
                "Task: {}\nModel: {}/{} ({}), call format {}, permission mode {}, workspace {}\n",
                text(event, "task"),
                text(event, "provider"),
                text(event, "model"),
                text(event, "base_url"),
                text(event, "call_format"),
                text(event, "permission_mode"),
                text(event, "workspace"),
            ),
            "llm_response" => {
                let mut s = format!("\n[step {}] model:", event["step"]);
                if let Some(thinking) = event.get("thinking").and_then(Value::as_str) {
                    s.push_str(&format!("\n  (thinking) {}", indent(thinking, "  ", 5).trim_start()));
                }
                let body = text(event, "text");
                if !body.is_empty() {
                    s.push('\n');
                    s.push_str(&indent(body, "  ", 40));
                }
                s.push('\n');
                s
            }
            "llm_retry" => format!(
                "  (retry {} after {}: waited {} ms)\n",
                event["attempt"],
                text(event, "error_class"),
                event["delay_ms"]
            ),
            "tool_call" => format!("  -> {} [{}] {}\n", text(event, "name"), text(event, "call_id"), event["args"]),
            "tool_output" => {
                let marker = if event["is_error"] == Value::Bool(true) { "<- error" } else { "<-" };
                format!("  {marker} [{}]\n{}\n", text(event, "call_id"), indent(text(event, "content"), "     ", 12))
            }
            "permission" if text(event, "decision") != "allow" => {
                format!(
                    "  (permission {} by {} for {})\n",
                    text(event, "decision"),
                    text(event, "source"),
                    text(event, "call_id")
                )
            }
            "notification" => format!("  (notification) {}\n", text(event, "text")),
            "error" => format!("\nError ({}): {}\n", text(event, "kind"), text(event, "message")),
            "session_end" => format!(
                "\nEnd: {} after {} steps, {} tokens, {:.1} s\n{}\n",
                text(event, "status"),
                event["steps"],
                event["usage_total"]["input_tokens"].as_u64().unwrap_or(0)
                    + event["usage_total"]["output_tokens"].as_u64().unwrap_or(0),
                event["duration_ms"].as_f64().unwrap_or(0.0) / 1000.0,
                text(event, "final_result")
            ),
            _ => String::new(),
        };
        out.push_str(&line);
    }
    out
}

/// One call whose re-run result differs from the recorded one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    pub call_id: String,
    pub name: String,
    pub recorded: String,
    pub recorded_error: bool,
    pub now: String,
    pub now_error: bool,
}

/// What a re-run found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RerunReport {
    /// Calls run again.
    pub rerun: usize,
    /// Calls not run again: the loop answered them itself (denied, capped, refused
    /// task_done, stopped) or they never got an output.
    pub skipped: Vec<String>,
    pub differences: Vec<Difference>,
}

/// A recorded call and its recorded output.
struct Recorded {
    step: u64,
    call: ToolCall,
    name: String,
    output: Option<(String, bool)>,
}

/// Outputs the loop produced without running the tool.
fn answered_by_loop(content: &str) -> bool {
    ["Not executed:", "Too many tool calls in one reply", "task_done refused:"].iter().any(|p| content.starts_with(p))
}

/// The tools and workspace of a recorded session (from its `session_start`).
pub fn recorded_setup(events: &[Value]) -> Result<(Vec<String>, PathBuf), ReplayError> {
    let start = events
        .iter()
        .find(|e| text(e, "type") == "session_start")
        .ok_or_else(|| ReplayError::Setup("the trajectory has no session_start".into()))?;
    let tools = start
        .get("tools")
        .and_then(Value::as_array)
        .map(|t| t.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    Ok((tools, PathBuf::from(text(start, "workspace"))))
}

/// Re-runs the recorded calls in order, one recorded step at a time, in `session` (whose
/// workspace is the scratch copy or the directory the person chose).
pub async fn rerun(events: &[Value], session: &Session, executor: &Executor) -> RerunReport {
    let denied: HashSet<&str> = events
        .iter()
        .filter(|e| text(e, "type") == "permission" && text(e, "decision") == "deny")
        .map(|e| text(e, "call_id"))
        .collect();
    let mut recorded: Vec<Recorded> = Vec::new();
    for event in events {
        match text(event, "type") {
            "tool_call" => recorded.push(Recorded {
                step: event["step"].as_u64().unwrap_or(0),
                call: ToolCall::new(text(event, "call_id"), text(event, "name"), event["args"].clone()),
                name: text(event, "name").to_owned(),
                output: None,
            }),
            "tool_output" => {
                if let Some(entry) = recorded.iter_mut().find(|r| r.call.id == text(event, "call_id")) {
                    entry.output = Some((text(event, "content").to_owned(), event["is_error"] == Value::Bool(true)));
                }
            }
            _ => {}
        }
    }
    let mut report = RerunReport::default();
    let cancel = CancellationToken::new();
    let mut index = 0;
    while index < recorded.len() {
        let step = recorded[index].step;
        let end = recorded[index..].iter().position(|r| r.step != step).map_or(recorded.len(), |n| index + n);
        let group: Vec<&Recorded> = recorded[index..end]
            .iter()
            .filter(|r| {
                let skip = denied.contains(r.call.id.as_str())
                    || r.output.as_ref().is_none_or(|(content, _)| answered_by_loop(content));
                if skip {
                    report.skipped.push(r.call.id.clone());
                }
                !skip
            })
            .collect();
        let outputs = executor.run_turn(session, group.iter().map(|r| r.call.clone()).collect(), &cancel).await;
        for (entry, output) in group.iter().zip(outputs) {
            report.rerun += 1;
            let (recorded, recorded_error) = entry.output.clone().unwrap_or_default();
            let now = output.text_content();
            if now != recorded || output.is_error != recorded_error {
                report.differences.push(Difference {
                    call_id: entry.call.id.clone(),
                    name: entry.name.clone(),
                    recorded,
                    recorded_error,
                    now,
                    now_error: output.is_error,
                });
            }
        }
        index = end;
    }
    report
}

/// Copies a workspace for a re-run (everything but `.tackle/`), keeping symlinks as links.
pub fn copy_workspace(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == ".tackle" {
            continue;
        }
        let target = to.join(&name);
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            let link = std::fs::read_link(entry.path())?;
            #[cfg(unix)]
            std::os::unix::fs::symlink(link, &target)?;
        } else if kind.is_dir() {
            copy_workspace(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}
