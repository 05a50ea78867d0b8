//! Configuration files: the user's `~/.config/tackle/config.toml` (or `$TACKLE_CONFIG_DIR`)
//! and the workspace's `tackle.toml`, kept as separate layers.
//!
//! Each part of Tackle owns its section (`[tools]`, `[workspace]`, `[sandbox]`, `[mcp]`, …)
//! as a serde type and reads it from here. Layers stay separate because the workspace's file
//! is as untrusted as the code beside it (safety.md §2.2): a setting that widens access may
//! come from the workspace only when [`Config::workspace_trusted`] is true, and each owner
//! decides per key. [`Config::section`] merges the layers (workspace over user) for settings
//! that only narrow or do not touch access.

use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use toml::{Table, Value};

/// The workspace's configuration file name.
pub const WORKSPACE_FILE: &str = "tackle.toml";

/// A configuration file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path} is not valid TOML: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("invalid [{section}] in the configuration: {message}")]
    Section { section: String, message: String },
}

/// The loaded configuration layers.
#[derive(Debug, Clone, Default)]
pub struct Config {
    user: Table,
    workspace: Table,
    /// Whether settings from the workspace that widen access may take effect.
    pub workspace_trusted: bool,
}

impl Config {
    /// Loads the user file and `workspace/tackle.toml` (each optional). The workspace is
    /// trusted when `trust` is set (`--trust-workspace`), `TACKLE_TRUST_WORKSPACE=1`, or it
    /// is listed in the user config's `trusted_workspaces`.
    pub fn load(workspace: &Path, trust: bool) -> Result<Config, ConfigError> {
        let user = match user_config_dir() {
            Some(dir) => read_table(&dir.join("config.toml"))?,
            None => Table::new(),
        };
        let workspace_table = read_table(&workspace.join(WORKSPACE_FILE))?;
        let listed = user
            .get("trusted_workspaces")
            .and_then(Value::as_array)
            .is_some_and(|list| list.iter().filter_map(Value::as_str).any(|p| same_dir(Path::new(p), workspace)));
        let from_env =
            std::env::var("TACKLE_TRUST_WORKSPACE").is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"));
        Ok(Config { user, workspace: workspace_table, workspace_trusted: trust || from_env || listed })
    }

    /// A configuration from tables (tests, embedding).
    pub fn from_tables(user: Table, workspace: Table, workspace_trusted: bool) -> Config {
        Config { user, workspace, workspace_trusted }
    }

    /// The merged section `name` (dotted, e.g. `mcp.servers`): workspace keys over user keys,
    /// tables merged deeply. A missing section is `T::default()`.
    pub fn section<T: DeserializeOwned + Default>(&self, name: &str) -> Result<T, ConfigError> {
        let mut merged = lookup(&self.user, name).cloned().unwrap_or_default();
        if let Some(overlay) = lookup(&self.workspace, name) {
            merge(&mut merged, overlay);
        }
        deserialize(name, merged)
    }

    /// The section as the user's file has it.
    pub fn user_section<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>, ConfigError> {
        lookup(&self.user, name).cloned().map(|table| deserialize(name, table)).transpose()
    }

    /// The section as the workspace's file has it (untrusted unless `workspace_trusted`).
    pub fn workspace_section<T: DeserializeOwned>(&self, name: &str) -> Result<Option<T>, ConfigError> {
        lookup(&self.workspace, name).cloned().map(|table| deserialize(name, table)).transpose()
    }
}

/// The user configuration directory: `$TACKLE_CONFIG_DIR`, else `~/.config/tackle`.
pub fn user_config_dir() -> Option<PathBuf> {
    match std::env::var_os("TACKLE_CONFIG_DIR") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => dirs::config_dir().map(|dir| dir.join("tackle")),
    }
}

fn read_table(path: &Path) -> Result<Table, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            text.parse::<Table>().map_err(|err| ConfigError::Parse { path: path.to_owned(), message: err.to_string() })
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(Table::new()),
        Err(source) => Err(ConfigError::Read { path: path.to_owned(), source }),
    }
}

fn lookup<'a>(table: &'a Table, dotted: &str) -> Option<&'a Table> {
    let mut current = table;
    for part in dotted.split('.') {
        current = current.get(part)?.as_table()?;
    }
    Some(current)
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

fn deserialize<T: DeserializeOwned>(name: &str, table: Table) -> Result<T, ConfigError> {
    Value::Table(table)
        .try_into()
        .map_err(|err: toml::de::Error| ConfigError::Section { section: name.to_owned(), message: err.to_string() })
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
            table("[tools]\ntimeout_ms = 5\n[tools.nested]\na = 1\nb = 2"),
            table("[tools]\ndurable_writes = true\n[tools.nested]\nb = 3"),
            false,
        );
        let tools: Tools = config.section("tools").unwrap();
        assert_eq!(tools.timeout_ms, Some(5));
        assert!(tools.durable_writes);
        assert_eq!(tools.nested.unwrap(), table("a = 1\nb = 3"));
        let only_user: Option<Tools> = config.user_section("tools").unwrap();
        assert!(!only_user.unwrap().durable_writes);
        let missing: Tools = config.section("nothing.here").unwrap();
        assert_eq!(missing, Tools::default());
    }

    #[test]
    fn bad_sections_and_files_are_clear_errors() {
        let config = Config::from_tables(Table::new(), table("[tools]\ntimeout_ms = \"soon\""), false);
        let err = config.section::<Tools>("tools").unwrap_err().to_string();
        assert!(err.starts_with("invalid [tools] in the configuration:"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(WORKSPACE_FILE), "[tools\n").unwrap();
        let err = Config::load(dir.path(), false).unwrap_err().to_string();
        assert!(err.contains("tackle.toml is not valid TOML"), "{err}");
    }
}
