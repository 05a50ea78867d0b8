//! `patch PATH` (docs/reference/formats.md#block-tools): ORIGINAL/UPDATED hunks applied all or nothing to an existing
//! file (`hunks` reads and applies them).

mod hunks;

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_core::spec::PathAccess;
use tackle_core::{Access, InterruptBehavior, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

use super::common::{load_regular, mapping};
use crate::fs::diff::unified_diff;
use crate::fs::suggest::missing_file_message;
use crate::fs::text::{as_text, binary_message};
use crate::fs::{Existing, Files, Target, blocking_alone, write_failure};

/// The wire name.
pub const NAME: &str = "patch";

/// `patch`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PatchInput {
    /// The file to change: relative to the workspace, or absolute inside it. It must exist.
    pub path: String,
    /// One or more hunks: `<<<<<<< ORIGINAL`, the exact lines to replace, `=======`, the new
    /// lines, `>>>>>>> UPDATED`, each marker on its own line.
    pub patch: String,
}

/// The `patch` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct Patch;

impl Tool for Patch {
    type Input = PatchInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            NAME,
            "Change part of an existing file with ORIGINAL/UPDATED hunks. In a markdown reply: a ```patch PATH \
             block holding, for each change, a line `<<<<<<< ORIGINAL`, the exact lines to replace (unique in the \
             file), a line `=======`, the new lines, and a line `>>>>>>> UPDATED`. A line `# ...` (or `// ...`) on \
             both sides stands for unchanged lines. Nothing is written unless every hunk applies.",
        )
        .title("Patch file")
        .destructive()
        .edits_files()
        .interrupt(InterruptBehavior::Block)
        .path_param("path", PathAccess::Write)
        .block(mapping("patch", "patch"))
    }

    fn preview(&self, input: &PatchInput, ctx: &ToolContext) -> Option<String> {
        let (target, existing, patched, _) = plan(&Files::new(ctx), input).ok()?;
        Some(unified_diff(&target.raw, as_text(&existing.bytes), &patched))
    }

    async fn call(&self, input: PatchInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        blocking_alone(ctx, move |ctx| patch(&Files::new(ctx), &input)).await.map(ToolOutput::text)
    }
}

fn patch(files: &Files<'_>, input: &PatchInput) -> Result<String, ToolError> {
    let (target, existing, patched, hunk_count) = plan(files, input)?;
    files.write(&target, patched.as_bytes(), existing.before()).map_err(|err| write_failure(&target.raw, err))?;
    Ok(format!("Patch applied to {} ({hunk_count} hunks)", target.raw))
}

/// The file to patch, what it holds now, what it will hold, and the number of hunks.
fn plan(files: &Files<'_>, input: &PatchInput) -> Result<(Target, Existing, String, usize), ToolError> {
    let target = files.target(&input.path, Access::Write)?;
    let shown = &target.raw;
    let hunks = hunks::parse(&input.patch).map_err(ToolError::InvalidInput)?;
    let Some(existing) = load_regular(&target)? else {
        return Err(ToolError::NotFound(format!(
            "{}. patch changes an existing file; use save to create one.",
            missing_file_message(files.ctx(), &target)
        )));
    };
    let text = as_text(&existing.bytes).ok_or_else(|| ToolError::Failed(binary_message(shown)))?;
    let patched = hunks::apply(text, &hunks, shown).map_err(ToolError::Failed)?;
    Ok((target, existing, patched, hunks.len()))
}
