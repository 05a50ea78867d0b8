//! `save PATH` (docs/reference/formats.md#block-tools): write a whole file, creating missing folders.

use std::collections::HashMap;

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_core::spec::PathAccess;
use tackle_core::{Access, InterruptBehavior, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

use super::common::{load_regular, mapping, refuse_placeholder};
use crate::fs::diff::unified_diff;
use crate::fs::text::{LineEnding, as_text, dominant_ending, has_crlf, lf_to_crlf};
use crate::fs::{Before, Existing, Files, Target, blocking_alone, write_failure};

/// The wire name.
pub const NAME: &str = "save";

/// The tip for an overwrite that changed little (under this share of the old lines).
pub const PATCH_TIP: &str = "Tip: a patch block is cheaper for small changes.";
const TIP_BELOW: f64 = 0.2;

/// `save`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SaveInput {
    /// The file to write: relative to the workspace, or absolute inside it.
    pub path: String,
    /// The whole content of the file (a final newline is added if missing).
    pub content: String,
}

/// The `save` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct Save;

impl Tool for Save {
    type Input = SaveInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            NAME,
            "Write a whole file, creating it (and missing folders) or overwriting it. In a markdown reply: a \
             ```save PATH block whose body is the full content. Write every line: placeholder lines such as \
             `# ...` are refused. For a small change to an existing file, use patch.",
        )
        .title("Save file")
        .destructive()
        .idempotent()
        .edits_files()
        .interrupt(InterruptBehavior::Block)
        .path_param("path", PathAccess::Write)
        .block(mapping("save", "content"))
    }

    fn preview(&self, input: &SaveInput, ctx: &ToolContext) -> Option<String> {
        let (target, existing) = load(&Files::new(ctx), input).ok()?;
        let old_text = existing.as_ref().and_then(|e| as_text(&e.bytes));
        let content = new_content(old_text, input.content.clone());
        Some(unified_diff(&target.raw, existing.as_ref().map(|_| old_text.unwrap_or_default()), &content))
    }

    async fn call(&self, input: SaveInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        blocking_alone(ctx, move |ctx| save(&Files::new(ctx), input)).await.map(ToolOutput::text)
    }
}

/// The file to write, and what it holds now.
fn load(files: &Files<'_>, input: &SaveInput) -> Result<(Target, Option<Existing>), ToolError> {
    let target = files.target(&input.path, Access::Write)?;
    refuse_placeholder(&target.raw, &input.content)?;
    let existing = load_regular(&target)?;
    Ok((target, existing))
}

/// What the file will hold: `content` with a final newline, in CRLF when the text it replaces
/// is CRLF and the model wrote LF (as write_file does).
fn new_content(old_text: Option<&str>, mut content: String) -> String {
    if !content.is_empty() && !content.ends_with('\n') {
        content.push('\n');
    }
    if old_text.is_some_and(|text| dominant_ending(text) == LineEnding::CrLf) && !has_crlf(&content) {
        content = lf_to_crlf(&content).into_owned();
    }
    content
}

fn save(files: &Files<'_>, input: SaveInput) -> Result<String, ToolError> {
    let (target, existing) = load(files, &input)?;
    let shown = &target.raw;
    let old_text = existing.as_ref().and_then(|e| as_text(&e.bytes));
    let content = new_content(old_text, input.content);
    let created_folder = target.path.parent().is_some_and(|parent| !parent.exists());
    let before = existing.as_ref().map_or(Before::Absent, Existing::before);
    files.write(&target, content.as_bytes(), before).map_err(|err| write_failure(shown, err))?;

    let mut out = format!("Saved to {shown}");
    if existing.is_some() {
        out.push_str(" (overwritten)");
    } else if created_folder {
        out.push_str(" (created missing folder)");
    }
    if let Some(old) = old_text
        && changed_share(old, &content) < TIP_BELOW
    {
        out.push('\n');
        out.push_str(PATCH_TIP);
    }
    Ok(out)
}

/// The share of `old`'s lines an overwrite changed: lines not kept (as a multiset, so moved
/// lines count as kept) or added, whichever is more, over the old line count.
fn changed_share(old: &str, new: &str) -> f64 {
    let lines = |text: &str| -> Vec<String> { text.lines().map(|l| l.trim_end_matches('\r').to_owned()).collect() };
    let (old, new) = (lines(old), lines(new));
    if old.is_empty() {
        return 1.0;
    }
    let mut counts: HashMap<&str, i64> = HashMap::new();
    for line in &old {
        *counts.entry(line).or_default() += 1;
    }
    let mut kept = 0usize;
    for line in &new {
        if let Some(count) = counts.get_mut(line.as_str())
            && *count > 0
        {
            *count -= 1;
            kept += 1;
        }
    }
    let changed = (old.len() - kept).max(new.len() - kept);
    changed as f64 / old.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measures_the_changed_share_of_lines() {
        let old = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n";
        assert_eq!(changed_share(old, old), 0.0);
        assert_eq!(changed_share(old, "a\nb\nc\nd\ne\nf\ng\nh\ni\nJ\n"), 0.1);
        assert_eq!(changed_share(old, "j\ni\nh\ng\nf\ne\nd\nc\nb\na\n"), 0.0);
        assert_eq!(changed_share(old, "x\n"), 1.0);
        assert_eq!(changed_share("", "x\n"), 1.0);
    }
}
