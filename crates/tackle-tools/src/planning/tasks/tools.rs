//! `task_create`, `task_update`, `task_get`, `task_list` (docs/planning.md#tasks): the
//! model's face of the [`TaskBoard`] of the session's workspace. Each answers the task (or
//! the listing) as 2-space JSON, and the same value as its structured payload.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tackle_core::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

use super::board::{BoardError, TaskBoard, TaskChange, TaskStatus};
use crate::fs::blocking;

/// `task_create`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskCreateInput {
    /// A short imperative title ("Add the login form").
    pub title: String,
    /// What done means, and anything a worker needs to know.
    pub description: Option<String>,
    /// Ids of tasks that must be done before this one can start.
    pub depends_on: Option<Vec<String>>,
}

/// `task_update`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskUpdateInput {
    /// The task's id.
    pub task_id: String,
    /// The new status: pending, in_progress, done or failed.
    pub status: Option<TaskStatus>,
    /// A new title.
    pub title: Option<String>,
    /// The new full list of dependencies (replaces the old one).
    pub depends_on: Option<Vec<String>>,
    /// Who works on the task (an agent's name).
    pub owner: Option<String>,
    /// Update only if the task's status is still this one (to claim a task without racing
    /// another worker).
    pub expected_status: Option<TaskStatus>,
}

/// `task_get`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskGetInput {
    /// The task's id.
    pub task_id: String,
}

/// `task_list`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskListInput {
    /// Only tasks with this status.
    pub status: Option<TaskStatus>,
}

/// The `task_create` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct TaskCreate;
/// The `task_update` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct TaskUpdate;
/// The `task_get` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct TaskGet;
/// The `task_list` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct TaskList;

/// The ids of the tasks this session created with `task_create`. The board is a file of the
/// workspace, which a cloned repository can ship full of tasks: what may be handed to a
/// teammate as work is what the session itself put there, never what the file says.
#[derive(Debug, Default)]
pub struct CreatedHere(std::sync::Mutex<std::collections::HashSet<String>>);

impl CreatedHere {
    fn insert(&self, id: &str) {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(id.to_owned());
    }

    /// Whether this session created the task `id`.
    pub fn contains(&self, id: &str) -> bool {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).contains(id)
    }

    /// Whether this session created no task yet.
    pub fn is_empty(&self) -> bool {
        self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).is_empty()
    }
}

/// The board's errors as the model sees them: the board's sentence, as a failure of the call.
fn failure(err: BoardError) -> ToolError {
    ToolError::Failed(err.to_string())
}

/// Runs `work` on the session's board off the async workers (the lock may wait for another
/// process), and answers its value as JSON.
async fn on_board<T: Serialize + Send + 'static>(
    ctx: &ToolContext,
    work: impl FnOnce(&TaskBoard) -> Result<T, BoardError> + Send + 'static,
) -> Result<ToolOutput, ToolError> {
    let value = blocking(ctx, move |ctx| work(&TaskBoard::open(ctx.workspace())).map_err(failure)).await?;
    let json = serde_json::to_value(&value).map_err(|err| ToolError::Internal(err.to_string()))?;
    let text = serde_json::to_string_pretty(&json).map_err(|err| ToolError::Internal(err.to_string()))?;
    Ok(ToolOutput::text(text).with_structured(json))
}

impl Tool for TaskCreate {
    type Input = TaskCreateInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "task_create",
            "Create a task on the workspace's task board (.tackle/tasks.json), shared with subagents, teammates \
             and later sessions. depends_on lists ids of tasks that must be done first; task_list shows which \
             tasks are ready. Answers the new task as JSON, with its id.",
        )
        .title("Create a task")
    }

    async fn call(&self, input: TaskCreateInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let created = ctx.state().get::<CreatedHere>();
        on_board(ctx, move |board| {
            let task = board.create(
                &input.title,
                input.description.as_deref().unwrap_or_default(),
                input.depends_on.as_deref().unwrap_or_default(),
            )?;
            created.insert(&task.id);
            Ok(task)
        })
        .await
    }
}

impl Tool for TaskUpdate {
    type Input = TaskUpdateInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "task_update",
            "Update a task on the board: its status (pending, in_progress, done, failed), title, depends_on (the \
             full new list) or owner. With expected_status the update happens only if the task still has that \
             status, so two workers never claim the same task. Mark a task done as soon as it is finished.",
        )
        .title("Update a task")
    }

    async fn call(&self, input: TaskUpdateInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let change = TaskChange {
            status: input.status,
            title: input.title,
            depends_on: input.depends_on,
            owner: input.owner.map(Some),
            expected_status: input.expected_status,
        };
        on_board(ctx, move |board| board.update(&input.task_id, &change)).await
    }
}

impl Tool for TaskGet {
    type Input = TaskGetInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("task_get", "Show one task of the board as JSON.")
            .title("Get a task")
            .read_only()
            .concurrency_safe()
            .idempotent()
    }

    async fn call(&self, input: TaskGetInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        on_board(ctx, move |board| board.get(&input.task_id)).await
    }
}

impl Tool for TaskList {
    type Input = TaskListInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "task_list",
            "List the tasks of the board, oldest first, as JSON; each has ready = true when it is pending and \
             every task it depends on is done. status filters.",
        )
        .title("List tasks")
        .read_only()
        .concurrency_safe()
        .idempotent()
    }

    async fn call(&self, input: TaskListInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        on_board(ctx, move |board| board.list(input.status)).await
    }
}
