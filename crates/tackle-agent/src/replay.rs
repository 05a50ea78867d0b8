//! Reading a trajectory back (`tackle replay`): a readable transcript, and a re-run of the
//! recorded tool calls that reports each call whose result differs from the recorded one.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use tackle_core::{Executor, ToolCall, ToolSession};
use tokio_util::sync::CancellationToken;

use crate::trajectory::event::{Line, PermissionDecision, TrajectoryEvent};
pub use crate::trajectory::read::{ReadError, read_events};

/// A trajectory that cannot be read back or replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The file cannot be read, or a line is no event of the format.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The recorded set-up cannot be made again (a re-run's workspace).
    #[error("{0}")]
    Setup(String),
}

fn indent(text: &str, prefix: &str, max_lines: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<String> = lines.iter().take(max_lines).map(|l| format!("{prefix}{l}")).collect();
    if lines.len() > max_lines {
        out.push(format!("{prefix}[... {} more lines]", lines.len() - max_lines));
    }
    out.join("\n")
}

/// The run as a readable transcript. An event of a type this version does not know gets a
/// one-line note in its place.
pub fn transcript(events: &[Line]) -> String {
    let mut out = String::new();
    for line in events {
        let shown = match &line.event {
            TrajectoryEvent::SessionStart {
                task,
                provider,
                model,
                base_url,
                call_format,
                permission_mode,
                workspace,
                ..
            } => format!(
                "Task: {task}\nModel: {provider}/{model} ({base_url}), call format {call_format}, permission mode {permission_mode}, workspace {workspace}\n"
            ),
            TrajectoryEvent::LlmResponse { step, text, thinking, .. } => {
                let mut s = format!("\n[step {step}] model:");
                if let Some(thinking) = thinking {
                    s.push_str(&format!("\n  (thinking) {}", indent(thinking, "  ", 5).trim_start()));
                }
                if !text.is_empty() {
                    s.push('\n');
                    s.push_str(&indent(text, "  ", 40));
                }
                s.push('\n');
                s
            }
            TrajectoryEvent::LlmRetry { attempt, error_class, delay_ms, .. } => {
                format!("  (retry {attempt} after {error_class}: waited {delay_ms} ms)\n")
            }
            TrajectoryEvent::ToolCall { call_id, name, args, .. } => format!("  -> {name} [{call_id}] {args}\n"),
            TrajectoryEvent::ToolOutput { call_id, is_error, content, images, .. } => {
                let marker = if *is_error { "<- error" } else { "<-" };
                let images: String = images
                    .iter()
                    .map(|image| {
                        format!(
                            "     [image {}, sha256 {}]\n",
                            image.mime_type,
                            image.sha256.get(..12).unwrap_or(&image.sha256)
                        )
                    })
                    .collect();
                format!("  {marker} [{call_id}]\n{}\n{images}", indent(content, "     ", 12))
            }
            TrajectoryEvent::Permission { call_id, decision, source } if *decision != PermissionDecision::Allow => {
                format!("  (permission {} by {} for {call_id})\n", decision.name(), source.name())
            }
            TrajectoryEvent::Notification { text } => format!("  (notification) {text}\n"),
            TrajectoryEvent::Todos { todos, .. } => {
                let lines: Vec<String> = todos.iter().map(|item| format!("     {}", item.line())).collect();
                if lines.is_empty() {
                    "  (todos) cleared\n".to_owned()
                } else {
                    format!("  (todos)\n{}\n", lines.join("\n"))
                }
            }
            TrajectoryEvent::Task { task } => format!("\nTask: {task}\n"),
            TrajectoryEvent::Error { kind, message } => format!("\nError ({kind}): {message}\n"),
            TrajectoryEvent::SessionEnd { status, steps, final_result, usage_total, duration_ms } => format!(
                "\nEnd: {} after {steps} step{}, {} tokens, {:.1} s\n{final_result}\n",
                status.name(),
                if *steps == 1 { "" } else { "s" },
                usage_total.input_tokens + usage_total.output_tokens,
                *duration_ms as f64 / 1000.0,
            ),
            TrajectoryEvent::Unknown => {
                format!("  (skipped a {} event: this version of Tackle does not know it)\n", line.kind)
            }
            TrajectoryEvent::LlmRequest { .. }
            | TrajectoryEvent::Permission { .. }
            | TrajectoryEvent::Conversation { .. } => String::new(),
        };
        out.push_str(&shown);
    }
    out
}

/// One call whose re-run result differs from the recorded one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// The call's id in the trajectory.
    pub call_id: String,
    /// The tool called.
    pub name: String,
    /// The recorded output.
    pub recorded: String,
    /// The recorded output was an error.
    pub recorded_error: bool,
    /// The output of the re-run.
    pub now: String,
    /// The re-run's output is an error.
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
    /// The calls whose output differs, in trajectory order.
    pub differences: Vec<Difference>,
}

/// A recorded call and its recorded output.
struct Recorded {
    step: u32,
    call: ToolCall,
    name: String,
    output: Option<(String, bool)>,
}

/// Outputs the loop produced without running the tool.
fn answered_by_loop(content: &str) -> bool {
    ["Not executed:", "Too many tool calls in one reply", "task_done refused:"].iter().any(|p| content.starts_with(p))
}

/// The tools and workspace of a recorded session (from its `session_start`).
pub fn recorded_setup(events: &[Line]) -> Result<(Vec<String>, PathBuf), ReplayError> {
    events
        .iter()
        .find_map(|line| match &line.event {
            TrajectoryEvent::SessionStart { tools, workspace, .. } => Some((tools.clone(), PathBuf::from(workspace))),
            _ => None,
        })
        .ok_or_else(|| ReplayError::Setup("the trajectory has no session_start".into()))
}

/// Re-runs the recorded calls in order, one recorded step at a time, in `session` (whose
/// workspace is the scratch copy or the directory the person chose).
pub async fn rerun(events: &[Line], session: &ToolSession, executor: &Executor) -> RerunReport {
    let denied: HashSet<&str> = events
        .iter()
        .filter_map(|line| match &line.event {
            TrajectoryEvent::Permission { call_id, decision: PermissionDecision::Deny, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    let mut recorded: Vec<Recorded> = Vec::new();
    for line in events {
        match &line.event {
            TrajectoryEvent::ToolCall { step, call_id, name, args, .. } => recorded.push(Recorded {
                step: *step,
                call: ToolCall::new(call_id.clone(), name.clone(), args.clone()),
                name: name.clone(),
                output: None,
            }),
            TrajectoryEvent::ToolOutput { call_id, is_error, content, .. } => {
                if let Some(entry) = recorded.iter_mut().find(|r| r.call.id == *call_id) {
                    entry.output = Some((content.clone(), *is_error));
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
