//! What `tackle mcp list` and `tackle mcp get` say of each defined server: where it is
//! defined, how it is reached, and how connecting went (connected with its tool count, failed
//! with the reason, needs login, not approved, disabled). Every server that may start is
//! started at once, each within its own startup timeout, listed, and shut down; a workspace
//! server the person has not consented to is never started.

use std::path::Path;
use std::sync::Arc;

use tackle_policy::config::Config;

use super::config::{self, Candidate, Defaults, Origin, RawServer};
use super::connection::Connection;
use super::consent::ConsentPolicy;

/// How a server fared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// It started and listed this many tools.
    Connected {
        /// Tools it listed.
        tools: usize,
    },
    /// It answered 401: it wants a sign-in Tackle has not done.
    NeedsLogin,
    /// It did not start, or did not list its tools.
    Failed(String),
    /// The workspace defines it and the person has not consented; it was not started.
    NotApproved,
    /// `enabled = false`.
    Disabled,
    /// Its definition cannot be used (a missing command, an unset variable).
    Invalid(String),
    /// Not connected: the caller asked only for the definitions.
    Unchecked,
}

impl Health {
    /// One short phrase for a table.
    pub fn phrase(&self) -> String {
        match self {
            Health::Connected { tools } => format!("connected · {tools} tool{}", if *tools == 1 { "" } else { "s" }),
            Health::NeedsLogin => "needs login".to_owned(),
            Health::Failed(why) => format!("failed: {why}"),
            Health::NotApproved => {
                "not approved (a workspace server: run/chat asks, or --allow-project-mcp)".to_owned()
            }
            Health::Disabled => "disabled".to_owned(),
            Health::Invalid(why) => format!("invalid: {why}"),
            Health::Unchecked => "not checked".to_owned(),
        }
    }
}

/// One defined server.
#[derive(Debug, Clone)]
pub struct ServerReport {
    /// Its name.
    pub name: String,
    /// The definition that counts (the highest-precedence one the person consented to, else
    /// the highest-precedence one).
    pub chosen: Candidate,
    /// Every definition of the name, highest precedence first (`chosen` among them).
    pub definitions: Vec<Candidate>,
    /// How it fared.
    pub health: Health,
}

impl ServerReport {
    /// `stdio` or `http` (as written; `sse` too).
    pub fn transport(&self) -> String {
        transport(&self.chosen.raw)
    }

    /// The command line or the URL, as written.
    pub fn target(&self) -> String {
        target(&self.chosen.raw)
    }
}

/// The transport a definition names.
pub fn transport(raw: &RawServer) -> String {
    match raw.kind.as_deref() {
        Some("streamable-http" | "streamableHttp") => "http".to_owned(),
        Some(kind) => kind.to_owned(),
        None if raw.url.is_some() && raw.command.is_none() => "http".to_owned(),
        None => "stdio".to_owned(),
    }
}

/// The command line (each word quoted where needed) or the URL of a definition, as written.
pub fn target(raw: &RawServer) -> String {
    if transport(raw) == "stdio" {
        let mut words = vec![raw.command.clone().unwrap_or_default()];
        words.extend(raw.args.iter().cloned());
        words.iter().map(|word| quoted(word)).collect::<Vec<_>>().join(" ")
    } else {
        raw.url.clone().unwrap_or_default()
    }
}

/// A word as a shell would need it, control characters escaped.
fn quoted(word: &str) -> String {
    let plain = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,${}".contains(c));
    if plain {
        return word.to_owned();
    }
    let escaped: String = word
        .chars()
        .flat_map(|c| if c.is_control() { c.escape_default().collect::<Vec<_>>() } else { vec![c] })
        .collect();
    format!("'{}'", escaped.replace('\'', "'\\''"))
}

/// Every defined server (or only `only`), each with how it fared when `connect`; the notices
/// are for the person (an unreadable `.mcp.json`, a malformed section).
pub async fn check(
    config: &Config,
    workspace: &Path,
    consent: &ConsentPolicy<'_>,
    only: Option<&str>,
    connect: bool,
) -> (Vec<ServerReport>, Vec<String>) {
    let (by_name, notices) = config::candidates(config, workspace);
    let defaults = Defaults::from_env();
    let lookup = tackle_policy::secrets::var;
    let mut reports = Vec::new();
    let mut to_start = Vec::new();
    for (name, definitions) in by_name {
        if only.is_some_and(|only| only != name) {
            continue;
        }
        let consented = definitions.iter().find(|candidate| consent.decide(candidate, workspace).is_ok());
        let (chosen, health) = match consented {
            None => (definitions[0].clone(), Some(Health::NotApproved)),
            Some(candidate) => match config::resolve(candidate, workspace, defaults, &lookup) {
                Ok(None) => (candidate.clone(), Some(Health::Disabled)),
                Err(why) => (candidate.clone(), Some(Health::Invalid(why.to_string()))),
                Ok(Some(_)) if !connect => (candidate.clone(), Some(Health::Unchecked)),
                Ok(Some(server)) => {
                    to_start
                        .push((reports.len(), Arc::new(Connection::new(server, workspace).without_sign_in_flows())));
                    (candidate.clone(), None)
                }
            },
        };
        reports.push(ServerReport { name, chosen, definitions, health: health.unwrap_or(Health::Unchecked) });
    }
    let started = futures::future::join_all(to_start.iter().map(|(_, connection)| async move {
        let outcome = connection.start().await;
        connection.shutdown().await;
        match outcome {
            // Task-only tools are not imported (docs/mcp.md#listing), so not counted.
            Ok(listing) => Health::Connected { tools: listing.tools.iter().filter(|t| !t.task_only).count() },
            Err(_) if connection.needs_login() => Health::NeedsLogin,
            Err(why) => Health::Failed(why.to_string()),
        }
    }))
    .await;
    for ((index, _), health) in to_start.iter().zip(started) {
        reports[*index].health = health;
    }
    (reports, notices)
}

/// Where a definition is, for the person.
pub fn origin_label(origin: Origin) -> &'static str {
    match origin {
        Origin::User => "user",
        Origin::McpJson => "project (.mcp.json)",
        Origin::WorkspaceToml => "project (tackle.toml)",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn targets_are_quoted_and_escaped() {
        let raw = RawServer {
            command: Some("uvx".into()),
            args: vec!["mcp-server-git".into(), "it's".into(), "a\x1b[2Jb".into(), String::new()],
            ..RawServer::default()
        };
        assert_eq!(target(&raw), r"uvx mcp-server-git 'it'\''s' 'a\u{1b}[2Jb' ''");
        let http = RawServer { url: Some("http://127.0.0.1:9/mcp".into()), ..RawServer::default() };
        assert_eq!((transport(&http), target(&http)), ("http".to_owned(), "http://127.0.0.1:9/mcp".to_owned()));
    }
}
