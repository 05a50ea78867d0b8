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
pub struct Rule {
    /// The dotted key or section name this row is about.
    pub key: &'static str,
    /// Whether and when a workspace's `tackle.toml` may set it.
    pub from_workspace: FromWorkspace,
    /// Who reads it (for the reader of the table; `later` marks a section not built yet).
    pub owner: &'static str,
}

const fn rule(key: &'static str, from_workspace: FromWorkspace, owner: &'static str) -> Rule {
    Rule { key, from_workspace, owner }
}

use FromWorkspace::{Always, Consent, Narrowing, Never};

/// The table. A key matches its own row or the row of its nearest listed ancestor; a key with
/// no row at all is never taken from the workspace.
pub const RULES: &[Rule] = &[
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
pub fn rule_for(key: &str) -> Option<&'static Rule> {
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
