//! A teammate's loop (docs/teams.md#teammates): a background child agent that keeps its
//! history across messages. It reads its mailbox, answers each request or broadcast with a
//! `response` written to the sender's mailbox, and when it has nothing to read it claims the
//! oldest ready task of the task board nobody owns, works on it, and marks it done or failed.
//! It stops on a `shutdown` message, `job_kill`, Ctrl-C of the main agent's run, or the end of
//! the session.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use tackle_core::agent_jobs::{AgentJobStatus, AgentJobs};
use tackle_tools::TaskBoard;
use tackle_tools::planning::tasks::CreatedHere;
use tackle_tools::planning::tasks::board::{Task, TaskChange, TaskStatus};
use tokio_util::sync::CancellationToken;

use super::mailbox::{Kind, MAIN, TeamMessage, bounded};
use super::roster::{Member, Team};
use crate::subagent::{Child, Report};

/// How often an idle teammate looks at its mailbox and the task board without being woken
/// (lines written by others than `team_send`, tasks created since).
pub const POLL: Duration = Duration::from_millis(500);

/// What a teammate needs to run.
pub struct Teammate {
    /// Its child agent (its session and history).
    pub child: Child,
    /// Its entry in the team.
    pub member: Arc<Member>,
    /// The team.
    pub team: Arc<Team>,
    /// The workspace's task board.
    pub board: TaskBoard,
    /// The tasks the main agent's session created: the only ones a teammate claims.
    pub created: Arc<CreatedHere>,
    /// The session's background agents, where its end is recorded.
    pub jobs: Arc<AgentJobs>,
    /// Ctrl-C of the main agent's run.
    pub interrupt: CancellationToken,
}

impl Teammate {
    /// Runs until stopped, then closes its session and records its end.
    pub async fn serve(mut self) {
        let cancel = self.member.job.cancel_token().clone();
        // Ctrl-C of the main agent's run stops the teammate, even in the middle of a turn.
        let watcher = {
            let (interrupt, cancel) = (self.interrupt.clone(), cancel.clone());
            tokio::spawn(async move {
                tokio::select! {
                    () = interrupt.cancelled() => cancel.cancel(),
                    () = cancel.cancelled() => {}
                }
            })
        };
        let stopped_by_message = loop {
            if cancel.is_cancelled() {
                break false;
            }
            match self.next_message() {
                Some(message) if message.kind == Kind::Shutdown => break true,
                Some(message) => {
                    self.answer(message, &cancel).await;
                    continue;
                }
                None => {}
            }
            if let Some(task) = self.claim_task().await {
                self.work_on(task, &cancel).await;
                continue;
            }
            tokio::select! {
                () = cancel.cancelled() => {}
                () = self.member.wake.notified() => {}
                () = tokio::time::sleep(POLL) => {}
            }
        };
        cancel.cancel();
        let _ = watcher.await;
        self.child.close().await;
        let name = &self.member.name;
        let (status, text) = if stopped_by_message {
            (AgentJobStatus::Done, format!("Teammate {name} stopped on a shutdown message."))
        } else {
            (AgentJobStatus::Cancelled, format!("Teammate {name} stopped."))
        };
        self.jobs.finish(&self.member.job, status, text);
    }

    /// The next message to act on, reading past responses; lines skipped become warnings for
    /// the main agent.
    fn next_message(&self) -> Option<TeamMessage> {
        let name = &self.member.name;
        loop {
            let from = self.member.cursor.load(Ordering::SeqCst);
            let batch = match self.team.mailboxes.read(name, from, 1) {
                Ok(batch) => batch,
                Err(err) => {
                    tracing::warn!(teammate = %name, "{err}");
                    return None;
                }
            };
            for warning in &batch.skipped {
                tracing::warn!(teammate = %name, "{warning}");
                self.team.queue.push(format!("Teammate {name}'s mailbox: {warning}."));
            }
            let Some((message, end)) = batch.messages.into_iter().next() else {
                self.member.cursor.store(batch.end, Ordering::SeqCst);
                return None;
            };
            self.member.cursor.store(end, Ordering::SeqCst);
            if message.kind != Kind::Response {
                return Some(message);
            }
        }
    }

    /// Runs one turn on `message` and sends the answer back to its sender.
    async fn answer(&mut self, message: TeamMessage, cancel: &CancellationToken) {
        let prompt = format!(
            "Message {} from {} ({}):\n{}",
            message.id,
            message.from,
            if message.kind == Kind::Broadcast { "broadcast to the team" } else { "request" },
            message.content
        );
        let report = self.turn(&prompt, cancel).await;
        if cancel.is_cancelled() {
            return;
        }
        let content = bounded(report.answer.unwrap_or(report.text));
        let reply = TeamMessage::new(&self.member.name, &message.from, Kind::Response, content, Some(message.id));
        if let Err(err) = self.team.mailboxes.append(&reply) {
            tracing::warn!(teammate = %self.member.name, "{err}");
        }
        if message.from == MAIN {
            self.team.deliver(&reply);
        }
    }

    /// Claims the oldest ready task nobody owns among those the main agent's session created
    /// (a task the workspace's file brought is never taken as work), if there is one; another
    /// teammate taking it first is no error (the claim checks the status it saw). The board is
    /// read off the async workers: its lock may wait for another process, and not at all
    /// while the session created no task (an idle teammate then costs no file reads).
    async fn claim_task(&self) -> Option<Task> {
        if self.created.is_empty() {
            return None;
        }
        let (board, created, name) = (self.board.clone(), Arc::clone(&self.created), self.member.name.clone());
        tokio::task::spawn_blocking(move || {
            let listed = board.list(Some(TaskStatus::Pending)).ok()?;
            let ready =
                listed.into_iter().find(|t| t.ready && t.task.owner.is_none() && created.contains(&t.task.id))?;
            board.claim(&ready.task.id, TaskStatus::Pending, &name).ok()
        })
        .await
        .ok()
        .flatten()
    }

    /// Changes a task this teammate holds (still `in_progress`), off the async workers.
    async fn settle(&self, id: &str, status: TaskStatus, owner: Option<Option<String>>) {
        let change = TaskChange {
            status: Some(status),
            owner,
            expected_status: Some(TaskStatus::InProgress),
            ..TaskChange::default()
        };
        let (board, id) = (self.board.clone(), id.to_owned());
        let _ = tokio::task::spawn_blocking(move || board.update(&id, &change)).await;
    }

    /// Works on a claimed task, then records how it went on the board (unless the teammate
    /// changed its status itself) and tells the main agent. Stopped in the middle, it hands
    /// the task back (pending, no owner).
    async fn work_on(&mut self, task: Task, cancel: &CancellationToken) {
        let prompt = format!(
            "Task {} of the task board is now yours (status in_progress, owner {}). Work on it; your final \
             answer is its report.\nTitle: {}\nDescription: {}",
            task.id,
            self.member.name,
            task.title,
            if task.description.is_empty() { "(none)" } else { &task.description }
        );
        let report = self.turn(&prompt, cancel).await;
        if cancel.is_cancelled() {
            self.settle(&task.id, TaskStatus::Pending, Some(None)).await;
            return;
        }
        let status = if report.is_error { TaskStatus::Failed } else { TaskStatus::Done };
        self.settle(&task.id, status, None).await;
        let text = bounded(report.answer.unwrap_or(report.text));
        self.team.queue.push(format!(
            "Teammate {} finished task {} ({}): {}.\n{text}",
            self.member.name,
            task.id,
            task.title,
            status.name()
        ));
    }

    /// One turn of the child, marked busy while it runs.
    async fn turn(&mut self, prompt: &str, cancel: &CancellationToken) -> Report {
        self.member.busy.store(true, Ordering::SeqCst);
        let report = self.child.turn(prompt, cancel, true).await;
        self.member.busy.store(false, Ordering::SeqCst);
        report
    }
}
