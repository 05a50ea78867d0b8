//! Where rules come from (docs/reference/safety.md#rules): the user config's
//! `[permissions]`, the workspace's `tackle.toml` (deny and ask always, allow only with the
//! person's consent to the workspace's settings), the rules a person saved with "always for
//! this project" (in the user config dir, keyed by the workspace path, never in the
//! workspace), the `--allow`/`--ask`/`--deny` flags, and the workspace's `.claude/settings.json`
//! and `.claude/settings.local.json` (deny and ask always, since they only narrow; allow only
//! with `[compat] claude = true` and consent). A malformed rule or
//! file is an error naming the file and the rule; no rule is dropped silently.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value as Json;
use toml::Table;

use super::PermissionMode;
use super::rule::{Rule, RuleBase};
use super::rules::{RuleBook, RuleKind, SourcedRule};
use crate::config::snapshot::SettingsFile;
use crate::config::{Config, WORKSPACE_FILE, user_config_dir};

/// The file in the user config dir that keeps "always for this project" rules.
pub const PROJECT_RULES_FILE: &str = "project-permissions.toml";

/// The Claude Code settings files read with `[compat] claude = true`.
pub const CLAUDE_SETTINGS: &[&str] = &[".claude/settings.json", ".claude/settings.local.json"];

/// A rule source that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {why}")]
pub struct SourceError {
    /// The file (or flag) the problem is in.
    pub file: String,
    /// What is wrong, naming the rule.
    pub why: String,
}

/// `[permissions]` of a configuration file.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PermissionsSection {
    /// Allow rules, as written (`Bash(cargo test:*)`).
    #[serde(default)]
    pub allow: Vec<String>,
    /// Ask rules, as written.
    #[serde(default)]
    pub ask: Vec<String>,
    /// Deny rules, as written.
    #[serde(default)]
    pub deny: Vec<String>,
}

/// The rules given on the command line (or by an embedder).
#[derive(Debug, Clone, Default)]
pub struct RuleFlags {
    /// Allow rules (`--allow RULE`), as written.
    pub allow: Vec<String>,
    /// Ask rules (`--ask RULE`), as written.
    pub ask: Vec<String>,
    /// Deny rules (`--deny RULE`), as written.
    pub deny: Vec<String>,
}

/// `[compat]`: reading other agents' settings.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct CompatSection {
    /// Read the workspace's `.claude/settings.json` and `.claude/settings.local.json`.
    #[serde(default)]
    pub claude: bool,
}

/// Everything the sources gave.
#[derive(Debug, Default)]
pub struct LoadedRules {
    /// Every rule that counts, each with its source.
    pub book: RuleBook,
    /// One-line notices for the person (allow rules ignored without consent).
    pub notices: Vec<String>,
    /// `permissions.defaultMode` of a Claude Code settings file, when it may count.
    pub default_mode: Option<PermissionMode>,
}

/// Loads the rules of every source for `workspace` (canonical).
pub fn load(config: &Config, workspace: &Path, flags: &RuleFlags) -> Result<LoadedRules, SourceError> {
    let mut loaded = LoadedRules::default();
    let home = dirs::home_dir();
    let user_dir = user_config_dir();
    let user_file =
        user_dir.as_ref().map_or_else(|| "config.toml".to_owned(), |d| d.join("config.toml").display().to_string());
    let base = |rule_dir: &Path| RuleBase {
        workspace: workspace.to_owned(),
        rule_dir: rule_dir.to_owned(),
        home: home.clone(),
    };
    let trusted = config.workspace_trusted;

    let user: PermissionsSection = config
        .user_section("permissions")
        .map_err(|err| SourceError { file: user_file.clone(), why: err.to_string() })?
        .unwrap_or_default();
    let user_base = base(user_dir.as_deref().unwrap_or(workspace));
    add_section(&loaded.book, &user, &user_base, &user_file, true, &mut loaded.notices)?;

    let from_workspace: PermissionsSection = config
        .workspace_section("permissions")
        .map_err(|err| SourceError { file: WORKSPACE_FILE.to_owned(), why: err.to_string() })?
        .unwrap_or_default();
    add_section(&loaded.book, &from_workspace, &base(workspace), WORKSPACE_FILE, trusted, &mut loaded.notices)?;

    if let Some(store) = ProjectRules::in_user_config() {
        let file = store.path.display().to_string();
        for text in store.rules(workspace).map_err(|err| SourceError { file: file.clone(), why: err.to_string() })? {
            add(&loaded.book, RuleKind::Allow, &text, &base(workspace), &format!("project rules ({file})"))?;
        }
    }

    for (kind, list, flag) in [
        (RuleKind::Deny, &flags.deny, "--deny"),
        (RuleKind::Ask, &flags.ask, "--ask"),
        (RuleKind::Allow, &flags.allow, "--allow"),
    ] {
        for text in list {
            add(&loaded.book, kind, text, &base(workspace), flag)?;
        }
    }

    add_claude_settings(config, workspace, &base(&workspace.join(".claude")), &mut loaded)?;
    Ok(loaded)
}

/// The workspace's Claude Code settings files. Their deny and ask rules only narrow, so they
/// count always, whether or not `[compat] claude` is on or the workspace is trusted; their allow
/// rules and a `defaultMode` wider than `default` need `[compat] claude` and consent (a narrower
/// mode needs `[compat] claude`), their hooks `[hooks] import_claude` and consent. One notice
/// names what was found and not applied, and how to apply it.
fn add_claude_settings(
    config: &Config,
    workspace: &Path,
    base: &RuleBase,
    loaded: &mut LoadedRules,
) -> Result<(), SourceError> {
    let compat = claude_compat(config)?;
    let trusted = config.workspace_trusted;
    let hooks_apply = crate::hooks::config::claude_hooks_apply(config);
    let mut left_out: Vec<String> = Vec::new();
    let (mut wants_compat, mut wants_hooks) = (false, false);
    for name in CLAUDE_SETTINGS {
        let Some(settings) = claude_settings(config, name)? else { continue };
        let mut parts: Vec<String> = Vec::new();
        if let Some(permissions) = settings.get("permissions") {
            let section = claude_permissions(permissions, name)?;
            let narrowing = PermissionsSection { allow: Vec::new(), ..section.clone() };
            add_section(&loaded.book, &narrowing, base, name, false, &mut loaded.notices)?;
            if compat && trusted {
                for text in &section.allow {
                    add(&loaded.book, RuleKind::Allow, text, base, name)?;
                }
            } else if !section.allow.is_empty() {
                // Still parsed, so a malformed rule is reported even when it would not count.
                for text in &section.allow {
                    Rule::parse(text, base)
                        .map_err(|err| SourceError { file: (*name).to_owned(), why: err.to_string() })?;
                }
                parts.push(format!("{} allow rule(s)", section.allow.len()));
                wants_compat = true;
            }
            if let Some(raw) = permissions.get("defaultMode") {
                // Read (and a bad value refused) only where `[compat] claude` asks for it.
                let mode = if compat { Some(claude_mode(raw, name)?) } else { None };
                let narrow = |mode: PermissionMode| {
                    matches!(mode, PermissionMode::Default | PermissionMode::Plan | PermissionMode::DontAsk)
                };
                match mode {
                    Some(mode) if trusted || narrow(mode) => loaded.default_mode = Some(mode),
                    _ => {
                        parts.push(format!("permissions.defaultMode = {raw}"));
                        wants_compat = true;
                    }
                }
            }
        }
        if settings.get("hooks").is_some_and(|hooks| hooks.as_object().is_none_or(|h| !h.is_empty())) && !hooks_apply {
            parts.push("hooks".to_owned());
            wants_hooks = true;
        }
        if !parts.is_empty() {
            left_out.push(format!("{name} ({})", parts.join(", ")));
        }
    }
    if left_out.is_empty() {
        return Ok(());
    }
    let mut settings: Vec<&str> = Vec::new();
    if wants_compat && !compat {
        settings.push("[compat] claude = true");
    }
    if wants_hooks && !crate::hooks::config::imports_claude_hooks(config) {
        settings.push("[hooks] import_claude = true");
    }
    let mut steps: Vec<String> = Vec::new();
    if !settings.is_empty() {
        steps.push(format!("set {} in your user config", settings.join(" and ")));
    }
    if !trusted {
        steps.push("trust the workspace (--trust-workspace, or list it in trusted_workspaces)".to_owned());
    }
    loaded.notices.push(format!(
        "applying only the deny and ask rules of {}'s Claude Code settings; not applied: {}. To apply them, {}",
        workspace.display(),
        left_out.join("; "),
        steps.join(" and ")
    ));
    Ok(())
}

/// `permissions.defaultMode` of a Claude Code settings file.
fn claude_mode(mode: &Json, name: &str) -> Result<PermissionMode, SourceError> {
    mode.as_str().and_then(|m| m.parse::<PermissionMode>().ok()).ok_or_else(|| SourceError {
        file: name.to_owned(),
        why: format!(
            "permissions.defaultMode {mode} is not a mode; use default, acceptEdits, plan, dontAsk or bypassPermissions"
        ),
    })
}

/// Whether `[compat] claude = true` holds (the workspace's own value only with consent).
pub fn claude_compat(config: &Config) -> Result<bool, SourceError> {
    let section: CompatSection =
        config.section("compat").map_err(|err| SourceError { file: "[compat]".to_owned(), why: err.to_string() })?;
    Ok(section.claude)
}

/// The JSON of a Claude Code settings file of the workspace's snapshot, if present.
pub fn claude_settings(config: &Config, name: &str) -> Result<Option<Json>, SourceError> {
    let error = |why: String| SourceError { file: name.to_owned(), why };
    match config.snapshot().file(name) {
        SettingsFile::Absent => Ok(None),
        SettingsFile::Unusable(why) => Err(error(why.clone())),
        SettingsFile::Present(bytes) => {
            let json: Json = serde_json::from_slice(bytes).map_err(|err| error(format!("not valid JSON: {err}")))?;
            if !json.is_object() {
                return Err(error("the settings must be a JSON object".to_owned()));
            }
            Ok(Some(json))
        }
    }
}

fn claude_permissions(permissions: &Json, name: &str) -> Result<PermissionsSection, SourceError> {
    let list = |key: &str| -> Result<Vec<String>, SourceError> {
        match permissions.get(key) {
            None => Ok(Vec::new()),
            Some(Json::Array(items)) => items
                .iter()
                .map(|item| {
                    item.as_str().map(str::to_owned).ok_or_else(|| SourceError {
                        file: name.to_owned(),
                        why: format!("permissions.{key} holds {item}, which is not a rule string"),
                    })
                })
                .collect(),
            Some(other) => Err(SourceError {
                file: name.to_owned(),
                why: format!("permissions.{key} must be a list of rule strings, not {other}"),
            }),
        }
    };
    Ok(PermissionsSection { allow: list("allow")?, ask: list("ask")?, deny: list("deny")? })
}

fn add_section(
    book: &RuleBook,
    section: &PermissionsSection,
    base: &RuleBase,
    file: &str,
    allow_counts: bool,
    notices: &mut Vec<String>,
) -> Result<(), SourceError> {
    for text in &section.deny {
        add(book, RuleKind::Deny, text, base, file)?;
    }
    for text in &section.ask {
        add(book, RuleKind::Ask, text, base, file)?;
    }
    if allow_counts {
        for text in &section.allow {
            add(book, RuleKind::Allow, text, base, file)?;
        }
    } else if !section.allow.is_empty() {
        // Still parsed, so a malformed rule is reported even when it would not count.
        for text in &section.allow {
            Rule::parse(text, base).map_err(|err| SourceError { file: file.to_owned(), why: err.to_string() })?;
        }
        notices.push(format!(
            "ignoring {} allow rule(s) from the workspace's {file}: allow rules from the workspace need your consent to its settings (--trust-workspace)",
            section.allow.len()
        ));
    }
    Ok(())
}

fn add(book: &RuleBook, kind: RuleKind, text: &str, base: &RuleBase, source: &str) -> Result<(), SourceError> {
    let rule = Rule::parse(text, base).map_err(|err| SourceError { file: source.to_owned(), why: err.to_string() })?;
    book.push(SourcedRule { kind, rule, source: Arc::from(source) });
    Ok(())
}

/// Why the "always for this project" store cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ProjectRulesError {
    /// The file cannot be read.
    #[error("cannot read it: {0}")]
    Read(#[source] std::io::Error),
    /// The file is not TOML.
    #[error("not valid TOML: {0}")]
    NotToml(#[source] toml::de::Error),
    /// A workspace's entry has no `allow` list.
    #[error("[\"{workspace}\"] needs allow = [rules]")]
    NoAllowList {
        /// The entry's key, the workspace path.
        workspace: String,
    },
    /// A workspace's `allow` list holds something else than a string.
    #[error("[\"{workspace}\"] allow holds {value}, which is not a rule string")]
    NotARule {
        /// The entry's key, the workspace path.
        workspace: String,
        /// What it holds.
        value: toml::Value,
    },
}

/// The "always for this project" rules, kept in the user config dir and keyed by the
/// workspace path: a command in the workspace cannot write them.
#[derive(Debug, Clone)]
pub struct ProjectRules {
    /// The store's file ([`PROJECT_RULES_FILE`] in the user config dir).
    pub path: PathBuf,
}

impl ProjectRules {
    /// The store in the user config dir.
    pub fn in_user_config() -> Option<ProjectRules> {
        user_config_dir().map(|dir| ProjectRules { path: dir.join(PROJECT_RULES_FILE) })
    }

    fn read(&self) -> Result<Table, ProjectRulesError> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => text.parse::<Table>().map_err(ProjectRulesError::NotToml),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Table::new()),
            Err(err) => Err(ProjectRulesError::Read(err)),
        }
    }

    /// The allow rules saved for `workspace`.
    pub fn rules(&self, workspace: &Path) -> Result<Vec<String>, ProjectRulesError> {
        let table = self.read()?;
        let key = workspace.display().to_string();
        let Some(entry) = table.get(&key) else { return Ok(Vec::new()) };
        let allow = entry
            .get("allow")
            .and_then(toml::Value::as_array)
            .ok_or_else(|| ProjectRulesError::NoAllowList { workspace: key.clone() })?;
        allow
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| ProjectRulesError::NotARule { workspace: key.clone(), value: v.clone() })
            })
            .collect()
    }

    /// Saves an allow rule for `workspace` (written to a temporary file, then renamed).
    pub fn save(&self, workspace: &Path, rule: &str) -> std::io::Result<()> {
        let mut table = self.read().map_err(std::io::Error::other)?;
        let key = workspace.display().to_string();
        let entry = table.entry(key).or_insert_with(|| toml::Value::Table(Table::new()));
        let toml::Value::Table(entry) = entry else {
            return Err(std::io::Error::other("the workspace's entry is not a table"));
        };
        let allow = entry.entry("allow").or_insert_with(|| toml::Value::Array(Vec::new()));
        if let toml::Value::Array(list) = allow
            && !list.iter().any(|v| v.as_str() == Some(rule))
        {
            list.push(toml::Value::String(rule.to_owned()));
        }
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let text = toml::to_string(&table).map_err(std::io::Error::other)?;
        let temp = self.path.with_extension("toml.tmp");
        std::fs::write(&temp, text)?;
        std::fs::rename(&temp, &self.path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_malformed_project_store_says_which_entry_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let store = ProjectRules { path: dir.path().join("rules.toml") };
        assert_eq!(store.rules(Path::new("/ws")).unwrap(), Vec::<String>::new(), "no file, no rules");
        std::fs::write(&store.path, "[\"/ws\"]\nallow = [\"Bash(ls)\", 3]\n[\"/other\"]\ndeny = []\n").unwrap();
        let err = store.rules(Path::new("/ws")).unwrap_err();
        assert!(matches!(&err, ProjectRulesError::NotARule { workspace, .. } if workspace == "/ws"), "{err:?}");
        assert_eq!(err.to_string(), "[\"/ws\"] allow holds 3, which is not a rule string");
        assert_eq!(store.rules(Path::new("/other")).unwrap_err().to_string(), "[\"/other\"] needs allow = [rules]");
        std::fs::write(&store.path, "allow = [").unwrap();
        let err = store.rules(Path::new("/ws")).unwrap_err();
        assert!(matches!(err, ProjectRulesError::NotToml(_)) && err.to_string().starts_with("not valid TOML: "));
        let err = store.save(Path::new("/ws"), "Bash(ls)").unwrap_err();
        assert!(err.to_string().starts_with("not valid TOML: "), "{err}");
    }
}
