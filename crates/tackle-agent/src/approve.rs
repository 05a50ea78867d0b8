//! Permissions in a run: the terminal approver (allow once, allow for the session, deny;
//! docs/reference/safety.md#approvers) and the wrappers that record every decision in the trajectory.

use std::io::{BufRead as _, Write as _};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tackle_core::BoxFuture;
use tackle_core::permission::{Approval, Approver, Decision, PermissionPolicy, PermissionRequest};

use crate::trajectory::event::{DecisionSource, PermissionDecision};
use crate::trajectory::{Trajectory, TrajectoryEvent};

/// Asks the person one question and returns the line they typed (`None` at end of input).
pub trait Prompter: Send + Sync {
    fn ask(&self, question: String) -> BoxFuture<'_, Option<String>>;
}

/// Asks on stderr and reads the answer from stdin.
#[derive(Debug, Clone, Copy, Default)]
pub struct StdioPrompter;

impl Prompter for StdioPrompter {
    fn ask(&self, question: String) -> BoxFuture<'_, Option<String>> {
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let mut stderr = std::io::stderr().lock();
                let _ = write!(stderr, "{question}");
                let _ = stderr.flush();
                let mut line = String::new();
                match std::io::stdin().lock().read_line(&mut line) {
                    Ok(0) | Err(_) => None,
                    Ok(_) => Some(line.trim().to_owned()),
                }
            })
            .await
            .ok()
            .flatten()
        })
    }
}

/// A rule the person allowed for the rest of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionRule {
    /// Every call of this tool.
    Tool(String),
    /// Shell commands starting with these words (`Bash(git push:*)`).
    BashPrefix(String),
    /// File edits under this directory (`Edit(src/**)`).
    EditDir(String),
}

impl SessionRule {
    /// The rule that "always for this session" adds for a request.
    pub fn for_request(request: &PermissionRequest<'_>) -> SessionRule {
        let name = &request.spec.name;
        if request.spec.command_param.is_some() {
            let suggested = request.suggested_rule();
            return match suggested.strip_prefix("Bash(").and_then(|r| r.strip_suffix(":*)")) {
                Some(prefix) => SessionRule::BashPrefix(prefix.to_owned()),
                None => SessionRule::Tool(name.clone()),
            };
        }
        if request.is_file_edit()
            && let Some(path) = edit_path(request)
        {
            let dir =
                std::path::Path::new(&path).parent().map(|p| p.to_string_lossy().into_owned()).unwrap_or_default();
            return SessionRule::EditDir(dir);
        }
        SessionRule::Tool(name.clone())
    }

    /// Whether the rule covers a request.
    pub fn covers(&self, request: &PermissionRequest<'_>) -> bool {
        let name = &request.spec.name;
        match self {
            SessionRule::Tool(tool) => tool == name,
            SessionRule::BashPrefix(prefix) => request.spec.command(request.args).is_some_and(|command| {
                let words: Vec<&str> = command.split_whitespace().collect();
                let wanted: Vec<&str> = prefix.split_whitespace().collect();
                words.len() >= wanted.len() && words[..wanted.len()] == wanted[..]
            }),
            SessionRule::EditDir(dir) => {
                request.is_file_edit()
                    && edit_path(request).is_some_and(|path| {
                        let path = std::path::Path::new(&path);
                        dir.is_empty() && path.is_relative() && !path.starts_with("..")
                            || path.starts_with(dir) && !dir.is_empty()
                    })
            }
        }
    }

    /// The rule in Claude Code's syntax.
    pub fn display(&self) -> String {
        match self {
            SessionRule::Tool(tool) => tool.clone(),
            SessionRule::BashPrefix(prefix) => format!("Bash({prefix}:*)"),
            SessionRule::EditDir(dir) if dir.is_empty() => "Edit(**)".to_owned(),
            SessionRule::EditDir(dir) => format!("Edit({dir}/**)"),
        }
    }
}

fn edit_path(request: &PermissionRequest<'_>) -> Option<String> {
    request.spec.path_params.iter().find_map(|p| request.args.get(&p.name).and_then(Value::as_str)).map(str::to_owned)
}

/// Asks the person at a terminal. Questions come one at a time, in call order (the executor
/// admits calls sequentially).
pub struct TerminalApprover {
    prompter: Arc<dyn Prompter>,
    rules: Mutex<Vec<SessionRule>>,
}

impl std::fmt::Debug for TerminalApprover {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalApprover").finish_non_exhaustive()
    }
}

/// The longest part of an input shown before it is folded.
const FOLD_LINES: usize = 40;

impl TerminalApprover {
    /// An approver asking through `prompter`.
    pub fn new(prompter: Arc<dyn Prompter>) -> Self {
        TerminalApprover { prompter, rules: Mutex::new(Vec::new()) }
    }

    /// The rules allowed for this session so far.
    pub fn session_rules(&self) -> Vec<SessionRule> {
        self.rules.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    fn question(request: &PermissionRequest<'_>, reason: &str, rule: &SessionRule) -> String {
        let mut text = format!("\n{} wants to run ({reason}):\n", request.spec.name);
        if let Some(args) = request.args.as_object() {
            for (key, value) in args {
                let shown = match value {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                let lines: Vec<&str> = shown.lines().collect();
                if lines.len() <= 1 {
                    text.push_str(&format!("  {key}: {shown}\n"));
                } else if request.preview.is_some() {
                    // The diff below shows what this text does to the file.
                    continue;
                } else {
                    text.push_str(&format!("  {key}:\n"));
                    for line in lines.iter().take(FOLD_LINES) {
                        text.push_str(&format!("    {line}\n"));
                    }
                    if lines.len() > FOLD_LINES {
                        text.push_str(&format!("    [... {} more lines]\n", lines.len() - FOLD_LINES));
                    }
                }
            }
        }
        if let Some(preview) = request.preview {
            for line in preview.lines() {
                text.push_str(&format!("  {line}\n"));
            }
        }
        text.push_str(&format!(
            "Allow? [y] once  [a] always this session ({})  [n] deny  [f] deny and tell the model why: ",
            rule.display()
        ));
        text
    }
}

impl Approver for TerminalApprover {
    fn asks_a_person(&self) -> bool {
        true
    }

    fn approve<'a>(&'a self, request: &'a PermissionRequest<'a>, reason: &'a str) -> BoxFuture<'a, Approval> {
        Box::pin(async move {
            if self.rules.lock().unwrap_or_else(std::sync::PoisonError::into_inner).iter().any(|r| r.covers(request)) {
                return Approval::Allow;
            }
            let rule = SessionRule::for_request(request);
            let denied = format!("The user denied this {} call. Nothing was changed.", request.spec.name);
            let answer = self.prompter.ask(Self::question(request, reason, &rule)).await;
            match answer.as_deref().map(str::to_lowercase).as_deref() {
                Some("y" | "yes") => Approval::Allow,
                Some("a" | "always") => {
                    self.rules.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(rule);
                    Approval::Allow
                }
                Some("f") => {
                    let feedback = self.prompter.ask("Tell the model why: ".to_owned()).await.unwrap_or_default();
                    let message =
                        if feedback.is_empty() { denied } else { format!("{denied} The user says: {feedback}") };
                    Approval::Deny { message }
                }
                _ => Approval::Deny { message: denied },
            }
        })
    }
}

/// Records the policy's decisions (`permission` events with `source: mode`).
pub(crate) struct RecordingPolicy {
    pub inner: Arc<dyn PermissionPolicy>,
    pub trajectory: Option<Arc<Trajectory>>,
}

impl PermissionPolicy for RecordingPolicy {
    fn decide(&self, request: &PermissionRequest<'_>) -> Decision {
        let decision = self.inner.decide(request);
        if let Some(trajectory) = &self.trajectory {
            let recorded = match decision {
                Decision::Allow => PermissionDecision::Allow,
                Decision::Ask { .. } => PermissionDecision::Ask,
                Decision::Deny { .. } => PermissionDecision::Deny,
            };
            trajectory.record(TrajectoryEvent::Permission {
                call_id: request.call_id.to_owned(),
                decision: recorded,
                source: DecisionSource::Mode,
            });
        }
        decision
    }
}

/// Records the approver's answers (`source: user` at a terminal, `policy` otherwise).
pub(crate) struct RecordingApprover {
    pub inner: Arc<dyn Approver>,
    pub source: DecisionSource,
    pub trajectory: Option<Arc<Trajectory>>,
}

impl Approver for RecordingApprover {
    fn approve<'a>(&'a self, request: &'a PermissionRequest<'a>, reason: &'a str) -> BoxFuture<'a, Approval> {
        Box::pin(async move {
            let approval = self.inner.approve(request, reason).await;
            if let Some(trajectory) = &self.trajectory {
                let decision =
                    if approval == Approval::Allow { PermissionDecision::Allow } else { PermissionDecision::Deny };
                trajectory.record(TrajectoryEvent::Permission {
                    call_id: request.call_id.to_owned(),
                    decision,
                    source: self.source,
                });
            }
            approval
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tackle_core::ToolSpec;
    use tackle_core::spec::PathAccess;

    struct Scripted(Mutex<Vec<&'static str>>, Mutex<Vec<String>>);

    impl Prompter for Scripted {
        fn ask(&self, question: String) -> BoxFuture<'_, Option<String>> {
            self.1.lock().unwrap().push(question);
            let answer = self.0.lock().unwrap().pop().map(str::to_owned);
            Box::pin(async move { answer })
        }
    }

    fn request<'a>(spec: &'a ToolSpec, args: &'a Value) -> PermissionRequest<'a> {
        PermissionRequest { call_id: "c", spec, args, read_only: false, written_paths: &[], preview: None }
    }

    #[tokio::test]
    async fn answers_allow_once_for_the_session_or_deny() {
        let bash = ToolSpec::new("bash", "").alias("Bash").command_param("command");
        let push = json!({"command": "git push origin main"});
        let other_push = json!({"command": "git push origin dev"});
        let rm = json!({"command": "rm -rf build"});
        // Answers are popped from the end.
        let prompter = Arc::new(Scripted(Mutex::new(vec!["", "n", "a", "y"]), Mutex::new(Vec::new())));
        let approver = TerminalApprover::new(prompter.clone());
        assert_eq!(approver.approve(&request(&bash, &push), "mode default asks").await, Approval::Allow);
        assert_eq!(approver.approve(&request(&bash, &push), "mode default asks").await, Approval::Allow);
        // "a" added Bash(git push:*): no question for another push.
        assert_eq!(approver.approve(&request(&bash, &other_push), "").await, Approval::Allow);
        assert_eq!(prompter.1.lock().unwrap().len(), 2);
        let denied = Approval::Deny { message: "The user denied this bash call. Nothing was changed.".into() };
        assert_eq!(approver.approve(&request(&bash, &rm), "").await, denied);
        // End of input denies too.
        assert_eq!(approver.approve(&request(&bash, &rm), "").await, denied);
        assert_eq!(approver.session_rules(), vec![SessionRule::BashPrefix("git push".into())]);
        let question = &prompter.1.lock().unwrap()[0];
        assert!(
            question.contains("bash wants to run (mode default asks):\n  command: git push origin main\n"),
            "{question}"
        );
        assert!(question.contains("[a] always this session (Bash(git push:*))"), "{question}");
    }

    #[tokio::test]
    async fn a_preview_replaces_the_long_arguments_in_the_question() {
        let save = ToolSpec::new("save", "").edits_files();
        let args = json!({"path": "a.txt", "content": "line one\nline two\n"});
        let mut asked = request(&save, &args);
        asked.preview = Some("--- a/a.txt\n+++ b/a.txt\n@@ -1 +1,2 @@\n line one\n+line two\n");
        let prompter = Arc::new(Scripted(Mutex::new(vec!["n"]), Mutex::new(Vec::new())));
        TerminalApprover::new(prompter.clone()).approve(&asked, "edits ask").await;
        let question = &prompter.1.lock().unwrap()[0];
        assert!(
            question
                .contains("  path: a.txt\n  --- a/a.txt\n  +++ b/a.txt\n  @@ -1 +1,2 @@\n   line one\n  +line two\n"),
            "{question}"
        );
        assert!(!question.contains("content:"), "{question}");
    }

    #[test]
    fn edit_rules_cover_their_directory() {
        let edit = ToolSpec::new("write_file", "").edits_files().path_param("file_path", PathAccess::Write);
        let inside = json!({"file_path": "src/parser/a.rs"});
        let rule = SessionRule::for_request(&request(&edit, &inside));
        assert_eq!(rule.display(), "Edit(src/parser/**)");
        assert!(rule.covers(&request(&edit, &json!({"file_path": "src/parser/deep/b.rs"}))));
        assert!(!rule.covers(&request(&edit, &json!({"file_path": "src/main.rs"}))));
    }
}
