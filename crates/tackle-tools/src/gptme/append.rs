//! `append PATH` (docs/reference/formats.md#block-tools): add lines to the end of a file, creating it if missing.

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_core::spec::PathAccess;
use tackle_core::{Access, InterruptBehavior, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

use super::common::{load_regular, mapping, refuse_placeholder};
use crate::fs::diff::unified_diff;
use crate::fs::text::{LineEnding, as_text, binary_message, dominant_ending, with_ending};
use crate::fs::{Before, Existing, Files, Target, blocking_alone, write_failure};

/// The wire name.
pub const NAME: &str = "append";

/// `append`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppendInput {
    /// The file to append to: relative to the workspace, or absolute inside it. It is created
    /// if missing.
    pub path: String,
    /// The lines to add at the end (a final newline is added if missing).
    pub content: String,
}

/// The `append` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct Append;

impl Tool for Append {
    type Input = AppendInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            NAME,
            "Add lines to the end of a file, creating it if it does not exist. In a markdown reply: a \
             ```append PATH block whose body is the lines to add.",
        )
        .title("Append to file")
        .edits_files()
        .interrupt(InterruptBehavior::Block)
        .path_param("path", PathAccess::Write)
        .block(mapping("append", "content"))
    }

    fn preview(&self, input: &AppendInput, ctx: &ToolContext) -> Option<String> {
        let (target, existing, content) = plan(&Files::new(ctx), input.clone()).ok()?;
        let old = existing.as_ref().map(|e| as_text(&e.bytes).unwrap_or_default());
        Some(unified_diff(&target.raw, old, &content))
    }

    async fn call(&self, input: AppendInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        blocking_alone(ctx, move |ctx| append(&Files::new(ctx), input)).await.map(ToolOutput::text)
    }
}

fn append(files: &Files<'_>, input: AppendInput) -> Result<String, ToolError> {
    let (target, existing, content) = plan(files, input)?;
    let before = existing.as_ref().map_or(Before::Absent, Existing::before);
    files.write(&target, content.as_bytes(), before).map_err(|err| write_failure(&target.raw, err))?;
    Ok(format!("Appended to {}", target.raw))
}

/// The file to append to, what it holds now, and what it will hold.
fn plan(files: &Files<'_>, input: AppendInput) -> Result<(Target, Option<Existing>, String), ToolError> {
    let target = files.target(&input.path, Access::Write)?;
    let shown = &target.raw;
    if input.content.is_empty() {
        return Err(ToolError::InvalidInput(format!("Nothing to append to {shown}: content is empty.")));
    }
    refuse_placeholder(shown, &input.content)?;
    let existing = load_regular(&target)?;
    let old = match &existing {
        Some(existing) => as_text(&existing.bytes).ok_or_else(|| ToolError::Failed(binary_message(shown)))?,
        None => "",
    };
    let ending = dominant_ending(old);
    let mut added = input.content;
    if !added.ends_with('\n') {
        added.push('\n');
    }
    let mut content = String::with_capacity(old.len() + added.len() + 2);
    content.push_str(old);
    if !old.is_empty() && !old.ends_with('\n') {
        content.push_str(ending.as_str());
    }
    // The added lines take the file's line ending.
    content.push_str(&if ending == LineEnding::CrLf && !added.contains("\r\n") {
        with_ending(&added, ending)
    } else {
        added.as_str().into()
    });
    Ok((target, existing, content))
}
