//! `write_file` (Claude Code's `Write`, docs/reference/tools.md#write_file): creates a file or replaces one the
//! session has read, atomically. The read requirement and the stale check use Claude Code's
//! own sentences, so models trained on it react as they learned.

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_core::spec::PathAccess;
use tackle_core::{Access, InterruptBehavior, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

use crate::fs::diff::unified_diff;
use crate::fs::text::{LineEnding, as_text, dominant_ending, has_crlf, lf_to_crlf};
use crate::fs::{Before, Existing, Files, Freshness, LoadError, Target, blocking_alone, read_existing, write_failure};

/// The wire name.
pub const NAME: &str = "write_file";

/// Overwriting a file the session has not read (Claude Code's sentence).
pub const NOT_READ: &str = "File has not been read yet. Read it first before writing to it.";
/// Overwriting a file changed since it was read (Claude Code's sentence).
pub const MODIFIED_SINCE_READ: &str = "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it.";

/// `write_file`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileInput {
    /// The file to write: relative to the workspace, or absolute inside it. Missing parent
    /// directories are created.
    pub file_path: String,
    /// The whole new content of the file.
    pub content: String,
}

/// The `write_file` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct WriteFile;

impl Tool for WriteFile {
    type Input = WriteFileInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            NAME,
            "Write a file: create it, or replace all of its content. An existing file must be read with read_file \
             first. Prefer edit_file to change part of an existing file. Paths are relative to the workspace, or \
             absolute inside it; missing directories are created.",
        )
        .title("Write file")
        .alias("Write")
        .destructive()
        .idempotent()
        .edits_files()
        .interrupt(InterruptBehavior::Block)
        .path_param("file_path", PathAccess::Write)
    }

    fn preview(&self, input: &WriteFileInput, ctx: &ToolContext) -> Option<String> {
        let target = Files::new(ctx).target(&input.file_path, Access::Write).ok()?;
        let existing = load_existing(&target).ok()?;
        let old = match &existing {
            Some(existing) => Some(as_text(&existing.bytes)?),
            None => None,
        };
        Some(unified_diff(&target.raw, old, &written_content(old, &input.content)))
    }

    async fn call(&self, input: WriteFileInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        blocking_alone(ctx, move |ctx| write(&Files::new(ctx), input)).await.map(ToolOutput::text)
    }
}

/// Loads an existing file for a CC-style edit (`None` when it does not exist).
pub(crate) fn load_existing(target: &Target) -> Result<Option<Existing>, ToolError> {
    match read_existing(target) {
        Ok(existing) => Ok(Some(existing)),
        Err(LoadError::NotFound) => Ok(None),
        Err(LoadError::Directory) => {
            Err(ToolError::InvalidInput(format!("{} is a directory. Give the path of a file.", target.raw)))
        }
        Err(err) => Err(load_failure(&target.raw, err)),
    }
}

/// The model-facing error of a load of `shown` that failed for a reason other than a missing
/// file or a directory.
pub(crate) fn load_failure(shown: &str, err: LoadError) -> ToolError {
    match err {
        LoadError::TooLarge { size } => ToolError::Failed(format!(
            "{shown} is {size} bytes; the file edit tools handle files up to 64 MiB. Use bash to change it."
        )),
        LoadError::Refused(err) => err,
        other => ToolError::Failed(format!("Ran into {other} while trying to read {shown}")),
    }
}

/// The read requirement and stale check of `write_file` and `edit_file`.
pub(crate) fn check_read(files: &Files<'_>, target: &Target, existing: &Existing) -> Result<(), ToolError> {
    match files.freshness(target, &existing.meta, &existing.bytes) {
        Freshness::NotRead => Err(ToolError::Failed(NOT_READ.to_owned())),
        Freshness::Changed => Err(ToolError::Failed(MODIFIED_SINCE_READ.to_owned())),
        Freshness::Fresh => Ok(()),
    }
}

/// What the file will hold: `content`, in CRLF when the text it replaces is CRLF and the
/// model wrote LF (a CRLF file stays CRLF).
fn written_content(old: Option<&str>, content: &str) -> String {
    if old.is_some_and(|text| dominant_ending(text) == LineEnding::CrLf) && !has_crlf(content) {
        return lf_to_crlf(content).into_owned();
    }
    content.to_owned()
}

fn write(files: &Files<'_>, input: WriteFileInput) -> Result<String, ToolError> {
    let target = files.target(&input.file_path, Access::Write)?;
    let shown = &target.raw;
    let existing = load_existing(&target)?;
    if let Some(existing) = &existing {
        check_read(files, &target, existing)?;
    }
    let content = written_content(existing.as_ref().and_then(|e| as_text(&e.bytes)), &input.content);
    let existed = existing.is_some();
    let before = existing.map_or(Before::Absent, Existing::into_before);
    files.write(&target, content.as_bytes(), before).map_err(|err| write_failure(shown, err))?;
    Ok(match existed {
        false => format!("File created successfully at: {shown}"),
        true => {
            let lines = memchr::memchr_iter(b'\n', content.as_bytes()).count()
                + usize::from(!content.is_empty() && !content.ends_with('\n'));
            format!("The file {shown} has been overwritten ({lines} lines).")
        }
    })
}
