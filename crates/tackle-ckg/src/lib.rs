//! Tackle's code knowledge graph (docs/ckg.md): definitions and references of a source tree,
//! extracted with tree-sitter's tags queries, kept in SQLite, refreshed incrementally before
//! every query, and the `ckg` tool that asks it.
//!
//! - [`language`]: which files are which language; grammars and tags queries;
//! - [`extract`]: one file's source in, its symbols and references out;
//! - [`walk`]: the files of a root (ignore rules, no symlinks) and how they are read;
//! - [`build`]: parallel extraction with a per-file time limit;
//! - [`store`]: the SQLite database, its schema, checks, rebuilds and the indexer lock;
//! - [`index`]: an index of one root and its incremental refresh;
//! - [`query`]: definitions, outline, references, fuzzy search, repository map;
//! - [`render`]: the text of each answer;
//! - [`answer`]: each query's answer, text and JSON (the tool's and `tackle ckg`'s);
//! - [`tool`]: the `ckg` tool.

pub mod answer;
pub mod build;
pub mod error;
pub mod extract;
pub mod index;
pub mod language;
pub mod query;
pub mod render;
pub mod store;
pub mod tool;
pub mod walk;

pub use error::CkgError;
pub use index::{Index, IndexOptions, RefreshReport, Stats};
pub use language::Language;
pub use query::{Category, Definition, ReferenceEntry, Within};
pub use tool::Ckg;

/// Registers the `ckg` tool in `registry`, in the `code` toolset (with the file tools, which
/// `tackle_tools` puts there) and in `all`; it is in no other toolset, so opt-in elsewhere.
pub fn register(registry: &mut tackle_core::Registry) {
    registry.register(&[tackle_tools::toolset::CODE], Ckg::default);
}
