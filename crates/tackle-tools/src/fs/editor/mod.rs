//! `str_replace_based_edit_tool` (docs/reference/tools.md#str_replace_based_edit_tool): Trae's and Anthropic's file editor, with
//! `view`, `create`, `str_replace`, `insert` and `undo_edit`. Names and messages are Trae's
//! (its tests assert them); the known Trae bugs are fixed: relative paths work, tabs are
//! shown as they are, CRLF files stay CRLF, `insert` at the end does not add a blank line,
//! several occurrences list their start lines, and `undo_edit` is back.

mod edit;
mod view;

pub use edit::{SNIPPET_LINES, start_lines};
pub use view::VIEW_CAP_CHARS;

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_core::spec::PathAccess;
use tackle_core::{Access, InterruptBehavior, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

use crate::fs::diff::unified_diff;
use crate::fs::{Files, LoadError, blocking, blocking_alone, stat};

/// The wire name.
pub const NAME: &str = "str_replace_based_edit_tool";

/// A command of the editor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum EditorCommand {
    View,
    Create,
    StrReplace,
    Insert,
    UndoEdit,
}

/// The editor's arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditorInput {
    /// The command to run: `view`, `create`, `str_replace`, `insert` or `undo_edit`.
    pub command: EditorCommand,
    /// The file or directory: relative to the workspace, or absolute inside it.
    pub path: String,
    /// `create`: the whole content of the new file.
    pub file_text: Option<String>,
    /// `str_replace`: the exact text to replace. It must match exactly one place in the file,
    /// whitespace and indentation included; add surrounding lines to make it unique.
    pub old_str: Option<String>,
    /// `str_replace`: the replacement (leave it out to delete `old_str`). `insert`: the text
    /// to insert.
    pub new_str: Option<String>,
    /// `insert`: the line after which the text goes (0 puts it at the top of the file).
    pub insert_line: Option<i64>,
    /// `view` of a file: the lines to show, `[start, end]`, 1-based and inclusive; an end
    /// of -1 means to the end of the file.
    pub view_range: Option<Vec<i64>>,
}

/// The `str_replace_based_edit_tool` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct Editor;

impl Tool for Editor {
    type Input = EditorInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            NAME,
            "View, create and edit files.\n\
             * `view` shows a file with line numbers (`cat -n`), or lists a directory two levels deep. Long files \
             are clipped; use `view_range` to see other lines.\n\
             * `create` writes a new file; it cannot overwrite an existing one.\n\
             * `str_replace` replaces `old_str`, which must match exactly one place in the file (whitespace \
             included), with `new_str`. Copy `old_str` from a recent `view`, and include enough surrounding lines to \
             make it unique.\n\
             * `insert` inserts `new_str` after line `insert_line` (0 = top).\n\
             * `undo_edit` reverts the last edit of `path` made in this session.\n\
             Paths are relative to the workspace, or absolute inside it. A file changed on disk since you viewed it \
             must be viewed again before it is edited.",
        )
        .title("File editor")
        .destructive()
        .edits_files()
        .interrupt(InterruptBehavior::Block)
        .path_param("path", PathAccess::Write)
        .param_hint("view_range", "Parameter `view_range` should be a list of integers.")
        .param_hint("insert_line", "Parameter `insert_line` is required and should be integer for command: insert")
    }

    fn is_read_only(&self, input: &EditorInput) -> bool {
        input.command == EditorCommand::View
    }

    fn is_concurrency_safe(&self, input: &EditorInput) -> bool {
        input.command == EditorCommand::View
    }

    fn preview(&self, input: &EditorInput, ctx: &ToolContext) -> Option<String> {
        let target = Files::new(ctx).target(&input.path, Access::Write).ok()?;
        let shown = &target.raw;
        if input.command == EditorCommand::Create {
            // `create` never overwrites: an existing path makes the call fail.
            return match stat(&target) {
                Ok(None) => Some(unified_diff(shown, None, input.file_text.as_deref()?)),
                _ => None,
            };
        }
        let (_, bytes) = match input.command {
            EditorCommand::StrReplace | EditorCommand::Insert => edit::load_file(&target).ok()?,
            _ => return None,
        };
        let text = edit::edit_text(&bytes, shown).ok()?;
        let edited = if input.command == EditorCommand::StrReplace {
            let old_str = edit::required_old_str(input.old_str.as_deref()).ok()?;
            edit::replacement(text, shown, old_str, input.new_str.as_deref()).ok()?.apply(text)
        } else {
            edit::insertion_of(text, input.insert_line, input.new_str.as_deref()).ok()?.apply(text)
        };
        Some(unified_diff(shown, Some(text), &edited))
    }

    async fn call(&self, input: EditorInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let safe = self.is_concurrency_safe(&input);
        let work = move |ctx: &ToolContext| run(&Files::new(ctx), &input);
        let output = if safe { blocking(ctx, work).await } else { blocking_alone(ctx, work).await };
        output.map(ToolOutput::text)
    }
}

fn run(files: &Files<'_>, input: &EditorInput) -> Result<String, ToolError> {
    let access = if input.command == EditorCommand::View { Access::Read } else { Access::Write };
    let target = files.target(&input.path, access)?;
    let shown = &target.raw;
    // `str_replace` and `insert` load the file, which answers a missing file, a directory or
    // a FIFO with the messages of the checks below: they skip the stat (one open, not two).
    let loads = matches!(input.command, EditorCommand::StrReplace | EditorCommand::Insert);
    let meta = if loads {
        None
    } else {
        match stat(&target) {
            Ok(meta) => meta,
            Err(LoadError::Refused(err)) => return Err(err),
            Err(_) => None,
        }
    };
    let exists = loads || meta.is_some();
    let is_dir = meta.as_ref().is_some_and(std::fs::Metadata::is_dir);
    let missing = || ToolError::NotFound(format!("The path {shown} does not exist. Please provide a valid path."));
    match input.command {
        EditorCommand::Create if exists => {
            return Err(ToolError::Failed(format!(
                "File already exists at: {shown}. Cannot overwrite files using command `create`. Use str_replace to \
                 change it, or write_file to replace it."
            )));
        }
        EditorCommand::Create => {}
        // An undo may bring back a file that an edit deleted.
        EditorCommand::UndoEdit
            if !exists && files.state().history.last(&target.path).is_some_and(|entry| entry.after.is_none()) => {}
        _ if !exists => return Err(missing()),
        _ => {}
    }
    if is_dir && input.command != EditorCommand::View {
        return Err(ToolError::InvalidInput(format!(
            "The path {shown} is a directory and only the `view` command can be used on directories"
        )));
    }
    match input.command {
        EditorCommand::View if is_dir => {
            if input.view_range.is_some() {
                return Err(ToolError::InvalidInput(
                    "The `view_range` parameter is not allowed when `path` points to a directory.".into(),
                ));
            }
            view::view_dir(&target, files.ctx())
        }
        EditorCommand::View => view::view_file(files, &target, input.view_range.as_deref()),
        EditorCommand::Create => edit::create(files, &target, input.file_text.as_deref()),
        EditorCommand::StrReplace => {
            edit::str_replace(files, &target, input.old_str.as_deref(), input.new_str.as_deref())
        }
        EditorCommand::Insert => edit::insert(files, &target, input.insert_line, input.new_str.as_deref()),
        EditorCommand::UndoEdit => {
            if edit::undo(files, &target)? {
                let view = view::view_file(files, &target, None)?;
                Ok(format!("Last edit to {shown} undone successfully. {view}"))
            } else {
                Ok(format!(
                    "Last edit to {shown} undone successfully. The edit had created the file, so it was removed."
                ))
            }
        }
    }
}
