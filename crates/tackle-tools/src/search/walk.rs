//! The directory walk shared by `glob` and `grep`: ripgrep's own walker with ripgrep's
//! default filters, so both tools see exactly the files `rg` would search — `.gitignore`
//! (inside a git repository), `.ignore`, `.rgignore`, the global git excludes and
//! `.git/info/exclude` honoured, hidden entries skipped, symlinks not followed — and nothing
//! else skipped. A walk can be narrowed to a chain of leading directory names (`glob`'s
//! literal prefix): it still starts at the root, so those directories pass the same filters
//! as any other and a symlink among them is not followed.

use std::path::{Path, PathBuf};

use ignore::WalkBuilder;
use ignore::overrides::Override;
use ignore::types::Types;
use tackle_core::ToolError;
use tackle_core::permission::rules::ReadRules;

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
    /// Paths `Read(...)` deny rules hide: skipped silently, as if they did not exist.
    pub hidden_by_rules: ReadRules,
}

/// A walker over `root` with ripgrep's defaults and `options`.
pub fn walker(root: &Path, options: WalkOptions) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder.standard_filters(true).hidden(!options.hidden).max_depth(options.max_depth);
    builder.add_custom_ignore_filename(".rgignore");
    if let Some(overrides) = options.overrides {
        builder.overrides(overrides);
    }
    if let Some(types) = options.types {
        builder.types(types);
    }
    let (skip_git, within, rules) = (options.hidden, options.within, options.hidden_by_rules);
    if skip_git || !within.is_empty() || rules.0.is_some() {
        builder.filter_entry(move |entry| {
            if skip_git && entry.file_name() == ".git" {
                return false;
            }
            if rules.hides(entry.path()) {
                return false;
            }
            entry
                .depth()
                .checked_sub(1)
                .and_then(|i| within.get(i))
                .is_none_or(|name| entry.file_name() == name.as_str())
        });
    }
    builder
}

/// A path for the model: relative to the workspace when inside it, else absolute.
pub fn display_path(path: &Path, workspace: &Path) -> String {
    match path.strip_prefix(workspace) {
        Ok(relative) if relative.as_os_str().is_empty() => ".".to_owned(),
        Ok(relative) => relative.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

/// Resolves an optional directory argument (default: the workspace) for reading.
pub fn search_root(ctx: &tackle_core::ToolContext, path: Option<&str>) -> Result<(String, PathBuf), ToolError> {
    let raw = path.unwrap_or(".");
    let resolved = ctx.resolve_path(raw, tackle_core::Access::Read)?;
    Ok((raw.to_owned(), resolved))
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
