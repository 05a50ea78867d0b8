//! The directory walk shared by `glob`, `grep` and `view` of a directory: ripgrep's own
//! walker with ripgrep's default filters, so the tools see exactly the files `rg` would
//! search — `.gitignore` (inside a git repository), `.ignore`, `.rgignore`, the global git
//! excludes and `.git/info/exclude` honoured, hidden entries skipped, symlinks not followed —
//! and nothing else skipped. The ignore files are read by [`IgnoreRules`] (beneath the root,
//! never blocking) instead of by the walker, which would open them by name. A walk can be
//! narrowed to a chain of leading directory names (`glob`'s literal prefix): it still starts
//! at the root, so those directories pass the same filters as any other and a symlink among
//! them is not followed. The walker lists directories by path; the tools then open or stat
//! each file beneath the root ([`search_root`]).

use std::path::Path;

use ignore::WalkBuilder;
use ignore::overrides::Override;
use ignore::types::Types;
use tackle_core::ToolError;

use crate::fs::Target;
use crate::fs::beneath::Beneath;
use crate::search::ignore_files::IgnoreRules;

/// How to walk.
#[derive(Debug, Default)]
pub struct WalkOptions {
    /// Walk hidden entries too (`.git` is still skipped).
    pub hidden: bool,
    /// ripgrep `-g` globs.
    pub overrides: Option<Override>,
    /// ripgrep `-t` types.
    pub types: Option<Types>,
    /// Depth limit below the root.
    pub max_depth: Option<usize>,
    /// Directory names the walk must go through first: the entry at depth `d` (1-based) must
    /// be named `within[d - 1]`; deeper entries are not constrained.
    pub within: Vec<String>,
}

/// A walker over `root` (under `beneath`'s root) with ripgrep's defaults and `options`; the
/// global git excludes are anchored at `workspace`.
///
/// The walker itself reads no file: its ignore-file readers are off, and one filter applies
/// what ripgrep's would, in ripgrep's order — a `-g` glob that matches decides alone; then
/// the ignore files ([`IgnoreRules`]); a `-t` type leaves out what it does not select; a
/// hidden entry is skipped unless an ignore file's `!` line or the glob or type keeps it.
pub fn walker(
    root: &Path,
    options: WalkOptions,
    beneath: &Beneath,
    workspace: &Path,
) -> Result<WalkBuilder, ToolError> {
    let handle =
        beneath.try_clone().map_err(|err| ToolError::Failed(format!("Ran into {err} while walking a tree")))?;
    let rules = IgnoreRules::new(handle, workspace);
    let mut builder = WalkBuilder::new(root);
    builder.standard_filters(false).max_depth(options.max_depth);
    let WalkOptions { hidden, overrides, types, within, .. } = options;
    if let Some(overrides) = &overrides {
        builder.overrides(overrides.clone());
    }
    if let Some(types) = &types {
        builder.types(types.clone());
    }
    builder.filter_entry(move |entry| {
        let name = entry.file_name();
        if hidden && name == ".git" {
            return false;
        }
        let outside_within =
            entry.depth().checked_sub(1).and_then(|i| within.get(i)).is_some_and(|wanted| name != wanted.as_str());
        if outside_within {
            return false;
        }
        let path = entry.path();
        let is_dir = entry.file_type().is_some_and(|kind| kind.is_dir());
        // The walker has applied the glob and the type already; a glob that matched either
        // way also decides over the ignore files and the hidden rule.
        if overrides.as_ref().is_some_and(|o| !o.matched(path, is_dir).is_none()) {
            return true;
        }
        let matched = rules.matched(path, is_dir);
        if matched.is_ignore() {
            return false;
        }
        let kept = matched.is_whitelist() || types.as_ref().is_some_and(|t| t.matched(path, is_dir).is_whitelist());
        hidden || kept || !name.as_encoded_bytes().starts_with(b".")
    });
    Ok(builder)
}

/// A path for the model: relative to the workspace when inside it, else absolute.
pub fn display_path(path: &Path, workspace: &Path) -> String {
    match path.strip_prefix(workspace) {
        Ok(relative) if relative.as_os_str().is_empty() => ".".to_owned(),
        Ok(relative) => relative.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

/// Resolves an optional directory argument (default: the workspace) for reading, and opens
/// the root it lies in: every walked file is opened or examined beneath it
/// ([`crate::fs::beneath::DirCache`]), so a directory swapped for a symlink during the walk
/// cannot lead a search or a listing outside.
pub fn search_root(ctx: &tackle_core::ToolContext, path: Option<&str>) -> Result<(Target, Beneath), ToolError> {
    // The first file tool of a session completes an interrupted multi-file write first.
    crate::fs::session::file_state(ctx);
    let target = crate::fs::target(ctx, path.unwrap_or("."), tackle_core::Access::Read)?;
    let beneath = target
        .beneath()
        .map_err(|err| ToolError::Failed(format!("Ran into {err} while trying to read {}", target.raw)))?;
    Ok((target, beneath))
}

/// Walks `builder`'s tree on several threads (as ripgrep does) and collects what `per_file`
/// makes of each file, in no particular order. Each thread has its own `state` (made by
/// `new_state`), so costly things such as a searcher and its buffers are made once per
/// thread, not once per file. Stops early when `cancel` fires.
pub fn collect_files<S, T, N, F>(
    builder: &WalkBuilder,
    cancel: &tokio_util::sync::CancellationToken,
    new_state: N,
    per_file: F,
) -> Vec<T>
where
    T: Send,
    S: Send,
    N: Fn() -> S + Sync,
    F: Fn(&mut S, &ignore::DirEntry) -> Option<T> + Sync,
{
    let shared = std::sync::Mutex::new(Vec::new());
    let mut visitors = Visitors { shared: &shared, new_state: &new_state, per_file: &per_file, cancel };
    builder.build_parallel().visit(&mut visitors);
    shared.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner)
}

struct Visitors<'a, T, N, F> {
    shared: &'a std::sync::Mutex<Vec<T>>,
    new_state: &'a N,
    per_file: &'a F,
    cancel: &'a tokio_util::sync::CancellationToken,
}

impl<'a, S, T, N, F> ignore::ParallelVisitorBuilder<'a> for Visitors<'a, T, N, F>
where
    S: Send + 'a,
    T: Send,
    N: Fn() -> S + Sync,
    F: Fn(&mut S, &ignore::DirEntry) -> Option<T> + Sync,
{
    fn build(&mut self) -> Box<dyn ignore::ParallelVisitor + 'a> {
        Box::new(Visitor {
            state: (self.new_state)(),
            local: Vec::new(),
            shared: self.shared,
            per_file: self.per_file,
            cancel: self.cancel,
        })
    }
}

/// One thread's visitor: collects locally, hands its items over when the thread is done.
struct Visitor<'a, S, T: Send, F> {
    state: S,
    local: Vec<T>,
    shared: &'a std::sync::Mutex<Vec<T>>,
    per_file: &'a F,
    cancel: &'a tokio_util::sync::CancellationToken,
}

impl<S: Send, T: Send, F: Fn(&mut S, &ignore::DirEntry) -> Option<T> + Sync> ignore::ParallelVisitor
    for Visitor<'_, S, T, F>
{
    fn visit(&mut self, entry: Result<ignore::DirEntry, ignore::Error>) -> ignore::WalkState {
        if self.cancel.is_cancelled() {
            return ignore::WalkState::Quit;
        }
        if let Ok(entry) = entry
            && entry.file_type().is_some_and(|kind| kind.is_file())
            && let Some(item) = (self.per_file)(&mut self.state, &entry)
        {
            self.local.push(item);
        }
        ignore::WalkState::Continue
    }
}

impl<S, T: Send, F> Drop for Visitor<'_, S, T, F> {
    fn drop(&mut self) {
        let mut shared = self.shared.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        shared.append(&mut self.local);
    }
}
