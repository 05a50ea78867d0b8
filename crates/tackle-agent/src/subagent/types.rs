//! The kinds of child a `subagent` call may ask for: the four built-in types and the agents
//! defined in Markdown files (Claude Code's format: YAML frontmatter, the body is the system
//! prompt) in `.tackle/agents/`, `.claude/agents/` and the person's agent directories
//! (`tackle_policy::config::user_dirs`), the first found winning (docs/subagents.md).
//!
//! These files are workspace content, hence untrusted: what one says can only narrow what the
//! child gets (its tools are cut to the parent's, its permission mode is never wider, a
//! built-in type's name cannot be taken over).

use std::path::{Path, PathBuf};

use serde::Deserialize;
use tackle_core::frontmatter;
use tackle_core::fs::beneath::Links;
use tackle_core::fs::state::{self, CLAUDE_AGENTS, TACKLE_AGENTS};
use tackle_core::permission::PermissionMode;
use tackle_policy::permission::rules::ReadRules;

/// The largest agent definition file read.
pub const MAX_DEFINITION_BYTES: u64 = 256 * 1024;

/// The turn limit of the read-only types.
pub const READ_ONLY_MAX_TURNS: u32 = 50;

/// The turn limit of the other types, when their definition sets none.
pub const DEFAULT_MAX_TURNS: u32 = 200;

/// The names of the built-in types, in the order they are listed.
pub const BUILT_IN: [&str; 4] = ["general-purpose", "explore", "plan", "code-review"];

/// One kind of child.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentType {
    /// The type's name (`explore`, or a definition's `name`).
    pub name: String,
    /// What it is for (shown in the tool's description).
    pub description: String,
    /// The allowlist (the `--tools` grammar) applied to the parent's tools; `None` keeps them all.
    pub tools: Option<Vec<String>>,
    /// Tools removed after the allowlist.
    pub disallowed: Vec<String>,
    /// `inherit`, `provider/model`, or an Anthropic alias.
    pub model: Option<String>,
    /// The mode it asks for (narrowed to the parent's).
    pub mode: Option<PermissionMode>,
    /// Its turn limit.
    pub max_turns: u32,
    /// Skills named in its definition (kept for when skills exist; not loaded yet).
    pub skills: Vec<String>,
    /// Replaces the role part of the system prompt.
    pub prompt: String,
    /// Read-only: `plan` mode, read-only tools, no nesting, concurrency-safe.
    pub read_only: bool,
    /// Where it was defined (`None` for the built-ins).
    pub file: Option<PathBuf>,
    /// Defined in the workspace (`.tackle/agents/`, `.claude/agents/`): untrusted content, so
    /// its `model` may not switch providers unless the person consented to the workspace's
    /// settings.
    pub from_workspace: bool,
}

const EXPLORE_PROMPT: &str = "You are an exploration agent working for another agent. Search and read the \
workspace to answer the question you are given; you cannot change anything. Be thorough but quick: use glob \
and grep to find candidates, read what matters, and stop as soon as you can answer. Your final reply is \
returned to the agent that asked, so make it self-contained: the answer, with the file paths and line \
numbers it rests on.";

const PLAN_PROMPT: &str = "You are a planning agent working for another agent. Read the workspace to \
understand the task you are given, then reply with a concrete implementation plan: the files to change, the \
changes in order, the risks, and how to verify the result. You cannot change anything. Your final reply is \
returned to the agent that asked.";

const REVIEW_PROMPT: &str = "You are a code-review agent working for another agent. Review the changes or \
files you are pointed to: correctness, edge cases, security, tests, and clarity. You cannot change anything. \
Reply with a list of concrete findings, most important first, each with its file and line; say plainly when \
you find nothing wrong. Your final reply is returned to the agent that asked.";

const GENERAL_PROMPT: &str = "You are a general-purpose agent working for another agent, in the same \
workspace. Carry out the task you are given with the tools provided: look before you change, make focused \
changes and verify them. Every tool result, errors included, is feedback. When you are done, reply without a \
tool call: your final reply is returned to the agent that asked, so make it a self-contained report of what \
you found or did.";

/// The built-in type `name`.
pub fn built_in(name: &str) -> Option<AgentType> {
    let (description, prompt, read_only) = match name {
        "general-purpose" => ("A capable agent with the parent's tools, for multi-step tasks.", GENERAL_PROMPT, false),
        "explore" => {
            ("Read-only search of the workspace: finds files, code and facts, and reports them.", EXPLORE_PROMPT, true)
        }
        "plan" => ("Read-only: studies the workspace and returns an implementation plan.", PLAN_PROMPT, true),
        "code-review" => ("Read-only: reviews code or changes and returns findings.", REVIEW_PROMPT, true),
        _ => return None,
    };
    Some(AgentType {
        name: name.to_owned(),
        description: description.to_owned(),
        tools: read_only.then(|| vec!["hint:read-only".to_owned()]),
        disallowed: if read_only { vec!["subagent".to_owned()] } else { Vec::new() },
        model: None,
        mode: read_only.then_some(PermissionMode::Plan),
        max_turns: if read_only { READ_ONLY_MAX_TURNS } else { DEFAULT_MAX_TURNS },
        skills: Vec::new(),
        prompt: prompt.to_owned(),
        read_only,
        file: None,
        from_workspace: false,
    })
}

/// A list in the frontmatter: `Read, Grep` or a YAML list.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum NameList {
    Text(String),
    List(Vec<String>),
}

impl NameList {
    fn names(self) -> Vec<String> {
        let items = match self {
            NameList::Text(text) => text.split(',').map(str::to_owned).collect(),
            NameList::List(list) => list,
        };
        items.into_iter().map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()).collect()
    }
}

/// The frontmatter of an agent definition (Claude Code's keys).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Frontmatter {
    name: String,
    description: String,
    tools: Option<NameList>,
    disallowed_tools: Option<NameList>,
    model: Option<String>,
    permission_mode: Option<String>,
    max_turns: Option<u32>,
    skills: Option<NameList>,
}

/// The agents defined in files, and the files that could not be read (each with its reason).
#[derive(Debug, Default, Clone)]
pub struct Definitions {
    /// In discovery order, first found first, each name once.
    pub agents: Vec<AgentType>,
    /// `path: reason` for each file left out.
    pub warnings: Vec<String>,
}

/// A directory searched for definitions, and whether it is the workspace's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The directory.
    pub dir: PathBuf,
    /// The directory its files must stay under (no link out of it is followed): the
    /// workspace, or the person's own `agents/` directory.
    pub root: PathBuf,
    /// It belongs to the workspace (untrusted content).
    pub workspace: bool,
}

/// The directories searched, in order: the workspace's `.tackle/agents/` and `.claude/agents/`,
/// then the person's own agent directories (`user_agents`, the session's
/// `tackle_policy::config::user_dirs::UserDirs::agents`), each the root its files stay under.
pub fn directories(workspace: &Path, user_agents: &[PathBuf]) -> Vec<Source> {
    let mut dirs = vec![
        Source { dir: TACKLE_AGENTS.path(workspace), root: workspace.to_owned(), workspace: true },
        Source { dir: CLAUDE_AGENTS.path(workspace), root: workspace.to_owned(), workspace: true },
    ];
    for dir in user_agents {
        dirs.push(Source { root: dir.clone(), dir: dir.clone(), workspace: false });
    }
    dirs
}

/// Reads every `*.md` of `dirs` (in order, files sorted by name); the first definition of a
/// name wins. Files that are not valid definitions, or that a `Read(...)` deny rule in
/// `hidden` covers, are listed in the warnings.
pub fn load(dirs: &[Source], hidden: &ReadRules) -> Definitions {
    let mut found = Definitions::default();
    for Source { dir, root, workspace } in dirs {
        // A linked agents directory of the workspace is not listed at all.
        if let Some(entry) = [TACKLE_AGENTS, CLAUDE_AGENTS].iter().find(|entry| *workspace && entry.path(root) == *dir)
            && let Err(err) = entry.refuse_link(root)
        {
            found.warnings.push(err.to_string());
            continue;
        }
        let Ok(entries) = std::fs::read_dir(dir) else { continue };
        let mut files: Vec<PathBuf> = entries
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
            .collect();
        files.sort();
        for file in files {
            match read_definition(&file, root, hidden) {
                Ok(agent) if BUILT_IN.contains(&agent.name.as_str()) => found.warnings.push(format!(
                    "{}: the name '{}' is a built-in subagent type; rename the agent",
                    file.display(),
                    agent.name
                )),
                Ok(agent) if found.agents.iter().any(|known| known.name == agent.name) => {}
                Ok(mut agent) => {
                    agent.from_workspace = *workspace;
                    found.agents.push(agent);
                }
                Err(reason) => found.warnings.push(format!("{}: {reason}", file.display())),
            }
        }
    }
    found
}

/// Whether a definition's name is well formed: lowercase letters, digits and `-`, 1 to 64.
fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// One definition file, or why it is left out: read beneath `root` without following a link
/// out of it, and not when a `Read(...)` deny rule covers it
/// (`tackle_core::fs::state::read_prompt_file`); a device or a FIFO planted as `x.md` is
/// refused, not read forever.
pub fn read_definition(file: &Path, root: &Path, hidden: &ReadRules) -> Result<AgentType, AgentDefinitionError> {
    let text = state::read_prompt_file(root, file, MAX_DEFINITION_BYTES, &|p| hidden.hides(p), Links::InRoot)?
        .ok_or(AgentDefinitionError::Gone)?;
    parse_definition(&text).map(|mut agent| {
        agent.file = Some(file.to_owned());
        agent
    })
}

/// Why an agent definition is left out; the text is the warning `tackle tools list` shows
/// after the file's path.
#[derive(Debug, thiserror::Error)]
pub enum AgentDefinitionError {
    /// The file was not read (hidden, a link out, too large, ...).
    #[error(transparent)]
    File(#[from] state::PromptFileError),
    /// The file disappeared after it was listed.
    #[error("cannot read it: it does not exist")]
    Gone,
    /// The frontmatter is missing or invalid.
    #[error(transparent)]
    Frontmatter(#[from] frontmatter::FrontmatterError),
    /// The name is not `[a-z0-9-]{1,64}` (the first 80 characters of it).
    #[error("name '{0}' must be 1 to 64 lowercase letters, digits and '-'")]
    BadName(String),
    /// The description is blank.
    #[error("description is empty")]
    EmptyDescription,
    /// `permissionMode` names no mode.
    #[error("permissionMode: {0}")]
    Mode(#[source] tackle_core::permission::UnknownMode),
    /// `maxTurns: 0`.
    #[error("maxTurns must be at least 1")]
    NoTurns,
}

/// An agent definition from its text.
pub fn parse_definition(text: &str) -> Result<AgentType, AgentDefinitionError> {
    let (head, body) = frontmatter::parse::<Frontmatter>(text)?;
    if !valid_name(&head.name) {
        return Err(AgentDefinitionError::BadName(head.name.chars().take(80).collect()));
    }
    if head.description.trim().is_empty() {
        return Err(AgentDefinitionError::EmptyDescription);
    }
    let mode = match head.permission_mode.as_deref() {
        None => None,
        Some(text) => Some(text.parse::<PermissionMode>().map_err(AgentDefinitionError::Mode)?),
    };
    if head.max_turns == Some(0) {
        return Err(AgentDefinitionError::NoTurns);
    }
    let prompt = body.trim();
    Ok(AgentType {
        name: head.name,
        description: head.description.trim().to_owned(),
        tools: head.tools.map(NameList::names),
        disallowed: head.disallowed_tools.map(NameList::names).unwrap_or_default(),
        model: head.model.map(|m| m.trim().to_owned()).filter(|m| !m.is_empty()),
        mode,
        max_turns: head.max_turns.unwrap_or(DEFAULT_MAX_TURNS),
        skills: head.skills.map(NameList::names).unwrap_or_default(),
        prompt: if prompt.is_empty() { GENERAL_PROMPT.to_owned() } else { prompt.to_owned() },
        read_only: false,
        file: None,
        from_workspace: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn claude_code_definitions_parse() {
        let agent = parse_definition(
            "---\nname: reviewer\ndescription: Reviews diffs\ntools: Read, Grep,glob\ndisallowedTools: [bash]\nmodel: haiku\npermissionMode: acceptEdits\nmaxTurns: 7\nskills: a, b\n---\n\nYou review.\n",
        )
        .unwrap();
        assert_eq!(agent.name, "reviewer");
        assert_eq!(agent.tools, Some(vec!["Read".to_owned(), "Grep".to_owned(), "glob".to_owned()]));
        assert_eq!(agent.disallowed, vec!["bash".to_owned()]);
        assert_eq!(agent.model.as_deref(), Some("haiku"));
        assert_eq!(agent.mode, Some(PermissionMode::AcceptEdits));
        assert_eq!((agent.max_turns, agent.skills.len()), (7, 2));
        assert_eq!(agent.prompt, "You review.");
    }

    #[test]
    fn bad_definitions_say_why() {
        let err = |text: &str| parse_definition(text).unwrap_err().to_string();
        assert!(err("no frontmatter").contains("does not start with a '---' line"));
        assert!(
            err("---\ndescription: x\n---\n").contains("missing field `name`"),
            "{}",
            err("---\ndescription: x\n---\n")
        );
        assert!(err("---\nname: Bad Name\ndescription: x\n---\n").contains("must be 1 to 64 lowercase"));
        assert!(err("---\nname: a\ndescription: x\npermissionMode: yolo\n---\n").contains("unknown permission mode"));
        assert!(err("---\nname: a\ndescription: x\nmaxTurns: 0\n---\n").contains("maxTurns"));
        assert!(err("---\nname: a\ndescription: [\n---\n").starts_with("bad YAML frontmatter"));
    }

    #[test]
    fn the_first_found_wins_and_bad_files_are_warnings() {
        let root = tempfile::tempdir().unwrap();
        let (first, second) = (root.path().join("one"), root.path().join("two"));
        std::fs::create_dir_all(&first).unwrap();
        std::fs::create_dir_all(&second).unwrap();
        std::fs::write(first.join("a.md"), "---\nname: helper\ndescription: first\n---\nA").unwrap();
        std::fs::write(second.join("b.md"), "---\nname: helper\ndescription: second\n---\nB").unwrap();
        std::fs::write(second.join("c.md"), "---\nname: explore\ndescription: takeover\n---\nC").unwrap();
        std::fs::write(second.join("d.md"), "not a definition").unwrap();
        std::fs::write(second.join("e.txt"), "ignored").unwrap();
        let sources = [
            Source { root: first.clone(), dir: first, workspace: true },
            Source { root: second.clone(), dir: second, workspace: false },
        ];
        let found = load(&sources, &ReadRules::default());
        assert_eq!(found.agents.len(), 1);
        assert_eq!((found.agents[0].description.as_str(), found.agents[0].from_workspace), ("first", true));
        assert_eq!(found.warnings.len(), 2, "{:?}", found.warnings);
        assert!(found.warnings[0].contains("c.md: the name 'explore' is a built-in subagent type"));
        assert!(found.warnings[1].contains("d.md: the file does not start with"));
    }

    #[test]
    fn a_link_out_of_the_agents_directory_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("ws/.claude/agents")).unwrap();
        std::fs::write(base.join("secret.md"), "---\nname: leak\ndescription: SECRET\n---\nSECRET").unwrap();
        std::os::unix::fs::symlink(base.join("secret.md"), base.join("ws/.claude/agents/leak.md")).unwrap();
        let found = load(&directories(&base.join("ws"), &[]), &ReadRules::default());
        assert!(found.agents.is_empty(), "{:?}", found.agents);
        assert!(found.warnings.iter().any(|w| w.contains("leads outside")), "{:?}", found.warnings);
    }

    #[test]
    fn a_device_or_fifo_planted_as_a_definition_is_skipped_not_read() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.md")).unwrap();
        let fifo = dir.path().join("fifo.md");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        for file in ["zero.md", "fifo.md"] {
            let err =
                read_definition(&dir.path().join(file), dir.path(), &ReadRules::default()).unwrap_err().to_string();
            assert!(err.contains("not a regular file") || err.contains("leads outside"), "{err}");
        }
    }
}
