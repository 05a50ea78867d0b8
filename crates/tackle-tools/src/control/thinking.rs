//! `sequentialthinking`: a scratchpad for step-by-step reasoning with revisions and branches
//! (docs/reference/tools.md#sequentialthinking). The fields are those of the MCP sequential-thinking server; wire names are
//! Trae's snake_case and the MCP server's camelCase names are accepted as aliases. Only the
//! four fields a thought cannot do without are required (Trae advertised all nine).

use std::sync::Mutex;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tackle_core::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

/// The wire name.
pub const NAME: &str = "sequentialthinking";

/// One thinking step.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ThoughtInput {
    /// Your current thinking step: analysis, a hypothesis, a check of a hypothesis, a revision
    /// of an earlier thought, or a decision.
    pub thought: String,
    /// Whether another thought step is needed after this one.
    pub next_thought_needed: bool,
    /// The number of this thought (1-based).
    #[schemars(range(min = 1))]
    pub thought_number: u32,
    /// The current estimate of how many thoughts are needed (it may change).
    #[schemars(range(min = 1))]
    pub total_thoughts: u32,
    /// Whether this thought revises an earlier one.
    pub is_revision: Option<bool>,
    /// The number of the thought being revised (0 means none).
    pub revises_thought: Option<u32>,
    /// The number of the thought this branch starts from (0 means none).
    pub branch_from_thought: Option<u32>,
    /// The identifier of the current branch.
    pub branch_id: Option<String>,
    /// Set when you reach the end but realise more thoughts are needed.
    pub needs_more_thoughts: Option<bool>,
}

/// A recorded thought.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thought {
    pub thought: String,
    pub thought_number: u32,
    pub total_thoughts: u32,
    pub is_revision: bool,
    pub revises_thought: Option<u32>,
    pub branch_from_thought: Option<u32>,
    pub branch_id: Option<String>,
}

/// The thoughts of one session.
#[derive(Debug, Default)]
pub struct ThinkingState {
    inner: Mutex<ThinkingLog>,
}

#[derive(Debug, Default)]
struct ThinkingLog {
    history: Vec<Thought>,
    /// Branch id → its thoughts, in the order branches were first seen.
    branches: Vec<(String, Vec<Thought>)>,
}

impl ThinkingState {
    /// The number of thoughts recorded.
    pub fn history_len(&self) -> usize {
        self.inner.lock().map(|log| log.history.len()).unwrap_or_default()
    }
}

/// The status the tool reports after each thought (its `structured` payload, advertised as
/// the MCP `outputSchema`).
#[derive(Debug, Serialize, JsonSchema)]
struct Status {
    thought_number: u32,
    total_thoughts: u32,
    next_thought_needed: bool,
    branches: Vec<String>,
    thought_history_length: usize,
}

/// The `sequentialthinking` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct SequentialThinking;

impl Tool for SequentialThinking {
    type Input = ThoughtInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            NAME,
            "Think through a problem step by step, one thought per call. Use it to break down a hard task, plan \
             before acting, question an earlier step (is_revision + revises_thought) or explore an alternative \
             (branch_from_thought + branch_id). Adjust total_thoughts as understanding grows, and set \
             next_thought_needed to false only when you have a satisfactory answer. Thoughts are kept for this \
             session; they change nothing outside it.",
        )
        .title("Sequential thinking")
        .read_only()
        .output_schema(tackle_core::schema::schema_for::<Status>())
        .param_alias("nextThoughtNeeded", "next_thought_needed")
        .param_alias("thoughtNumber", "thought_number")
        .param_alias("totalThoughts", "total_thoughts")
        .param_alias("isRevision", "is_revision")
        .param_alias("revisesThought", "revises_thought")
        .param_alias("branchFromThought", "branch_from_thought")
        .param_alias("branchId", "branch_id")
        .param_alias("needsMoreThoughts", "needs_more_thoughts")
    }

    async fn call(&self, input: ThoughtInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let state = ctx.state().get::<ThinkingState>();
        let nonzero = |n: Option<u32>| n.filter(|n| *n > 0);
        let thought = Thought {
            thought: input.thought,
            thought_number: input.thought_number,
            // A thought past the estimate raises the estimate (docs/reference/tools.md#sequentialthinking).
            total_thoughts: input.total_thoughts.max(input.thought_number),
            is_revision: input.is_revision.unwrap_or(false),
            revises_thought: nonzero(input.revises_thought),
            branch_from_thought: nonzero(input.branch_from_thought),
            branch_id: input.branch_id.filter(|id| !id.is_empty()),
        };
        let status = {
            let mut log = state.inner.lock().map_err(|_| ToolError::Internal("thinking state lock poisoned".into()))?;
            if let (Some(_), Some(branch)) = (thought.branch_from_thought, thought.branch_id.clone()) {
                match log.branches.iter_mut().find(|(id, _)| *id == branch) {
                    Some((_, thoughts)) => thoughts.push(thought.clone()),
                    None => log.branches.push((branch, vec![thought.clone()])),
                }
            }
            let status = Status {
                thought_number: thought.thought_number,
                total_thoughts: thought.total_thoughts,
                next_thought_needed: input.next_thought_needed,
                branches: log.branches.iter().map(|(id, _)| id.clone()).collect(),
                thought_history_length: log.history.len() + 1,
            };
            log.history.push(thought);
            status
        };
        let json = serde_json::to_value(&status).map_err(|err| ToolError::Internal(err.to_string()))?;
        let pretty = serde_json::to_string_pretty(&json).map_err(|err| ToolError::Internal(err.to_string()))?;
        Ok(ToolOutput::text(format!("Sequential thinking step completed.\n\nStatus:\n{pretty}")).with_structured(json))
    }
}
