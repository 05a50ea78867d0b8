//! `apply_patch` (docs/reference/tools.md#apply_patch): Codex's patch format, applied all or nothing.
//!
//! Besides the tool, this module is the one place a Codex patch is applied, so other entry
//! points behave the same: the shell routes an `apply_patch <<'EOF' … EOF` command here
//! ([`patch_from_command`] recognizes it, [`apply_patch`] applies it against the session).

mod apply;
mod commit;
mod parse;

pub use apply::FAILED;
pub use parse::{FileOp, Hunk, HunkLine, ParseError, ParsedPatch, parse};

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_core::{InterruptBehavior, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

use crate::fs::{Files, blocking_alone};

/// The wire name.
pub const NAME: &str = "apply_patch";

/// `apply_patch`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyPatchInput {
    /// The whole patch, from `*** Begin Patch` to `*** End Patch`.
    pub input: String,
}

/// The `apply_patch` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct ApplyPatch;

impl Tool for ApplyPatch {
    type Input = ApplyPatchInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            NAME,
            "Edit files with a patch. The patch is all or nothing: if any part does not apply, no file is changed.\n\
             Format:\n\
             *** Begin Patch\n\
             *** Add File: <path>          (then the new file's lines, each starting with +)\n\
             *** Delete File: <path>\n\
             *** Update File: <path>\n\
             *** Move to: <new path>       (optional, right after Update File)\n\
             @@ <optional line to find first, e.g. a def or class line>\n \
             <context line>   (a space, then the line as it is)\n\
             -<removed line>\n\
             +<added line>\n\
             *** End of File               (optional: the hunk ends at the end of the file)\n\
             *** End Patch\n\
             Give about 3 lines of context around each change, and an @@ line when the context is not unique. Paths \
             are relative to the workspace, or absolute inside it.",
        )
        .title("Apply patch")
        .destructive()
        .edits_files()
        .interrupt(InterruptBehavior::Block)
        .param_alias("patch", "input")
    }

    fn written_paths(&self, input: &ApplyPatchInput) -> Vec<String> {
        patch_paths(&input.input)
    }

    fn preview(&self, input: &ApplyPatchInput, ctx: &ToolContext) -> Option<String> {
        let parsed = parse(&input.input).ok()?;
        let planned = apply::plan(&Files::new(ctx), &parsed).ok()?;
        Some(planned.diff())
    }

    async fn call(&self, input: ApplyPatchInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        apply_patch(ctx, input.input).await
    }
}

/// Every path a patch adds, deletes, updates or moves to (for `Edit(...)` rules, checked
/// per path); a patch that does not parse has none (it is refused when it runs).
pub fn patch_paths(patch: &str) -> Vec<String> {
    let Ok(parsed) = parse(patch) else { return Vec::new() };
    let mut paths = Vec::new();
    for op in parsed.ops {
        match op {
            FileOp::Add { path, .. } | FileOp::Delete { path } => paths.push(path),
            FileOp::Update { path, move_to, .. } => {
                paths.push(path);
                paths.extend(move_to);
            }
        }
    }
    paths
}

/// Applies a Codex patch against `ctx`'s session (what the `apply_patch` tool does): parse,
/// check every path, compute every new file in memory, then write them all or none.
pub async fn apply_patch(ctx: &ToolContext, patch: String) -> Result<ToolOutput, ToolError> {
    blocking_alone(ctx, move |ctx| apply_patch_blocking(&Files::new(ctx), &patch)).await.map(ToolOutput::text)
}

/// [`apply_patch`] on the calling thread; returns the model-facing summary.
pub fn apply_patch_blocking(files: &Files<'_>, patch: &str) -> Result<String, ToolError> {
    let parsed = parse(patch).map_err(|err| ToolError::InvalidInput(err.to_string()))?;
    let summary = apply::apply(files, &parsed)?;
    Ok(format!("Success. Updated the following files:\n{}", summary.join("\n")))
}

/// The patch inside a shell command that invokes `apply_patch` (or `applypatch`) with a
/// heredoc, as Codex-trained models write it:
///
/// ```text
/// apply_patch <<'EOF'
/// *** Begin Patch
/// …
/// *** End Patch
/// EOF
/// ```
///
/// Returns `None` for any other command (the shell then runs it as usual).
pub fn patch_from_command(command: &str) -> Option<String> {
    let command = command.trim();
    let rest = command.strip_prefix("apply_patch").or_else(|| command.strip_prefix("applypatch"))?;
    let (first, body) = rest.split_once('\n')?;
    let marker = first.trim().strip_prefix("<<")?;
    let delimiter = marker.trim_start_matches('-').trim().trim_matches(|c| c == '\'' || c == '"');
    if delimiter.is_empty() || delimiter.contains(char::is_whitespace) {
        return None;
    }
    let mut lines: Vec<&str> = body.lines().collect();
    while lines.last().is_some_and(|l| l.trim().is_empty()) {
        lines.pop();
    }
    if lines.last().map(|l| l.trim()) != Some(delimiter) {
        return None;
    }
    lines.pop();
    let patch = lines.join("\n");
    patch.trim_start().starts_with("*** Begin Patch").then_some(patch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn heredoc_invocations_are_recognized_and_others_are_not() {
        let patch = "*** Begin Patch\n*** Delete File: a\n*** End Patch";
        for command in [
            format!("apply_patch <<'EOF'\n{patch}\nEOF"),
            format!("applypatch <<\"PATCH\"\n{patch}\nPATCH\n"),
            format!("  apply_patch <<EOF\n{patch}\nEOF\n\n"),
        ] {
            assert_eq!(patch_from_command(&command).as_deref(), Some(patch), "{command}");
        }
        for command in [
            "apply_patch".to_owned(),
            "echo apply_patch".to_owned(),
            format!("apply_patch <<'EOF'\n{patch}\n"),
            "apply_patch <<'EOF'\nrm -rf /\nEOF".to_owned(),
            format!("apply_patches <<'EOF'\n{patch}\nEOF"),
        ] {
            assert_eq!(patch_from_command(&command), None, "{command}");
        }
    }
}
