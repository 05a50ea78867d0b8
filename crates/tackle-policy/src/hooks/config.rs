//! Hook configuration (docs/reference/safety.md#hooks): `[[hooks.EVENT]]` tables in the user
//! config and the workspace's `tackle.toml` (the workspace's only with consent), and with
//! `[hooks] import_claude = true` the `hooks` of `.claude/settings.json` and
//! `.claude/settings.local.json` in Claude Code's own shape. A malformed entry is an error
//! naming the file and the entry.

use std::sync::Arc;
use std::time::Duration;

use regex::Regex;
use serde_json::Value as Json;

use crate::config::{Config, WORKSPACE_FILE, user_config_dir};
use crate::permission::sources::{CLAUDE_SETTINGS, SourceError, claude_settings};

/// The default timeout of a hook.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);

/// The events hooks run on.
pub const EVENTS: &[&str] =
    &["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop", "SessionStart", "SessionEnd"];

/// One configured hook command.
#[derive(Debug, Clone)]
pub struct HookEntry {
    /// The event it runs on (one of [`EVENTS`]).
    pub event: String,
    /// The matcher as written (`""` and `"*"` match everything).
    pub matcher: String,
    /// The matcher as an anchored regex; `None` matches everything.
    pub regex: Option<Regex>,
    /// The shell command, run as `sh -c COMMAND` in the workspace.
    pub command: String,
    /// How long a run may take before its process group is killed ([`DEFAULT_HOOK_TIMEOUT`]
    /// unless the entry sets `timeout` in seconds).
    pub timeout: Duration,
    /// A timeout or failure to start denies a PreToolUse call instead of warning.
    pub fail_closed: bool,
    /// The file it came from.
    pub source: Arc<str>,
}

impl HookEntry {
    /// Whether the entry matches any of `names` (a tool's wire name and alias, or a
    /// SessionStart source).
    pub fn matches<'a>(&self, mut names: impl Iterator<Item = &'a str>) -> bool {
        match &self.regex {
            None => true,
            Some(regex) => names.any(|name| regex.is_match(name)),
        }
    }
}

/// Whether the `hooks` of the workspace's Claude Code settings files are imported and run:
/// [`imports_claude_hooks`], and consent to the workspace's settings.
pub fn claude_hooks_apply(config: &Config) -> bool {
    config.workspace_trusted && imports_claude_hooks(config)
}

/// Whether `[hooks] import_claude = true` holds: the user's value, or the workspace's when it is
/// trusted.
pub fn imports_claude_hooks(config: &Config) -> bool {
    let import = |table: Option<toml::Table>| {
        table.and_then(|t| t.get("import_claude").and_then(toml::Value::as_bool)).unwrap_or(false)
    };
    import(config.user_section("hooks").ok().flatten())
        || (config.workspace_trusted && import(config.workspace_section("hooks").ok().flatten()))
}

/// Every hook that counts for a session, and notices about those that do not.
pub fn load(config: &Config) -> Result<(Vec<HookEntry>, Vec<String>), SourceError> {
    let mut hooks = Vec::new();
    let mut notices = Vec::new();
    let user_file =
        user_config_dir().map_or_else(|| "config.toml".to_owned(), |d| d.join("config.toml").display().to_string());
    let user: Option<toml::Table> =
        config.user_section("hooks").map_err(|err| SourceError { file: user_file.clone(), why: err.to_string() })?;
    let workspace: Option<toml::Table> = config
        .workspace_section("hooks")
        .map_err(|err| SourceError { file: WORKSPACE_FILE.to_owned(), why: err.to_string() })?;
    if let Some(table) = &user {
        hooks.extend(from_toml(table, &user_file)?);
    }
    if let Some(table) = &workspace {
        let entries = from_toml(table, WORKSPACE_FILE)?;
        if config.workspace_trusted {
            hooks.extend(entries);
        } else if !entries.is_empty() {
            notices.push(format!(
                "ignoring {} hook(s) from the workspace's {WORKSPACE_FILE}: hooks from the workspace need your consent to its settings (--trust-workspace)",
                entries.len()
            ));
        }
    }
    if imports_claude_hooks(config) {
        for name in CLAUDE_SETTINGS {
            let Some(settings) = claude_settings(config, name)? else { continue };
            let Some(section) = settings.get("hooks") else { continue };
            let entries = from_claude(section, name)?;
            // Without consent they are left out; the notice of the Claude Code settings that
            // were not applied (permission/sources.rs) names them.
            if config.workspace_trusted {
                hooks.extend(entries);
            }
        }
    }
    Ok((hooks, notices))
}

fn error(file: &str, why: String) -> SourceError {
    SourceError { file: file.to_owned(), why }
}

fn from_toml(table: &toml::Table, file: &str) -> Result<Vec<HookEntry>, SourceError> {
    let json = serde_json::to_value(table).map_err(|err| error(file, format!("[hooks] cannot be read: {err}")))?;
    let Json::Object(map) = json else { return Ok(Vec::new()) };
    let mut entries = Vec::new();
    for (event, value) in map {
        if event == "import_claude" {
            if !value.is_boolean() {
                return Err(error(file, "[hooks] import_claude must be true or false".to_owned()));
            }
            continue;
        }
        entries.extend(event_entries(&event, &value, file)?);
    }
    Ok(entries)
}

fn from_claude(section: &Json, file: &str) -> Result<Vec<HookEntry>, SourceError> {
    let Json::Object(map) = section else { return Err(error(file, "hooks must be an object of events".to_owned())) };
    let mut entries = Vec::new();
    for (event, value) in map {
        entries.extend(event_entries(event, value, file)?);
    }
    Ok(entries)
}

/// The entries of one event: a list of `{matcher, command, timeout, fail_closed}` (Tackle's
/// shape) or `{matcher, hooks: [{type: "command", command, timeout}]}` (Claude Code's).
fn event_entries(event: &str, value: &Json, file: &str) -> Result<Vec<HookEntry>, SourceError> {
    if !EVENTS.contains(&event) {
        return Err(error(file, format!("unknown hook event '{event}'; use one of {}", EVENTS.join(", "))));
    }
    let Json::Array(groups) = value else {
        return Err(error(file, format!("hooks.{event} must be a list of hook entries")));
    };
    let mut entries = Vec::new();
    for (index, group) in groups.iter().enumerate() {
        let at = format!("hooks.{event}[{index}]");
        let Json::Object(group) = group else { return Err(error(file, format!("{at} must be a table"))) };
        let matcher = match group.get("matcher") {
            None => String::new(),
            Some(Json::String(m)) => m.clone(),
            Some(other) => return Err(error(file, format!("{at}.matcher must be a string, not {other}"))),
        };
        let regex = compile_matcher(&matcher)
            .map_err(|err| error(file, format!("{at}.matcher '{matcher}': not a valid regex: {err}")))?;
        let commands: Vec<&serde_json::Map<String, Json>> = match group.get("hooks") {
            Some(Json::Array(list)) => list
                .iter()
                .map(|h| h.as_object().ok_or_else(|| error(file, format!("{at}.hooks holds {h}, not a table"))))
                .collect::<Result<_, _>>()?,
            Some(other) => return Err(error(file, format!("{at}.hooks must be a list, not {other}"))),
            None => vec![group],
        };
        for hook in commands {
            if let Some(kind) = hook.get("type").and_then(Json::as_str)
                && kind != "command"
            {
                return Err(error(file, format!("{at}: hook type '{kind}' is not supported; use type \"command\"")));
            }
            let Some(command) = hook.get("command").and_then(Json::as_str).filter(|c| !c.trim().is_empty()) else {
                return Err(error(file, format!("{at} needs a command (a non-empty string)")));
            };
            let timeout = match hook.get("timeout") {
                None => DEFAULT_HOOK_TIMEOUT,
                Some(t) => match t.as_f64() {
                    Some(secs) if secs > 0.0 && secs <= 86_400.0 => Duration::from_secs_f64(secs),
                    _ => {
                        return Err(error(
                            file,
                            format!("{at}.timeout must be a number of seconds (0 < t <= 86400), not {t}"),
                        ));
                    }
                },
            };
            let fail_closed = match hook.get("fail_closed") {
                None => false,
                Some(Json::Bool(b)) => *b,
                Some(other) => return Err(error(file, format!("{at}.fail_closed must be true or false, not {other}"))),
            };
            entries.push(HookEntry {
                event: event.to_owned(),
                matcher: matcher.clone(),
                regex: regex.clone(),
                command: command.to_owned(),
                timeout,
                fail_closed,
                source: Arc::from(file),
            });
        }
    }
    Ok(entries)
}

/// `""` and `"*"` match everything; anything else is an anchored regex.
fn compile_matcher(matcher: &str) -> Result<Option<Regex>, regex::Error> {
    if matcher.is_empty() || matcher == "*" {
        return Ok(None);
    }
    Regex::new(&format!("^(?:{matcher})$")).map(Some)
}
