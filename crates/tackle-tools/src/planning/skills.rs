//! Skills (docs/planning.md#skills): folders holding a `SKILL.md` (YAML frontmatter with a
//! `name` and a `description`, then Markdown instructions) and any files the instructions
//! use. They are found in `.tackle/skills/`, then `.claude/skills/` (so the folders people
//! already wrote for Claude Code work as they are), then the person's own skill directories
//! (`tackle_policy::config::user_dirs`: `skills/` in Tackle's configuration directory, and
//! `~/.claude/skills/` with `[compat] claude = true`); the first skill of a name wins. The system prompt lists each by
//! name and description; `load_skill` returns the instructions when the model needs them.
//!
//! The frontmatter is split and read by `tackle_core::frontmatter` (`yaml_serde`), as agent
//! definitions' are. Skills of the workspace are read
//! beneath the workspace root: a link in `.claude/skills/` that leads out of it is skipped,
//! so a cloned repository cannot make Tackle show the model a file from elsewhere.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tackle_core::frontmatter::{self, FrontmatterError};
use tackle_core::fs::state;
use tackle_policy::permission::rules::ReadRules;

use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use crate::fs::beneath::{Beneath, DIR_READ, Links};

/// The skill file's name in its folder.
pub const SKILL_FILE: &str = "SKILL.md";
/// The largest skill file read.
pub const MAX_SKILL_BYTES: u64 = 256 * 1024;
/// The longest description.
pub const MAX_DESCRIPTION_CHARS: usize = 1_024;
/// The most skill folders looked at in one directory.
pub const MAX_SKILLS_PER_DIR: usize = 500;

/// One skill found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// `[a-z0-9-]{1,64}`.
    pub name: String,
    pub description: String,
    /// The skill's folder.
    pub dir: PathBuf,
    /// `allowed-tools`, `argument-hint` and `when_to_use` as written (shown, not enforced).
    pub extra: Vec<(String, String)>,
}

/// What a search for skills found: the skills (first of each name) and a warning for each
/// folder skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skills {
    pub skills: Vec<Skill>,
    pub warnings: Vec<String>,
}

impl Skills {
    /// Finds the skills of `workspace` (canonical) and of the person's own skill directories
    /// (`user_dirs`, the session's [`tackle_policy::config::user_dirs::UserDirs::skills`]; a link
    /// in one that leads out of it is skipped with a warning).
    /// `hidden`: the session's `Read(...)` deny rules (a skill file they cover is skipped).
    pub fn discover(workspace: &Path, user_dirs: &[PathBuf], hidden: &ReadRules) -> Skills {
        let mut found = Skills::default();
        for dir in [state::TACKLE_SKILLS, state::CLAUDE_SKILLS] {
            // A linked skills directory is not listed at all (its files would be refused).
            if let Err(err) = dir.refuse_link(workspace) {
                found.warnings.push(err.to_string());
                continue;
            }
            found.scan(&dir.path(workspace), workspace, hidden);
        }
        for dir in user_dirs {
            found.scan(dir, dir, hidden);
        }
        found
    }

    /// The skill named `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|skill| skill.name == name)
    }

    /// The system prompt's section: `# Skills`, a sentence on `load_skill`, and one
    /// `- {name}: {description}` line per skill; empty without skills.
    pub fn prompt_section(&self) -> String {
        if self.skills.is_empty() {
            return String::new();
        }
        let mut text = String::from(
            "# Skills\nSkills hold instructions for particular tasks. When a task matches one, call load_skill with its \
             name first and follow what it says.\n",
        );
        for skill in &self.skills {
            text.push_str(&format!("- {}: {}\n", skill.name, one_line(&skill.description)));
        }
        text
    }

    /// Reads every `<dir>/<folder>/SKILL.md`, in folder-name order. `root`: the directory the
    /// files must stay under (the workspace, or the person's skills directory).
    fn scan(&mut self, dir: &Path, root: &Path, hidden: &ReadRules) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut folders: Vec<PathBuf> = entries
            .flatten()
            .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir() || kind.is_symlink()))
            .map(|entry| entry.path())
            .collect();
        folders.sort();
        if folders.len() > MAX_SKILLS_PER_DIR {
            self.warnings.push(format!(
                "{}: {} skill folders, only the first {MAX_SKILLS_PER_DIR} are read",
                dir.display(),
                folders.len()
            ));
            folders.truncate(MAX_SKILLS_PER_DIR);
        }
        for folder in folders {
            match read_skill(&folder, root, hidden) {
                Ok(None) => {}
                Ok(Some(skill)) if self.get(&skill.name).is_some() => {}
                Ok(Some(skill)) => self.skills.push(skill),
                Err(why) => self.warnings.push(format!("skill {} skipped: {why}", folder.display())),
            }
        }
    }
}

/// The first line of a text, for one-line listings.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Why a skill is skipped or its body cannot be loaded; the text is the warning (or the
/// `load_skill` error) shown as is.
#[derive(Debug, thiserror::Error)]
pub enum SkillError {
    /// `SKILL.md` was not read (hidden, a link out, too large, ...).
    #[error(transparent)]
    File(#[from] state::PromptFileError),
    /// `SKILL.md` disappeared since the skill was found.
    #[error("{SKILL_FILE} of skill {0} is gone")]
    Gone(String),
    /// `SKILL.md` does not start with a `---` line.
    #[error("{SKILL_FILE} has no frontmatter (it must start with a '---' line)")]
    NoFrontmatter,
    /// The frontmatter has no closing `---` line.
    #[error("{SKILL_FILE}'s frontmatter has no closing '---' line")]
    Unclosed,
    /// The frontmatter is not valid YAML.
    #[error(transparent)]
    Frontmatter(FrontmatterError),
    /// A key holds something other than text (or, for a list, an item that is not text).
    #[error("'{key}' must {}", if *.list { "hold text" } else { "be text" })]
    NotText {
        /// The key.
        key: String,
        /// Whether it was an item of a list.
        list: bool,
    },
    /// A required key (`name`, `description`) is missing.
    #[error("the frontmatter has no '{0}'")]
    Missing(&'static str),
    /// The name is not `[a-z0-9-]{1,64}` (the first 80 characters of it).
    #[error("the name '{0}' is not 1 to 64 lowercase letters, digits and '-'")]
    BadName(String),
    /// The description is blank.
    #[error("the description is empty")]
    EmptyDescription,
    /// The description is too long.
    #[error("the description is longer than {MAX_DESCRIPTION_CHARS} characters")]
    LongDescription,
}

/// Reads `folder/SKILL.md`: `Ok(None)` for a folder without one.
fn read_skill(folder: &Path, root: &Path, hidden: &ReadRules) -> Result<Option<Skill>, SkillError> {
    let Some(text) = read_file(&folder.join(SKILL_FILE), root, hidden)? else {
        return Ok(None);
    };
    let (frontmatter, _) = split_frontmatter(&text)?;
    parse_frontmatter(frontmatter, folder).map(Some)
}

/// A skill file's text, at most [`MAX_SKILL_BYTES`]; `None` when it does not exist. Read
/// beneath `root` (the workspace, or the person's skills directory it comes from) without
/// following a link out of it, and not when a `Read(...)` deny rule in `hidden` covers it
/// (`tackle_core::fs::state::read_prompt_file`, as `AGENTS.md` is read).
fn read_file(path: &Path, root: &Path, hidden: &ReadRules) -> Result<Option<String>, SkillError> {
    Ok(state::read_prompt_file(root, path, MAX_SKILL_BYTES, &|p| hidden.hides(p), Links::InRoot)?)
}

/// The frontmatter between the opening `---` line and the next `---` line, and the body
/// after it (`tackle_core::frontmatter`, shared with agent definitions).
fn split_frontmatter(text: &str) -> Result<(&str, &str), SkillError> {
    frontmatter::split(text).map_err(|err| match err {
        FrontmatterError::Missing => SkillError::NoFrontmatter,
        FrontmatterError::Unclosed => SkillError::Unclosed,
        other => SkillError::Frontmatter(other),
    })
}

/// Reads the frontmatter's keys into a skill.
fn parse_frontmatter(frontmatter: &str, folder: &Path) -> Result<Skill, SkillError> {
    let keys: BTreeMap<String, yaml_serde::Value> =
        frontmatter::from_yaml(frontmatter).map_err(SkillError::Frontmatter)?;
    let not_text = |key: &str, list: bool| SkillError::NotText { key: key.to_owned(), list };
    let text = |key: &str| -> Result<Option<String>, SkillError> {
        match keys.get(key) {
            None | Some(yaml_serde::Value::Null) => Ok(None),
            Some(yaml_serde::Value::String(text)) => Ok(Some(text.clone())),
            Some(yaml_serde::Value::Sequence(items)) if key != "name" && key != "description" => Ok(Some(
                items
                    .iter()
                    .map(|item| item.as_str().map(str::to_owned).ok_or_else(|| not_text(key, true)))
                    .collect::<Result<Vec<_>, _>>()?
                    .join(", "),
            )),
            Some(yaml_serde::Value::Bool(_) | yaml_serde::Value::Number(_))
                if key != "name" && key != "description" =>
            {
                Ok(keys.get(key).and_then(|v| yaml_serde::to_string(v).ok()).map(|s| s.trim().to_owned()))
            }
            Some(_) => Err(not_text(key, false)),
        }
    };
    let name = text("name")?.ok_or(SkillError::Missing("name"))?;
    if !valid_name(&name) {
        return Err(SkillError::BadName(name.chars().take(80).collect()));
    }
    let description = text("description")?.ok_or(SkillError::Missing("description"))?;
    if description.trim().is_empty() {
        return Err(SkillError::EmptyDescription);
    }
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(SkillError::LongDescription);
    }
    let mut extra = Vec::new();
    for key in ["allowed-tools", "argument-hint", "when_to_use"] {
        if let Some(value) = text(key)? {
            extra.push((key.to_owned(), value));
        }
    }
    Ok(Skill { name, description, dir: folder.to_owned(), extra })
}

/// `[a-z0-9-]{1,64}`.
pub fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// The body of a skill's `SKILL.md` (without the frontmatter), read again now, with the same
/// checks as discovery.
pub fn load_body(skill: &Skill, workspace: &Path, hidden: &ReadRules) -> Result<String, SkillError> {
    // A skill of the person's own directory: beneath its skills directory.
    let root = if skill.dir.starts_with(workspace) { workspace } else { skill.dir.parent().unwrap_or(&skill.dir) };
    let text =
        read_file(&skill.dir.join(SKILL_FILE), root, hidden)?.ok_or_else(|| SkillError::Gone(skill.name.clone()))?;
    let (_, body) = split_frontmatter(&text)?;
    Ok(body.trim_start_matches(['\n', '\r']).to_owned())
}

/// The skill's other files, relative to its folder, sorted: at most `limit`, at most three
/// folders deep, links listed but never followed. A workspace skill's folder is opened beneath
/// the workspace without following a link (as its `SKILL.md` is read), so a folder swapped for a
/// link after discovery lists nothing outside; a skill of the person's own directory, beneath
/// that directory the same way.
pub fn other_files(skill: &Skill, workspace: &Path, limit: usize) -> Vec<String> {
    let root = if skill.dir.starts_with(workspace) { workspace } else { skill.dir.parent().unwrap_or(&skill.dir) };
    let top = Beneath::open(root).ok().and_then(|root| root.open_at(&skill.dir, DIR_READ, Links::None).ok());
    let Some(top) = top else { return Vec::new() };
    let mut files = Vec::new();
    let mut pending = vec![(top, String::new(), 0usize)];
    while let Some((dir, prefix, depth)) = pending.pop() {
        let Ok(entries) = rustix::fs::Dir::read_from(&dir) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name();
            if matches!(name.to_bytes(), b"." | b"..") {
                continue;
            }
            let relative = format!("{prefix}{}", name.to_string_lossy());
            let kind = match entry.file_type() {
                FileType::Unknown => rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW)
                    .map_or(FileType::Unknown, |stat| FileType::from_raw_mode(stat.st_mode)),
                known => known,
            };
            match kind {
                FileType::Directory if depth < 3 => {
                    if let Ok(sub) = rustix::fs::openat(&dir, name, DIR_READ | OFlags::NOFOLLOW, Mode::empty()) {
                        pending.push((sub, format!("{relative}/"), depth + 1));
                    }
                }
                FileType::RegularFile | FileType::Symlink if relative != SKILL_FILE => files.push(relative),
                _ => {}
            }
            if files.len() > limit {
                break;
            }
        }
    }
    files.sort();
    files.truncate(limit);
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_is_split_and_read() {
        let (front, body) = split_frontmatter("---\nname: a\ndescription: b\n---\n\nDo it.\n").unwrap();
        assert_eq!((front, body), ("name: a\ndescription: b\n", "\nDo it.\n"));
        assert!(split_frontmatter("# no frontmatter").unwrap_err().to_string().contains("no frontmatter"));
        assert!(split_frontmatter("---\nname: a\n").unwrap_err().to_string().contains("no closing"));
        let skill =
            parse_frontmatter("name: pdf\ndescription: Fill PDF forms\nallowed-tools: [Read, Bash]\n", Path::new("/s"))
                .unwrap();
        assert_eq!(skill.extra, [("allowed-tools".to_owned(), "Read, Bash".to_owned())]);
        for (front, why) in [
            ("name: PDF\ndescription: x", "is not 1 to 64"),
            ("description: x", "no 'name'"),
            ("name: pdf", "no 'description'"),
            ("name: [a, b]\ndescription: x", "'name' must be text"),
            ("name: a\ndescription: x\nallowed-tools: [{a: 1}]", "must hold text"),
            ("name: pdf\ndescription: x\n  bad: : indent", "bad YAML frontmatter"),
            (": :", "bad YAML frontmatter"),
        ] {
            let err = parse_frontmatter(front, Path::new("/s")).unwrap_err().to_string();
            assert!(err.contains(why), "{front}: {err}");
        }
        assert!(valid_name(&"a".repeat(64)) && !valid_name(&"a".repeat(65)) && !valid_name(""));
    }

    #[test]
    fn deeply_nested_frontmatter_is_an_error_not_a_crash() {
        let deep = format!("name: a\ndescription: {}{}", "[".repeat(5_000), "]".repeat(5_000));
        assert!(parse_frontmatter(&deep, Path::new("/s")).is_err());
    }
}
