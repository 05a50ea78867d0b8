//! [`AgentParts`]: the one assembly of an [`Agent`]. The `tackle` crate's `AgentBuilder`
//! makes the main agent with it, `subagent/child.rs` every subagent and teammate, so
//! what an agent gets (its permission decisions recorded in the trajectory, the tool refresh
//! after an MCP server's `list_changed`, the skills section of the system prompt, the loop's
//! command hooks) is decided in one place and no kind of agent misses a part.

use std::collections::HashSet;
use std::sync::Arc;

use tackle_calls::ToolIndex;
use tackle_core::{Executor, ToolSession};
use tackle_llm::{ChatModel, Message};
use tackle_policy::config::user_dirs::UserDirs;
use tackle_policy::hooks::protocol::CommandHooks;
use tackle_policy::permission::rules::ReadRules;
use tackle_tools::Skills;
use tackle_tools::planning::load_skill;

use crate::agent::{Agent, AgentConfig};
use crate::approve::{RecordingApprover, RecordingPolicy};
use crate::events::{Observer, Silent};
use crate::lineage::Lineage;
use crate::refresh::ToolRefresh;
use crate::trajectory::Trajectory;
use crate::trajectory::event::DecisionSource;

/// Where the assembly's warnings go (a skill folder left out).
pub type Notice = Arc<dyn Fn(&str) + Send + Sync>;

/// What an agent is made of. Start from [`AgentParts::new`] and set the fields that differ
/// (`AgentParts { config, observer, ..AgentParts::new(model, session, executor) }`), then
/// [`AgentParts::build`].
pub struct AgentParts {
    /// The model asked.
    pub model: Arc<dyn ChatModel>,
    /// The session the calls run in.
    pub session: ToolSession,
    /// The executor with its permission policy, approver and hooks; the assembly records its
    /// decisions in the trajectory (`source: user` when the approver asks a person).
    pub executor: Executor,
    /// Settings of the run (steps, call format, prompts).
    pub config: AgentConfig,
    /// Where the run is written (default: nowhere).
    pub trajectory: Option<Trajectory>,
    /// Who sees the run's events (default: nobody).
    pub observer: Arc<dyn Observer>,
    /// Takes up tool changes before each model request (default: none); children get their
    /// parent's.
    pub refresh: Option<Arc<dyn ToolRefresh>>,
    /// The command hooks of the loop's events (SessionStart, UserPromptSubmit, Stop,
    /// SubagentStop, SessionEnd); their `transcript_path` becomes the trajectory file.
    pub loop_hooks: Option<Arc<CommandHooks>>,
    /// Where the agent stands in its tree of agents (default: the main agent, with an empty
    /// configuration to resolve children's models with).
    pub lineage: Lineage,
    /// An earlier conversation the first task is added after (default: none); the ids of its
    /// calls stay taken.
    pub history: Vec<Message>,
    /// Where warnings of the assembly go (default: nowhere; a child's would repeat its
    /// parent's).
    pub notice: Option<Notice>,
}

impl std::fmt::Debug for AgentParts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentParts")
            .field("session", &self.session)
            .field("config", &self.config)
            .field("lineage", &self.lineage)
            .finish_non_exhaustive()
    }
}

impl AgentParts {
    /// The parts of an agent asking `model` and running its calls in `session` through
    /// `executor`, everything else at its default.
    pub fn new(model: Arc<dyn ChatModel>, session: ToolSession, executor: Executor) -> AgentParts {
        AgentParts {
            model,
            session,
            executor,
            config: AgentConfig::default(),
            trajectory: None,
            observer: Arc::new(Silent),
            refresh: None,
            loop_hooks: None,
            lineage: Lineage::default(),
            history: Vec::new(),
            notice: None,
        }
    }

    /// The agent. When the session holds `load_skill` and the configuration has no skills
    /// section yet, the skills of the workspace and of the person's skill directories are
    /// listed in the system prompt (docs/planning.md#skills).
    pub fn build(self) -> Agent {
        let AgentParts {
            model,
            session,
            executor,
            mut config,
            trajectory,
            observer,
            refresh,
            loop_hooks,
            lineage,
            history,
            notice,
        } = self;
        if config.skills_prompt.is_none() && session.tools().specs().any(|spec| spec.name == load_skill::NAME) {
            let state = session.state();
            let skills =
                Skills::discover(&session.info().workspace, &state.get::<UserDirs>().skills, &state.get::<ReadRules>());
            if let Some(notice) = &notice {
                skills.warnings.iter().for_each(|warning| notice(warning));
            }
            config.skills_prompt = Some(skills.prompt_section());
        }
        let trajectory = trajectory.map(Arc::new);
        let interactive = executor.approver().asks_a_person();
        let policy = RecordingPolicy { inner: Arc::clone(executor.policy()), trajectory: trajectory.clone() };
        let approver = RecordingApprover {
            inner: Arc::clone(executor.approver()),
            source: if interactive { DecisionSource::User } else { DecisionSource::Policy },
            trajectory: trajectory.clone(),
        };
        let executor = executor.with_policy(Arc::new(policy)).with_approver(Arc::new(approver));
        if let (Some(hooks), Some(trajectory)) = (&loop_hooks, &trajectory) {
            hooks.set_transcript_path(trajectory.path().to_path_buf());
        }
        let call_ids: HashSet<String> = history
            .iter()
            .filter_map(|message| match message {
                Message::Assistant(reply) => Some(reply.tool_calls.iter().map(|call| call.id.clone())),
                _ => None,
            })
            .flatten()
            .collect();
        let tool_index = ToolIndex::from_toolset(session.tools());
        Agent {
            model,
            session,
            executor,
            config,
            observer,
            trajectory,
            history,
            call_ids,
            tool_index,
            refresh,
            loop_hooks,
            runs: 0,
            todo_version: 0,
            deferral_generation: 0,
            lineage,
            delegation: None,
        }
    }
}
