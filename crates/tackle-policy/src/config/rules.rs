//! Where each setting may come from: the one table every section owner consults
//! (docs/configuration.md prints it).
//!
//! A workspace's own settings files are as untrusted as the code beside them: a cloned
//! repository, or a command that ran in an earlier session, could have written them. So a
//! setting that would widen the sandbox, the path policy or the environment is **never** taken
//! from the workspace, trusted or not, only from the user config and flags; settings that run
//! or reach something on the person's behalf (provider endpoints, MCP servers, allow rules,
//! hooks) need the person's consent to the workspace's settings; settings that only narrow
//! access always apply.
//!
//! [`filter_workspace`] applies the table when the workspace's file is loaded: a `Never` key
//! is dropped with a one-line notice, and so is a key the table does not know (fail closed: a
//! new setting is not taken from the workspace until it has a row here). `Narrowing` keys are
//! compared by their owner through [`super::Config::narrowing`]; `Consent` keys reach an owner
//! only through [`super::Config::section`] when the workspace is trusted.

use toml::{Table, Value};

/// How a setting found in the workspace's own files is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FromWorkspace {
    /// Taken as written: it does not widen access.
    Always,
    /// Taken only where it narrows access compared with the user's value (a stricter sandbox
    /// mode, `network = false`, more hidden paths, a root made read-only); its owner compares.
    Narrowing,
    /// Taken only when the person consented to the workspace's settings.
    Consent,
    /// Never taken from the workspace: only from the user config and flags.
    Never,
}

/// One row of the table: a dotted key (`sandbox.mode`) or a whole section (`tools`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SettingRule {
    /// The dotted key or section name this row is about.
    pub key: &'static str,
    /// Whether and when a workspace's `tackle.toml` may set it.
    pub from_workspace: FromWorkspace,
    /// Who reads it (for the reader of the table; `later` marks a section not built yet).
    pub owner: &'static str,
}

const fn rule(key: &'static str, from_workspace: FromWorkspace, owner: &'static str) -> SettingRule {
    SettingRule { key, from_workspace, owner }
}

use FromWorkspace::{Always, Consent, Narrowing, Never};

/// The table. A key matches its own row or the row of its nearest listed ancestor; a key with
/// no row at all is never taken from the workspace.
pub const RULES: &[SettingRule] = &[
    // The process sandbox (tackle-sandbox, process/policy.rs).
    rule("sandbox.mode", Narrowing, "tackle-sandbox"),
    rule("sandbox.network", Narrowing, "tackle-sandbox"),
    rule("sandbox.protect_git", Narrowing, "tackle-sandbox"),
    rule("sandbox.hide", Narrowing, "tackle-sandbox"),
    rule("sandbox.extra_writable", Never, "tackle-sandbox"),
    // The path policy (tackle-sandbox, workspace.rs).
    rule("workspace.extra_roots", Never, "tackle-sandbox"),
    rule("workspace.writable_protected", Never, "tackle-sandbox"),
    rule("workspace.read_only_roots", Narrowing, "tackle-sandbox"),
    // The command environment (tackle-sandbox, env.rs).
    rule("env.set", Never, "tackle-sandbox"),
    rule("env.passthrough", Never, "tackle-sandbox"),
    rule("env.remove", Always, "tackle-sandbox"),
    // A container sandbox, when it exists: mounts and environment widen, the network narrows
    // only when it is switched off, the image and working directory do not touch access.
    rule("container.mounts", Never, "tackle-container"),
    rule("container.env", Never, "tackle-container"),
    rule("container.network", Never, "tackle-container"),
    rule("container.binary", Never, "tackle-container"),
    rule("container.image", Always, "tackle-container"),
    rule("container.workdir", Always, "tackle-container"),
    rule("container.keep", Always, "tackle-container"),
    // Resource limits: a workspace may lower them, never raise or lift them.
    rule("container.memory", Narrowing, "tackle-container"),
    rule("container.cpus", Narrowing, "tackle-container"),
    rule("container.pids_limit", Narrowing, "tackle-container"),
    // Consent itself is the person's, never the workspace's.
    rule("trusted_workspaces", Never, "tackle-core"),
    rule("mcp.trusted_workspaces", Never, "tackle-mcp"),
    // What a server's forms are answered with when nobody is asked: the person's choice.
    rule("mcp.elicitation", Never, "tackle-mcp"),
    // What a run's tokens cost (`--max-cost`): a workspace must not make a run look free.
    rule("pricing", Never, "tackle-agent"),
    // The web search backend and its key: a workspace must not send the model's queries (or
    // the person's API key) to a server of its choosing.
    rule("web", Never, "tackle-tools"),
    // What runs or is reached on the person's behalf.
    rule("providers", Consent, "tackle-agent"),
    rule("mcp.servers", Consent, "tackle-mcp"),
    rule("permissions.allow", Consent, "tackle-core"),
    rule("hooks", Consent, "tackle-core"),
    rule("compat.claude", Consent, "tackle-core"),
    // Narrowing or neutral.
    rule("permissions.deny", Always, "tackle-core"),
    rule("permissions.ask", Always, "tackle-core"),
    rule("tools", Always, "tackle-tools"),
    // The bounds of `tackle mcp serve --http`: a workspace may lower them, never raise them.
    rule("mcp.serve.idle_timeout_s", Narrowing, "tackle-cli"),
    rule("mcp.serve.max_sessions", Narrowing, "tackle-cli"),
    rule("mcp.defer_threshold", Always, "tackle-mcp"),
];

/// Which way a number the workspace sets is the safer one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Safer {
    /// A lower value narrows (a shorter timeout or grace period, a smaller limit): the
    /// workspace may set a value from the row's `min` up to the user's value, else the
    /// default, and never above the row's `max`.
    Lower,
    /// Neither direction is safe: the workspace may not set it. A number with no row in
    /// [`NUMBERS`] is treated so (fail closed).
    Neither,
}

/// One row of [`NUMBERS`]: the bounds of a numeric setting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NumberRule {
    /// The dotted key; a `*` part stands for any one name (a provider's, a server's).
    pub key: &'static str,
    /// Which way the workspace may move it.
    pub safer: Safer,
    /// The smallest value the workspace may set (below it some owners read "no limit").
    pub min: f64,
    /// The value when nobody sets it (`None`: no limit, or the owner's per-kind default).
    pub default: Option<f64>,
    /// The largest value from any source: a workspace value above it is refused, a user value
    /// above it is lowered to it (it feeds a `Duration` or an allocation).
    pub max: f64,
}

const fn lower(key: &'static str, min: f64, default: Option<f64>, max: f64) -> NumberRule {
    NumberRule { key, safer: Safer::Lower, min, default, max }
}

/// A day in milliseconds: the most any timeout may be.
const DAY_MS: f64 = 86_400_000.0;

/// The numbers a workspace may set, each with its safe direction and bounds (docs/configuration.md,
/// "Numbers"). Applied in one place, [`bound_numbers`], when the configuration is loaded: every
/// section owner then reads bounded values.
pub const NUMBERS: &[NumberRule] = &[
    // tackle-core executor/mod.rs DEFAULT_TIMEOUT; tackle-core executor output budget.
    lower("tools.timeout_ms", 0.0, Some(120_000.0), DAY_MS),
    lower("tools.max_output_chars", 0.0, Some(30_000.0), 128_000.0),
    // tackle-sandbox process/tree.rs DEFAULT_KILL_GRACE.
    lower("tools.kill_grace_ms", 0.0, Some(2_000.0), 60_000.0),
    // tackle-mcp client/config.rs and server/mod.rs.
    lower("mcp.defer_threshold", 0.0, Some(40.0), 10_000.0),
    lower("mcp.servers.*.startup_timeout_ms", 0.0, Some(10_000.0), DAY_MS),
    lower("mcp.servers.*.call_timeout_ms", 0.0, Some(60_000.0), DAY_MS),
    lower("mcp.serve.idle_timeout_s", 0.0, Some(600.0), 604_800.0),
    lower("mcp.serve.max_sessions", 0.0, Some(64.0), 10_000.0),
    // tackle-llm client.rs and retry.rs (max_tokens: the provider kind's default).
    lower("providers.*.max_retries", 0.0, Some(4.0), 100.0),
    lower("providers.*.request_timeout_ms", 0.0, Some(600_000.0), DAY_MS),
    lower("providers.*.stream_idle_timeout_ms", 0.0, Some(120_000.0), DAY_MS),
    lower("providers.*.max_tokens", 1.0, None, 1_000_000.0),
    // tackle-container settings.rs: 0 (or less) would mean "no limit" to the engine.
    lower("container.cpus", 0.01, None, 1_024.0),
    lower("container.pids_limit", 1.0, None, 4_194_304.0),
];

/// The row of [`NUMBERS`] for `key`.
pub fn number_rule(key: &str) -> Option<&'static NumberRule> {
    NUMBERS.iter().find(|rule| {
        let (mut pattern, mut parts) = (rule.key.split('.'), key.split('.'));
        loop {
            match (pattern.next(), parts.next()) {
                (None, None) => return true,
                (Some(want), Some(part)) if want == "*" || want == part => {}
                _ => return false,
            }
        }
    })
}

/// Applies [`NUMBERS`] to both layers: a user number above its maximum is lowered to it, and a
/// workspace number that does not move in its safe direction (or has no row) is removed. One
/// notice per change, naming the file and the key. `user_file` and `workspace_file` name the
/// files in notices.
pub fn bound_numbers(user: &mut Table, user_file: &str, workspace: &mut Table, workspace_file: &str) -> Vec<String> {
    let mut notices = Vec::new();
    cap_user("", user, user_file, &mut notices);
    bound_workspace("", workspace, user, workspace_file, &mut notices);
    notices
}

/// A TOML number as `f64` (`None` for anything else).
fn number(value: &Value) -> Option<f64> {
    match value {
        // Precision is lost only far above every maximum, where any comparison still holds.
        #[allow(clippy::cast_precision_loss)]
        Value::Integer(n) => Some(*n as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

/// `limit` as written in a notice: a whole number without a fraction.
fn shown(limit: f64) -> String {
    if limit.fract() == 0.0 && limit.abs() < 1e15 { format!("{limit:.0}") } else { limit.to_string() }
}

/// A number from a file as a notice shows it (a huge float in exponent form, not 300 digits).
fn written(value: &Value) -> String {
    match value {
        Value::Float(f) if f.abs() >= 1e15 => format!("{f:e}"),
        _ => value.to_string(),
    }
}

/// `value` of the same kind as `like` (an integer stays an integer).
fn same_kind(like: &Value, value: f64) -> Value {
    match like {
        // `value` is a maximum from the table, a whole number well inside `i64`.
        #[allow(clippy::cast_possible_truncation)]
        Value::Integer(_) => Value::Integer(value as i64),
        _ => Value::Float(value),
    }
}

fn cap_user(prefix: &str, table: &mut Table, file: &str, notices: &mut Vec<String>) {
    for (name, value) in table.iter_mut() {
        let key = if prefix.is_empty() { name.clone() } else { format!("{prefix}.{name}") };
        if let Value::Table(inner) = value {
            cap_user(&key, inner, file, notices);
            continue;
        }
        let (Some(n), Some(rule)) = (number(value), number_rule(&key)) else { continue };
        if n > rule.max || n.is_nan() {
            notices.push(format!(
                "lowering {} = {} from {file} to {}, its maximum",
                display_key(&key),
                written(value),
                shown(rule.max)
            ));
            *value = same_kind(value, rule.max);
        }
    }
}

fn bound_workspace(prefix: &str, table: &mut Table, user: &Table, file: &str, notices: &mut Vec<String>) {
    table.retain(|name, value| {
        let key = if prefix.is_empty() { name.to_owned() } else { format!("{prefix}.{name}") };
        if let Value::Table(inner) = value {
            bound_workspace(&key, inner, user, file, notices);
            return true;
        }
        let Some(n) = number(value) else { return true };
        let setting = format!("{} = {}", display_key(&key), written(value));
        let why = match number_rule(&key) {
            Some(rule) if rule.safer == Safer::Lower => {
                let users = super::lookup_value(user, &key).and_then(number);
                let limit = users.or(rule.default).map_or(rule.max, |limit| limit.min(rule.max));
                if rule.min <= n && n <= limit {
                    return true;
                }
                let whose = match (users, rule.default) {
                    (Some(_), _) => "yours",
                    (None, Some(_)) => "the default",
                    (None, None) => "its maximum",
                };
                format!(
                    "the workspace may only lower it, to a value from {} to {} ({whose})",
                    shown(rule.min),
                    shown(limit)
                )
            }
            _ => "the workspace may not set this number (neither direction is safer)".to_owned(),
        };
        notices.push(format!("ignoring {setting} from {file}: {why}"));
        false
    });
}

/// The top-level names of every row (`sandbox`, `trusted_workspaces`, ...): what a
/// configuration file may contain at its top level.
pub fn top_level_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> =
        RULES.iter().map(|rule| rule.key.split_once('.').map_or(rule.key, |(first, _)| first)).collect();
    names.dedup();
    names.sort_unstable();
    names.dedup();
    names
}

/// The row that governs `key`: its own, or its nearest listed ancestor's.
pub fn rule_for(key: &str) -> Option<&'static SettingRule> {
    let mut candidate = key;
    loop {
        if let Some(found) = RULES.iter().find(|rule| rule.key == candidate) {
            return Some(found);
        }
        candidate = &candidate[..candidate.rfind('.')?];
    }
}

/// How `key` is treated when the workspace sets it (`Never` for a key with no row).
pub fn from_workspace(key: &str) -> FromWorkspace {
    rule_for(key).map_or(Never, |rule| rule.from_workspace)
}

/// `key` as a person writes it in a file: `[sandbox] mode`, or `trusted_workspaces` at the top.
pub fn display_key(key: &str) -> String {
    match key.rsplit_once('.') {
        Some((section, name)) => format!("[{section}] {name}"),
        None => key.to_owned(),
    }
}

/// A setting as a person writes it: a whole table as `[providers]`, a value as `[sandbox] mode`.
fn display_setting(key: &str, value: &Value) -> String {
    match value {
        Value::Table(_) => format!("[{key}]"),
        _ => display_key(key),
    }
}

/// The notice for a workspace setting that would widen access (`setting` as written, e.g.
/// `[sandbox] mode = "none"`; `source` the file, e.g. `tackle.toml`).
pub fn ignored_notice(setting: &str, source: &str) -> String {
    format!(
        "ignoring {setting} from the workspace's {source}: it would widen the sandbox, the path policy or the \
         environment, which only your user config ({}) and flags may do",
        super::user_config_shown()
    )
}

/// The workspace table with every `Never` and unknown key removed, and one notice per removed
/// key. `Consent` keys stay (their owners read them only through a trusted [`super::Config`]).
/// `source` names the file in the notices.
pub fn filter_workspace(table: &Table, source: &str) -> (Table, Vec<String>) {
    let mut notices = Vec::new();
    let kept = filter_at("", table, source, &mut notices);
    (kept, notices)
}

fn filter_at(prefix: &str, table: &Table, source: &str, notices: &mut Vec<String>) -> Table {
    let mut kept = Table::new();
    for (name, value) in table {
        let key = if prefix.is_empty() { name.clone() } else { format!("{prefix}.{name}") };
        let own = RULES.iter().find(|rule| rule.key == key);
        match (own, value) {
            (Some(rule), _) if rule.from_workspace == Never => notices.push(ignored_notice(&display_key(&key), source)),
            (Some(_), _) => {
                kept.insert(name.clone(), value.clone());
            }
            (None, Value::Table(inner)) if RULES.iter().any(|rule| is_below(rule.key, &key)) => {
                let inner = filter_at(&key, inner, source, notices);
                if !inner.is_empty() {
                    kept.insert(name.clone(), Value::Table(inner));
                }
            }
            (None, _) if rule_for(&key).is_some_and(|rule| rule.from_workspace != Never) => {
                kept.insert(name.clone(), value.clone());
            }
            (None, _) => notices.push(format!(
                "ignoring {} from the workspace's {source}: it is not a setting Tackle takes from a workspace",
                display_setting(&key, value)
            )),
        }
    }
    kept
}

/// Whether `key` lies strictly below `section` (`sandbox.mode` below `sandbox`).
fn is_below(key: &str, section: &str) -> bool {
    key.strip_prefix(section).is_some_and(|rest| rest.starts_with('.'))
}

/// The `Consent` settings the workspace table holds, as written (`[providers]`,
/// `[permissions] allow`), leaving out MCP servers, which have a consent prompt of their own:
/// what the person is asked about when the workspace as a whole needs consent.
pub fn needs_workspace_consent(table: &Table) -> Vec<String> {
    let mut found = Vec::new();
    consent_keys("", table, &mut found);
    found
}

fn consent_keys(prefix: &str, table: &Table, found: &mut Vec<String>) {
    for (name, value) in table {
        let key = if prefix.is_empty() { name.clone() } else { format!("{prefix}.{name}") };
        match (RULES.iter().find(|rule| rule.key == key), value) {
            (Some(rule), _) if rule.from_workspace != Consent || key == MCP_SERVERS => {}
            (Some(_), _) => found.push(display_setting(&key, value)),
            (None, Value::Table(inner)) => consent_keys(&key, inner, found),
            (None, _) => {}
        }
    }
}

/// The key of MCP server definitions, which are consented per server as well.
const MCP_SERVERS: &str = "mcp.servers";

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn table(text: &str) -> Table {
        text.parse().unwrap()
    }

    #[test]
    fn keys_take_their_own_row_or_their_sections() {
        assert_eq!(from_workspace("sandbox.mode"), Narrowing);
        assert_eq!(from_workspace("sandbox.extra_writable"), Never);
        assert_eq!(from_workspace("providers.openai.base_url"), Consent);
        assert_eq!(from_workspace("tools.timeout_ms"), Always);
        assert_eq!(from_workspace("mcp.servers.git.command"), Consent);
        assert_eq!(from_workspace("mcp.trusted_workspaces"), Never);
        assert_eq!(from_workspace("mcp.serve.max_sessions"), Narrowing);
        assert_eq!(from_workspace("mcp.serve.idle_timeout_s"), Narrowing);
        assert_eq!(from_workspace("mcp.serve.bogus"), Never);
        assert_eq!(from_workspace("sandbox.unknown"), Never, "an unknown key fails closed");
        assert_eq!(from_workspace("nothing"), Never);
        assert_eq!(display_key("sandbox.mode"), "[sandbox] mode");
        assert_eq!(display_key("mcp.serve.idle_timeout_s"), "[mcp.serve] idle_timeout_s");
        assert_eq!(display_key("trusted_workspaces"), "trusted_workspaces");
    }

    #[test]
    fn the_table_has_one_row_per_key() {
        for (i, rule) in RULES.iter().enumerate() {
            assert!(!RULES[..i].iter().any(|earlier| earlier.key == rule.key), "{} twice", rule.key);
        }
    }

    #[test]
    fn widening_and_unknown_keys_are_dropped_with_a_notice_each() {
        let (kept, notices) = filter_workspace(
            &table(
                "trusted_workspaces = [\"/\"]\n\
             [sandbox]\nmode = \"none\"\nnetwork = true\nextra_writable = [\"/\"]\nbogus = 1\n\
             [workspace]\nextra_roots = [\"/\"]\nread_only_roots = [\"docs\"]\nwritable_protected = [\".git\"]\n\
             [env]\nset = { A = \"1\" }\npassthrough = [\"OPENAI_API_KEY\"]\nremove = [\"X\"]\n\
             [mcp]\ntrusted_workspaces = [\"/\"]\ndefer_threshold = 3\n[mcp.servers.git]\ncommand = \"git-mcp\"\n\
             [providers.openai]\nbase_url = \"https://gw\"\n[tools]\ntimeout_ms = 5\n[elsewhere]\nx = 1",
            ),
            "tackle.toml",
        );
        assert_eq!(
            kept,
            table(
                "[sandbox]\nmode = \"none\"\nnetwork = true\n[workspace]\nread_only_roots = [\"docs\"]\n\
                 [env]\nremove = [\"X\"]\n[mcp]\ndefer_threshold = 3\n[mcp.servers.git]\ncommand = \"git-mcp\"\n\
                 [providers.openai]\nbase_url = \"https://gw\"\n[tools]\ntimeout_ms = 5"
            )
        );
        let why = format!(
            "from the workspace's tackle.toml: it would widen the sandbox, the path policy or the environment, \
             which only your user config ({}) and flags may do",
            super::super::user_config_shown()
        );
        let unknown = "from the workspace's tackle.toml: it is not a setting Tackle takes from a workspace";
        assert_eq!(
            notices,
            [
                format!("ignoring [elsewhere] {unknown}"),
                format!("ignoring [env] passthrough {why}"),
                format!("ignoring [env] set {why}"),
                format!("ignoring [mcp] trusted_workspaces {why}"),
                format!("ignoring [sandbox] bogus {unknown}"),
                format!("ignoring [sandbox] extra_writable {why}"),
                format!("ignoring trusted_workspaces {why}"),
                format!("ignoring [workspace] extra_roots {why}"),
                format!("ignoring [workspace] writable_protected {why}"),
            ]
        );
    }

    fn bounded(user: &str, workspace: &str) -> (Table, Table, Vec<String>) {
        let (mut user, mut workspace) = (table(user), table(workspace));
        let notices = bound_numbers(&mut user, "/home/me/config.toml", &mut workspace, "/ws/tackle.toml");
        (user, workspace, notices)
    }

    #[test]
    fn a_workspace_number_may_only_move_lower_than_the_users_or_the_default() {
        // The attack: a grace period that outlives every timeout.
        let (_, kept, notices) = bounded("", "[tools]\nkill_grace_ms = 9223372036854775807\ntimeout_ms = 5000");
        assert_eq!(kept, table("[tools]\ntimeout_ms = 5000"));
        assert_eq!(
            notices,
            ["ignoring [tools] kill_grace_ms = 9223372036854775807 from /ws/tackle.toml: the workspace may only \
              lower it, to a value from 0 to 2000 (the default)"]
        );
        // Lower than the default: taken.
        let (_, kept, notices) = bounded("", "[tools]\nkill_grace_ms = 100");
        assert_eq!((kept, notices), (table("[tools]\nkill_grace_ms = 100"), vec![]));
        // The user's value is the limit, whether above or below the default.
        let (_, kept, notices) = bounded("[tools]\nkill_grace_ms = 500", "[tools]\nkill_grace_ms = 1000");
        assert!(kept["tools"].as_table().unwrap().is_empty(), "{kept}");
        assert!(notices[0].ends_with("to a value from 0 to 500 (yours)"), "{notices:?}");
        let (_, kept, _) = bounded("[tools]\ntimeout_ms = 600000", "[tools]\ntimeout_ms = 300000");
        assert_eq!(kept, table("[tools]\ntimeout_ms = 300000"));
        // A raise of a per-name key (a provider's, an MCP server's) is refused the same way.
        let (_, kept, notices) = bounded(
            "[providers.openai]\nrequest_timeout_ms = 1000",
            "[providers.openai]\nrequest_timeout_ms = 2000\nmax_retries = 2\n[mcp.servers.git]\ncall_timeout_ms = 1e9",
        );
        assert_eq!(kept, table("[providers.openai]\nmax_retries = 2\n[mcp.servers.git]"));
        assert_eq!(notices.len(), 2, "{notices:?}");
        assert!(notices.iter().any(|n| n.starts_with("ignoring [mcp.servers.git] call_timeout_ms = 1000000000.0")));
    }

    #[test]
    fn a_workspace_number_below_its_minimum_or_without_a_row_is_refused() {
        // 0 or -1 would mean "no limit" to a container engine.
        let (_, kept, notices) =
            bounded("[container]\npids_limit = 256", "[container]\npids_limit = -1\ncpus = 0.0\nimage = \"x\"");
        assert_eq!(kept, table("[container]\nimage = \"x\""));
        assert!(notices[1].contains("pids_limit = -1 from /ws/tackle.toml: the workspace may only lower it, to a value from 1 to 256 (yours)"), "{notices:?}");
        assert!(notices[0].contains("cpus = 0.0 from /ws/tackle.toml: the workspace may only lower it, to a value from 0.01 to 1024 (its maximum)"), "{notices:?}");
        // NaN compares with nothing: refused.
        let (_, kept, notices) = bounded("", "[container]\ncpus = nan");
        assert_eq!((kept, notices.len()), (table("[container]"), 1));
        // A number no row bounds has no safe direction: never taken (fail closed).
        let (_, kept, notices) = bounded("", "[providers.openai]\ntemperature = 2\nbase_url = \"x\"");
        assert_eq!(kept, table("[providers.openai]\nbase_url = \"x\""));
        assert_eq!(
            notices,
            [
                "ignoring [providers.openai] temperature = 2 from /ws/tackle.toml: the workspace may not set this number \
              (neither direction is safer)"
            ]
        );
        assert_eq!(number_rule("providers.anthropic.max_tokens").map(|r| r.safer), Some(Safer::Lower));
        assert_eq!(number_rule("providers.max_tokens"), None, "a `*` stands for exactly one name");
    }

    #[test]
    fn a_user_number_above_its_maximum_is_lowered_to_it() {
        let (user, kept, notices) = bounded(
            "[tools]\nkill_grace_ms = 9223372036854775807\n[container]\ncpus = 1e300",
            "[tools]\nkill_grace_ms = 70000",
        );
        assert_eq!(user, table("[tools]\nkill_grace_ms = 60000\n[container]\ncpus = 1024.0"));
        assert!(kept["tools"].as_table().unwrap().is_empty(), "the workspace cannot go above the maximum either");
        assert_eq!(
            notices[..2],
            [
                "lowering [container] cpus = 1e300 from /home/me/config.toml to 1024, its maximum",
                "lowering [tools] kill_grace_ms = 9223372036854775807 from /home/me/config.toml to 60000, its maximum",
            ]
        );
        assert_eq!(notices.len(), 3, "{notices:?}");
    }

    #[test]
    fn every_number_row_is_well_formed() {
        for (i, rule) in NUMBERS.iter().enumerate() {
            assert!(!NUMBERS[..i].iter().any(|earlier| earlier.key == rule.key), "{} twice", rule.key);
            assert!(rule.min <= rule.max, "{}", rule.key);
            assert!(rule.default.is_none_or(|d| rule.min <= d && d <= rule.max), "{}", rule.key);
            // The row's key is one the workspace may set at all.
            assert_ne!(from_workspace(&rule.key.replace('*', "name")), Never, "{}", rule.key);
        }
    }

    #[test]
    fn consent_keys_are_found_without_mcp_servers() {
        let found = needs_workspace_consent(&table(
            "[providers.openai]\nbase_url = \"x\"\n[mcp.servers.a]\ncommand = \"a\"\n[tools]\ntimeout_ms = 1",
        ));
        assert_eq!(found, ["[providers]"]);
        let found = needs_workspace_consent(&table("[permissions]\nallow = [\"Bash\"]\ndeny = [\"Read\"]"));
        assert_eq!(found, ["[permissions] allow"]);
        assert!(needs_workspace_consent(&table("[mcp.servers.a]\ncommand = \"a\"")).is_empty());
    }
}
