//! `edit_file` (Claude Code's `Edit`, docs/reference/tools.md#edit_file): exact string replacement in a file the
//! session has read, one occurrence or all of them. When the old text is not there, the
//! closest lines are shown (docs/reference/tools.md#edit_file), so the model can copy the real text.

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_core::spec::PathAccess;
use tackle_core::{Access, InterruptBehavior, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

use crate::fs::closest::closest;
use crate::fs::diff::unified_diff;
use crate::fs::editor::{SNIPPET_LINES, start_lines};
use crate::fs::files::MAX_EDIT_BYTES;
use crate::fs::suggest::missing_file_message;
use crate::fs::text::{as_text, binary_message, find_disjoint, line_list, locate, snippet};
use crate::fs::write_file::{check_read, load_existing};
use crate::fs::{Before, Files, blocking_alone, write_failure};

/// The wire name.
pub const NAME: &str = "edit_file";

/// `edit_file`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditFileInput {
    /// The file to change: relative to the workspace, or absolute inside it.
    pub file_path: String,
    /// The exact text to replace, whitespace and indentation included (copy it from
    /// read_file's output without the line-number prefix). Empty creates a new file.
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    /// Replace every occurrence (default false: `old_string` must occur exactly once).
    pub replace_all: Option<bool>,
}

/// The `edit_file` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct EditFile;

impl Tool for EditFile {
    type Input = EditFileInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            NAME,
            "Replace exact text in a file. `old_string` must match the file exactly (whitespace and indentation \
             included) and, unless `replace_all` is true, occur exactly once: include surrounding lines to make it \
             unique. Read the file with read_file first. An empty `old_string` creates a new file with \
             `new_string`. Paths are relative to the workspace, or absolute inside it.",
        )
        .title("Edit file")
        .alias("Edit")
        .destructive()
        .edits_files()
        .interrupt(InterruptBehavior::Block)
        .path_param("file_path", PathAccess::Write)
    }

    fn preview(&self, input: &EditFileInput, ctx: &ToolContext) -> Option<String> {
        let target = Files::new(ctx).target(&input.file_path, Access::Write).ok()?;
        let Some(existing) = load_existing(&target).ok()? else {
            return Some(unified_diff(&target.raw, None, &input.new_string));
        };
        let text = as_text(&existing.bytes)?;
        let (edited, ..) = replace(text, input, &target.raw).ok()?;
        Some(unified_diff(&target.raw, Some(text), &edited))
    }

    async fn call(&self, input: EditFileInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        blocking_alone(ctx, move |ctx| edit(&Files::new(ctx), &input)).await.map(ToolOutput::text)
    }
}

fn edit(files: &Files<'_>, input: &EditFileInput) -> Result<String, ToolError> {
    if input.old_string == input.new_string {
        return Err(ToolError::InvalidInput(
            "No changes to make: old_string and new_string are exactly the same.".into(),
        ));
    }
    let target = files.target(&input.file_path, Access::Write)?;
    let shown = &target.raw;
    let Some(existing) = load_existing(&target)? else {
        if input.old_string.is_empty() {
            files
                .write(&target, input.new_string.as_bytes(), Before::Absent)
                .map_err(|err| write_failure(shown, err))?;
            return Ok(format!("File created successfully at: {shown}"));
        }
        return Err(ToolError::NotFound(missing_file_message(files.ctx(), &target)));
    };
    let text = as_text(&existing.bytes).ok_or_else(|| ToolError::Failed(binary_message(shown)))?;
    check_read(files, &target, &existing)?;
    if input.old_string.is_empty() && !text.is_empty() {
        return Err(ToolError::InvalidInput(format!(
            "old_string is empty but {shown} already exists; use write_file to replace it."
        )));
    }

    let (edited, first_at, new_len_lines, replaced) = replace(text, input, shown)?;
    let line = start_lines(text, &[first_at])[0] - 1;
    files.write(&target, edited.as_bytes(), existing.into_before()).map_err(|err| write_failure(shown, err))?;

    let shown_snippet = snippet(&edited, line.saturating_sub(SNIPPET_LINES), line + SNIPPET_LINES + new_len_lines);
    if input.replace_all == Some(true) {
        Ok(format!(
            "The file {shown} has been updated. All {replaced} occurrences were replaced.\nHere's the result of \
             running `cat -n` on a snippet of the edited file:\n{shown_snippet}"
        ))
    } else {
        Ok(format!(
            "The file {shown} has been updated. Here's the result of running `cat -n` on a snippet of the edited \
             file:\n{shown_snippet}"
        ))
    }
}

/// The file's text after the edit, where the first replacement starts, how many lines the new
/// text has, and how many occurrences were replaced.
fn replace(text: &str, input: &EditFileInput, shown: &str) -> Result<(String, usize, usize, usize), ToolError> {
    if input.old_string.is_empty() {
        return Ok((input.new_string.clone(), 0, input.new_string.matches('\n').count(), 1));
    }
    let (found, old, new) = locate(text, &input.old_string, &input.new_string);
    if found.is_empty() {
        let mut message = "String to replace not found in file.".to_owned();
        if let Some(candidate) = closest(text, &input.old_string) {
            message.push_str(&candidate.describe(&format!(" of {shown}")));
        }
        return Err(ToolError::Failed(message));
    }
    let replace_all = input.replace_all.unwrap_or(false);
    if found.len() > 1 && !replace_all {
        return Err(ToolError::Failed(format!(
            "Found {} matches of the string to replace, but replace_all is false. To replace all occurrences, set \
             replace_all to true. To replace only one occurrence, please provide more context to uniquely \
             identify the instance.\nMatches start at lines {}.",
            found.len(),
            line_list(start_lines(text, &found))
        )));
    }
    let positions = if replace_all { find_disjoint(text, &old) } else { found };
    // Each replacement may grow the file: check the size before allocating it.
    let size = (text.len() - positions.len() * old.len()).saturating_add(positions.len().saturating_mul(new.len()));
    if size as u64 > MAX_EDIT_BYTES {
        return Err(ToolError::Failed(format!(
            "Replacing {} occurrences would make {shown} {size} bytes, over the {MAX_EDIT_BYTES}-byte limit of \
             the edit tools. Nothing was changed; replace fewer occurrences or use a shorter new_string.",
            positions.len()
        )));
    }
    let mut edited = String::with_capacity(size);
    let mut from = 0;
    for &at in &positions {
        edited.push_str(&text[from..at]);
        edited.push_str(&new);
        from = at + old.len();
    }
    edited.push_str(&text[from..]);
    Ok((edited, positions[0], new.matches('\n').count(), positions.len()))
}
