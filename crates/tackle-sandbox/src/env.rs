//! The environment every command runs with (docs/shell.md, "The command environment"): the
//! inherited environment minus secrets (every name containing `KEY`, `SECRET`, `TOKEN` or
//! `PASSWORD`, in any case, and the names in `[env] remove`), plus fixed settings that keep
//! commands from waiting for a person (pagers, editors, credential prompts), plus `[env] set`.
//!
//! The bash session, background jobs, subagent shells and hooks all start from one
//! [`CommandEnv`]. Secrets were moved out of Tackle's own environment into
//! `tackle_policy::secrets` when it started; `[env] passthrough` takes a name back from there.
//! `set` and `passthrough` widen what commands can reach and are never taken from the
//! workspace's own `tackle.toml` (the rules of `tackle_policy::config::rules` drop them);
//! `remove` only narrows, so it always applies.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::Path;

use serde::Deserialize;
use tackle_policy::config::{Config, ConfigError};
use tackle_policy::secrets;

/// Variables every command gets, whatever it inherits (docs/reference/safety.md#command-environment).
pub const FIXED_VARS: &[(&str, &str)] = &[
    ("GIT_TERMINAL_PROMPT", "0"),
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("MANPAGER", "cat"),
    ("GIT_EDITOR", "true"),
    ("EDITOR", "true"),
    ("VISUAL", "true"),
    ("TERM", "dumb"),
    ("NO_COLOR", "1"),
    ("CLICOLOR", "0"),
    ("DEBIAN_FRONTEND", "noninteractive"),
    ("PYTHONUNBUFFERED", "1"),
];

/// The variable that marks every process a session's commands started (docs/reference/safety.md#command-environment).
pub const SESSION_ID_VAR: &str = "TACKLE_SESSION_ID";

/// The `[env]` section as a file holds it.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct EnvSection {
    set: BTreeMap<String, String>,
    remove: Vec<String>,
    passthrough: Vec<String>,
}

/// The effective `[env]` settings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvSettings {
    /// Variables added to every command's environment.
    pub set: BTreeMap<String, String>,
    /// Names removed from the inherited environment besides the secrets of
    /// `tackle_policy::secrets::is_secret_name`; `*` globs.
    pub remove: Vec<String>,
    /// Names kept even though a removal rule matches them.
    pub passthrough: Vec<String>,
}

impl EnvSettings {
    /// Reads `[env]`: the user's settings as written, and the workspace's `remove` (its `set`
    /// and `passthrough` never reach here; the configuration dropped them with a notice).
    pub fn from_config(config: &Config) -> Result<EnvSettings, ConfigError> {
        let mut settings = EnvSettings::default();
        if let Some(user) = config.user_section::<EnvSection>("env")? {
            settings.set.extend(user.set);
            settings.remove.extend(user.remove);
            settings.passthrough.extend(user.passthrough);
        }
        if let Some(workspace) = config.workspace_section::<EnvSection>("env")? {
            settings.remove.extend(workspace.remove);
        }
        Ok(settings)
    }

    /// Whether `passthrough` keeps the variable `name`.
    fn passes(&self, name: &OsStr) -> bool {
        let name = name.to_string_lossy();
        self.passthrough.iter().any(|pattern| tackle_policy::wildcard::matches(pattern, &name))
    }
}

/// A complete environment for a command (the command's own environment is cleared first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandEnv {
    vars: BTreeMap<OsString, OsString>,
}

impl CommandEnv {
    /// The environment for commands of session `session_id` in `workspace`, starting from
    /// this process's environment and the stripped secrets that `passthrough` names.
    pub fn new(settings: &EnvSettings, session_id: &str, workspace: &Path) -> CommandEnv {
        let passed = secrets::stored().iter().filter(|(name, _)| settings.passes(name)).cloned();
        let inherited = std::env::vars_os().filter(|(name, _)| !secrets::is_stored(name));
        CommandEnv::from_base(inherited.chain(passed), settings, session_id, workspace)
    }

    /// The environment built from `base` instead of this process's environment.
    pub fn from_base(
        base: impl IntoIterator<Item = (OsString, OsString)>,
        settings: &EnvSettings,
        session_id: &str,
        workspace: &Path,
    ) -> CommandEnv {
        let removed = |name: &OsStr| !settings.passes(name) && secrets::is_removed(name, &settings.remove);
        let mut vars: BTreeMap<OsString, OsString> = base.into_iter().filter(|(name, _)| !removed(name)).collect();
        for (name, value) in FIXED_VARS {
            vars.insert((*name).into(), (*value).into());
        }
        vars.entry("LANG".into()).or_insert_with(|| "C.UTF-8".into());
        for (name, value) in &settings.set {
            vars.insert(name.into(), value.into());
        }
        vars.insert("TACKLE".into(), "1".into());
        vars.insert(SESSION_ID_VAR.into(), session_id.into());
        vars.insert("TACKLE_WORKSPACE".into(), workspace.as_os_str().to_owned());
        CommandEnv { vars }
    }

    /// This environment with `extra` variables added or replaced (a background job gets the
    /// variables exported in the session shell).
    pub fn with_vars(&self, extra: impl IntoIterator<Item = (OsString, OsString)>) -> CommandEnv {
        let mut vars = self.vars.clone();
        vars.extend(extra);
        CommandEnv { vars }
    }

    /// The value of `name`.
    pub fn get(&self, name: &str) -> Option<&OsStr> {
        self.vars.get(OsStr::new(name)).map(OsString::as_os_str)
    }

    /// Every variable, sorted by name.
    pub fn vars(&self) -> impl Iterator<Item = (&OsStr, &OsStr)> {
        self.vars.iter().map(|(k, v)| (k.as_os_str(), v.as_os_str()))
    }

    /// Replaces `command`'s environment with this one.
    pub fn apply(&self, command: &mut std::process::Command) {
        command.env_clear().envs(&self.vars);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn base(pairs: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        pairs.iter().map(|(k, v)| ((*k).into(), (*v).into())).collect()
    }

    #[test]
    fn keys_are_removed_fixed_values_set_and_passthrough_keeps_a_name() {
        let settings = EnvSettings {
            set: BTreeMap::from([("FOO".to_owned(), "bar".to_owned()), ("TERM".to_owned(), "xterm".to_owned())]),
            remove: vec!["SECRET_*".into()],
            passthrough: vec!["ANTHROPIC_API_KEY".into()],
        };
        let env = CommandEnv::from_base(
            base(&[
                ("PATH", "/bin"),
                ("OPENAI_API_KEY", "sk-1"),
                ("ANTHROPIC_API_KEY", "sk-2"),
                ("TACKLE_GROQ_KEY", "k"),
                ("SECRET_TOKEN", "t"),
                ("PAGER", "less"),
                ("LANG", "de_DE.UTF-8"),
            ]),
            &settings,
            "s1",
            Path::new("/work/ws"),
        );
        let names: Vec<&str> = env.vars().map(|(k, _)| k.to_str().unwrap()).collect();
        assert!(!names.contains(&"OPENAI_API_KEY") && !names.contains(&"TACKLE_GROQ_KEY"));
        assert!(!names.contains(&"SECRET_TOKEN"));
        assert_eq!(env.get("ANTHROPIC_API_KEY"), Some(OsStr::new("sk-2")));
        assert_eq!(env.get("PAGER"), Some(OsStr::new("cat")));
        assert_eq!(env.get("GIT_TERMINAL_PROMPT"), Some(OsStr::new("0")));
        assert_eq!(env.get("LANG"), Some(OsStr::new("de_DE.UTF-8")));
        assert_eq!(env.get("TERM"), Some(OsStr::new("xterm")));
        assert_eq!(env.get("FOO"), Some(OsStr::new("bar")));
        assert_eq!(env.get("TACKLE_SESSION_ID"), Some(OsStr::new("s1")));
        assert_eq!(env.get("TACKLE_WORKSPACE"), Some(OsStr::new("/work/ws")));
        assert_eq!(env.get("TACKLE"), Some(OsStr::new("1")));
        let no_lang = CommandEnv::from_base(base(&[]), &EnvSettings::default(), "s", Path::new("/w"));
        assert_eq!(no_lang.get("LANG"), Some(OsStr::new("C.UTF-8")));
    }

    #[test]
    fn names_with_secret_parts_are_removed_as_codex_does() {
        let env = CommandEnv::from_base(
            base(&[
                ("GITHUB_TOKEN", "g"),
                ("AWS_SECRET_ACCESS_KEY", "a"),
                ("db_password", "p"),
                ("MY_API_KEY", "k"),
                ("DATABASE_URL", "u"),
                ("HOME", "/home/me"),
            ]),
            &EnvSettings { remove: vec!["DATABASE_*".into()], ..EnvSettings::default() },
            "s",
            Path::new("/w"),
        );
        let names: Vec<&str> =
            env.vars().map(|(k, _)| k.to_str().unwrap()).filter(|k| !k.starts_with("TACKLE")).collect();
        assert!(names.contains(&"HOME"));
        for gone in ["GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "db_password", "MY_API_KEY", "DATABASE_URL"] {
            assert!(!names.contains(&gone), "{gone} reached the command");
        }
    }

    #[test]
    fn the_workspace_may_only_remove() {
        let user: toml::Table = "[env]\nset = { A = \"1\" }\npassthrough = [\"GITHUB_TOKEN\"]".parse().unwrap();
        let workspace: toml::Table =
            "[env]\nset = { B = \"2\" }\nremove = [\"X\"]\npassthrough = [\"OPENAI_API_KEY\"]".parse().unwrap();
        for trusted in [false, true] {
            let config = Config::from_tables(user.clone(), workspace.clone(), trusted);
            let settings = EnvSettings::from_config(&config).unwrap();
            assert_eq!(settings.set, BTreeMap::from([("A".to_owned(), "1".to_owned())]));
            assert_eq!(settings.remove, ["X"]);
            assert_eq!(settings.passthrough, ["GITHUB_TOKEN"]);
            let why = format!(
                "from the workspace's tackle.toml: it would widen the sandbox, the path policy or the \
                 environment, which only your user config ({}) and flags may do",
                tackle_policy::config::user_config_shown()
            );
            assert_eq!(
                config.notices(),
                [format!("ignoring [env] passthrough {why}"), format!("ignoring [env] set {why}")]
            );
        }
    }
}
