//! What the delegation tests (`subagents.rs`, `teams.rs`) share: a workspace, a configuration
//! naming a child provider, and a session whose one rule denies something.

use std::path::Path;

use tackle::{Config, PermissionMode, RuleFlags, SessionBuilder, TackleSession};

/// A workspace with a README, and a configuration that reads no file of the machine.
pub fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README.md"), "hello tackle\nsecond line\n").unwrap();
    dir
}

/// A configuration whose `[providers.child]` is an OpenAI-compatible server at `base_url`;
/// `trusted`: the person consented to the workspace's settings (a workspace definition may
/// then name that provider).
pub fn config_with_child_provider(base_url: &str, trusted: bool) -> Config {
    let user: toml::Table =
        format!("[providers.child]\nkind = \"openai\"\nbase_url = \"{base_url}\"\n").parse().unwrap();
    Config::from_tables(user, toml::Table::new(), trusted)
}

/// A session in `dir` (bypass mode, no configuration) whose only rule is the deny rule `rule`.
pub async fn session_denying(dir: &Path, rule: &str) -> TackleSession {
    let rules = RuleFlags { deny: vec![rule.to_owned()], ..RuleFlags::default() };
    SessionBuilder::new(dir)
        .config(Config::default())
        .permission_mode(PermissionMode::Bypass)
        .rules(rules)
        .build()
        .await
        .unwrap()
}
