//! What a running agent tells the `subagent` tool about itself: its depth and id in the tree
//! of agents, its model, its tools and permission mode right now, where its trajectory and
//! observer are, and the Ctrl-C of its current run. The agent loop puts a [`Delegation`] in
//! its session's state at the start of each run; the tool reads it from there
//! (`ctx.state().existing::<Delegation>()`), so a child is built from its actual parent, never
//! from the template the sessions came from.
//!
//! It sits at the crate root because the loop writes it and the `subagent` and `team_*` tools
//! read it: none of them is a part of another.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tackle_core::permission::PermissionMode;
use tackle_llm::{ChatModel, Pricing};
use tackle_policy::config::Config;
use tackle_policy::hooks::protocol::CommandHooks;
use tokio_util::sync::CancellationToken;

use crate::budget::Budget;
use crate::events::Observer;
use crate::format::CallFormat;
use crate::refresh::ToolRefresh;
use crate::trajectory::Trajectory;

/// The deepest a child may be: the main agent is depth 0.
pub const MAX_DEPTH: u32 = 3;

/// The toolset only the main agent holds: the team tools (`team/`). Every child session
/// (a subagent's, a teammate's) is cut with `-team`; the registry keeps the toolset closed, so
/// no imported tool joins it and leaves the children with it.
pub const TEAM_TOOLSET: &str = "team";

/// Where an agent stands in its tree of agents; a child's is derived from its parent's.
#[derive(Clone)]
pub struct Lineage {
    /// 0 for the main agent.
    pub depth: u32,
    /// `main`, or `agent-N`.
    pub agent_id: String,
    /// Numbers the subagents of the whole tree (`agent-1`, `agent-2`, …), so ids are unique in
    /// the shared trajectory and in the job tables.
    pub counter: Arc<AtomicU64>,
    /// The configuration a child's `provider/model` and aliases are resolved with.
    pub config: Arc<Config>,
}

impl Default for Lineage {
    fn default() -> Self {
        Lineage {
            depth: 0,
            agent_id: "main".to_owned(),
            counter: Arc::new(AtomicU64::new(0)),
            config: Arc::new(Config::default()),
        }
    }
}

impl std::fmt::Debug for Lineage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lineage").field("depth", &self.depth).field("agent_id", &self.agent_id).finish()
    }
}

impl Lineage {
    /// The next subagent id of the tree.
    pub fn next_id(&self) -> String {
        format!("agent-{}", self.counter.fetch_add(1, Ordering::SeqCst) + 1)
    }

    /// A child's lineage: one level deeper, with its own id.
    pub fn child(&self, agent_id: String) -> Lineage {
        Lineage {
            depth: self.depth + 1,
            agent_id,
            counter: Arc::clone(&self.counter),
            config: Arc::clone(&self.config),
        }
    }
}

/// A running agent, as its `subagent` calls see it.
pub struct Delegation {
    /// Depth, id, id counter and configuration.
    pub lineage: Lineage,
    /// The model asked now (what `inherit` means).
    pub model: Arc<dyn ChatModel>,
    /// The names of the session's tools now: a child's are a subset.
    pub tools: Mutex<Vec<String>>,
    /// The permission mode in force: a child's is this or stricter.
    pub mode: PermissionMode,
    /// How the model calls tools (children call them the same way).
    pub call_format: CallFormat,
    /// The sandbox in force, for the child's trajectory.
    pub sandbox: String,
    /// The trajectory the children write into, under their own `agent_id`.
    pub trajectory: Option<Arc<Trajectory>>,
    /// Where the children's events are shown (nested).
    pub observer: Arc<dyn Observer>,
    /// Takes up MCP tool changes between model requests: a child gets its parent's.
    pub refresh: Option<Arc<dyn ToolRefresh>>,
    /// The allowlists the running agent's session was cut with, outermost first (empty for
    /// the main agent): a child's session is cut with these and its own.
    pub allowlists: Vec<String>,
    /// The current run's Ctrl-C: it cancels background children too.
    pub interrupt: CancellationToken,
    /// The command hooks of the loop's events: a child fires `SubagentStop` when it ends.
    pub loop_hooks: Option<Arc<CommandHooks>>,
    /// The prices the run's usage is costed with: a child's too.
    pub pricing: Option<Arc<Pricing>>,
    /// The run's spending limit: its children spend from it too.
    pub budget: Option<Arc<Budget>>,
}

impl std::fmt::Debug for Delegation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Delegation").field("lineage", &self.lineage).field("mode", &self.mode).finish_non_exhaustive()
    }
}

impl Delegation {
    /// The session's tool names now.
    pub fn tool_names(&self) -> Vec<String> {
        self.tools.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone()
    }

    /// Records the session's tools after a change (MCP `list_changed`).
    pub fn set_tool_names(&self, names: Vec<String>) {
        *self.tools.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = names;
    }
}
