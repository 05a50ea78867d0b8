//! `task_done`: the model's signal that the task is finished (docs/reference/tools.md#task_done). The tool itself
//! only answers; the agent loop runs it after its sibling calls and then ends the run.

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_core::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

/// The wire name.
pub const NAME: &str = "task_done";

/// `task_done` takes no parameters.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskDoneInput {}

/// The `task_done` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct TaskDone;

impl Tool for TaskDone {
    type Input = TaskDoneInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            NAME,
            "Report that the task is complete and end the run. Call it only after you have verified the result \
             (run the tests, re-read the changed code, check the output); calls made in the same reply run first, \
             and task_done is refused if any of them failed.",
        )
        .title("Task done")
        .read_only()
        .idempotent()
    }

    async fn call(&self, _input: TaskDoneInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("Task done."))
    }
}
