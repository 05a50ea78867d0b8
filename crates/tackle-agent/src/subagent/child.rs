//! One child: built from its parent's [`Delegation`] through the session factory (tools cut to
//! the type's allow and deny lists and to the parent's, the permission mode narrowed, its own
//! shell and read ledger, the parent's hooks, rules and MCP connections), assembled as every
//! agent is ([`AgentParts`]: the parent's tool refresh and loop hooks, the skills section),
//! run with the agent loop on an empty history, and summed up as the result the parent's model
//! reads (docs/subagents.md#results).

use std::sync::Arc;
use std::time::Instant;

use tackle_core::agent_jobs::AgentJobStatus;
use tackle_core::factory::{ChildRequest, Factory};
use tackle_llm::Message;
use tokio_util::sync::CancellationToken;

use super::model;
use super::types::AgentType;
use crate::agent::{Agent, AgentConfig};
use crate::events::{AgentEvent, Observer};
use crate::lineage::{Delegation, TEAM_TOOLSET};
use crate::outcome::{RunStatus, StopKind};
use crate::parts::AgentParts;

/// A child ready to run.
pub struct Child {
    /// `agent-N`.
    pub id: String,
    /// Its type and description, as shown.
    pub label: String,
    depth: u32,
    agent: Agent,
    observer: Arc<dyn Observer>,
}

impl std::fmt::Debug for Child {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Child").field("id", &self.id).field("label", &self.label).finish_non_exhaustive()
    }
}

/// How a child ended, as its parent hears it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The result text: the final message and the footer, or what stopped it.
    pub text: String,
    /// The result is an error for the parent's model.
    pub is_error: bool,
    /// For a background child's job entry.
    pub status: AgentJobStatus,
    /// The final message alone (no footer), when it gave one.
    pub answer: Option<String>,
}

/// The allowlist (the `--tools` grammar) of `kind`: its allow list, then `-NAME` for each
/// denied tool and `-team` for the team toolset (only the main agent leads a team, so no child,
/// subagent or teammate, holds them).
pub fn allowlist(kind: &AgentType) -> String {
    let denied = kind.disallowed.iter().map(String::as_str).chain([TEAM_TOOLSET]).map(|name| format!("-{name}"));
    let parts: Vec<String> = kind.tools.iter().flatten().cloned().chain(denied).collect();
    parts.join(",")
}

/// Why a child could not start; the text ends the tool's "could not start" error.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// Its session could not be built.
    #[error(transparent)]
    Session(#[from] tackle_core::ChildError),
    /// Its model could not be set up.
    #[error(transparent)]
    Model(#[from] super::model::ModelError),
}

impl Child {
    /// Builds the child `id` of type `kind` under `parent` (no model request yet).
    pub async fn build(
        parent: &Delegation,
        factory: &Factory,
        kind: &AgentType,
        id: String,
        description: &str,
    ) -> Result<Child, SpawnError> {
        let mode = kind.mode.map_or(parent.mode, |asked| parent.mode.narrowed_to(asked));
        let request = ChildRequest {
            tools: Some(allowlist(kind)),
            within: Some(parent.tool_names()),
            mode: Some(mode),
            ancestry: parent.allowlists.clone(),
        };
        let child = factory.0.child(request).await?;
        let model =
            match model::choose(kind.model.as_deref(), &parent.model, &parent.lineage.config, kind.from_workspace) {
                Ok(model) => model,
                Err(err) => {
                    child.session.close().await;
                    return Err(err.into());
                }
            };
        let label = if description.trim().is_empty() {
            kind.name.clone()
        } else {
            format!("{}: {}", kind.name, description.trim())
        };
        let lineage = parent.lineage.child(id.clone());
        let depth = lineage.depth;
        let observer: Arc<dyn Observer> = Arc::new(Nested {
            parent: Arc::clone(&parent.observer),
            agent_id: id.clone(),
            label: label.clone(),
            depth,
        });
        let config = AgentConfig {
            max_steps: kind.max_turns,
            call_format: parent.call_format,
            permission_mode: mode,
            sandbox: parent.sandbox.clone(),
            base_prompt: Some(kind.prompt.clone()),
            pricing: parent.pricing.clone(),
            budget: parent.budget.clone(),
            ..AgentConfig::default()
        };
        // The parent's refresh and loop hooks; the skills section the assembly finds.
        let agent = AgentParts {
            config,
            trajectory: parent.trajectory.as_ref().map(|t| t.for_agent(&id)),
            observer: Arc::clone(&observer),
            refresh: parent.refresh.clone(),
            loop_hooks: parent.loop_hooks.clone(),
            lineage,
            ..AgentParts::new(model, child.session, child.executor)
        }
        .build();
        Ok(Child { id, label, depth, agent, observer })
    }

    /// Closes the child without running it (its session, shell and jobs).
    pub async fn close(self) {
        self.agent.session().close().await;
    }

    /// Runs the child on `prompt` until it answers, stops, fails or `cancel` fires; closes its
    /// session (its shell and jobs) and sums up how it went.
    pub async fn run(mut self, prompt: &str, cancel: &CancellationToken, background: bool) -> Report {
        let report = self.turn(prompt, cancel, background).await;
        self.close().await;
        report
    }

    /// Runs the child on `prompt` as [`Child::run`] does, but keeps it (its session and its
    /// history) for the next prompt: a teammate answers each message this way. The footer
    /// counts the tool calls of its whole history.
    pub async fn turn(&mut self, prompt: &str, cancel: &CancellationToken, background: bool) -> Report {
        let started = Instant::now();
        self.observer.on_event(&AgentEvent::SubagentStarted {
            agent_id: self.id.clone(),
            label: self.label.clone(),
            depth: self.depth,
            background,
        });
        let outcome = self.agent.run(prompt, cancel).await;
        let calls: usize = self
            .agent
            .history()
            .iter()
            .map(|m| match m {
                Message::Assistant(reply) => reply.tool_calls.len(),
                _ => 0,
            })
            .sum();
        let ms = started.elapsed().as_millis();
        let footer = format!("[subagent {}: {} turns, {calls} tool calls, {ms} ms]", self.id, outcome.steps);
        let id = &self.id;
        let report = match outcome.status {
            RunStatus::Success => Report {
                text: format!("{}\n{footer}", outcome.final_result.trim_end()),
                is_error: false,
                status: AgentJobStatus::Done,
                answer: Some(outcome.final_result.trim_end().to_owned()),
            },
            // The parent hears the answer and what was denied; it decides whether that is enough.
            RunStatus::Incomplete => Report {
                text: format!(
                    "{}\n[incomplete: {} call(s) denied: {}]\n{footer}",
                    outcome.final_result.trim_end(),
                    outcome.denied,
                    outcome.denied_calls.join(", ")
                ),
                is_error: false,
                status: AgentJobStatus::Done,
                answer: Some(outcome.final_result.trim_end().to_owned()),
            },
            RunStatus::MaxSteps => Report {
                text: format!(
                    "Subagent {id} stopped after {} turns without a final answer. Last message:\n{}",
                    outcome.steps,
                    last_text(self.agent.history())
                ),
                is_error: true,
                status: AgentJobStatus::Failed,
                answer: None,
            },
            RunStatus::Timeout | RunStatus::Budget => Report {
                text: format!("Subagent {id} stopped: {}\n{footer}", outcome.final_result),
                is_error: true,
                status: AgentJobStatus::Failed,
                answer: None,
            },
            RunStatus::Interrupted => Report {
                text: format!("Subagent {id} was cancelled before it finished.\n{footer}"),
                is_error: true,
                status: AgentJobStatus::Cancelled,
                answer: None,
            },
            RunStatus::Error => Report {
                text: format!(
                    "Subagent {id} failed ({}): {}\n{footer}",
                    outcome.error_kind.map_or("error", StopKind::name),
                    outcome.final_result
                ),
                is_error: true,
                status: AgentJobStatus::Failed,
                answer: None,
            },
        };
        self.observer.on_event(&AgentEvent::SubagentFinished {
            agent_id: self.id.clone(),
            label: self.label.clone(),
            depth: self.depth,
            is_error: report.is_error,
            footer: report.text.lines().last().unwrap_or_default().to_owned(),
        });
        report
    }
}

/// The text of the last assistant message, or `(none)`.
fn last_text(history: &[Message]) -> String {
    history
        .iter()
        .rev()
        .find_map(|m| match m {
            Message::Assistant(reply) if !reply.text.trim().is_empty() => Some(reply.text.trim().to_owned()),
            _ => None,
        })
        .unwrap_or_else(|| "(none)".to_owned())
}

/// Shows a child's events under its parent's: each wrapped with the child's id, label and
/// depth (a grandchild's events pass through as they are, already wrapped).
struct Nested {
    parent: Arc<dyn Observer>,
    agent_id: String,
    label: String,
    depth: u32,
}

impl Observer for Nested {
    fn on_event(&self, event: &AgentEvent) {
        match event {
            AgentEvent::Subagent { .. } | AgentEvent::SubagentStarted { .. } | AgentEvent::SubagentFinished { .. } => {
                self.parent.on_event(event);
            }
            _ => self.parent.on_event(&AgentEvent::Subagent {
                agent_id: self.agent_id.clone(),
                label: self.label.clone(),
                depth: self.depth,
                event: Box::new(event.clone()),
            }),
        }
    }
}
