//! The client face: importing MCP servers' tools into Tackle's registry (docs/mcp.md#importing-mcp-servers-tools-in-tackle).
//!
//! An [`McpHub`] owns the connections of one Tackle session (subagents and teammates share
//! them). It starts every configured server concurrently, names each server's tools
//! `mcp__SERVER__TOOL` ([`naming`]), registers them as core `DynTool`s in the toolsets of
//! every built-in plus `mcp`, refreshes them between model requests when a server announces
//! `tools/list_changed`, and shuts every server down at the end.

pub mod config;
pub mod connection;
pub mod consent;
pub mod elicitation;
pub mod health;
pub mod manage;
pub mod naming;
pub mod oauth;
pub mod prompts;
pub mod request;
pub mod resources;
pub mod result;
pub mod tool;
pub mod transport;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::{Arc, Mutex};

use globset::{Glob, GlobSet, GlobSetBuilder};
use tackle_core::registry::{ToolHandle, ToolSource};
use tackle_core::spec::Loading;
use tackle_core::{BoxFuture, DynTool, Notifications, Registry, SessionResource, SessionState, ToolSession, ToolSet};
use tackle_policy::config::Config;

use self::config::{Candidate, Defaults, Defer, McpSection, ServerConfig};
use self::connection::{Connection, Listing, RemoteTool};
use self::consent::ConsentPolicy;
use self::tool::McpTool;

/// The toolset of imported tools (they are in every built-in toolset too, but not in
/// `all`), so that `--tools default,-mcp` leaves them out.
pub const MCP_TOOLSET: &str = "mcp";

/// The servers to import: every definition, per name the highest-precedence one the person
/// consented to (a workspace definition without consent gives way to the user's own of the
/// same name, if any), resolved and expanded. With `workspace_servers` false only the user's
/// own definitions count. `wanted` picks, from every defined name, the servers the session can
/// use (the others are neither asked about nor started). The notices are for the person.
pub fn servers(
    config: &Config,
    workspace: &Path,
    consent: &ConsentPolicy<'_>,
    workspace_servers: bool,
    wanted: &dyn Fn(&[String]) -> std::collections::BTreeSet<String>,
) -> (Vec<ServerConfig>, Vec<String>) {
    let (mut by_name, mut notices) = config::candidates(config, workspace);
    if !workspace_servers {
        for candidates in by_name.values_mut() {
            candidates.retain(|candidate| !candidate.origin.is_workspace());
        }
    }
    let names: Vec<String> = by_name.keys().cloned().collect();
    let wanted = wanted(&names);
    by_name.retain(|name, _| wanted.contains(name));
    let defaults = Defaults::from_env();
    // `${VAR}` may name a secret Tackle moved out of its own environment (a server's token).
    let lookup = tackle_policy::secrets::var;
    let mut servers = Vec::new();
    for (name, candidates) in by_name {
        let chosen: Option<&Candidate> =
            candidates.iter().find(|candidate| match consent.decide(candidate, workspace) {
                Ok(()) => true,
                Err(notice) => {
                    notices.push(notice.to_string());
                    false
                }
            });
        let Some(candidate) = chosen else { continue };
        match config::resolve(candidate, workspace, defaults, &lookup) {
            Ok(Some(server)) => servers.push(server),
            Ok(None) => {}
            Err(err) => {
                notices.push(format!("MCP server '{name}' from {} was not started: {err}", candidate.origin.label()));
            }
        }
    }
    (servers, notices)
}

/// The user's `[mcp]` section (the deferral threshold); a malformed one is an error naming the
/// file and the key.
pub fn user_section(config: &Config) -> Result<McpSection, tackle_policy::config::ConfigError> {
    Ok(config.user_section::<McpSection>("mcp")?.unwrap_or_default())
}

/// One server and its current tools.
struct Imported {
    connection: Arc<Connection>,
    /// The imported tools, in listing order.
    tools: Mutex<Vec<Arc<McpTool>>>,
}

/// What changed in one server's tools at a refresh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolChanges {
    pub server: String,
    /// Wire names.
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

impl std::fmt::Display for ToolChanges {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list = |names: &[String]| if names.is_empty() { "none".to_owned() } else { names.join(", ") };
        write!(
            f,
            "MCP server {} changed its tools: added {}; removed {}.",
            self.server,
            list(&self.added),
            list(&self.removed)
        )
    }
}

/// The MCP connections of one session.
pub struct McpHub {
    servers: Vec<Imported>,
    /// Names no imported tool may take (the built-ins').
    reserved: HashSet<String>,
    defer_threshold: usize,
    /// The servers that could not start, with the reason.
    left_out: Vec<(String, String)>,
    /// Every notice given so far (at start and by [`McpHub::refresh`]): a refresh repeats none.
    said: Mutex<HashSet<String>>,
    /// The notices of refreshes not yet taken ([`McpHub::take_notices`]).
    pending: Mutex<Vec<String>>,
    /// Every change [`McpHub::refresh`] found, in order: each session sharing the hub catches
    /// up from where it stands ([`McpHub::catch_up`]), whichever of them relisted.
    log: Mutex<Vec<ToolChanges>>,
    /// `list_mcp_resources` and `read_mcp_resource`, when some server offers resources.
    resource_tools: Option<(Arc<resources::ListResources>, Arc<resources::ReadResource>)>,
}

/// How far into the hub's change log a session's tools are, kept in its state.
#[derive(Debug, Default)]
struct CaughtUp(std::sync::atomic::AtomicUsize);

impl std::fmt::Debug for McpHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.servers.iter().map(|s| s.connection.name()).collect();
        f.debug_struct("McpHub").field("servers", &names).finish_non_exhaustive()
    }
}

impl McpHub {
    /// A hub with no servers.
    pub fn empty() -> McpHub {
        McpHub {
            servers: Vec::new(),
            reserved: HashSet::new(),
            defer_threshold: config::DEFAULT_DEFER_THRESHOLD,
            left_out: Vec::new(),
            said: Mutex::default(),
            pending: Mutex::default(),
            log: Mutex::default(),
            resource_tools: None,
        }
    }

    /// Starts every server concurrently and imports their tools; a server that fails or is
    /// late is left out with a notice (its tools are absent). `registry` gives the names
    /// already taken. Every form a server asks to fill in is declined
    /// ([`McpHub::start_eliciting`] says who answers).
    pub async fn start(
        configs: Vec<ServerConfig>,
        workspace: &Path,
        registry: &Registry,
        defer_threshold: usize,
    ) -> (McpHub, Vec<String>) {
        let decline: Arc<dyn elicitation::Elicitor> = Arc::new(elicitation::Unattended::Decline);
        McpHub::start_eliciting(configs, workspace, registry, defer_threshold, decline).await
    }

    /// [`McpHub::start`], with `elicitor` answering the servers' forms.
    pub async fn start_eliciting(
        configs: Vec<ServerConfig>,
        workspace: &Path,
        registry: &Registry,
        defer_threshold: usize,
        elicitor: Arc<dyn elicitation::Elicitor>,
    ) -> (McpHub, Vec<String>) {
        let reserved: HashSet<String> = registry.entries().iter().map(|e| e.spec.name.clone()).collect();
        let connections: Vec<Arc<Connection>> = configs
            .into_iter()
            .map(|config| Arc::new(Connection::new(config, workspace).with_elicitor(Arc::clone(&elicitor))))
            .collect();
        let started = futures::future::join_all(connections.iter().map(|c| c.start())).await;
        let mut notices = Vec::new();
        let mut listed = Vec::new();
        let mut left_out = Vec::new();
        for (connection, outcome) in connections.into_iter().zip(started) {
            match outcome {
                Ok(listing) => listed.push((connection, listing)),
                Err(reason) => {
                    notices.push(format!("MCP server '{}' was left out: {reason}", connection.name()));
                    connection.shutdown().await;
                    left_out.push((connection.name().to_owned(), reason.to_string()));
                }
            }
        }
        let mut hub = McpHub {
            servers: Vec::new(),
            reserved,
            defer_threshold,
            left_out,
            said: Mutex::default(),
            pending: Mutex::default(),
            log: Mutex::default(),
            resource_tools: None,
        };
        let offering = futures::future::join_all(listed.iter().map(|(connection, _)| async move {
            let peer = connection.peer(&tokio_util::sync::CancellationToken::new()).await.ok();
            peer.is_some_and(|peer| resources::offers_resources(&peer)).then(|| Arc::clone(connection))
        }))
        .await;
        let offering: Vec<Arc<Connection>> = offering.into_iter().flatten().collect();
        let names_free =
            [resources::LIST_RESOURCES, resources::READ_RESOURCE].iter().all(|name| !hub.reserved.contains(*name));
        if !offering.is_empty() && names_free {
            hub.resource_tools = Some(resources::tools(offering));
        }
        let mut taken = hub.reserved.clone();
        let total: usize = listed.iter().map(|(_, listing)| listing.tools.len()).sum();
        for (connection, listing) in listed {
            let chosen = choose(&connection, listing, &mut notices);
            let loading = loading(connection.config().defer, total, defer_threshold);
            let imported: Vec<Arc<McpTool>> = chosen
                .iter()
                .map(|remote| {
                    let wire = naming::tool_name(connection.name(), &remote.tool.name, &taken);
                    taken.insert(wire.clone());
                    Arc::new(McpTool::new(&wire, &remote.tool, Arc::clone(&connection), loading, &mut notices))
                })
                .collect();
            hub.servers.push(Imported { connection, tools: Mutex::new(imported) });
        }
        lock(&hub.said).extend(notices.iter().cloned());
        (hub, notices)
    }

    /// The servers that could not start, each with the reason.
    pub fn left_out(&self) -> &[(String, String)] {
        &self.left_out
    }

    /// The connection to `server`, if it started.
    pub fn connection(&self, server: &str) -> Option<Arc<Connection>> {
        self.servers.iter().find(|s| s.connection.name() == server).map(|s| Arc::clone(&s.connection))
    }

    /// Every started server's connection.
    pub fn connections(&self) -> Vec<Arc<Connection>> {
        self.servers.iter().map(|s| Arc::clone(&s.connection)).collect()
    }

    /// Every imported tool, server by server.
    pub fn tools(&self) -> Vec<Arc<McpTool>> {
        self.servers.iter().flat_map(|s| lock(&s.tools).clone()).collect()
    }

    /// Registers every imported tool (replacing what each server registered before), in
    /// every toolset the registry knows besides `all` and the closed ones
    /// ([`Registry::import_toolsets`]), and in `mcp`.
    pub fn register(&self, registry: &mut Registry) {
        registry.declare_toolsets(&[MCP_TOOLSET]);
        let names: Vec<String> = registry.import_toolsets();
        let toolsets: Vec<&str> = names.iter().map(String::as_str).collect();
        for server in &self.servers {
            let source = ToolSource::Mcp(server.connection.name().to_owned());
            registry.remove_source(&source);
            for tool in lock(&server.tools).iter() {
                let tool = Arc::clone(tool);
                registry.register_dyn(
                    &toolsets,
                    source.clone(),
                    Arc::new(move || Arc::clone(&tool) as Arc<dyn DynTool>),
                );
            }
        }
        if let Some((list, read)) = &self.resource_tools {
            let source = ToolSource::Mcp(resources::RESOURCES_SOURCE.to_owned());
            registry.remove_source(&source);
            let (list, read) = (Arc::clone(list), Arc::clone(read));
            registry.register_dyn(&toolsets, source.clone(), Arc::new(move || Arc::clone(&list) as Arc<dyn DynTool>));
            registry.register_dyn(&toolsets, source, Arc::new(move || Arc::clone(&read) as Arc<dyn DynTool>));
        }
    }

    /// Lists again the tools of every server that announced a change; one entry per server
    /// whose tools did change. Call it between model requests, never during a step.
    pub async fn refresh(&self) -> Vec<ToolChanges> {
        let mut changes = Vec::new();
        let mut notices = Vec::new();
        for server in &self.servers {
            if !server.connection.tools_changed() {
                continue;
            }
            let listed = match server.connection.relist().await {
                Ok(listed) => listed,
                Err(reason) => {
                    notices.push(format!(
                        "MCP server '{}' announced new tools, but they could not be listed: {reason}",
                        server.connection.name()
                    ));
                    continue;
                }
            };
            let chosen = choose(&server.connection, listed, &mut notices);
            let mut taken: HashSet<String> = self.reserved.clone();
            taken.extend(self.tools().iter().map(|t| t.spec().name.clone()));
            let loading = loading(server.connection.config().defer, self.tools().len(), self.defer_threshold);
            let mut current = lock(&server.tools);
            let by_raw: HashMap<String, Arc<McpTool>> =
                current.iter().map(|t| (t.raw_name().to_owned(), Arc::clone(t))).collect();
            let mut next = Vec::new();
            let mut added = Vec::new();
            for remote in &chosen {
                match by_raw.get(remote.tool.name.as_ref()) {
                    // Names stay stable; the listing (schema, description) is taken anew.
                    Some(old) => next.push(Arc::new(McpTool::new(
                        &old.spec().name,
                        &remote.tool,
                        Arc::clone(&server.connection),
                        loading,
                        &mut notices,
                    ))),
                    None => {
                        let wire = naming::tool_name(server.connection.name(), &remote.tool.name, &taken);
                        taken.insert(wire.clone());
                        added.push(wire.clone());
                        next.push(Arc::new(McpTool::new(
                            &wire,
                            &remote.tool,
                            Arc::clone(&server.connection),
                            loading,
                            &mut notices,
                        )));
                    }
                }
            }
            let kept: HashSet<&str> = chosen.iter().map(|r| r.tool.name.as_ref()).collect();
            let removed: Vec<String> =
                current.iter().filter(|t| !kept.contains(t.raw_name())).map(|t| t.spec().name.clone()).collect();
            *current = next;
            if !added.is_empty() || !removed.is_empty() {
                changes.push(ToolChanges { server: server.connection.name().to_owned(), added, removed });
            }
        }
        // Notices go to the person once, through the caller's notice path (not the log).
        let mut said = lock(&self.said);
        let fresh: Vec<String> = notices.into_iter().filter(|notice| said.insert(notice.clone())).collect();
        lock(&self.pending).extend(fresh);
        lock(&self.log).extend(changes.iter().cloned());
        changes
    }

    /// Brings `session`'s tools up to date with every change of the log it has not taken up
    /// yet (a session made from the hub starts caught up), as [`McpHub::update_session`] does;
    /// true when its tools changed. Several sessions sharing the hub (a parent and its
    /// children) each catch up, whichever of them made the [`McpHub::refresh`] that found the
    /// change.
    pub fn catch_up(&self, session: &mut ToolSession, admit: &dyn Fn(&str) -> bool) -> bool {
        let caught_up = session.state().get::<CaughtUp>();
        let pending = {
            let log = lock(&self.log);
            let from = caught_up.0.swap(log.len(), std::sync::atomic::Ordering::SeqCst).min(log.len());
            log[from..].to_vec()
        };
        self.update_session(session, &pending, admit)
    }

    /// The notices of [`McpHub::refresh`] not given before (at start or by an earlier
    /// refresh), taken: for the person, as the start's notices are.
    pub fn take_notices(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.pending))
    }

    /// Brings a session's tools up to date after [`McpHub::refresh`]: removed tools leave,
    /// added tools that `admit` accepts (the session's allowlist) join, changed ones are
    /// replaced, and the model is told through the session's notifications what changed in
    /// its own tools (a tool `admit` refuses is not news to it). Taking up a change twice
    /// changes nothing more. True when there was a change to take up (a changed tool's
    /// listing may differ even where its name stays).
    pub fn update_session(
        &self,
        session: &mut ToolSession,
        changes: &[ToolChanges],
        admit: &dyn Fn(&str) -> bool,
    ) -> bool {
        if changes.is_empty() {
            return false;
        }
        let current: HashMap<String, Arc<McpTool>> =
            self.tools().into_iter().map(|t| (t.spec().name.clone(), t)).collect();
        let added: HashSet<&str> = changes.iter().flat_map(|c| c.added.iter().map(String::as_str)).collect();
        let mut handles: Vec<ToolHandle> = Vec::new();
        for handle in session.tools().handles() {
            let name = handle.spec().name.clone();
            match &handle.source {
                ToolSource::Mcp(server) if changes.iter().any(|c| &c.server == server) => {
                    if let Some(tool) = current.get(&name) {
                        handles.push(ToolHandle::new(Arc::clone(tool) as Arc<dyn DynTool>, handle.source.clone()));
                    }
                }
                _ => handles.push(ToolHandle::new(Arc::clone(&handle.tool), handle.source.clone())),
            }
        }
        let before: HashSet<String> = session.tools().specs().map(|spec| spec.name.clone()).collect();
        let kept: HashSet<String> = handles.iter().map(|handle| handle.spec().name.clone()).collect();
        for tool in self.tools() {
            let name = tool.spec().name.clone();
            if added.contains(name.as_str()) && !kept.contains(&name) && admit(&name) {
                let source = ToolSource::Mcp(tool.server().to_owned());
                handles.push(ToolHandle::new(tool as Arc<dyn DynTool>, source));
            }
        }
        let after: HashSet<String> = handles.iter().map(|handle| handle.spec().name.clone()).collect();
        session.set_tools(ToolSet::new(handles));
        let notifications = session.state().get::<Notifications>();
        for change in changes {
            let seen = ToolChanges {
                server: change.server.clone(),
                added: change
                    .added
                    .iter()
                    .filter(|name| after.contains(*name) && !before.contains(*name))
                    .cloned()
                    .collect(),
                removed: change
                    .removed
                    .iter()
                    .filter(|name| before.contains(*name) && !after.contains(*name))
                    .cloned()
                    .collect(),
            };
            if !seen.added.is_empty() || !seen.removed.is_empty() {
                notifications.push(seen.to_string());
            }
        }
        true
    }

    /// Shuts every server down (close stdin, then SIGTERM and SIGKILL to its process group).
    pub async fn shutdown(&self) {
        futures::future::join_all(self.servers.iter().map(|s| s.connection.shutdown())).await;
    }

    /// Makes the hub part of `session`'s state, so whoever ends the session (see
    /// [`close_session`]) and whoever refreshes its tools finds it.
    pub fn attach(self, session: &ToolSession) -> Arc<McpHub> {
        session.state().get_or_insert_with(|| self)
    }

    /// Makes a shared hub reachable from a session's state (its owner closes it).
    pub fn share_with(self: &Arc<Self>, state: &SessionState) {
        state.insert_shared(Arc::clone(self));
        state.insert(CaughtUp(lock(&self.log).len().into()));
    }

    /// The hub attached to `session`.
    pub fn of(session: &ToolSession) -> Option<Arc<McpHub>> {
        session.state().existing::<McpHub>()
    }
}

/// The hub is what a session owns of its MCP servers: closing it shuts them down.
impl SessionResource for McpHub {
    fn name(&self) -> &str {
        "mcp"
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(self.shutdown())
    }
}

/// Ends a session: closes every tool, then shuts down the MCP servers attached to it.
pub async fn close_session(session: &ToolSession) {
    session.close().await;
    if let Some(hub) = McpHub::of(session) {
        hub.shutdown().await;
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn loading(defer: Defer, total: usize, threshold: usize) -> Loading {
    match defer {
        Defer::Always => Loading::Deferred,
        Defer::Never => Loading::AlwaysLoad,
        Defer::Auto if total > threshold => Loading::Deferred,
        Defer::Auto => Loading::Normal,
    }
}

/// The listed tools the configuration admits; task-only tools are skipped with a notice, and
/// a listing cut short gets one.
fn choose(connection: &Connection, listing: Listing, notices: &mut Vec<String>) -> Vec<RemoteTool> {
    if let Some(cut) = listing.cut {
        notices.push(format!("MCP server '{}': {cut}.", connection.name()));
    }
    let config = connection.config();
    let enabled = globs(&config.enabled_tools, connection.name(), notices);
    let disabled = globs(&config.disabled_tools, connection.name(), notices);
    listing
        .tools
        .into_iter()
        .filter(|remote| {
            let name = remote.tool.name.as_ref();
            if !enabled.is_match(name) || disabled.is_match(name) {
                return false;
            }
            if remote.task_only {
                notices.push(format!(
                    "MCP server '{}': tool '{name}' can only run as an MCP task, which Tackle does not support yet; it was skipped.",
                    connection.name()
                ));
                return false;
            }
            true
        })
        .collect()
}

fn globs(patterns: &[String], server: &str, notices: &mut Vec<String>) -> GlobSet {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        match Glob::new(pattern) {
            Ok(glob) => {
                builder.add(glob);
            }
            Err(err) => notices.push(format!("MCP server '{server}': ignoring the tool pattern '{pattern}': {err}")),
        }
    }
    builder.build().unwrap_or_else(|_| GlobSet::empty())
}
