//! Configuration files: the user's `~/.config/tackle/config.toml` (or `$TACKLE_CONFIG_DIR`)
//! and the workspace's `tackle.toml`, kept as separate layers.
//!
//! Each part of Tackle owns its section (`[tools]`, `[workspace]`, `[sandbox]`, `[mcp]`, …)
//! as a serde type and reads it from here. The layers stay separate because the workspace's
//! files are as untrusted as the code beside them: which workspace setting counts is decided
//! by one table, [`rules::RULES`] (docs/configuration.md). Settings that would widen the
//! sandbox, the path policy or the environment never come from the workspace; settings that
//! run or reach something on the person's behalf come from it only when the person consented
//! to its settings ([`Config::workspace_trusted`], bound to the hash of its settings files by
//! [`consent`]); settings that only narrow access always apply.
//!
//! The workspace's settings files are read once ([`snapshot`]); nothing reads them again in the
//! same session, so a file changed during a session does not count before the next one, where
//! its new hash needs consent again.

pub mod consent;
pub mod consent_runs;
pub mod rules;
pub mod snapshot;
pub mod user_dirs;

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use toml::{Table, Value};

use self::consent::{ConsentStore, SETTINGS_SUBJECT, TrustInputs, TrustPrompt, WORKSPACE_CONSENT_FILE};
use self::rules::FromWorkspace;
use self::snapshot::{SettingsFile, SettingsSnapshot};

/// The workspace's configuration file name.
pub const WORKSPACE_FILE: &str = "tackle.toml";

/// The environment variable that gives explicit consent to the workspace's settings for one run.
pub const TRUST_WORKSPACE_VAR: &str = "TACKLE_TRUST_WORKSPACE";

/// The user config's list of workspaces whose settings are trusted.
pub const TRUSTED_WORKSPACES: &str = "trusted_workspaces";

/// A configuration file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error reading it.
        source: std::io::Error,
    },
    /// The workspace's file is not something Tackle reads (not a regular file, too large).
    #[error("cannot use {path}: {why}")]
    Unusable {
        /// The file.
        path: PathBuf,
        /// Why it cannot be used, as a clause (`it is not a regular file`).
        why: String,
    },
    /// The file is not UTF-8 TOML.
    #[error("{path} is not valid TOML: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// A section (or narrowing key) does not have the shape its owner expects.
    #[error("invalid [{section}] in {file}: {message}; fix or remove the key (docs/configuration.md)")]
    Section {
        /// The file as messages name it (its path, `tackle.toml`, or `the user config`).
        file: String,
        /// The section's name (`sandbox`).
        section: String,
        /// What is wrong, from the deserializer.
        message: String,
    },
    /// A top-level name no part of Tackle reads (a misspelt section).
    #[error(
        "{file} has an unknown section or key `{key}`; Tackle reads {known} (docs/configuration.md), so fix \
         the name or remove it"
    )]
    UnknownSection {
        /// The file as messages name it (its path, `tackle.toml`, or `the user config`).
        file: String,
        /// The unknown name.
        key: String,
        /// The names Tackle reads, back-quoted and comma-separated.
        known: String,
    },
}

/// The loaded configuration layers.
#[derive(Debug, Clone, Default)]
pub struct Config {
    user: Table,
    /// The user file's path, for messages (`the user config` when there is none).
    user_file: Option<PathBuf>,
    /// The workspace's `tackle.toml` without the keys it may never set.
    workspace: Table,
    snapshot: SettingsSnapshot,
    /// Whether the person consented to the workspace's settings, as they are now.
    pub workspace_trusted: bool,
    notices: Vec<String>,
}

/// How [`Config::load_with`] decides trust.
#[derive(Default)]
pub struct LoadOptions<'a> {
    /// `--trust-workspace` (`TACKLE_TRUST_WORKSPACE=1` counts as well).
    pub trust_flag: bool,
    /// Asks the person on a terminal; `None` when nobody can be asked.
    pub prompt: Option<TrustPrompt<'a>>,
    /// Where workspace consent is remembered (default: the user config directory).
    pub store: Option<ConsentStore>,
}

impl std::fmt::Debug for LoadOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadOptions")
            .field("trust_flag", &self.trust_flag)
            .field("interactive", &self.prompt.is_some())
            .field("store", &self.store)
            .finish()
    }
}

impl Config {
    /// Loads the user file and the workspace's settings, without asking anybody.
    pub fn load(workspace: &Path, trust_flag: bool) -> Result<Config, ConfigError> {
        Config::load_with(workspace, LoadOptions { trust_flag, ..LoadOptions::default() })
    }

    /// Loads the user file and the workspace's settings files (each optional), drops the
    /// workspace keys the rules never take from it, and decides whether the workspace's
    /// settings are trusted (see [`consent::decide`]). Notices for the person are kept in
    /// [`Config::notices`].
    pub fn load_with(workspace: &Path, options: LoadOptions<'_>) -> Result<Config, ConfigError> {
        let user_file = user_config_file();
        let mut user = match &user_file {
            Some(path) => read_table(path)?,
            None => Table::new(),
        };
        check_sections(&user, &user_label(user_file.as_deref()))?;
        let snapshot = SettingsSnapshot::read(workspace);
        let path = workspace.join(WORKSPACE_FILE);
        let raw = match snapshot.file(WORKSPACE_FILE) {
            SettingsFile::Absent => Table::new(),
            SettingsFile::Present(bytes) => {
                let table = parse_table(&path, bytes)?;
                check_sections(&table, WORKSPACE_FILE)?;
                table
            }
            SettingsFile::Unusable(why) => return Err(ConfigError::Unusable { path, why: why.clone() }),
        };
        let (mut filtered, mut notices) = rules::filter_workspace(&raw, WORKSPACE_FILE);
        notices.extend(rules::bound_numbers(
            &mut user,
            &user_label(user_file.as_deref()),
            &mut filtered,
            &path.display().to_string(),
        ));
        let store = options.store.or_else(|| ConsentStore::in_user_config(WORKSPACE_CONSENT_FILE));
        let mut wanted = rules::needs_workspace_consent(&filtered);
        if !snapshot.tool_files().is_empty() {
            wanted.push(format!("the tools defined in {}/", tackle_core::fs::state::TACKLE_TOOLS.rel));
        }
        let runs = consent_runs::consent_would_run(&filtered, &user, &snapshot);
        let decision = consent::decide(&TrustInputs {
            workspace,
            snapshot: &snapshot,
            subject: SETTINGS_SUBJECT,
            explicit: options.trust_flag || flag_from_env(TRUST_WORKSPACE_VAR),
            listed: listed_in(&user, TRUSTED_WORKSPACES, workspace),
            list_name: TRUSTED_WORKSPACES,
            explicit_hint: "--trust-workspace (or TACKLE_TRUST_WORKSPACE=1)",
            wanted: &wanted,
            runs: &runs,
            store: store.as_ref(),
            prompt: options.prompt,
        });
        notices.extend(decision.notices);
        Ok(Config { user, user_file, workspace: filtered, snapshot, workspace_trusted: decision.trusted, notices })
    }

    /// A configuration from tables (tests, embedding); the workspace table goes through the
    /// same rules as a loaded one.
    pub fn from_tables(mut user: Table, workspace: Table, workspace_trusted: bool) -> Config {
        let (mut workspace, mut notices) = rules::filter_workspace(&workspace, WORKSPACE_FILE);
        notices.extend(rules::bound_numbers(&mut user, &user_label(None), &mut workspace, WORKSPACE_FILE));
        Config { user, user_file: None, workspace, snapshot: SettingsSnapshot::default(), workspace_trusted, notices }
    }

    /// This configuration with `snapshot` as the workspace's settings files (tests, embedding).
    pub fn with_snapshot(mut self, snapshot: SettingsSnapshot) -> Config {
        self.snapshot = snapshot;
        self
    }

    /// The user config directory this configuration was loaded from; `None` for one made
    /// from tables (an embedder's), which takes nothing else from the person's directory
    /// either (their tools defined in files).
    pub fn user_dir(&self) -> Option<&Path> {
        self.user_file.as_deref().and_then(Path::parent)
    }

    /// The workspace's settings files as read when the configuration was loaded; read any
    /// settings file from here, never from the disk again.
    pub fn snapshot(&self) -> &SettingsSnapshot {
        &self.snapshot
    }

    /// Whether the user config's list `dotted` (`mcp.trusted_workspaces`) names `workspace`.
    pub fn user_lists(&self, dotted: &str, workspace: &Path) -> bool {
        listed_in(&self.user, dotted, workspace)
    }

    /// One-line notices for the person: ignored workspace settings, trust decisions.
    pub fn notices(&self) -> &[String] {
        &self.notices
    }

    /// The merged section `name` (dotted, e.g. `mcp.servers`): the user's keys, with the
    /// workspace's over them where [`rules::RULES`] lets the workspace set them as written
    /// (`Always`, and `Consent` when the workspace is trusted; `Narrowing` keys are read with
    /// [`Config::narrowing`]). Tables merge deeply. A missing section is `T::default()`.
    ///
    /// Each file's part is checked on its own first, so a misspelt key or a wrong type is an
    /// error naming the file, the section and the key (the owner's type rejects unknown keys).
    pub fn section<T: DeserializeOwned + Default>(&self, name: &str) -> Result<T, ConfigError> {
        let user = self.user_section::<T>(name)?;
        let overlay = lookup(&self.workspace, name);
        match overlay {
            None => Ok(user.unwrap_or_default()),
            Some(overlay) => {
                self.workspace_section::<T>(name)?;
                let mut merged = lookup(&self.user, name).cloned().unwrap_or_default();
                merge_allowed(&mut merged, overlay, name, self.workspace_trusted);
                deserialize(WORKSPACE_FILE, name, merged)
            }
        }
    }

    /// The section as the user's file has it.
    pub fn user_section<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>, ConfigError> {
        let file = user_label(self.user_file.as_deref());
        lookup(&self.user, name).cloned().map(|table| deserialize(&file, name, table)).transpose()
    }

    /// The section as the workspace's file has it, without the keys the rules never take from
    /// a workspace (the rest is untrusted: `Consent` keys count only when
    /// [`Config::workspace_trusted`], `Narrowing` keys only where they narrow).
    pub fn workspace_section<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>, ConfigError> {
        lookup(&self.workspace, name).cloned().map(|table| deserialize(WORKSPACE_FILE, name, table)).transpose()
    }

    /// The workspace's value of the `Narrowing` setting `key` (dotted), when `narrows` says it
    /// narrows access; otherwise `None`, and a notice naming the setting is pushed.
    pub fn narrowing<T: DeserializeOwned>(
        &self,
        key: &str,
        narrows: impl FnOnce(&T) -> bool,
        notices: &mut Vec<String>,
    ) -> Result<Option<T>, ConfigError> {
        debug_assert_eq!(rules::from_workspace(key), FromWorkspace::Narrowing, "{key} is not a narrowing setting");
        let Some(value) = lookup_value(&self.workspace, key) else { return Ok(None) };
        let typed: T = value.clone().try_into().map_err(|err: toml::de::Error| ConfigError::Section {
            file: WORKSPACE_FILE.to_owned(),
            section: key.rsplit_once('.').map_or(key, |(section, _)| section).to_owned(),
            message: format!("{}: {}", rules::display_key(key), err.message().trim_end()),
        })?;
        if narrows(&typed) {
            return Ok(Some(typed));
        }
        notices.push(rules::ignored_notice(&format!("{} = {value}", rules::display_key(key)), WORKSPACE_FILE));
        Ok(None)
    }
}

/// The user configuration file: `config.toml` in [`user_config_dir`].
pub fn user_config_file() -> Option<PathBuf> {
    user_config_dir().map(|dir| dir.join("config.toml"))
}

/// The user configuration file as hints and notices name it: its full path as Tackle resolved
/// it (`/home/me/.config/tackle/config.toml`), so the person knows which file can do what a
/// workspace may not.
pub fn user_config_shown() -> String {
    user_config_file().map_or_else(
        || "the user config (no config directory: set TACKLE_CONFIG_DIR)".to_owned(),
        |path| path.display().to_string(),
    )
}

/// The user configuration directory: `$TACKLE_CONFIG_DIR`, else `~/.config/tackle`.
pub fn user_config_dir() -> Option<PathBuf> {
    match std::env::var_os("TACKLE_CONFIG_DIR") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => dirs::config_dir().map(|dir| dir.join("tackle")),
    }
}

/// Whether the environment variable `name` is `1` or `true`.
pub fn flag_from_env(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"))
}

/// Whether the list `dotted` (`trusted_workspaces`, `mcp.trusted_workspaces`) of `table`
/// names `workspace`.
pub fn listed_in(table: &Table, dotted: &str, workspace: &Path) -> bool {
    lookup_value(table, dotted)
        .and_then(Value::as_array)
        .is_some_and(|list| list.iter().filter_map(Value::as_str).any(|p| same_dir(Path::new(p), workspace)))
}

/// Reads a TOML file; a missing one is an empty table.
pub fn read_table(path: &Path) -> Result<Table, ConfigError> {
    match std::fs::read(path) {
        Ok(bytes) => parse_table(path, &bytes),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Table::new()),
        Err(source) => Err(ConfigError::Read { path: path.to_owned(), source }),
    }
}

fn parse_table(path: &Path, bytes: &[u8]) -> Result<Table, ConfigError> {
    let parse = |message: String| ConfigError::Parse { path: path.to_owned(), message };
    let text = std::str::from_utf8(bytes).map_err(|err| parse(format!("it is not UTF-8 ({err})")))?;
    text.parse::<Table>().map_err(|err| parse(err.to_string()))
}

fn lookup<'a>(table: &'a Table, dotted: &str) -> Option<&'a Table> {
    lookup_value(table, dotted)?.as_table()
}

pub(crate) fn lookup_value<'a>(table: &'a Table, dotted: &str) -> Option<&'a Value> {
    let (parents, last) = match dotted.rsplit_once('.') {
        Some((parents, last)) => (Some(parents), last),
        None => (None, dotted),
    };
    let mut current = table;
    for part in parents.into_iter().flat_map(|p| p.split('.')) {
        current = current.get(part)?.as_table()?;
    }
    current.get(last)
}

fn merge(base: &mut Table, overlay: &Table) {
    for (key, value) in overlay {
        match (base.get_mut(key), value) {
            (Some(Value::Table(existing)), Value::Table(incoming)) => merge(existing, incoming),
            _ => {
                base.insert(key.clone(), value.clone());
            }
        }
    }
}

/// Merges the workspace's `overlay` (the table at `prefix`) into `base`, key by key as the
/// rules allow.
fn merge_allowed(base: &mut Table, overlay: &Table, prefix: &str, trusted: bool) {
    for (key, value) in overlay {
        let path = format!("{prefix}.{key}");
        let has_own_rule = rules::RULES.iter().any(|rule| rule.key == path);
        let has_rules_below =
            rules::RULES.iter().any(|rule| rule.key.strip_prefix(path.as_str()).is_some_and(|r| r.starts_with('.')));
        if let (false, true, Value::Table(inner)) = (has_own_rule, has_rules_below, value) {
            let Value::Table(nested) = base.entry(key.clone()).or_insert_with(|| Value::Table(Table::new())) else {
                continue;
            };
            merge_allowed(nested, inner, &path, trusted);
            continue;
        }
        let allowed = match rules::from_workspace(&path) {
            FromWorkspace::Always => true,
            FromWorkspace::Consent => trusted,
            FromWorkspace::Narrowing | FromWorkspace::Never => false,
        };
        if allowed {
            let mut single = Table::new();
            single.insert(key.clone(), value.clone());
            merge(base, &single);
        }
    }
}

fn deserialize<T: DeserializeOwned>(file: &str, name: &str, table: Table) -> Result<T, ConfigError> {
    Value::Table(table).try_into().map_err(|err: toml::de::Error| ConfigError::Section {
        file: file.to_owned(),
        section: name.to_owned(),
        message: err.message().trim_end().to_owned(),
    })
}

/// How messages name the user's file.
fn user_label(path: Option<&Path>) -> String {
    path.map_or_else(|| "the user config".to_owned(), |path| path.display().to_string())
}

/// Refuses a top-level name no part of Tackle reads (a misspelt `[sandbx]` would otherwise be
/// silence): the known names are the first parts of the keys in [`rules::RULES`].
fn check_sections(table: &Table, file: &str) -> Result<(), ConfigError> {
    let known = rules::top_level_names();
    match table.keys().find(|key| !known.contains(&key.as_str())) {
        None => Ok(()),
        Some(key) => Err(ConfigError::UnknownSection {
            file: file.to_owned(),
            key: key.clone(),
            known: known.iter().map(|name| format!("`{name}`")).collect::<Vec<_>>().join(", "),
        }),
    }
}

/// Whether two paths name the same directory (compared canonically when both exist).
pub fn same_dir(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Default, Deserialize, PartialEq)]
    #[serde(default, deny_unknown_fields)]
    struct Tools {
        timeout_ms: Option<u64>,
        durable_writes: bool,
        nested: Option<Table>,
    }

    fn table(text: &str) -> Table {
        text.parse().unwrap()
    }

    #[test]
    fn sections_merge_workspace_over_user() {
        let config = Config::from_tables(
            table("[tools]\ntimeout_ms = 5\n[tools.nested]\na = 'x'\nb = 'y'"),
            table("[tools]\ndurable_writes = true\n[tools.nested]\nb = 'z'"),
            false,
        );
        let tools: Tools = config.section("tools").unwrap();
        assert_eq!(tools.timeout_ms, Some(5));
        assert!(tools.durable_writes);
        assert_eq!(tools.nested.unwrap(), table("a = 'x'\nb = 'z'"));
        let only_user: Option<Tools> = config.user_section("tools").unwrap();
        assert!(!only_user.unwrap().durable_writes);
        let missing: Tools = config.section("nothing.here").unwrap();
        assert_eq!(missing, Tools::default());
    }

    #[test]
    fn merged_sections_take_from_the_workspace_only_what_the_rules_allow() {
        let user = table("[providers.openai]\nmax_retries = 1\n[sandbox]\nnetwork = false\n[mcp]\ndefer_threshold = 2");
        let workspace = table(
            "[providers.openai]\nbase_url = \"https://gw\"\n[sandbox]\nnetwork = true\nextra_writable = [\"/\"]\n\
             [mcp]\ndefer_threshold = 1\ntrusted_workspaces = [\"/\"]",
        );
        let untrusted = Config::from_tables(user.clone(), workspace.clone(), false);
        assert_eq!(untrusted.section::<Table>("providers").unwrap(), table("[openai]\nmax_retries = 1"));
        assert_eq!(untrusted.section::<Table>("sandbox").unwrap(), table("network = false"), "narrowing keys stay out");
        assert_eq!(untrusted.section::<Table>("mcp").unwrap(), table("defer_threshold = 1"));
        let trusted = Config::from_tables(user, workspace, true);
        assert_eq!(
            trusted.section::<Table>("providers").unwrap(),
            table("[openai]\nmax_retries = 1\nbase_url = \"https://gw\"")
        );
        assert_eq!(trusted.section::<Table>("sandbox").unwrap(), table("network = false"), "trust does not widen");
        assert_eq!(trusted.notices().len(), 2, "{:?}", trusted.notices());
    }

    #[test]
    fn narrowing_values_apply_and_widening_ones_are_named() {
        let config = Config::from_tables(Table::new(), table("[sandbox]\nnetwork = true\nprotect_git = true"), true);
        let mut notices = Vec::new();
        assert_eq!(config.narrowing("sandbox.network", |on: &bool| !on, &mut notices).unwrap(), None);
        assert_eq!(config.narrowing("sandbox.protect_git", |on: &bool| *on, &mut notices).unwrap(), Some(true));
        assert_eq!(config.narrowing::<bool>("sandbox.mode", |_| true, &mut notices).unwrap(), None);
        assert_eq!(
            notices,
            [format!(
                "ignoring [sandbox] network = true from the workspace's tackle.toml: it would widen the sandbox, the \
                 path policy or the environment, which only your user config ({}) and flags may do",
                user_config_shown()
            )]
        );
        let err = config.narrowing::<String>("sandbox.network", |_| true, &mut notices).unwrap_err().to_string();
        assert!(err.starts_with("invalid [sandbox] in tackle.toml: [sandbox] network: invalid type"), "{err}");
        assert!(err.ends_with("; fix or remove the key (docs/configuration.md)"), "{err}");
    }

    #[test]
    fn bad_sections_and_files_are_clear_errors() {
        let config = Config::from_tables(Table::new(), table("[tools]\ntimeout_ms = \"soon\""), false);
        let err = config.section::<Tools>("tools").unwrap_err().to_string();
        assert!(err.starts_with("invalid [tools] in tackle.toml: invalid type: string \"soon\""), "{err}");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(WORKSPACE_FILE), "[tools\n").unwrap();
        let err = Config::load(dir.path(), false).unwrap_err().to_string();
        assert!(err.contains("tackle.toml is not valid TOML"), "{err}");
        std::fs::write(dir.path().join(WORKSPACE_FILE), b"[tools]\nx = \"\xff\"\n").unwrap();
        let err = Config::load(dir.path(), false).unwrap_err().to_string();
        assert!(err.contains("tackle.toml is not valid TOML: it is not UTF-8"), "{err}");
        std::fs::remove_file(dir.path().join(WORKSPACE_FILE)).unwrap();
        std::fs::create_dir(dir.path().join(WORKSPACE_FILE)).unwrap();
        let err = Config::load(dir.path(), false).unwrap_err().to_string();
        assert!(err.ends_with("tackle.toml: it is not a regular file"), "{err}");
    }
}
