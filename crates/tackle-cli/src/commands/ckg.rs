//! `tackle ckg index|search|refs|outline|map|stats`: the code index from the command line
//! (docs/ckg.md). Each command refreshes the index first, as the `ckg` tool does; `index`
//! shows a progress bar on a terminal. `--json` prints one JSON object.
//!
//! The index used is the workspace's (`--workspace`, default the current directory), kept in
//! its `.tackle/ckg/`; `index DIR` indexes DIR itself, and a FILE or DIR outside the
//! workspace is answered from its own folder's index.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use clap::{Args, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use tackle::code_index::{self as ckg, Category, Index, IndexOptions, RefreshReport, Within};

use crate::exit::{CommandResult, Failure};
use crate::stdout;

/// The `tackle ckg` commands.
#[derive(Debug, Subcommand)]
pub enum CkgCommand {
    /// Build or refresh the index of DIR (default: the workspace), kept in DIR/.tackle/ckg/.
    Index {
        /// The folder to index.
        dir: Option<PathBuf>,
        #[command(flatten)]
        common: CkgArgs,
    },
    /// Definitions named NAME: a function, class or method (exact name), or any kind (fuzzy).
    Search {
        /// function, class, method or any.
        kind: SearchKind,
        /// The name to look for.
        name: String,
        /// Print each definition's source.
        #[arg(long)]
        body: bool,
        #[command(flatten)]
        common: CkgArgs,
    },
    /// Where NAME is called, inherited, implemented or imported (calls first).
    Refs {
        /// The name to look for.
        name: String,
        /// List at most N references.
        #[arg(long, value_name = "N", default_value_t = 200)]
        max: usize,
        #[command(flatten)]
        common: CkgArgs,
    },
    /// The definitions of FILE, nested, with their signatures.
    Outline {
        /// The source file.
        file: PathBuf,
        #[command(flatten)]
        common: CkgArgs,
    },
    /// The most used definitions of DIR (default: the workspace), grouped by file.
    Map {
        /// A folder of the workspace (or another folder, with its own index).
        dir: Option<PathBuf>,
        /// The size of the map, in tokens (characters / 4).
        #[arg(long, value_name = "N", default_value_t = 2_000)]
        tokens: usize,
        #[command(flatten)]
        common: CkgArgs,
    },
    /// What the index holds: files, symbols, references, what was skipped.
    Stats {
        #[command(flatten)]
        common: CkgArgs,
    },
}

/// What `tackle ckg search` looks for.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum SearchKind {
    Function,
    Class,
    Method,
    Any,
}

/// Options of every `tackle ckg` command.
#[derive(Debug, Args)]
pub struct CkgArgs {
    /// The workspace whose index answers (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Runs one `tackle ckg` command.
pub fn run(command: CkgCommand) -> CommandResult {
    match command {
        CkgCommand::Index { dir, common } => {
            let root = match dir {
                Some(dir) => canonical(&dir)?,
                None => workspace(&common)?,
            };
            index(&root, common.json)
        }
        CkgCommand::Search { kind, name, body, common } => answer(&common, None, |index, within| match kind {
            SearchKind::Function => ckg::definitions(index, Category::Function, &name, within, body),
            SearchKind::Class => ckg::definitions(index, Category::Class, &name, within, body),
            SearchKind::Method => ckg::definitions(index, Category::Method, &name, within, body),
            SearchKind::Any => ckg::search(index, &name, within, SEARCH_ANY_MAX),
        }),
        CkgCommand::Refs { name, max, common } => {
            answer(&common, None, |index, within| ckg::references(index, &name, within, max, "--max"))
        }
        CkgCommand::Outline { file, common } => {
            let path = canonical(&file)?;
            let shown = file.display().to_string();
            answer(&common, path.parent(), |index, within| ckg::outline(index, &path, &shown, within))
        }
        CkgCommand::Map { dir, tokens, common } => {
            let dir = dir.as_deref().map(canonical).transpose()?;
            answer(&common, dir.as_deref(), |index, within| ckg::repo_map(index, within, tokens))
        }
        CkgCommand::Stats { common } => answer(&common, None, |index, _| {
            let stats = index.stats()?;
            let text = format!(
                "{} files ({} partial), {} symbols, {} references; skipped: {}; {} symlinks not followed\nindex: {}",
                stats.files,
                stats.partial,
                stats.symbols,
                stats.references,
                skipped_text(&stats.skipped),
                stats.symlinks,
                stats.database
            );
            Ok((text, json!(stats)))
        }),
    }
}

/// A query's text and JSON.
type Answer = Result<ckg::Answer, ckg::CkgError>;

/// How many definitions `search any` lists.
const SEARCH_ANY_MAX: usize = 50;

/// Opens and refreshes the index answering for `dir` (default: the workspace): the
/// workspace's when `dir` is inside it (narrowed to `dir`), else `dir`'s own; runs `query`
/// and prints its answer. The JSON answer carries the time of the refresh and of the query.
fn answer(common: &CkgArgs, dir: Option<&Path>, query: impl FnOnce(&Index, &Within) -> Answer) -> CommandResult {
    let workspace = workspace(common)?;
    let dir = dir.unwrap_or(&workspace);
    let (root, within) = match dir.strip_prefix(&workspace) {
        Ok(rel) => (workspace.as_path(), Within::folder(rel.as_os_str().as_encoded_bytes())),
        Err(_) => (dir, Within::root()),
    };
    let started = Instant::now();
    let mut index = Index::open(root, IndexOptions::default()).map_err(failed)?;
    index.refresh(&mut |_, _| {}, &|| false).map_err(failed)?;
    warn(&mut index);
    let refreshed = Instant::now();
    let (text, mut value) = query(&index, &within).map_err(failed)?;
    let timing = json!({
        "refresh_ms": (refreshed - started).as_secs_f64() * 1e3,
        "query_ms": refreshed.elapsed().as_secs_f64() * 1e3,
    });
    if let Some(object) = value.as_object_mut() {
        object.insert("timing".to_owned(), timing);
    }
    print(common.json, &text, value)
}

/// `index`: builds or refreshes the index of `root`, with a progress bar on a terminal.
fn index(root: &Path, as_json: bool) -> CommandResult {
    let started = Instant::now();
    let options = IndexOptions { quick_check: true, ..IndexOptions::default() };
    let mut index = Index::open(root, options).map_err(failed)?;
    warn(&mut index);
    let bar = if std::io::stderr().is_terminal() && !as_json { Some(ProgressBar::new(0)) } else { None };
    if let Some(bar) = &bar {
        let style = ProgressStyle::with_template("{spinner} indexing {pos}/{len} files [{bar:30}] {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style.progress_chars("=> "));
    }
    let mut progress = |done: usize, total: usize| {
        if let Some(bar) = &bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
        }
    };
    let report: RefreshReport = index.refresh(&mut progress, &|| false).map_err(failed)?;
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    warn(&mut index);
    let stats = index.stats().map_err(failed)?;
    let seconds = started.elapsed().as_secs_f64();
    let skipped: u64 = stats.skipped.values().sum();
    let text = format!(
        "Indexed {}: {} files, {} symbols, {} references; skipped {} files ({}) and {} symlinks; \
         {} extracted, {} unchanged, {} removed in {seconds:.2} s",
        root.display(),
        stats.files,
        stats.symbols,
        stats.references,
        skipped,
        skipped_text(&stats.skipped),
        stats.symlinks,
        report.extracted,
        report.unchanged,
        report.removed
    );
    print(as_json, &text, json!({ "root": root, "refresh": report, "stats": stats, "seconds": seconds }))
}

fn warn(index: &mut Index) {
    for warning in index.take_warnings() {
        diagln!("tackle: {warning}");
    }
}

fn skipped_text(skipped: &std::collections::HashMap<String, u64>) -> String {
    let mut parts: Vec<String> =
        skipped.iter().map(|(reason, n)| format!("{n} {}", reason.replace('_', " "))).collect();
    parts.sort();
    if parts.is_empty() { "none".to_owned() } else { parts.join(", ") }
}

/// Prints the answer: its text, or its JSON on one line. An answer that cannot be written is
/// the command's failure.
fn print(as_json: bool, text: &str, value: serde_json::Value) -> CommandResult {
    // A search or a lookup that found nothing fails (exit 1), as grep does, so scripts can test it.
    let found_nothing = value["total"] == 0
        || (value.get("total").is_none()
            && value["definitions"].as_array().is_some_and(Vec::is_empty)
            && value.get("suggestions").is_some());
    if as_json {
        stdout::print_json_line(&value)?;
    } else {
        stdout::print(&format!("{text}\n"))?;
    }
    Ok(if found_nothing { ExitCode::from(crate::exit::TOOL_FAILED) } else { ExitCode::SUCCESS })
}

fn workspace(common: &CkgArgs) -> Result<PathBuf, Failure> {
    crate::session::workspace(common.workspace.as_ref())
}

fn canonical(path: &Path) -> Result<PathBuf, Failure> {
    path.canonicalize().map_err(|err| Failure::usage(format!("{}: {err}", path.display())))
}

fn failed(err: ckg::CkgError) -> Failure {
    Failure::failed(err.to_string())
}
