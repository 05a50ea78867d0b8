//! gptme's block tools, `save`, `append` and `patch` (docs/reference/formats.md#block-tools): opt-in tools that let
//! the markdown and xml call formats write files the way gptme-trained models expect
//! (```` ```save PATH ````, ```` ```append PATH ````, ```` ```patch PATH ```` with
//! ORIGINAL/UPDATED hunks).
//!
//! They are file tools like the others: the same path policy (and `Edit(...)` rules), atomic
//! writes, read ledger and edit history ([`crate::fs::Files`]), so `undo_edit` undoes them and
//! a later `write_file` knows the session has seen what they wrote. Deliberate differences from
//! gptme: no confirmation prompt inside the tool (permission is the executor's job), and `save`
//! needs no earlier read (gptme models never read first; restrict it with `Edit(...)` rules).

pub mod append;
mod common;
pub mod patch;
pub mod save;

pub use append::Append;
pub use patch::Patch;
pub use save::Save;
