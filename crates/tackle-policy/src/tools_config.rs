//! `[tools]`: the settings every tool family shares (the executor's deadline and output
//! budget, the shell's kill grace period, the file tools' durability). One owner reads the
//! section, so a misspelt key is an error that names it instead of being ignored; each tool
//! family takes the keys it needs from [`ToolsConfig`].
//!
//! None of these keys widens access, so the workspace's `tackle.toml` may set them too, but its
//! numbers only lower the user's or the default value, within a maximum (the `NUMBERS` table of
//! `config/rules.rs`, applied when the configuration is loaded).

use std::time::Duration;

use serde::Deserialize;

use crate::config::{Config, ConfigError};
use tackle_core::executor::{DEFAULT_TIMEOUT, ExecutorConfig, OutputBudget};

/// The `[tools]` section.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ToolsConfig {
    /// The executor's deadline for a tool without its own, in milliseconds (default 120 s).
    pub timeout_ms: Option<u64>,
    /// The inline output limit in characters, clamped to 4,000–128,000 (default 30,000).
    pub max_output_chars: Option<usize>,
    /// The time between SIGTERM and SIGKILL when a process is stopped, in milliseconds.
    pub kill_grace_ms: Option<u64>,
    /// fsync each written file before its rename, and its directory after.
    pub durable_writes: bool,
}

impl ToolsConfig {
    /// The merged `[tools]` section of both configuration layers.
    pub fn from_config(config: &Config) -> Result<ToolsConfig, ConfigError> {
        config.section("tools")
    }

    /// The output budget these settings give.
    pub fn budget(&self) -> OutputBudget {
        self.max_output_chars.map(OutputBudget::new).unwrap_or_default()
    }

    /// The kill grace period, when set.
    pub fn kill_grace(&self) -> Option<Duration> {
        self.kill_grace_ms.map(Duration::from_millis)
    }

    /// The executor settings of `[tools]`: `timeout_ms` and `max_output_chars`.
    pub fn executor_config(&self) -> ExecutorConfig {
        ExecutorConfig {
            default_timeout: self.timeout_ms.map_or(DEFAULT_TIMEOUT, Duration::from_millis),
            budget: self.budget(),
            ..ExecutorConfig::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn config(user: &str, workspace: &str) -> Config {
        Config::from_tables(user.parse().unwrap(), workspace.parse().unwrap(), false)
    }

    #[test]
    fn the_executor_reads_its_deadline_and_budget() {
        let executor =
            ToolsConfig::from_config(&config("[tools]\ntimeout_ms = 1500", "[tools]\nmax_output_chars = 5000"))
                .unwrap()
                .executor_config();
        assert_eq!(executor.default_timeout, Duration::from_millis(1500));
        assert_eq!(executor.budget.max_chars(), 5000);
        let defaults = ToolsConfig::from_config(&Config::default()).unwrap().executor_config();
        assert_eq!(defaults.default_timeout, DEFAULT_TIMEOUT);
    }

    #[test]
    fn the_bounds_table_knows_the_defaults() {
        let default = |key: &str| crate::config::rules::number_rule(key).and_then(|rule| rule.default);
        #[allow(clippy::cast_precision_loss)]
        let expected = [DEFAULT_TIMEOUT.as_millis() as f64, tackle_core::executor::DEFAULT_MAX_OUTPUT_CHARS as f64];
        assert_eq!([default("tools.timeout_ms"), default("tools.max_output_chars")], expected.map(Some));
    }

    #[test]
    fn a_misspelt_key_is_an_error_naming_it() {
        let err = ToolsConfig::from_config(&config("", "[tools]\ntimeout = \"5s\"")).unwrap_err().to_string();
        assert!(err.contains("[tools]") && err.contains("unknown field `timeout`"), "{err}");
        // A misspelt number in the workspace is a number without bounds: refused before its owner.
        let misspelt = config("", "[tools]\ntimeout = 5");
        assert!(
            misspelt.notices()[0].starts_with("ignoring [tools] timeout = 5 from tackle.toml"),
            "{:?}",
            misspelt.notices()
        );
        let err = ToolsConfig::from_config(&config("[tools]\ntimeout = 5", "")).unwrap_err().to_string();
        assert!(err.contains("unknown field `timeout`"), "{err}");
    }
}
