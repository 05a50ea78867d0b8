//! `todo_write` and `todo_read` (docs/planning.md#todos): the session's todo list with Claude
//! Code's whole-list semantics. Every `todo_write` replaces the list; the list itself lives
//! in the session's state ([`tackle_core::TodoList`]) where the agent loop records it in the
//! trajectory and a front end shows it.

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_core::todos::{TodoItem, TodoList, render};
use tackle_core::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

/// The wire name of the writer.
pub const WRITE: &str = "todo_write";
/// The wire name of the reader.
pub const READ: &str = "todo_read";

/// The most items a list may hold (a plan, not a log).
pub const MAX_ITEMS: usize = 200;

/// `todo_write`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoWriteInput {
    /// The whole updated list; it replaces the previous one (an empty array clears it).
    #[schemars(length(max = 200))]
    pub todos: Vec<TodoItem>,
}

/// `todo_read` takes no parameters.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoReadInput {}

/// The `todo_write` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct TodoWrite;

/// The `todo_read` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct TodoRead;

impl Tool for TodoWrite {
    type Input = TodoWriteInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            WRITE,
            "Create and update the todo list of this session, to plan a multi-step task and show progress. Send \
             the whole list every time: it replaces the previous one. Each item has content (imperative: \"Run the \
             tests\"), status (pending, in_progress, completed) and activeForm (present continuous: \"Running the \
             tests\"). Keep exactly one item in_progress while you work, and mark an item completed as soon as it \
             is done. Use it for tasks of three or more steps; skip it for trivial ones.",
        )
        .title("Write todos")
        .alias("TodoWrite")
        // It changes only the session's own list.
        .read_only()
    }

    fn validate(&self, input: &TodoWriteInput) -> Result<(), ToolError> {
        if let Some(index) = input.todos.iter().position(|item| item.content.trim().is_empty()) {
            return Err(ToolError::InvalidInput(format!(
                "Invalid parameters for tool '{WRITE}': todos[{index}].content must not be empty"
            )));
        }
        Ok(())
    }

    async fn call(&self, input: TodoWriteInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let list = ctx.state().get::<TodoList>();
        let text = render(&input.todos, true);
        let structured = serde_json::json!({ "todos": input.todos });
        list.replace(input.todos);
        Ok(ToolOutput::text(text).with_structured(structured))
    }
}

impl Tool for TodoRead {
    type Input = TodoReadInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(READ, "Show the todo list of this session (written with todo_write).")
            .title("Read todos")
            .alias("TodoRead")
            .read_only()
            .concurrency_safe()
            .idempotent()
    }

    async fn call(&self, _input: TodoReadInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let items = ctx.state().get::<TodoList>().items();
        Ok(ToolOutput::text(render(&items, false)).with_structured(serde_json::json!({ "todos": items })))
    }
}
