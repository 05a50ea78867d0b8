//! Tackle's built-in tools, each a typed [`tackle_core::Tool`], and their registration in the
//! toolsets of docs/reference/tools.md#tool-index.

pub mod control;
pub mod defined;
pub mod fs;
pub mod gptme;
pub mod json_edit;
pub mod planning;
pub mod search;
pub mod shell;
pub mod web;

// The surface most users need: every built-in tool by its type, the settings a session is
// given, and the registration. The modules stay public for the shared machinery.
pub use control::{SequentialThinking, TaskDone};
pub use fs::FsSettings;
pub use fs::edit_file::EditFile;
pub use fs::editor::Editor;
pub use fs::notebook_edit::NotebookEdit;
pub use fs::patch::ApplyPatch;
pub use fs::read_file::ReadFile;
pub use fs::write_file::WriteFile;
pub use gptme::{Append, Patch, Save};
pub use json_edit::JsonEdit;
pub use planning::{
    LoadSkill, Skills, TaskBoard, TaskCreate, TaskGet, TaskList, TaskUpdate, TodoRead, TodoWrite, ToolSearch,
};
pub use search::glob::Glob;
pub use search::grep::Grep;
pub use shell::{BackgroundRun, Bash, JobKill, JobOutput, ShellEnvironment, ShellSetup};
pub use web::{WebFetch, WebSearch};

use tackle_core::Registry;

/// The toolsets of the built-ins (the allowlist's names; `all` names every built-in).
pub mod toolset {
    /// What `tackle run` uses: read, write, edit, search, shell and jobs, `task_done`.
    pub const DEFAULT: &str = "default";
    /// Trae Agent's tools: its editor, `bash`, `sequentialthinking`, `task_done`.
    pub const TRAE: &str = "trae";
    /// The small set of the teaching agents: Claude Code-style file tools, shell and jobs.
    pub const BARE: &str = "bare";
    /// Codex CLI's tools: `apply_patch`, read and search, `bash`, `task_done`.
    pub const CODEX: &str = "codex";
    /// The code tools: read, write, edit and search files, and the code index (`ckg`, from
    /// `tackle-ckg`, registered here by whoever adds it).
    pub const CODE: &str = "code";
    /// Every named toolset of the built-ins, in documentation order.
    pub const ALL_NAMED: &[&str] = &[DEFAULT, TRAE, BARE, CODEX, CODE];
}

/// A registry holding every built-in tool in its toolsets.
pub fn builtin_registry() -> Registry {
    let mut registry = Registry::new();
    register_builtins(&mut registry);
    registry
}

/// Registers every built-in tool in its toolsets (docs/reference/tools.md lists them).
pub fn register_builtins(registry: &mut Registry) {
    use toolset::{BARE, CODE, CODEX, DEFAULT, TRAE};
    registry.declare_toolsets(toolset::ALL_NAMED);
    registry.register(&[TRAE], control::SequentialThinking::default);
    registry.register(&[DEFAULT, TRAE, CODEX], control::TaskDone::default);
    registry.register(&[TRAE], fs::editor::Editor::default);
    registry.register(&[DEFAULT, BARE, CODEX, CODE], fs::read_file::ReadFile::default);
    registry.register(&[DEFAULT, BARE, CODE], fs::write_file::WriteFile::default);
    registry.register(&[DEFAULT, BARE, CODE], fs::edit_file::EditFile::default);
    registry.register(&[DEFAULT, BARE, CODE], fs::notebook_edit::NotebookEdit::default);
    registry.register(&[CODEX], fs::patch::ApplyPatch::default);
    registry.register(&[DEFAULT, BARE, CODEX, CODE], search::glob::Glob::default);
    registry.register(&[DEFAULT, BARE, CODEX, CODE], search::grep::Grep::default);
    registry.register(&[], json_edit::JsonEdit::default);
    registry.register(&[], gptme::Save::default);
    registry.register(&[], gptme::Append::default);
    registry.register(&[], gptme::Patch::default);
    registry.register(&[DEFAULT, TRAE, BARE, CODEX], shell::Bash::default);
    registry.register(&[DEFAULT, BARE], shell::BackgroundRun::default);
    registry.register(&[DEFAULT, BARE], shell::JobOutput::default);
    registry.register(&[DEFAULT, BARE], shell::JobKill::default);
    registry.register(&[DEFAULT, BARE, CODEX], planning::TodoWrite::default);
    registry.register(&[DEFAULT, BARE], planning::TodoRead::default);
    registry.register(&[DEFAULT, BARE], planning::LoadSkill::default);
    registry.register(&[DEFAULT, BARE], planning::ToolSearch::default);
    registry.register(&[BARE], planning::TaskCreate::default);
    registry.register(&[BARE], planning::TaskUpdate::default);
    registry.register(&[BARE], planning::TaskGet::default);
    registry.register(&[BARE], planning::TaskList::default);
    registry.register(&[DEFAULT, BARE], web::WebFetch::default);
    // Unavailable until the user config names a search backend (tackle's builder registers
    // it again with the backend).
    registry.register(&[DEFAULT, BARE], web::WebSearch::default);
}
