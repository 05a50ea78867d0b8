//! Which MCP servers a session imports (docs/mcp.md#configuration): `[mcp.servers.NAME]` in the user's
//! config and in the workspace's `tackle.toml`, and `.mcp.json` at the workspace root in
//! Claude Code's format. Per name, `tackle.toml` wins over `.mcp.json`, which wins over the
//! user config. `${VAR}` and `${VAR:-default}` are expanded. Servers the workspace defines
//! start only with the user's consent ([`super::consent`]); the user's own need none.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tackle_policy::config::Config;
use tackle_policy::config::snapshot::SettingsFile;

/// The workspace file in Claude Code's format.
pub const MCP_JSON: &str = ".mcp.json";

/// Default startup timeout (initialize plus the first `tools/list`).
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_millis(10_000);

/// Default per-call timeout.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_millis(60_000);

/// Imported tools past this count are deferred under `defer = "auto"` (`[mcp] defer_threshold`).
pub const DEFAULT_DEFER_THRESHOLD: usize = 40;

/// One server definition as written (shared by `.mcp.json` and `tackle.toml`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RawServer {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub startup_timeout_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call_timeout_ms: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled_tools: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disabled_tools: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trusted: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub defer: Option<DeferSetting>,
    /// `[mcp.servers.NAME.oauth]` / `"oauth": {…}`: how an HTTP server's sign-in identifies
    /// Tackle (docs/mcp.md#remote-servers-and-sign-in).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub oauth: Option<RawOAuth>,
}

/// The `oauth` table of a server as written. Every key is optional: without any, Tackle
/// registers itself dynamically and picks the scopes the server names.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RawOAuth {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_metadata_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callback_port: Option<u16>,
}

/// A server's `oauth` table, expanded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthSettings {
    /// A client registered with the authorization server beforehand.
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    /// Scopes to ask for instead of the ones the server names.
    pub scopes: Vec<String>,
    /// The HTTPS URL of Tackle's client ID metadata document, used when the authorization
    /// server supports them and no client ID is configured.
    pub client_metadata_url: Option<String>,
    /// The loopback port of the redirect URI (default: any free port).
    pub callback_port: Option<u16>,
}

/// `defer = true | false | "auto"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum DeferSetting {
    Flag(bool),
    Word(DeferWord),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeferWord {
    Auto,
}

/// Whether a server's tools are deferred behind `tool_search`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Defer {
    Always,
    Never,
    /// Deferred when the imported tools number more than the threshold.
    #[default]
    Auto,
}

/// The `[mcp]` section. A key it does not know is an error naming it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpSection {
    pub servers: BTreeMap<String, RawServer>,
    pub defer_threshold: Option<usize>,
    /// Workspaces whose MCP servers start without asking (read by the consent module).
    pub trusted_workspaces: Vec<String>,
    /// `[mcp.serve]`, owned by `tackle mcp serve`.
    pub serve: Option<serde::de::IgnoredAny>,
    /// Who answers a server's form when nobody can be asked (read from the user config only).
    pub elicitation: Option<super::elicitation::Unattended>,
}

/// `.mcp.json`.
#[derive(Debug, Default, Deserialize)]
struct McpJson {
    #[serde(default, rename = "mcpServers")]
    mcp_servers: BTreeMap<String, RawServer>,
}

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A child process speaking newline-delimited JSON-RPC on stdio.
    Stdio { command: String, args: Vec<String>, env: BTreeMap<String, String>, cwd: PathBuf },
    /// Streamable HTTP, signed in with OAuth when the server asks for it.
    Http { url: String, headers: BTreeMap<String, String>, oauth: OAuthSettings },
    /// Newline-delimited JSON-RPC over a byte stream the embedder opens (a process inside a
    /// container, started through the container engine's API).
    Stream(super::transport::StreamOpener),
}

/// Where a definition came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The user's own configuration (no consent needed).
    User,
    /// The workspace's `.mcp.json`.
    McpJson,
    /// The workspace's `tackle.toml`.
    WorkspaceToml,
}

impl Origin {
    /// Whether the workspace defined it (and so it needs consent).
    pub fn is_workspace(self) -> bool {
        self != Origin::User
    }

    /// A short name for notices.
    pub fn label(self) -> &'static str {
        match self {
            Origin::User => "the user config",
            Origin::McpJson => MCP_JSON,
            Origin::WorkspaceToml => "tackle.toml",
        }
    }
}

/// A usable server definition.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerConfig {
    pub name: String,
    pub endpoint: Endpoint,
    pub startup_timeout: Duration,
    pub call_timeout: Duration,
    /// Globs on raw tool names.
    pub enabled_tools: Vec<String>,
    pub disabled_tools: Vec<String>,
    /// Honour the server's `readOnlyHint`.
    pub trusted: bool,
    pub defer: Defer,
    pub origin: Origin,
    /// SHA-1 of the definition as written (remembered consent is keyed by it).
    pub fingerprint: String,
}

/// The defaults that the environment may change (`MCP_TIMEOUT`, `MCP_TOOL_TIMEOUT`, in ms).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Defaults {
    pub startup_timeout: Duration,
    pub call_timeout: Duration,
}

impl Defaults {
    /// The defaults, with the environment's overrides.
    pub fn from_env() -> Defaults {
        let ms =
            |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse::<u64>().ok()).map(Duration::from_millis);
        Defaults {
            startup_timeout: ms("MCP_TIMEOUT").unwrap_or(DEFAULT_STARTUP_TIMEOUT),
            call_timeout: ms("MCP_TOOL_TIMEOUT").unwrap_or(DEFAULT_CALL_TIMEOUT),
        }
    }
}

/// A definition with its name and origin, before consent and expansion.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub name: String,
    pub raw: RawServer,
    pub origin: Origin,
}

impl Candidate {
    /// SHA-1 of the definition as written.
    pub fn fingerprint(&self) -> String {
        let text = serde_json::to_string(&self.raw).unwrap_or_default();
        sha1_smol::Sha1::from(text.as_bytes()).digest().to_string()
    }
}

/// Every definition from every source, grouped by name, highest precedence first.
pub fn candidates(config: &Config, workspace: &Path) -> (BTreeMap<String, Vec<Candidate>>, Vec<String>) {
    let mut notices = Vec::new();
    let mut by_name: BTreeMap<String, Vec<Candidate>> = BTreeMap::new();
    let mut add = |servers: BTreeMap<String, RawServer>, origin: Origin| {
        for (name, raw) in servers {
            by_name.entry(name.clone()).or_default().push(Candidate { name, raw, origin });
        }
    };
    match config.workspace_section::<McpSection>("mcp") {
        Ok(section) => add(section.map(|s| s.servers).unwrap_or_default(), Origin::WorkspaceToml),
        Err(err) => notices.push(format!("ignoring [mcp] of tackle.toml: {err}")),
    }
    match read_mcp_json(config, workspace) {
        Ok(servers) => add(servers, Origin::McpJson),
        Err(err) => notices.push(err.to_string()),
    }
    match config.user_section::<McpSection>("mcp") {
        Ok(section) => add(section.map(|s| s.servers).unwrap_or_default(), Origin::User),
        Err(err) => notices.push(format!("ignoring [mcp] of {}: {err}", tackle_policy::config::user_config_shown())),
    }
    (by_name, notices)
}

/// Why `.mcp.json` is ignored; its text is the notice for the person.
#[derive(Debug, thiserror::Error)]
pub enum McpJsonError {
    /// The file cannot be used as a settings file (a directory, a link out).
    #[error("ignoring {}: {why}", .path.display())]
    Unusable { path: PathBuf, why: String },
    /// The file is not `.mcp.json`'s JSON.
    #[error("ignoring {}: it is not valid ({source})", MCP_JSON)]
    Invalid {
        #[source]
        source: serde_json::Error,
    },
}

/// The servers of `.mcp.json` as the configuration's snapshot holds it (the bytes consent is
/// bound to, never a second read of the file).
fn read_mcp_json(config: &Config, workspace: &Path) -> Result<BTreeMap<String, RawServer>, McpJsonError> {
    let bytes = match config.snapshot().file(MCP_JSON) {
        SettingsFile::Absent => return Ok(BTreeMap::new()),
        SettingsFile::Present(bytes) => bytes,
        SettingsFile::Unusable(why) => {
            return Err(McpJsonError::Unusable { path: workspace.join(MCP_JSON), why: why.clone() });
        }
    };
    serde_json::from_slice::<McpJson>(bytes)
        .map(|file| file.mcp_servers)
        .map_err(|source| McpJsonError::Invalid { source })
}

/// Why a server definition cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ServerDefinitionError {
    /// `${` without its `}` (the text as written).
    #[error("unterminated ${{ in '{0}'")]
    Unterminated(String),
    /// `${NAME}` of a variable that is not set, without a default.
    #[error("environment variable {0} is not set")]
    UnsetVariable(String),
    #[error("a stdio server needs \"command\"")]
    NoCommand,
    #[error("an http server needs \"url\"")]
    NoUrl,
    #[error("\"oauth\" has a client_secret without a client_id")]
    SecretWithoutClientId,
    #[error("the legacy HTTP+SSE transport (type \"sse\") is not supported; use \"http\"")]
    LegacySse,
    /// A `type` other than stdio and http.
    #[error("unknown server type '{0}'; use \"stdio\" or \"http\"")]
    UnknownType(String),
}

/// Expands `${VAR}` and `${VAR:-default}` with `lookup`. An unset variable without a
/// default is an error naming it.
pub fn expand(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, ServerDefinitionError> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or_else(|| ServerDefinitionError::Unterminated(text.to_owned()))?;
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        match (lookup(name).filter(|v| !v.is_empty() || default.is_none()), default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => return Err(ServerDefinitionError::UnsetVariable(name.to_owned())),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Turns a consented candidate into a usable definition. `Ok(None)` for a disabled server.
pub fn resolve(
    candidate: &Candidate,
    workspace: &Path,
    defaults: Defaults,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<ServerConfig>, ServerDefinitionError> {
    let raw = &candidate.raw;
    if raw.enabled == Some(false) {
        return Ok(None);
    }
    let expand_all = |map: &BTreeMap<String, String>| -> Result<BTreeMap<String, String>, ServerDefinitionError> {
        map.iter().map(|(k, v)| Ok((k.clone(), expand(v, lookup)?))).collect()
    };
    let kind = raw.kind.as_deref().unwrap_or(if raw.url.is_some() && raw.command.is_none() { "http" } else { "stdio" });
    let endpoint = match kind {
        "stdio" => {
            let command = raw.command.as_deref().ok_or(ServerDefinitionError::NoCommand)?;
            let cwd = match &raw.cwd {
                Some(cwd) => {
                    let cwd = PathBuf::from(expand(cwd, lookup)?);
                    if cwd.is_absolute() { cwd } else { workspace.join(cwd) }
                }
                None => workspace.to_path_buf(),
            };
            Endpoint::Stdio {
                command: expand(command, lookup)?,
                args: raw.args.iter().map(|a| expand(a, lookup)).collect::<Result<_, _>>()?,
                env: expand_all(&raw.env)?,
                cwd,
            }
        }
        "http" | "streamable-http" | "streamableHttp" => {
            let url = raw.url.as_deref().ok_or(ServerDefinitionError::NoUrl)?;
            let oauth = raw.oauth.clone().unwrap_or_default();
            let expand_opt = |value: &Option<String>| value.as_deref().map(|v| expand(v, lookup)).transpose();
            let oauth = OAuthSettings {
                client_id: expand_opt(&oauth.client_id)?,
                client_secret: expand_opt(&oauth.client_secret)?,
                scopes: oauth.scopes.unwrap_or_default(),
                client_metadata_url: expand_opt(&oauth.client_metadata_url)?,
                callback_port: oauth.callback_port,
            };
            if oauth.client_secret.is_some() && oauth.client_id.is_none() {
                return Err(ServerDefinitionError::SecretWithoutClientId);
            }
            Endpoint::Http { url: expand(url, lookup)?, headers: expand_all(&raw.headers)?, oauth }
        }
        "sse" => return Err(ServerDefinitionError::LegacySse),
        other => return Err(ServerDefinitionError::UnknownType(other.to_owned())),
    };
    let defer = match raw.defer {
        Some(DeferSetting::Flag(true)) => Defer::Always,
        Some(DeferSetting::Flag(false)) => Defer::Never,
        Some(DeferSetting::Word(DeferWord::Auto)) | None => Defer::Auto,
    };
    Ok(Some(ServerConfig {
        name: candidate.name.clone(),
        endpoint,
        startup_timeout: raw.startup_timeout_ms.map_or(defaults.startup_timeout, Duration::from_millis),
        call_timeout: raw.call_timeout_ms.map_or(defaults.call_timeout, Duration::from_millis),
        enabled_tools: raw.enabled_tools.clone().unwrap_or_else(|| vec!["*".to_owned()]),
        disabled_tools: raw.disabled_tools.clone().unwrap_or_default(),
        trusted: raw.trusted.unwrap_or(false),
        defer,
        origin: candidate.origin,
        fingerprint: candidate.fingerprint(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use tackle_policy::config::snapshot::SettingsSnapshot;

    /// The bounds table of `tackle_policy::config::rules` states these defaults for its notices.
    #[test]
    #[allow(clippy::cast_precision_loss)]
    fn the_bounds_table_knows_the_defaults() {
        let default = |key: &str| tackle_policy::config::rules::number_rule(key).and_then(|rule| rule.default);
        assert_eq!(default("mcp.defer_threshold"), Some(DEFAULT_DEFER_THRESHOLD as f64));
        assert_eq!(default("mcp.servers.x.startup_timeout_ms"), Some(DEFAULT_STARTUP_TIMEOUT.as_millis() as f64));
        assert_eq!(default("mcp.servers.x.call_timeout_ms"), Some(DEFAULT_CALL_TIMEOUT.as_millis() as f64));
        let server = crate::server::DEFAULT_IDLE_TIMEOUT.as_secs() as f64;
        assert_eq!(default("mcp.serve.idle_timeout_s"), Some(server));
        assert_eq!(default("mcp.serve.max_sessions"), Some(crate::server::DEFAULT_MAX_SESSIONS as f64));
    }

    fn env(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/me".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn variables_expand_with_defaults_and_unset_ones_are_errors() {
        assert_eq!(expand("${HOME}/x", &env).unwrap(), "/home/me/x");
        assert_eq!(expand("Bearer ${TOKEN:-}", &env).unwrap(), "Bearer ");
        assert_eq!(expand("${TOKEN:-abc}-${HOME}", &env).unwrap(), "abc-/home/me");
        assert_eq!(expand("${EMPTY:-fallback}", &env).unwrap(), "fallback");
        assert_eq!(expand("${EMPTY}", &env).unwrap(), "");
        assert_eq!(expand("$HOME and $$ stay", &env).unwrap(), "$HOME and $$ stay");
        assert_eq!(expand("${TOKEN}", &env).unwrap_err().to_string(), "environment variable TOKEN is not set");
        assert_eq!(expand("${HOME", &env).unwrap_err().to_string(), "unterminated ${ in '${HOME'");
    }

    fn candidate(json: &str) -> Candidate {
        Candidate { name: "s".into(), raw: serde_json::from_str(json).unwrap(), origin: Origin::McpJson }
    }

    const DEFAULTS: Defaults =
        Defaults { startup_timeout: DEFAULT_STARTUP_TIMEOUT, call_timeout: DEFAULT_CALL_TIMEOUT };

    #[test]
    fn claude_codes_format_resolves() {
        let ws = Path::new("/ws");
        let stdio = candidate(
            r#"{"command": "uvx", "args": ["mcp-server-git", "--repository", "."], "env": {"K": "${HOME}"}, "extra": 1}"#,
        );
        let resolved = resolve(&stdio, ws, DEFAULTS, &env).unwrap().unwrap();
        assert_eq!(
            resolved.endpoint,
            Endpoint::Stdio {
                command: "uvx".into(),
                args: vec!["mcp-server-git".into(), "--repository".into(), ".".into()],
                env: [("K".to_owned(), "/home/me".to_owned())].into(),
                cwd: ws.to_path_buf()
            }
        );
        assert_eq!((resolved.startup_timeout, resolved.call_timeout), (DEFAULT_STARTUP_TIMEOUT, DEFAULT_CALL_TIMEOUT));
        assert_eq!(resolved.enabled_tools, ["*"]);
        assert!(!resolved.trusted);
        let http = candidate(
            r#"{"type": "http", "url": "http://127.0.0.1:3901/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN:-}"}}"#,
        );
        assert_eq!(
            resolve(&http, ws, DEFAULTS, &env).unwrap().unwrap().endpoint,
            Endpoint::Http {
                url: "http://127.0.0.1:3901/mcp".into(),
                headers: [("Authorization".to_owned(), "Bearer ".to_owned())].into(),
                oauth: OAuthSettings::default()
            }
        );
    }

    #[test]
    fn the_oauth_table_resolves_with_expansion_and_bad_keys_are_errors() {
        let ws = Path::new("/ws");
        let lookup = |name: &str| match name {
            "SECRET" => Some("s3cret".to_owned()),
            _ => env(name),
        };
        let http = candidate(
            r#"{"url": "https://mcp.example/mcp", "oauth": {"client_id": "tackle-${HOME}", "client_secret": "${SECRET}",
                "scopes": ["read", "write"], "client_metadata_url": "https://tackle.example/client.json", "callback_port": 8765}}"#,
        );
        let Endpoint::Http { oauth, .. } = resolve(&http, ws, DEFAULTS, &lookup).unwrap().unwrap().endpoint else {
            panic!("not http")
        };
        assert_eq!(
            oauth,
            OAuthSettings {
                client_id: Some("tackle-/home/me".into()),
                client_secret: Some("s3cret".into()),
                scopes: vec!["read".into(), "write".into()],
                client_metadata_url: Some("https://tackle.example/client.json".into()),
                callback_port: Some(8765),
            }
        );
        let plain = candidate(r#"{"url": "https://mcp.example/mcp"}"#);
        let Endpoint::Http { oauth, .. } = resolve(&plain, ws, DEFAULTS, &env).unwrap().unwrap().endpoint else {
            panic!("not http")
        };
        assert_eq!(oauth, OAuthSettings::default());
        let secret_alone = candidate(r#"{"url": "https://x/mcp", "oauth": {"client_secret": "s"}}"#);
        assert!(resolve(&secret_alone, ws, DEFAULTS, &env).unwrap_err().to_string().contains("without a client_id"));
        let unset = candidate(r#"{"url": "https://x/mcp", "oauth": {"client_id": "a", "client_secret": "${NOPE}"}}"#);
        assert_eq!(
            resolve(&unset, ws, DEFAULTS, &env).unwrap_err().to_string(),
            "environment variable NOPE is not set"
        );
        assert!(serde_json::from_str::<RawServer>(r#"{"url": "u", "oauth": {"token": "x"}}"#).is_err());
        // The same table in TOML.
        let table: toml::Table = "url = \"u\"\n[oauth]\nclient_id = \"c\"\ncallback_port = 1".parse().unwrap();
        let raw: RawServer = table.try_into().unwrap();
        assert_eq!(raw.oauth.unwrap().client_id.as_deref(), Some("c"));
    }

    #[test]
    fn tackle_keys_and_bad_definitions() {
        let ws = Path::new("/ws");
        let full = candidate(
            r#"{"command": "x", "cwd": "sub", "startup_timeout_ms": 5, "call_timeout_ms": 7, "enabled_tools": ["a*"],
                "disabled_tools": ["ab"], "trusted": true, "defer": "auto"}"#,
        );
        let resolved = resolve(&full, ws, DEFAULTS, &env).unwrap().unwrap();
        assert_eq!(resolved.startup_timeout, Duration::from_millis(5));
        assert_eq!(resolved.call_timeout, Duration::from_millis(7));
        assert_eq!(
            (resolved.enabled_tools.clone(), resolved.disabled_tools.clone()),
            (vec!["a*".to_owned()], vec!["ab".to_owned()])
        );
        assert!(resolved.trusted);
        assert_eq!(resolved.defer, Defer::Auto);
        assert!(matches!(resolved.endpoint, Endpoint::Stdio { cwd, .. } if cwd == Path::new("/ws/sub")));
        assert_eq!(
            resolve(&candidate(r#"{"command": "x", "defer": true}"#), ws, DEFAULTS, &env).unwrap().unwrap().defer,
            Defer::Always
        );
        assert_eq!(resolve(&candidate(r#"{"command": "x", "enabled": false}"#), ws, DEFAULTS, &env).unwrap(), None);
        assert!(
            resolve(&candidate(r#"{"type": "sse", "url": "http://x"}"#), ws, DEFAULTS, &env)
                .unwrap_err()
                .to_string()
                .contains("not supported")
        );
        assert_eq!(
            resolve(&candidate(r#"{"args": ["a"]}"#), ws, DEFAULTS, &env).unwrap_err().to_string(),
            "a stdio server needs \"command\""
        );
        assert_eq!(
            resolve(&candidate(r#"{"command": "x", "env": {"A": "${NOPE}"}}"#), ws, DEFAULTS, &env)
                .unwrap_err()
                .to_string(),
            "environment variable NOPE is not set"
        );
    }

    #[test]
    fn sources_are_ordered_workspace_toml_then_mcp_json_then_user() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(MCP_JSON),
            r#"{"mcpServers": {"git": {"command": "from-json"}, "docs": {"command": "d"}}}"#,
        )
        .unwrap();
        let user: toml::Table =
            "[mcp.servers.git]\ncommand = \"from-user\"\n[mcp.servers.mine]\ncommand = \"m\"".parse().unwrap();
        let workspace: toml::Table = "[mcp.servers.git]\ncommand = \"from-toml\"".parse().unwrap();
        let config = Config::from_tables(user, workspace, false).with_snapshot(SettingsSnapshot::read(dir.path()));
        let (by_name, notices) = candidates(&config, dir.path());
        assert!(notices.is_empty(), "{notices:?}");
        let order: Vec<(Origin, Option<String>)> =
            by_name["git"].iter().map(|c| (c.origin, c.raw.command.clone())).collect();
        assert_eq!(
            order,
            vec![
                (Origin::WorkspaceToml, Some("from-toml".into())),
                (Origin::McpJson, Some("from-json".into())),
                (Origin::User, Some("from-user".into()))
            ]
        );
        assert_eq!(by_name.keys().collect::<Vec<_>>(), ["docs", "git", "mine"]);
        // The file is read once, with the configuration: a later change is not seen.
        std::fs::write(dir.path().join(MCP_JSON), r#"{"mcpServers": {"git": {"command": "changed"}}}"#).unwrap();
        let (by_name, _) = candidates(&config, dir.path());
        assert_eq!(by_name["git"][1].raw.command.as_deref(), Some("from-json"));
        std::fs::write(dir.path().join(MCP_JSON), "{broken").unwrap();
        let config = config.with_snapshot(SettingsSnapshot::read(dir.path()));
        let (_, notices) = candidates(&config, dir.path());
        assert!(notices[0].starts_with("ignoring .mcp.json: it is not valid"), "{notices:?}");
    }
}
