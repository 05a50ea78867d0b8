//! `notebook_edit` (Claude Code's `NotebookEdit`, docs/reference/tools.md#notebook_edit): replace,
//! insert or delete one cell of a Jupyter notebook the session has read, written atomically
//! through [`Files::write`] (so undo and the read ledger see it as any file edit), the
//! notebook kept valid nbformat 4 ([`crate::fs::notebook`]).

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_core::spec::PathAccess;
use tackle_core::{Access, InterruptBehavior, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

use crate::fs::diff::unified_diff;
use crate::fs::notebook::{CellType, Edit, EditMode, Notebook, is_notebook_path};
use crate::fs::suggest::missing_file_message;
use crate::fs::text::{as_text, binary_message};
use crate::fs::write_file::{check_read, load_existing};
use crate::fs::{Files, Target, blocking_alone, write_failure};

/// The wire name.
pub const NAME: &str = "notebook_edit";

/// `notebook_edit`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotebookEditInput {
    /// The notebook (.ipynb) to edit: relative to the workspace, or absolute inside it.
    pub notebook_path: String,
    /// The id of the cell to replace or delete, or to insert after (as read_file shows it).
    /// Omit it to insert at the top.
    pub cell_id: Option<String>,
    /// The new source of the cell (ignored by delete).
    pub new_source: String,
    /// The type of the cell: required to insert; to replace, changes the cell's type.
    pub cell_type: Option<CellType>,
    /// replace (default), insert, or delete.
    pub edit_mode: Option<EditMode>,
}

/// The `notebook_edit` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct NotebookEdit;

impl Tool for NotebookEdit {
    type Input = NotebookEditInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            NAME,
            "Edit a Jupyter notebook (.ipynb) cell by cell: replace the source of the cell `cell_id` (default), \
             insert a new cell after it (`edit_mode: insert`, `cell_type` required; without `cell_id` at the top), \
             or delete it (`edit_mode: delete`). A replaced code cell loses its outputs. Read the notebook with \
             read_file first: it shows each cell's id. Paths are relative to the workspace, or absolute inside it.",
        )
        .title("Edit notebook")
        .alias("NotebookEdit")
        .destructive()
        .edits_files()
        .interrupt(InterruptBehavior::Block)
        .path_param("notebook_path", PathAccess::Write)
    }

    fn preview(&self, input: &NotebookEditInput, ctx: &ToolContext) -> Option<String> {
        let target = Files::new(ctx).target(&input.notebook_path, Access::Write).ok()?;
        let existing = load_existing(&target).ok()??;
        let text = as_text(&existing.bytes)?;
        let (edited, _) = apply(text, input, &target).ok()?;
        Some(unified_diff(&target.raw, Some(text), &edited))
    }

    async fn call(&self, input: NotebookEditInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        blocking_alone(ctx, move |ctx| edit(&Files::new(ctx), &input)).await.map(ToolOutput::text)
    }
}

fn edit(files: &Files<'_>, input: &NotebookEditInput) -> Result<String, ToolError> {
    let target = files.target(&input.notebook_path, Access::Write)?;
    let shown = &target.raw;
    if !is_notebook_path(&target.path) {
        return Err(ToolError::InvalidInput(format!(
            "{shown} is not a Jupyter notebook (.ipynb file). Use edit_file to edit other files."
        )));
    }
    let Some(existing) = load_existing(&target)? else {
        return Err(ToolError::NotFound(missing_file_message(files.ctx(), &target)));
    };
    let text = as_text(&existing.bytes).ok_or_else(|| ToolError::Failed(binary_message(shown)))?;
    check_read(files, &target, &existing)?;
    let (edited, done) = apply(text, input, &target)?;
    files.write(&target, edited.as_bytes(), existing.into_before()).map_err(|err| write_failure(shown, err))?;
    Ok(format!("{done} The notebook {shown} has been updated."))
}

/// The notebook's new text and what was done.
fn apply(text: &str, input: &NotebookEditInput, target: &Target) -> Result<(String, String), ToolError> {
    let mut notebook = Notebook::parse(text).map_err(|why| {
        ToolError::Failed(format!(
            "{} cannot be edited as a notebook: {why}. Nothing was changed; read it with read_file and fix it with \
             edit_file.",
            target.raw
        ))
    })?;
    let edit = Edit {
        cell_id: input.cell_id.as_deref(),
        new_source: &input.new_source,
        cell_type: input.cell_type,
        mode: input.edit_mode.unwrap_or_default(),
    };
    let done = notebook.edit(&edit).map_err(ToolError::InvalidInput)?;
    let text = notebook.to_text().map_err(|err| ToolError::Internal(format!("writing the notebook as JSON: {err}")))?;
    Ok((text, done))
}
