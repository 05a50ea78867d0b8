//! `grep` (Claude Code's `Grep`, docs/reference/tools.md#grep): a regex search over files, built on
//! ripgrep's crates with ripgrep's defaults, so it searches the same files and finds the same
//! lines as `rg` with the same options. Files are searched in parallel; the results are put
//! in a stable order (path order for lines and counts, newest first for file lists) and
//! paged with `head_limit` / `offset`.

use std::path::PathBuf;
use std::time::SystemTime;

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkContextKind, SinkMatch};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tackle_core::spec::PathAccess;
use tackle_core::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

use crate::fs::beneath::regular_mtime;
use crate::fs::blocking;
use crate::search::bounds::{
    MAX_GLOB_BYTES, MAX_REGEX_BYTES, REGEX_DFA_SIZE_LIMIT, REGEX_NEST_LIMIT, REGEX_SIZE_LIMIT, check_length,
};
use crate::search::walk::{Entry, Kind, WalkOptions, display_path, search_root, walk};
use tackle_policy::permission::rules::ReadRules;

/// The wire name.
pub const NAME: &str = "grep";
/// Entries shown when `head_limit` is not given.
pub const DEFAULT_HEAD_LIMIT: usize = 250;
/// Characters of a matching line shown.
pub const MAX_LINE_CHARS: usize = 2000;

/// What `grep` reports: matching lines (with context lines if asked), the files that match
/// (the default), or the number of matches per file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    Content,
    #[default]
    FilesWithMatches,
    Count,
}

/// `grep`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepInput {
    /// The regular expression (Rust regex syntax, as ripgrep), e.g. `fn\s+main` or `TODO|FIXME`.
    pub pattern: String,
    /// The file or directory to search (default: the workspace root).
    pub path: Option<String>,
    /// Only files matching this glob, as ripgrep's `-g`: `*.rs`, `**/*.{ts,tsx}`, `!*.min.js`.
    pub glob: Option<String>,
    /// Only files of this ripgrep type: `rust`, `py`, `js`, `ts`, `go`, `java`, `c`, `cpp`, `md`, `json`, …
    #[serde(rename = "type")]
    pub file_type: Option<String>,
    /// `files_with_matches` (default), `content` (matching lines) or `count` (per file).
    pub output_mode: Option<OutputMode>,
    /// Case-insensitive matching.
    #[serde(rename = "-i")]
    pub case_insensitive: Option<bool>,
    /// Line numbers in `content` mode (default true).
    #[serde(rename = "-n")]
    pub line_numbers: Option<bool>,
    /// Lines of context after each match (`content` mode).
    #[serde(rename = "-A")]
    #[schemars(range(min = 0))]
    pub after: Option<u64>,
    /// Lines of context before each match (`content` mode).
    #[serde(rename = "-B")]
    #[schemars(range(min = 0))]
    pub before: Option<u64>,
    /// Lines of context before and after each match (`content` mode); `-A` and `-B` win for
    /// their side.
    #[serde(rename = "-C")]
    #[schemars(range(min = 0))]
    pub context: Option<u64>,
    /// `.` also matches newlines and matches may span lines.
    pub multiline: Option<bool>,
    /// Entries shown after `offset` (default 250; 0 means all).
    #[schemars(range(min = 0))]
    pub head_limit: Option<u64>,
    /// Entries skipped first (default 0).
    #[schemars(range(min = 0))]
    pub offset: Option<u64>,
}

/// The `grep` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct Grep;

impl Tool for Grep {
    type Input = GrepInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            NAME,
            "Search file contents with a regular expression (ripgrep: Rust regex syntax, .gitignore respected, \
             hidden and binary files skipped). `output_mode` is `files_with_matches` (default: matching files, newest \
             first), `content` (matching lines as path:line:text, with -A/-B/-C context) or `count`. Narrow with \
             `path`, `glob` (e.g. `*.rs`) or `type` (e.g. `py`). Results are paged with `head_limit` and `offset`. \
             Use this rather than running grep or rg in the shell.",
        )
        .title("Search file contents")
        .alias("Grep")
        .read_only()
        .idempotent()
        .concurrency_safe()
        .path_param("path", PathAccess::Read)
    }

    async fn call(&self, input: GrepInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        blocking(ctx, move |ctx| grep(ctx, &input)).await
    }
}

/// What one file yielded.
#[derive(Debug)]
struct FileResult {
    path: PathBuf,
    modified: Option<SystemTime>,
    /// Matches: one per matching line, or per multi-line match (1 in files mode).
    matches: u64,
    /// Formatted output lines (content mode).
    lines: Vec<String>,
}

fn grep(ctx: &ToolContext, input: &GrepInput) -> Result<ToolOutput, ToolError> {
    let (target, beneath) = search_root(ctx, input.path.as_deref())?;
    let root = &target.path;
    if !root.exists() {
        return Err(ToolError::NotFound(format!("Path does not exist: {}", target.raw)));
    }
    let mode = input.output_mode.unwrap_or_default();
    let multiline = input.multiline.unwrap_or(false);
    let matcher = matcher(&input.pattern, input.case_insensitive.unwrap_or(false), multiline)?;
    let mut options = WalkOptions::default();
    if let Some(glob) = &input.glob {
        check_length("glob", glob, MAX_GLOB_BYTES)?;
        let mut overrides = ignore::overrides::OverrideBuilder::new(root);
        let built = match overrides.add(glob) {
            Ok(_) => overrides.build(),
            Err(err) => Err(err),
        };
        options.overrides = Some(
            built.map_err(|err| ToolError::InvalidInput(format!("Invalid glob pattern '{glob}': {}", plain(&err))))?,
        );
    }
    if let Some(name) = &input.file_type {
        let mut types = ignore::types::TypesBuilder::new();
        types.add_defaults();
        types.select(name);
        options.types = Some(types.build().map_err(|_| ToolError::InvalidInput(format!("Unknown file type: {name}")))?);
    }
    let context = input.context.unwrap_or(0);
    let (before, after) = match mode {
        OutputMode::Content => (input.before.unwrap_or(context), input.after.unwrap_or(context)),
        _ => (0, 0),
    };
    let numbers = input.line_numbers.unwrap_or(true);
    let workspace = ctx.workspace().to_owned();
    options.hidden_by_rules = (*ctx.state().get::<ReadRules>()).clone();
    let new_state = || {
        SearcherBuilder::new()
            .line_number(true)
            .multi_line(multiline)
            .before_context(usize::try_from(before).unwrap_or(usize::MAX))
            .after_context(usize::try_from(after).unwrap_or(usize::MAX))
            .binary_detection(BinaryDetection::quit(b'\x00'))
            .build()
    };
    let search = |searcher: &mut Searcher, entry: &Entry<'_>| {
        if entry.kind != Kind::File {
            return None;
        }
        // Opened through its directory (never a link), not blocking, and searched only if it
        // is a regular file.
        let (file, stat) = entry.open()?;
        let mtime = regular_mtime(&stat)?;
        let mut sink = Collect {
            mode,
            path: entry.path,
            workspace: &workspace,
            shown: None,
            numbers,
            matches: 0,
            lines: Vec::new(),
        };
        searcher.search_file(&matcher, &file, &mut sink).ok()?;
        if sink.matches == 0 {
            return None;
        }
        let modified = match mode {
            OutputMode::FilesWithMatches => Some(mtime),
            _ => None,
        };
        Some(FileResult { path: entry.path.to_owned(), modified, matches: sink.matches, lines: sink.lines })
    };
    let mut results = walk(&target, &beneath, &workspace, options, ctx.cancel_token(), new_state, search)?;
    if ctx.is_cancelled() {
        return Err(ToolError::Cancelled("grep was cancelled before it finished.".into()));
    }
    match mode {
        OutputMode::FilesWithMatches => {
            results.sort_by(|a, b| b.modified.cmp(&a.modified).then_with(|| a.path.cmp(&b.path)));
        }
        _ => results.sort_by(|a, b| a.path.cmp(&b.path)),
    }
    Ok(report(mode, &results, &workspace, input, before > 0 || after > 0))
}

/// The matcher, configured as ripgrep configures it, within the bounds of
/// [`crate::search::bounds`].
fn matcher(pattern: &str, case_insensitive: bool, multiline: bool) -> Result<grep_regex::RegexMatcher, ToolError> {
    check_length("regex", pattern, MAX_REGEX_BYTES)?;
    let mut builder = RegexMatcherBuilder::new();
    builder
        .multi_line(true)
        .case_insensitive(case_insensitive)
        .nest_limit(REGEX_NEST_LIMIT)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_DFA_SIZE_LIMIT);
    if multiline {
        builder.dot_matches_new_line(true);
    } else {
        builder.line_terminator(Some(b'\n'));
    }
    builder.build(pattern).map_err(|err| ToolError::InvalidInput(format!("Invalid regex: {}", plain(&err))))
}

/// An error's message on one line (regex errors come with a caret diagram).
fn plain(err: &dyn std::fmt::Display) -> String {
    err.to_string().lines().map(str::trim_end).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

/// Collects one file's matches.
struct Collect<'a> {
    mode: OutputMode,
    path: &'a std::path::Path,
    workspace: &'a std::path::Path,
    /// The path as lines show it, made at the first line (most files have none).
    shown: Option<String>,
    numbers: bool,
    matches: u64,
    lines: Vec<String>,
}

impl Collect<'_> {
    fn push(&mut self, separator: char, number: Option<u64>, bytes: &[u8]) {
        let shown = self.shown.get_or_insert_with(|| display_path(self.path, self.workspace));
        for (index, line) in split_lines(bytes).enumerate() {
            let text = String::from_utf8_lossy(line);
            let text = cut(&text);
            let number = number.map(|n| n + index as u64);
            self.lines.push(match (self.numbers, number) {
                (true, Some(n)) => format!("{shown}{separator}{n}{separator}{text}"),
                _ => format!("{shown}{separator}{text}"),
            });
        }
    }
}

impl Sink for Collect<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _searcher: &Searcher, found: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        match self.mode {
            OutputMode::FilesWithMatches => {
                self.matches = 1;
                Ok(false)
            }
            // ripgrep counts a multi-line match once.
            OutputMode::Count => {
                self.matches += 1;
                Ok(true)
            }
            OutputMode::Content => {
                self.matches += 1;
                self.push(':', found.line_number(), found.bytes());
                Ok(true)
            }
        }
    }

    fn context(&mut self, _searcher: &Searcher, context: &SinkContext<'_>) -> Result<bool, Self::Error> {
        if matches!(context.kind(), SinkContextKind::Before | SinkContextKind::After) {
            self.push('-', context.line_number(), context.bytes());
        }
        Ok(true)
    }

    fn context_break(&mut self, _searcher: &Searcher) -> Result<bool, Self::Error> {
        self.lines.push("--".to_owned());
        Ok(true)
    }
}

/// The lines of a match or context block, without their terminators.
fn split_lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    bytes.split(|&b| b == b'\n').map(|line| line.strip_suffix(b"\r").unwrap_or(line))
}

/// A line cut to [`MAX_LINE_CHARS`].
fn cut(text: &str) -> std::borrow::Cow<'_, str> {
    match text.char_indices().nth(MAX_LINE_CHARS) {
        None => std::borrow::Cow::Borrowed(text),
        Some((at, _)) => std::borrow::Cow::Owned(format!("{}… [line truncated]", &text[..at])),
    }
}

/// The model-facing report, paged.
fn report(
    mode: OutputMode,
    results: &[FileResult],
    workspace: &std::path::Path,
    input: &GrepInput,
    with_context: bool,
) -> ToolOutput {
    let limit = usize::try_from(input.head_limit.unwrap_or(DEFAULT_HEAD_LIMIT as u64)).unwrap_or(usize::MAX);
    let offset = usize::try_from(input.offset.unwrap_or(0)).unwrap_or(usize::MAX);
    let filenames: Vec<String> = results.iter().map(|r| display_path(&r.path, workspace)).collect();
    let mode_name = match mode {
        OutputMode::Content => "content",
        OutputMode::FilesWithMatches => "files_with_matches",
        OutputMode::Count => "count",
    };
    if results.is_empty() {
        let mut structured = json!({"mode": mode_name, "filenames": [], "num_files": 0});
        if mode != OutputMode::FilesWithMatches {
            structured["num_matches"] = json!(0);
        }
        return ToolOutput::text("No matches found").with_structured(structured);
    }
    let entries: Vec<String> = match mode {
        OutputMode::FilesWithMatches => filenames.clone(),
        OutputMode::Count => results.iter().zip(&filenames).map(|(r, name)| format!("{name}:{}", r.matches)).collect(),
        OutputMode::Content => {
            let mut lines = Vec::new();
            for (index, result) in results.iter().enumerate() {
                // ripgrep separates the context groups of different files too.
                if with_context && index > 0 {
                    lines.push("--".to_owned());
                }
                lines.extend(result.lines.iter().cloned());
            }
            lines
        }
    };
    let total = entries.len();
    let page: Vec<&String> = entries.iter().skip(offset).take(if limit == 0 { usize::MAX } else { limit }).collect();
    let shown = page.len();
    let cut_short = offset > 0 || offset + shown < total;
    let num_matches: u64 = results.iter().map(|r| r.matches).sum();
    let mut text = String::new();
    if mode == OutputMode::FilesWithMatches {
        text.push_str(&format!("Found {} files\n", results.len()));
    }
    text.push_str(&page.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n"));
    if mode == OutputMode::Count {
        text.push_str(&format!("\nFound {num_matches} matches across {} files", results.len()));
    }
    if cut_short {
        text.push_str(&format!(
            "\n(Showing {shown} of {total} entries from offset {offset}. Use offset={} for more.)",
            offset + shown
        ));
    }
    let mut structured = json!({"mode": mode_name, "filenames": filenames, "num_files": results.len()});
    if mode == OutputMode::Content {
        structured["content"] = Value::String(page.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n"));
    }
    if mode != OutputMode::FilesWithMatches {
        structured["num_matches"] = json!(num_matches);
    }
    if cut_short {
        structured["applied_limit"] = json!(limit);
        structured["applied_offset"] = json!(offset);
    }
    ToolOutput::text(text).with_structured(structured)
}
