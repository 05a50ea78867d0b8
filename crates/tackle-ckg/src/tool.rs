//! The `ckg` tool (docs/ckg.md): Trae's `search_function`, `search_class` and
//! `search_class_method`, plus `outline`, `references`, `search` and `repo_map`, answered
//! from the index of the workspace, refreshed before every query.
//!
//! A session keeps its open indexes in its state ([`CkgState`]) and, on first use,
//! subscribes to the session's file-change announcements: a file tool's write refreshes just
//! that file at once. Edits made any other way (`bash`) are caught by the refresh before the
//! next query. The index of the workspace lives in its `.tackle/ckg/`; a codebase path in
//! another root gets its index inside the workspace's `.tackle/ckg/roots/`, so Tackle never
//! writes into a root it may only read.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_core::changes::FileChanges;
use tackle_core::spec::PathAccess;
use tackle_core::{Access, Progress, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

use crate::answer;
use crate::error::CkgError;
use crate::index::{Index, IndexOptions};
use crate::language::Language;
use crate::query::map::CHARS_PER_TOKEN;
use crate::query::{Category, Within};
use crate::render;
use crate::store::INDEX_DIR;

/// The wire name.
pub const NAME: &str = "ckg";
/// Default and largest `max_results`.
pub const DEFAULT_MAX_RESULTS: u32 = 20;
pub const MAX_RESULTS: u32 = 200;
/// Default and largest `max_tokens` of `repo_map`.
pub const DEFAULT_MAX_TOKENS: u32 = 2_000;
pub const MAX_TOKENS: u32 = 16_000;

/// A command of the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CkgCommand {
    SearchFunction,
    SearchClass,
    SearchClassMethod,
    Outline,
    References,
    Search,
    RepoMap,
}

/// The tool's arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CkgInput {
    /// `search_function`, `search_class`, `search_class_method` (exact name), `outline` (a
    /// file's definitions), `references` (who calls or uses a name), `search` (fuzzy, any
    /// kind) or `repo_map` (the most used definitions of the repository).
    pub command: CkgCommand,
    /// The name to look for (every command but `outline` and `repo_map`).
    pub identifier: Option<String>,
    /// The codebase folder to search (default: the workspace); for `outline`, the file; for
    /// `repo_map`, an optional sub-folder.
    pub path: Option<String>,
    /// Print each definition's source (Trae's three commands; default true).
    pub print_body: Option<bool>,
    /// `references` and `search`: how many entries to list (default 20).
    #[schemars(range(min = 1, max = 200))]
    pub max_results: Option<u32>,
    /// `repo_map`: the size of the map in tokens (default 2000).
    #[schemars(range(min = 1, max = 16000))]
    pub max_tokens: Option<u32>,
}

/// The `ckg` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct Ckg;

impl Tool for Ckg {
    type Input = CkgInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            NAME,
            "Query the code knowledge graph of the workspace: definitions and references extracted with tree-sitter \
             from Python, Rust, JavaScript, TypeScript, Go, Java, C and C++, kept up to date with every edit.\n\
             * `search_function`, `search_class`, `search_class_method`: definitions with exactly this name, with \
             file, lines and (unless print_body is false) the source; classes list their fields and methods\n\
             * `outline`: the definitions of one file (path), nested, with signatures\n\
             * `references`: where a name is called, inherited, implemented or imported, callers first\n\
             * `search`: fuzzy search over names and qualified names, best first\n\
             * `repo_map`: the most important definitions of the repository (or of path), ranked by how much \
             the rest of the code uses them — a good first look at an unfamiliar codebase\n\
             Long outputs end with `<response clipped>`.",
        )
        .title("Code knowledge graph")
        .read_only()
        .idempotent()
        .concurrency_safe()
        .path_param("path", PathAccess::Read)
    }

    fn timeout(&self, _input: &CkgInput) -> Option<Duration> {
        // The first query of a session may build the index of a large tree.
        Some(Duration::from_secs(600))
    }

    async fn call(&self, input: CkgInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let ctx = ctx.clone();
        tokio::task::spawn_blocking(move || run(&ctx, &input))
            .await
            .unwrap_or_else(|err| Err(ToolError::Internal(format!("ckg task failed: {err}"))))
    }
}

/// The open indexes of a session, by root.
#[derive(Default)]
pub struct CkgState {
    indexes: Mutex<HashMap<PathBuf, Arc<Mutex<Index>>>>,
    subscribed: std::sync::OnceLock<()>,
}

impl std::fmt::Debug for CkgState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CkgState").finish_non_exhaustive()
    }
}

impl CkgState {
    /// The open index of `root`, opened (kept in `base/parts…`) on first use.
    fn index(&self, root: &Path, base: &Path, parts: &[&str]) -> Result<Arc<Mutex<Index>>, CkgError> {
        let mut indexes = self.indexes.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(index) = indexes.get(root) {
            return Ok(Arc::clone(index));
        }
        let options = IndexOptions { quick_check: true, ..IndexOptions::default() };
        let index = Arc::new(Mutex::new(Index::open_at(root, base, parts, options)?));
        indexes.insert(root.to_path_buf(), Arc::clone(&index));
        Ok(index)
    }

    /// Refreshes `path` in every open index holding it (a file tool wrote or removed it).
    fn file_changed(&self, path: &Path) {
        let indexes: Vec<(PathBuf, Arc<Mutex<Index>>)> = self
            .indexes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(root, index)| (root.clone(), Arc::clone(index)))
            .collect();
        for (root, index) in indexes {
            if path.starts_with(&root) {
                let result = index.lock().unwrap_or_else(PoisonError::into_inner).refresh_files(&[path.to_path_buf()]);
                if let Err(err) = result {
                    // The refresh before the next query catches up.
                    tracing::debug!("ckg: refreshing {} after an edit failed: {err}", path.display());
                }
            }
        }
    }

    /// Subscribes to the session's file changes, once.
    fn subscribe(self: &Arc<Self>, ctx: &ToolContext) {
        self.subscribed.get_or_init(|| {
            let state: Weak<CkgState> = Arc::downgrade(self);
            ctx.state().get::<FileChanges>().subscribe(Arc::new(move |path: &Path| {
                if let Some(state) = state.upgrade() {
                    state.file_changed(path);
                }
            }));
        });
    }
}

/// Where the index covering `dir` (a resolved directory) lives: the workspace's own index
/// when `dir` is inside the workspace, else one for `dir` under the workspace's `.tackle/`.
fn index_location(workspace: &Path, dir: &Path) -> (PathBuf, Vec<String>) {
    if dir.starts_with(workspace) {
        return (workspace.to_path_buf(), INDEX_DIR.iter().map(|s| (*s).to_owned()).collect());
    }
    let hash = blake3::hash(dir.as_os_str().as_encoded_bytes()).to_hex();
    let mut parts: Vec<String> = INDEX_DIR.iter().map(|s| (*s).to_owned()).collect();
    parts.extend(["roots".to_owned(), hash[..16].to_owned()]);
    (dir.to_path_buf(), parts)
}

fn run(ctx: &ToolContext, input: &CkgInput) -> Result<ToolOutput, ToolError> {
    let identifier = match input.command {
        CkgCommand::Outline | CkgCommand::RepoMap => None,
        _ => Some(
            input
                .identifier
                .as_deref()
                .filter(|id| !id.trim().is_empty())
                .ok_or_else(|| ToolError::InvalidInput(format!("No identifier provided for the {NAME} tool")))?,
        ),
    };
    let raw = match (input.command, input.path.as_deref()) {
        (CkgCommand::Outline, None) => {
            return Err(ToolError::InvalidInput(format!(
                "No path provided for the {NAME} tool (outline needs a file)"
            )));
        }
        (_, path) => path.unwrap_or("."),
    };
    let resolved = ctx.resolve_path(raw, Access::Read)?;
    let meta = std::fs::metadata(&resolved)
        .map_err(|_| ToolError::NotFound(CkgError::NoSuchPath(raw.to_owned()).to_string()))?;
    let outline = input.command == CkgCommand::Outline;
    if outline && (!meta.is_file() || Language::of_path(&resolved).is_none()) {
        return Err(ToolError::InvalidInput(CkgError::Unsupported(raw.to_owned()).to_string()));
    }
    if !outline && !meta.is_dir() {
        return Err(ToolError::InvalidInput(CkgError::NotADirectory(raw.to_owned()).to_string()));
    }
    let dir =
        if outline { resolved.parent().map_or_else(|| resolved.clone(), Path::to_path_buf) } else { resolved.clone() };
    let (root, parts) = index_location(ctx.workspace(), &dir);
    let base = ctx.workspace();
    let state = ctx.state().get::<CkgState>();
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    let index = state.index(&root, base, &parts).map_err(failed)?;
    state.subscribe(ctx);
    let mut index = index.lock().unwrap_or_else(PoisonError::into_inner);
    let mut report = |done: usize, total: usize| {
        ctx.progress(Progress {
            progress: done as f64,
            total: Some(total as f64),
            message: Some("indexing".to_owned()),
        });
    };
    index.refresh(&mut report, &|| ctx.is_cancelled()).map_err(failed)?;

    let rel = dir.strip_prefix(&root).map(|p| p.as_os_str().as_encoded_bytes().to_vec()).unwrap_or_default();
    let within = Within::folder(&rel);
    let max_results = input.max_results.unwrap_or(DEFAULT_MAX_RESULTS).clamp(1, MAX_RESULTS) as usize;
    let target = Target { raw, resolved: &resolved, within: &within };
    let (text, structured) =
        answer(&index, input, identifier.unwrap_or_default(), &target, max_results).map_err(failed)?;
    let mut text = text;
    for warning in index.take_warnings() {
        text.push_str(&format!("\n\nNote: {warning}"));
    }
    Ok(ToolOutput::text(text).with_structured(structured))
}

/// The path a call names: as written, resolved, and as a narrowing of the index.
struct Target<'a> {
    raw: &'a str,
    resolved: &'a Path,
    within: &'a Within,
}

/// Runs one command on a refreshed index: the text and the structured payload.
fn answer(
    index: &Index,
    input: &CkgInput,
    id: &str,
    target: &Target<'_>,
    max_results: usize,
) -> Result<answer::Answer, CkgError> {
    let within = target.within;
    let bodies = input.print_body.unwrap_or(true);
    match input.command {
        CkgCommand::SearchFunction => answer::definitions(index, Category::Function, id, within, bodies),
        CkgCommand::SearchClass => answer::definitions(index, Category::Class, id, within, bodies),
        CkgCommand::SearchClassMethod => answer::definitions(index, Category::Method, id, within, bodies),
        CkgCommand::Outline => answer::outline(index, target.resolved, target.raw, within),
        CkgCommand::References => answer::references(index, id, within, max_results, "max_results"),
        CkgCommand::Search => answer::search(index, id, within, max_results),
        CkgCommand::RepoMap => {
            // The map stays within every answer's cap: past 4,000 tokens, `max_tokens` gives
            // the best map of 16,000 characters.
            let tokens = input.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS).clamp(1, MAX_TOKENS) as usize;
            answer::repo_map(index, within, tokens.min(render::MAX_OUTPUT_CHARS / CHARS_PER_TOKEN))
        }
    }
}

fn failed(err: CkgError) -> ToolError {
    match err {
        CkgError::NoSuchPath(_) => ToolError::NotFound(err.to_string()),
        CkgError::NotADirectory(_) | CkgError::Unsupported(_) => ToolError::InvalidInput(err.to_string()),
        other => ToolError::Failed(other.to_string()),
    }
}
