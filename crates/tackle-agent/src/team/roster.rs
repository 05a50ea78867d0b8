//! The team of one session (docs/teams.md): its members, where each stands, and the replies
//! the main agent waits for. Kept in the main session's state; the `team_*` tools and the
//! teammates' own loops share it.
//!
//! Replies to `main` are written to `main.jsonl` (the record) and handed over here: to the
//! `team_send` still waiting for that request, else to the session's notifications, which the
//! model hears before its next request (the path background jobs take).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tackle_core::Notifications;
use tackle_core::agent_jobs::{AgentJob, AgentJobStatus};
use tokio::sync::{Notify, oneshot};

use super::mailbox::{Kind, Mailboxes, TeamMessage};

/// Where a teammate stands, as `team_list` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Presence {
    /// Working on a message or a task.
    Running,
    /// Waiting for a message or a ready task.
    Idle,
    /// Ended (the session, Ctrl-C, `job_kill`, a `shutdown` message).
    Stopped,
}

impl Presence {
    /// The word `team_list` prints.
    pub fn name(self) -> &'static str {
        match self {
            Presence::Running => "running",
            Presence::Idle => "idle",
            Presence::Stopped => "stopped",
        }
    }
}

/// One teammate, as the team knows it.
#[derive(Debug)]
pub struct Member {
    /// Its name (its mailbox's file name).
    pub name: String,
    /// What it is for.
    pub role: String,
    /// Its entry in the session's background agents (`job_output`, `job_kill`, the end of the
    /// session).
    pub job: Arc<AgentJob>,
    /// Working on a message or a task now.
    pub busy: AtomicBool,
    /// The offset in its mailbox up to which it has read.
    pub cursor: AtomicU64,
    /// Wakes its loop when a message was appended.
    pub wake: Notify,
}

impl Member {
    /// Where it stands.
    pub fn presence(&self) -> Presence {
        if self.job.status() != AgentJobStatus::Running {
            Presence::Stopped
        } else if self.busy.load(Ordering::SeqCst) {
            Presence::Running
        } else {
            Presence::Idle
        }
    }
}

/// The team of one session.
#[derive(Debug)]
pub struct Team {
    /// Its mailboxes.
    pub mailboxes: Mailboxes,
    /// Where replies nobody waits for go.
    pub queue: Arc<Notifications>,
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    members: BTreeMap<String, Arc<Member>>,
    waiting: HashMap<String, oneshot::Sender<String>>,
}

impl Team {
    /// An empty team with these mailboxes; unclaimed replies go to `queue`.
    pub fn new(mailboxes: Mailboxes, queue: Arc<Notifications>) -> Team {
        Team { mailboxes, queue, inner: Mutex::new(Inner::default()) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The member `name`, running or not.
    pub fn member(&self, name: &str) -> Option<Arc<Member>> {
        self.lock().members.get(name).cloned()
    }

    /// The member `name` if it is running (working or idle).
    pub fn running(&self, name: &str) -> Option<Arc<Member>> {
        self.member(name).filter(|m| m.presence() != Presence::Stopped)
    }

    /// Every member, by name.
    pub fn members(&self) -> Vec<Arc<Member>> {
        self.lock().members.values().cloned().collect()
    }

    /// Adds `member`, replacing a stopped one of the same name.
    pub fn join(&self, member: Arc<Member>) {
        self.lock().members.insert(member.name.clone(), member);
    }

    /// Waits for the reply to request `id`: register before the request is sent, so a quick
    /// reply is not missed.
    pub fn expect_reply(&self, id: &str) -> oneshot::Receiver<String> {
        let (sender, receiver) = oneshot::channel();
        self.lock().waiting.insert(id.to_owned(), sender);
        receiver
    }

    /// Stops waiting for request `id` (its reply will be a notification).
    pub fn give_up(&self, id: &str) {
        self.lock().waiting.remove(id);
    }

    /// Hands a teammate's reply to `main` over: to whoever waits for it, else to the
    /// notifications.
    pub fn deliver(&self, reply: &TeamMessage) {
        let waiter = reply.in_reply_to.as_ref().and_then(|id| self.lock().waiting.remove(id));
        let unclaimed = match waiter {
            Some(waiter) => waiter.send(reply.content.clone()).err(),
            None => Some(reply.content.clone()),
        };
        if let Some(content) = unclaimed {
            let to = reply.in_reply_to.as_deref().unwrap_or("?");
            self.queue.push(format!("Reply from {} (to message {to}): {content}", reply.from));
        }
    }

    /// How many messages wait in `member`'s mailbox (requests, broadcasts and shutdowns after
    /// what it has read).
    pub fn unread(&self, member: &Member) -> usize {
        let from = member.cursor.load(Ordering::SeqCst);
        self.mailboxes
            .read(&member.name, from, usize::MAX)
            .map(|batch| batch.messages.iter().filter(|(m, _)| m.kind != Kind::Response).count())
            .unwrap_or(0)
    }
}
