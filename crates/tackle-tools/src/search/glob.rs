//! `glob` (Claude Code's `Glob`, docs/reference/tools.md#glob): files whose path, relative to the searched
//! directory, matches a glob, newest first. `*` stays within one path component (`*.rs` is
//! the top level only; `**/*.rs` is every depth), as in Claude Code and shells.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Component, Path, PathBuf};
use std::time::SystemTime;

use globset::GlobBuilder;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_core::spec::PathAccess;
use tackle_core::{Access, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

use crate::fs::beneath::regular_mtime;
use crate::fs::blocking;
use crate::search::bounds::{MAX_GLOB_BYTES, check_length};
use crate::search::walk::{Kind, WalkOptions, display_path, search_root, walk};
use tackle_policy::permission::rules::ReadRules;

/// The wire name.
pub const NAME: &str = "glob";
/// Paths listed at most.
pub const MAX_RESULTS: usize = 100;

/// `glob`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobInput {
    /// The pattern, relative to `path`: `**/*.rs` (any depth), `src/**/*.{ts,tsx}`, `*.md`
    /// (top level only), `[A-Z]*.txt`.
    pub pattern: String,
    /// The directory to search (default: the workspace root).
    pub path: Option<String>,
}

/// The `glob` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct Glob;

impl Tool for Glob {
    type Input = GlobInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            NAME,
            "Find files by name pattern, e.g. `**/*.rs` or `src/**/*.{ts,tsx}`; `*` does not cross `/`. Returns \
             workspace-relative paths, newest first (at most 100). Files ignored by .gitignore and hidden files are \
             skipped unless the pattern names a hidden directory. Use grep to search file contents.",
        )
        .title("Find files")
        .alias("Glob")
        .read_only()
        .idempotent()
        .concurrency_safe()
        .path_param("path", PathAccess::Read)
    }

    async fn call(&self, input: GlobInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        blocking(ctx, move |ctx| glob(ctx, &input)).await
    }
}

/// Whether a pattern component has glob syntax.
fn is_literal(component: &str) -> bool {
    !component.contains(['*', '?', '[', ']', '{', '}', '\\'])
}

/// How many leading components are literal directory names (the last component, the file
/// name, never counts).
fn literal_prefix(components: &[&str]) -> usize {
    components.iter().take(components.len().saturating_sub(1)).take_while(|c| is_literal(c)).count()
}

/// The refusal of a pattern with a `..` component. `glob` lists files below `path` only (as
/// `rg --files` does, whose paths never hold `..`), so such a pattern could never match. One
/// that climbs out of the workspace gets the path policy's own refusal (docs/reference/safety.md#path-policy);
/// otherwise the message says which `path` and pattern would search what was meant.
fn climbing_refusal(ctx: &ToolContext, input: &GlobInput, components: &[&str]) -> ToolError {
    let last = components.iter().rposition(|c| *c == "..").unwrap_or_default();
    let directory = last + 1 + literal_prefix(&components[last + 1..]);
    let climbed = components[..directory].join("/");
    let written = match input.path.as_deref().map(|p| p.trim_end_matches('/')) {
        Some("") => format!("/{climbed}"),
        Some(path) => format!("{path}/{climbed}"),
        None => climbed,
    };
    match ctx.resolve_path(&written, Access::Read) {
        Err(err) => err,
        Ok(resolved) => ToolError::InvalidInput(format!(
            "The glob pattern {} contains '..'; glob lists only files below `path`. To search {written}, set path \
             to {} and the pattern to {}.",
            input.pattern,
            display_path(&resolved, ctx.workspace()),
            if directory < components.len() { components[directory..].join("/") } else { "*".to_owned() }
        )),
    }
}

fn glob(ctx: &ToolContext, input: &GlobInput) -> Result<ToolOutput, ToolError> {
    check_length("glob", &input.pattern, MAX_GLOB_BYTES)?;
    let (target, beneath) = search_root(ctx, input.path.as_deref())?;
    let root = &target.path;
    if !root.is_dir() {
        return Err(ToolError::NotFound(format!("Directory does not exist: {}", target.raw)));
    }
    let pattern = relative_pattern(&input.pattern, root)?;
    let components: Vec<&str> = pattern.split('/').filter(|c| !c.is_empty() && *c != ".").collect();
    if components.contains(&"..") {
        return Err(climbing_refusal(ctx, input, &components));
    }
    let matcher = GlobBuilder::new(&components.join("/"))
        .literal_separator(true)
        .build()
        .map_err(|err| ToolError::InvalidInput(format!("Invalid glob pattern '{}': {}", input.pattern, err.kind())))?
        .compile_matcher();
    let hidden = components.iter().any(|c| c.starts_with('.'));
    // The walk starts at the root, so the pattern's literal leading directories pass the
    // ignore rules, the hidden and `.git` skips and the no-symlink rule like any other
    // directory; it goes only through them, and only as deep as the pattern can match.
    let literal = literal_prefix(&components);
    let within = components[..literal].iter().map(|c| (*c).to_owned()).collect();
    let max_depth = (!components[literal..].iter().any(|c| c.contains("**"))).then_some(components.len());
    let hidden_by_rules = (*ctx.state().get::<ReadRules>()).clone();
    let options = WalkOptions { hidden, max_depth, within, hidden_by_rules, ..WalkOptions::default() };
    let root_bytes = root.as_os_str().as_bytes();
    let skip = if root_bytes.ends_with(b"/") { root_bytes.len() } else { root_bytes.len() + 1 };
    let mut found: Vec<(SystemTime, PathBuf)> = walk(
        &target,
        &beneath,
        ctx.workspace(),
        options,
        ctx.cancel_token(),
        || (),
        |(), entry| {
            if entry.kind != Kind::File {
                return None;
            }
            // Walked paths start with the root as given: slicing is much cheaper than
            // `Path::strip_prefix` over 100,000 paths.
            let bytes = entry.path.as_os_str().as_bytes();
            let relative = Path::new(OsStr::from_bytes(bytes.get(skip..)?));
            if !matcher.is_match(relative) {
                return None;
            }
            // Examined through its directory: still a regular file, never a link.
            Some((regular_mtime(&entry.stat()?)?, entry.path.to_owned()))
        },
    )?;
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let truncated = found.len() > MAX_RESULTS;
    found.truncate(MAX_RESULTS);
    let names: Vec<String> = found.iter().map(|(_, path)| display_path(path, ctx.workspace())).collect();
    let structured = json!({"filenames": names, "num_files": names.len(), "truncated": truncated});
    let mut text = if names.is_empty() { "No files found".to_owned() } else { names.join("\n") };
    if truncated {
        text.push_str("\n(Results are truncated. Consider using a more specific path or pattern.)");
    }
    Ok(ToolOutput::text(text).with_structured(structured))
}

/// The pattern relative to the searched directory: a leading `./` is dropped, and an
/// absolute pattern inside that directory is made relative.
fn relative_pattern(pattern: &str, root: &Path) -> Result<String, ToolError> {
    let pattern = pattern.trim();
    if pattern.is_empty() {
        return Err(ToolError::InvalidInput("The glob pattern is empty; give one such as **/*.rs".into()));
    }
    if let Some(absolute) = pattern.strip_prefix('/') {
        let absolute = Path::new("/").join(absolute);
        let relative = absolute.strip_prefix(root).map_err(|_| {
            ToolError::InvalidInput(format!(
                "The glob pattern {pattern} is absolute and not inside the searched directory; give a pattern \
                 relative to `path`, such as **/*.rs"
            ))
        })?;
        return Ok(relative
            .components()
            .filter_map(|c| match c {
                Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
                Component::ParentDir => Some("..".to_owned()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("/"));
    }
    Ok(pattern.trim_start_matches("./").to_owned())
}
