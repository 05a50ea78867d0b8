//! Tackle's built-in tools, each a typed [`tackle_core::Tool`], and their registration in the
//! toolsets of tools.md §0.5.

pub mod control;
pub mod fs;
pub mod gptme;
pub mod json_edit;
pub mod search;
pub mod shell;

use tackle_core::Registry;

/// A registry holding every built-in tool in its toolsets.
pub fn builtin_registry() -> Registry {
    let mut registry = Registry::new();
    register_builtins(&mut registry);
    registry
}

/// The toolset of the code tools: the file tools here, and the code index (`ckg`, from
/// `tackle-ckg`, whose registration adds it).
pub const CODE_TOOLSET: &str = "code";

/// Registers every built-in tool (tools.md §0.5 gives the toolsets).
pub fn register_builtins(registry: &mut Registry) {
    registry.register(&["trae"], control::SequentialThinking::default);
    registry.register(&["default", "trae", "codex"], control::TaskDone::default);
    registry.register(&["trae"], fs::editor::Editor::default);
    registry.register(&["default", "bare", "codex", CODE_TOOLSET], fs::read_file::ReadFile::default);
    registry.register(&["default", "bare", CODE_TOOLSET], fs::write_file::WriteFile::default);
    registry.register(&["default", "bare", CODE_TOOLSET], fs::edit_file::EditFile::default);
    registry.register(&["codex"], fs::patch::ApplyPatch::default);
    registry.register(&["default", "bare", "codex", CODE_TOOLSET], search::glob::Glob::default);
    registry.register(&["default", "bare", "codex", CODE_TOOLSET], search::grep::Grep::default);
    registry.register(&[], json_edit::JsonEdit::default);
    registry.register(&[], gptme::Save::default);
    registry.register(&[], gptme::Append::default);
    registry.register(&[], gptme::Patch::default);
    registry.register(&["default", "trae", "bare", "codex"], shell::Bash::default);
    registry.register(&["default", "bare"], shell::BackgroundRun::default);
    registry.register(&["default", "bare"], shell::JobOutput::default);
    registry.register(&["default", "bare"], shell::JobKill::default);
}
