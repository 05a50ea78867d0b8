//! Teams (docs/teams.md): `team_spawn` starts a named teammate, a background child agent that
//! keeps its history across messages; `team_send` writes a request to its mailbox and waits for
//! the reply; `team_list` shows who is there. The tools are deferred: a model loads them with
//! `tool_search` when it wants a team.
//!
//! The tools are registered in the closed toolset [`crate::lineage::TEAM_TOOLSET`] too, which
//! every child session is cut with (`-team`).
//!
//! Only the main agent leads a team: a teammate's tools never include `team_*`, and a
//! subagent's `team_*` calls are refused. A teammate is built like a subagent (the same type
//! filtering, so it never gains a tool or a permission the main agent lacks), is recorded in
//! the session's background agents (`job_output`, `job_kill`), and stops at the end of the
//! session and on Ctrl-C of the main agent's run.

pub mod mailbox;
pub mod roster;
pub mod teammate;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_core::agent_jobs::AgentJobStatus;
use tackle_core::factory::Factory;
use tackle_core::{Loading, Notifications, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};
use tackle_policy::config::user_dirs::UserDirs;
use tackle_policy::permission::rules::ReadRules;
use tackle_tools::TaskBoard;
use tackle_tools::planning::tasks::CreatedHere;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::lineage::Delegation;
use crate::subagent::{AgentType, Child, background_jobs, resolve_type};
use mailbox::{Kind, MAIN, MAX_CONTENT_BYTES, Mailboxes, TeamMessage, name_problem};
use roster::{Member, Presence, Team};
use teammate::Teammate;

/// `team_send`'s default wait, in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u64 = 60_000;
/// `team_send`'s longest wait, in milliseconds.
pub const MAX_TIMEOUT_MS: u64 = 600_000;
/// The longest role, in characters.
pub const MAX_ROLE_CHARS: usize = 1_000;

const SEARCH_HINT: &str = "team teammates mailbox message delegate parallel agents";

/// The arguments of `team_spawn`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamSpawnInput {
    /// The teammate's name: letters, digits, '_' and '-', at most 64 (`main` is you).
    pub name: String,
    /// What the teammate is for (it reads this in its system prompt).
    pub role: String,
    /// A first request to work on at once; its reply arrives as a notification.
    pub prompt: Option<String>,
    /// The kind of agent, as for subagent: general-purpose (default), explore, plan,
    /// code-review, or an agent defined in .tackle/agents/ or .claude/agents/.
    pub subagent_type: Option<String>,
}

/// The arguments of `team_send`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamSendInput {
    /// The teammate's name, or "*" for every running teammate (a broadcast, never waited for).
    pub to: String,
    /// The message.
    pub content: String,
    /// Wait for the reply (default true); without waiting, the reply arrives as a notification.
    pub wait: Option<bool>,
    /// How long to wait for the reply, in milliseconds (default 60000, at most 600000).
    #[schemars(range(min = 1, max = 600000))]
    pub timeout: Option<u64>,
}

/// The arguments of `team_list` (none).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TeamListInput {}

/// The `team_spawn` tool.
#[derive(Debug, Default)]
pub struct TeamSpawn;

/// The `team_send` tool.
#[derive(Debug, Default)]
pub struct TeamSend;

/// The `team_list` tool.
#[derive(Debug, Default)]
pub struct TeamList;

/// The running main agent, or why a team tool cannot run here.
fn leader(ctx: &ToolContext) -> Result<Arc<Delegation>, ToolError> {
    let Some(parent) = ctx.state().existing::<Delegation>() else {
        return Err(ToolError::Failed(format!(
            "{} runs only inside an agent run (tackle run, tackle chat, an Agent of the library).",
            ctx.tool_name()
        )));
    };
    if parent.lineage.depth > 0 {
        return Err(ToolError::Failed(
            "Only the main agent leads a team: a subagent or a teammate cannot use the team tools.".into(),
        ));
    }
    Ok(parent)
}

/// The session's team, made on first use.
fn team(ctx: &ToolContext) -> Arc<Team> {
    // The queue first: the state's lock is held while the team is made.
    let queue = ctx.state().get::<Notifications>();
    ctx.state().get_or_insert_with(|| Team::new(Mailboxes::new(ctx.workspace().to_path_buf(), ctx.session_id()), queue))
}

fn not_running(to: &str) -> ToolError {
    ToolError::Failed(format!("{to} is not running; start it with team_spawn first."))
}

/// A teammate's type: `kind` (which, as every child's, holds no team tool), its system prompt
/// told who it is.
fn teammate_kind(mut kind: AgentType, name: &str, role: &str) -> AgentType {
    kind.prompt = format!(
        "{}\n\nYou are {name}, a teammate in a team led by the main agent (main). Your role: {role}\n\
         Each user message is a message to you from a member of the team (its id, its sender, then its \
         content); your final answer to it is sent back to the sender as your reply, so make it complete. \
         When no message waits, you may be given a task of the workspace's task board; your final answer \
         is then its report.",
        kind.prompt.trim_end()
    );
    kind
}

impl Tool for TeamSpawn {
    type Input = TeamSpawnInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "team_spawn",
            "Start a named teammate: a background agent that keeps its own history, answers the messages you \
             send it with team_send, and when idle works on ready tasks of the task board. Give it a role; an \
             optional prompt is its first request (the reply arrives as a notification).",
        )
        .title("Team spawn")
        .loading(Loading::Deferred)
        .search_hint(SEARCH_HINT)
        // Permission rules may name the type: `team_spawn(explore)`.
        .specifier_param("subagent_type")
    }

    fn validate(&self, input: &TeamSpawnInput) -> Result<(), ToolError> {
        if let Some(problem) = name_problem(&input.name) {
            return Err(ToolError::InvalidInput(problem));
        }
        if input.name == MAIN {
            return Err(ToolError::InvalidInput("main is your own name; choose another for the teammate.".into()));
        }
        if input.role.trim().is_empty() || input.role.chars().count() > MAX_ROLE_CHARS {
            return Err(ToolError::InvalidInput(format!(
                "Give the teammate a role: what it is for, in at most {MAX_ROLE_CHARS} characters."
            )));
        }
        if input.prompt.as_ref().is_some_and(|p| p.len() > MAX_CONTENT_BYTES) {
            return Err(ToolError::InvalidInput(format!("The prompt is longer than {MAX_CONTENT_BYTES} bytes.")));
        }
        crate::subagent::check_type_param(input.subagent_type.as_deref())
    }

    async fn call(&self, input: TeamSpawnInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let parent = leader(ctx)?;
        let team = team(ctx);
        let name = input.name.as_str();
        if team.running(name).is_some() {
            return Err(ToolError::Failed(format!("Teammate {name} is already running.")));
        }
        let kind_name = input.subagent_type.as_deref().map(str::trim).filter(|t| !t.is_empty());
        let kind = resolve_type(
            ctx.workspace(),
            kind_name.unwrap_or("general-purpose"),
            &ctx.state().get::<ReadRules>(),
            &ctx.state().get::<UserDirs>(),
        )
        .map_err(|err| ToolError::NotFound(err.to_string()))?;
        let kind = teammate_kind(kind, name, input.role.trim());
        let Some(factory) = ctx.state().existing::<Factory>() else {
            return Err(ToolError::Failed(
                "This session cannot build child sessions (it was not built by a SessionBuilder).".into(),
            ));
        };
        let jobs = background_jobs(ctx, "teammate")?;
        // The mailbox first: a planted link refuses the teammate before anything starts.
        let failed = |err: &dyn std::fmt::Display| ToolError::Failed(format!("Teammate {name} could not start: {err}"));
        let cursor = team.mailboxes.create(name).map_err(|err| failed(&err))?;
        if let Some(prompt) = input.prompt.as_ref().filter(|p| !p.trim().is_empty()) {
            let first = TeamMessage::new(MAIN, name, Kind::Request, prompt.clone(), None);
            team.mailboxes.append(&first).map_err(|err| failed(&err))?;
        }
        let id = parent.lineage.next_id();
        let child = Child::build(&parent, &factory, &kind, id.clone(), &format!("teammate {name}"))
            .await
            .map_err(|err| failed(&err))?;
        let job = jobs.start(id.clone(), child.label.clone(), CancellationToken::new());
        let member = Arc::new(Member {
            name: name.to_owned(),
            role: input.role.trim().to_owned(),
            job,
            busy: AtomicBool::new(false),
            cursor: AtomicU64::new(cursor),
            wake: Notify::new(),
        });
        team.join(Arc::clone(&member));
        let teammate = Teammate {
            child,
            member,
            team: Arc::clone(&team),
            board: TaskBoard::open(ctx.workspace()),
            created: ctx.state().get::<CreatedHere>(),
            jobs,
            interrupt: parent.interrupt.clone(),
        };
        tokio::spawn(teammate.serve());
        Ok(ToolOutput::text(format!("Teammate {name} started."))
            .with_structured(json!({"name": name, "agent_id": id, "subagent_type": kind.name})))
    }
}

impl Tool for TeamSend {
    type Input = TeamSendInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "team_send",
            "Send a message to a running teammate and wait for its reply (wait: false returns at once; the \
             reply then arrives as a notification). to: \"*\" broadcasts to every running teammate without \
             waiting.",
        )
        .title("Team send")
        .loading(Loading::Deferred)
        .search_hint(SEARCH_HINT)
    }

    fn validate(&self, input: &TeamSendInput) -> Result<(), ToolError> {
        if input.to != "*"
            && let Some(problem) = name_problem(&input.to)
        {
            return Err(ToolError::InvalidInput(problem));
        }
        if input.to == MAIN {
            return Err(ToolError::InvalidInput("main is you; send to a teammate's name or \"*\".".into()));
        }
        if input.content.trim().is_empty() {
            return Err(ToolError::InvalidInput("The content is empty: say what the teammate should do.".into()));
        }
        if input.content.len() > MAX_CONTENT_BYTES {
            return Err(ToolError::InvalidInput(format!("The content is longer than {MAX_CONTENT_BYTES} bytes.")));
        }
        if input.timeout.is_some_and(|t| t == 0 || t > MAX_TIMEOUT_MS) {
            return Err(ToolError::InvalidInput(format!("timeout must be 1..={MAX_TIMEOUT_MS} milliseconds.")));
        }
        Ok(())
    }

    /// Sends to different teammates may wait side by side (each append is one line).
    fn is_concurrency_safe(&self, _input: &TeamSendInput) -> bool {
        true
    }

    fn timeout(&self, input: &TeamSendInput) -> Option<Duration> {
        Some(Duration::from_millis(input.timeout.unwrap_or(DEFAULT_TIMEOUT_MS)) + Duration::from_secs(5))
    }

    async fn call(&self, input: TeamSendInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        leader(ctx)?;
        let team = team(ctx);
        let to = input.to.as_str();
        if to == "*" {
            return broadcast(&team, input.content);
        }
        let member = team.running(to).ok_or_else(|| not_running(to))?;
        let request = TeamMessage::new(MAIN, to, Kind::Request, input.content, None);
        let wait = input.wait != Some(false);
        let reply = wait.then(|| team.expect_reply(&request.id));
        if let Err(err) = team.mailboxes.append(&request) {
            team.give_up(&request.id);
            return Err(ToolError::Failed(err.to_string()));
        }
        member.wake.notify_one();
        let id = &request.id;
        let Some(reply) = reply else {
            return Ok(ToolOutput::text(format!(
                "Message {id} sent to {to}; its reply will arrive as a notification."
            )));
        };
        let timeout_ms = input.timeout.unwrap_or(DEFAULT_TIMEOUT_MS);
        let outcome = tokio::select! {
            // The reply first: one that came with the teammate's stop still counts.
            biased;
            reply = reply => reply.ok(),
            _ = member.job.wait(Duration::from_millis(timeout_ms)) => None,
            () = ctx.cancel_token().cancelled() => {
                team.give_up(id);
                return Err(ToolError::Cancelled(format!(
                    "team_send was cancelled; a late reply from {to} will appear as a notification."
                )));
            }
        };
        if let Some(content) = outcome {
            return Ok(ToolOutput::text(format!("Reply from {to}: {content}"))
                .with_structured(json!({"message_id": id, "from": to})));
        }
        team.give_up(id);
        if member.job.status() != AgentJobStatus::Running {
            return Err(ToolError::Failed(format!("{to} stopped before it replied.")));
        }
        let seconds = Duration::from_millis(timeout_ms).as_secs_f64();
        Ok(ToolOutput::text(format!(
            "No reply from {to} within {seconds}s; it may still be working. A late reply will appear as a notification."
        ))
        .with_structured(json!({"message_id": id, "timed_out": true})))
    }
}

/// Writes `content` to every running teammate's mailbox (one message id); nobody waits.
fn broadcast(team: &Team, content: String) -> Result<ToolOutput, ToolError> {
    let members: Vec<Arc<Member>> = team.members().into_iter().filter(|m| m.presence() != Presence::Stopped).collect();
    if members.is_empty() {
        return Err(ToolError::Failed("No teammate is running; start one with team_spawn first.".into()));
    }
    let mut message = TeamMessage::new(MAIN, "*", Kind::Broadcast, content, None);
    let mut names = Vec::new();
    for member in &members {
        message.to.clone_from(&member.name);
        team.mailboxes.append(&message).map_err(|err| ToolError::Failed(err.to_string()))?;
        member.wake.notify_one();
        names.push(member.name.as_str());
    }
    Ok(ToolOutput::text(format!(
        "Broadcast {} sent to {} teammate(s): {}. Their replies will arrive as notifications.",
        message.id,
        names.len(),
        names.join(", ")
    )))
}

impl Tool for TeamList {
    type Input = TeamListInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "team_list",
            "List your teammates, one a line: name, role, running|idle|stopped, and how many messages wait \
             unread in its mailbox.",
        )
        .title("Team list")
        .read_only()
        .loading(Loading::Deferred)
        .search_hint(SEARCH_HINT)
    }

    async fn call(&self, _input: TeamListInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        leader(ctx)?;
        let team = team(ctx);
        let lines: Vec<String> = team
            .members()
            .iter()
            .map(|m| {
                let role = m.role.replace(['\t', '\n', '\r'], " ");
                format!("{}\t{role}\t{}\t{}", m.name, m.presence().name(), team.unread(m))
            })
            .collect();
        Ok(ToolOutput::text(if lines.is_empty() { "No teammates.".to_owned() } else { lines.join("\n") }))
    }
}
