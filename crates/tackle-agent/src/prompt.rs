//! The system prompt of a run (docs/reference/providers.md#a-step): the base prompt, facts about the
//! environment, the call-format instructions, the workspace's `AGENTS.md` (or `CLAUDE.md`),
//! and the names of deferred tools.

use std::path::Path;
use std::time::SystemTime;

use tackle_core::ToolSet;
use tackle_core::deferral::TOOL_SEARCH;
use tackle_core::fs::beneath::Links;
use tackle_core::fs::state::{self, AGENTS_MD, CLAUDE_MD};
use tackle_core::spec::Loading;
use tackle_policy::permission::rules::ReadRules;

use crate::time::date;

/// The largest instruction file included whole; longer ones are cut with a note.
pub const MAX_INSTRUCTIONS_CHARS: usize = 40_000;

/// The role and working rules Tackle gives a model; an embedder may replace them
/// (`AgentConfig::base_prompt`), the rest of the prompt stays.
pub const BASE_PROMPT: &str =
    "You are Tackle, an agent that carries out software tasks in a workspace on the user's behalf, \
using the tools provided.

- Work step by step: look before you change (read the relevant files, search the code), make focused \
changes, then verify them (run the tests or the command that shows the result).
- Every tool result, errors included, is feedback: read it and adjust. A refused call says what to do instead.
- Keep replies short; do not repeat file contents back.
- When the task is complete and verified, call task_done. If you reply without any tool call, the run ends \
and your reply is the final answer.";

/// The largest instruction file read (it is then cut to [`MAX_INSTRUCTIONS_CHARS`]).
const MAX_INSTRUCTIONS_BYTES: u64 = 4 * 1024 * 1024;

/// The instruction file of a workspace: `AGENTS.md`, else `CLAUDE.md`, with its name. Each is
/// read beneath the workspace the way `read_file` reads (`tackle_core::fs::state::
/// read_prompt_file`) and, as one of Tackle's state files, never through a link: a symlink,
/// or a file a `Read(...)` deny rule in `hidden` covers, is not read (a notice says so) and
/// the next name is tried (so `CLAUDE.md -> AGENTS.md` still gives the instructions).
pub fn workspace_instructions(workspace: &Path, hidden: &ReadRules) -> Option<(String, String)> {
    [AGENTS_MD, CLAUDE_MD].iter().find_map(|file| {
        let name = file.rel;
        let text = match state::read_prompt_file(
            workspace,
            &file.path(workspace),
            MAX_INSTRUCTIONS_BYTES,
            &|p| hidden.hides(p),
            Links::None,
        ) {
            Ok(text) => text?,
            Err(why) => {
                state::notice_once(name, &format!("{why}; it is not part of the prompt"));
                return None;
            }
        };
        let text = text.trim();
        if text.is_empty() {
            return None;
        }
        let mut kept: String = text.chars().take(MAX_INSTRUCTIONS_CHARS).collect();
        if kept.len() < text.len() {
            kept.push_str(&format!("\n[... {name} was cut at {MAX_INSTRUCTIONS_CHARS} characters ...]"));
        }
        Some((name.to_owned(), kept))
    })
}

/// Builds the system prompt from `base` (normally [`BASE_PROMPT`]). `format_instructions` is
/// empty for native tool calls.
pub fn system_prompt(
    base: &str,
    workspace: &Path,
    tools: &ToolSet,
    format_instructions: &str,
    hidden: &ReadRules,
) -> String {
    let mut prompt = String::from(base);
    let git = workspace.join(".git").exists();
    prompt.push_str(&format!(
        "\n\n# Environment\n- Workspace: {} (paths are relative to it)\n- OS: {} ({})\n- Date: {}\n- Git repository: {}\n",
        workspace.display(),
        std::env::consts::OS,
        std::env::consts::ARCH,
        date(SystemTime::now()),
        if git { "yes" } else { "no" }
    ));
    if !format_instructions.is_empty() {
        prompt.push_str("\n# Calling tools\n");
        prompt.push_str(format_instructions.trim_end());
        prompt.push('\n');
    }
    // Every deferred tool, loaded or not, so the prompt stays the same all run long (and a
    // provider's prompt cache keeps working); only in a session that can load them.
    let searchable = tools.specs().any(|s| s.name == TOOL_SEARCH);
    let deferred: Vec<String> = tools
        .specs()
        .filter(|s| searchable && s.loading == Loading::Deferred)
        .map(|s| match s.search_hint.as_deref().unwrap_or_else(|| s.summary()) {
            "" => format!("- {}", s.name),
            hint => format!("- {}: {hint}", s.name),
        })
        .collect();
    if !deferred.is_empty() {
        prompt.push_str(
            "\n# More tools (load them with tool_search before use; their schemas are not sent until then)\n",
        );
        prompt.push_str(&deferred.join("\n"));
        prompt.push('\n');
    }
    if let Some((name, text)) = workspace_instructions(workspace, hidden) {
        prompt.push_str(&format!("\n# Project instructions ({name})\n{text}\n"));
    }
    prompt
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_md_wins_over_claude_md_and_is_included() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        std::fs::write(dir.path().join("CLAUDE.md"), "claude rules").unwrap();
        let prompt = system_prompt(BASE_PROMPT, &ws, &ToolSet::default(), "", &ReadRules::default());
        assert!(prompt.contains("# Project instructions (CLAUDE.md)\nclaude rules"), "{prompt}");
        std::fs::write(dir.path().join("AGENTS.md"), "agent rules").unwrap();
        let prompt = system_prompt(BASE_PROMPT, &ws, &ToolSet::default(), "Use ```bash blocks.", &ReadRules::default());
        assert!(prompt.contains("# Project instructions (AGENTS.md)\nagent rules"));
        assert!(!prompt.contains("claude rules"));
        assert!(prompt.contains("# Calling tools\nUse ```bash blocks."));
        assert!(prompt.contains("- Git repository: no"));
    }

    #[test]
    fn a_link_is_not_read_and_the_next_name_is_tried() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let ws = base.join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(base.join("id_rsa"), "PRIVATE KEY").unwrap();
        std::os::unix::fs::symlink(base.join("id_rsa"), ws.join("AGENTS.md")).unwrap();
        std::fs::write(ws.join("CLAUDE.md"), "claude rules").unwrap();
        let prompt = system_prompt(BASE_PROMPT, &ws, &ToolSet::default(), "", &ReadRules::default());
        assert!(!prompt.contains("PRIVATE KEY"), "{prompt}");
        assert!(prompt.contains("# Project instructions (CLAUDE.md)\nclaude rules"), "{prompt}");
        std::fs::remove_file(ws.join("AGENTS.md")).unwrap();
        std::os::unix::fs::symlink("CLAUDE.md", ws.join("AGENTS.md")).unwrap();
        let prompt = system_prompt(BASE_PROMPT, &ws, &ToolSet::default(), "", &ReadRules::default());
        assert!(prompt.contains("# Project instructions (CLAUDE.md)\nclaude rules"), "{prompt}");
        std::fs::remove_file(ws.join("CLAUDE.md")).unwrap();
        std::fs::create_dir(ws.join("CLAUDE.md")).unwrap();
        let prompt = system_prompt(BASE_PROMPT, &ws, &ToolSet::default(), "", &ReadRules::default());
        assert!(!prompt.contains("# Project instructions"), "{prompt}");
    }
}
