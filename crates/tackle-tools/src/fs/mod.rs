//! The file tools and the machinery they share (docs/reference/tools.md#session-state).
//!
//! The tools: [`editor`] (`str_replace_based_edit_tool`), [`read_file`], [`write_file`],
//! [`edit_file`], [`patch`] (`apply_patch`), [`notebook_edit`] (with [`notebook`], which
//! `read_file` uses to show `.ipynb` files, and [`images`] and [`pdf`], with which it shows
//! images and PDFs).
//!
//! The shared pieces are public so that every tool that touches files behaves the same:
//! - [`files`]: [`Files`], a tool's handle on its session (path policy, read ledger, edit
//!   history, write settings), and [`FsSettings`] (`[tools] durable_writes`);
//! - [`beneath`]: every open relative to the root's directory, so a swapped symlink cannot
//!   lead a read or a write outside it;
//! - [`own_dir`]: Tackle's own directories (`.tackle/…`), opened refusing every link;
//! - [`atomic`]: temp file + `renameat` writes that a swapped path cannot redirect;
//! - [`ledger`]: what the session last saw of each file, and the stale check;
//! - [`history`]: the per-path undo stacks;
//! - [`journal`]: the roll-forward journal that lets a killed multi-file write be completed;
//! - [`text`]: binary detection, line endings, `cat -n` numbering, locating old text;
//! - [`closest`]: the "most similar text" shown when old text is not found.

pub mod atomic;
/// The beneath-the-root opener, from `tackle_core` (shared with every crate that touches the
/// workspace's state).
pub use tackle_core::fs::beneath;
/// Tackle's own directories in the workspace, from `tackle_core`.
pub use tackle_core::fs::own_dir;
pub mod closest;
/// Unified diffs of edits (moved to tackle-core, where the executor shows what an edit changed).
pub use tackle_core::diff;
pub mod edit_file;
pub mod editor;
pub mod files;
pub mod history;
pub mod images;
pub mod journal;
pub mod ledger;
pub mod notebook;
pub mod notebook_edit;
pub mod patch;
pub mod pdf;
pub mod read_file;
pub mod reader;
pub mod suggest;
pub mod text;
pub mod write_file;

pub use files::{
    Existing, Files, FsSettings, LoadError, Target, blocking, blocking_alone, open_read, read_existing, stat, target,
    write_failure,
};
pub use history::Before;
pub use ledger::{FileStamp, Freshness};
