//! Everything a session is built from, prepared once: the configuration, the registry with the
//! imported MCP tools, the selection, the tools' settings, the permission policy and approver.
//!
//! One template makes many sessions cheaply: `tackle mcp serve` makes one per MCP client
//! session, and subagents and teammates get child sessions through the template's
//! [`SessionFactory`] implementation. Sessions made from one template share its MCP
//! connections; the template's owner closes them ([`SessionTemplate::close`]), or the session
//! built by [`crate::SessionBuilder::build`] owns them as a resource.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tackle_core::factory::{Allowlists, ChildError, ChildRequest, ChildSession, Factory, SessionFactory};
use tackle_core::hooks::ToolHook;
use tackle_core::permission::{Approver, PermissionMode, PermissionPolicy};
use tackle_core::registry::Selection;
use tackle_core::session::new_session_id;
use tackle_core::{BoxFuture, DynTool, Executor, ExecutorConfig, Registry, ToolSession, ToolSessionConfig, ToolSource};
use tackle_mcp::client::McpHub;
use tackle_policy::config::Config;
use tackle_policy::config::user_dirs::UserDirs;
use tackle_policy::permission::rules::{ReadRules, RuleBook, RulePolicy, SessionRules};
use tackle_sandbox::process::Sandbox;

use crate::error::BuildError;
use crate::notice::Notice;
use crate::settings::ToolSettings;

/// What a session is built from; cheap to clone (one shared allocation).
#[derive(Clone)]
pub struct SessionTemplate {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) workspace: PathBuf,
    pub(crate) config: Config,
    pub(crate) registry: Registry,
    pub(crate) selection: Selection,
    /// The allowlist and its base, to admit the tools MCP servers add later.
    pub(crate) tools: (String, String),
    pub(crate) extra: Vec<Arc<dyn DynTool>>,
    pub(crate) hub: Option<Arc<McpHub>>,
    /// The container the tools run in, if any.
    pub(crate) container: Option<Arc<tackle_container::InContainer>>,
    pub(crate) settings: ToolSettings,
    pub(crate) mode: PermissionMode,
    pub(crate) policy: Arc<dyn PermissionPolicy>,
    /// Every permission rule, with its source.
    pub(crate) rules: Arc<RuleBook>,
    /// The command hooks (when configured) and the embedder's hooks, in that order.
    pub(crate) hooks: Vec<Arc<dyn ToolHook>>,
    /// The command hooks alone, when configured (`tackle permissions check` runs them).
    pub(crate) command_hooks: Option<Arc<tackle_policy::hooks::protocol::CommandHooks>>,
    pub(crate) approver: Arc<dyn Approver>,
    pub(crate) executor_config: ExecutorConfig,
    pub(crate) notice: Notice,
    /// The person's skill and agent directories (`[compat] claude` adds `~/.claude/`'s),
    /// resolved once and put into every session's state.
    pub(crate) user_dirs: UserDirs,
    /// The tools defined in files: which loaded, which files were skipped and why.
    pub(crate) file_tools: crate::file_tools::FileToolReport,
}

impl std::fmt::Debug for SessionTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionTemplate")
            .field("workspace", &self.inner.workspace)
            .field("tools", &self.inner.selection.names)
            .field("mode", &self.inner.mode)
            .finish_non_exhaustive()
    }
}

impl SessionTemplate {
    pub(crate) fn new(inner: Inner) -> SessionTemplate {
        SessionTemplate { inner: Arc::new(inner) }
    }

    /// The tools defined in files (docs/reference/tools.md#tools-defined-in-files): those
    /// loaded, and the files that were not, each with its error (`tackle tools list` names
    /// them).
    pub fn file_tools(&self) -> &crate::file_tools::FileToolReport {
        &self.inner.file_tools
    }

    /// A fresh session with the template's tools. Nothing is probed or started yet: the
    /// process sandbox is resolved when a command first runs (a sandbox chosen explicitly but
    /// unavailable is then that call's error; [`SessionTemplate::sandbox`] finds it sooner).
    pub fn session(&self) -> ToolSession {
        self.session_of(&self.inner.registry, &self.inner.selection)
    }

    /// The template's registry with the MCP servers' tools as they are now (after the
    /// `list_changed` refreshes so far).
    fn current_registry(&self) -> Registry {
        let mut registry = self.inner.registry.clone();
        if let Some(hub) = &self.inner.hub {
            hub.register(&mut registry);
        }
        registry
    }

    /// A fresh session holding the `selection` of `registry` (the template's).
    fn session_of(&self, registry: &Registry, selection: &Selection) -> ToolSession {
        let inner = &self.inner;
        let id = new_session_id();
        let state = inner.settings.state_for(&id, &inner.workspace);
        state.insert(Factory(Arc::new(self.clone())));
        state.insert(ReadRules(Some(Arc::clone(&inner.rules))));
        state.insert(SessionRules(Some(Arc::clone(&inner.rules))));
        state.insert(inner.user_dirs.clone());
        if let Some(hub) = &inner.hub {
            hub.share_with(&state);
        }
        let mut config = ToolSessionConfig::new(inner.workspace.clone());
        config.id = Some(id);
        config.path_policy = Some(Arc::clone(&inner.settings.path_policy));
        ToolSession::with_state(config, registry.instantiate(selection), state)
    }

    /// The executor that runs the calls of the template's sessions: the executor settings of
    /// `[tools]`, the permission policy and the approver.
    pub fn executor(&self) -> Executor {
        let inner = &self.inner;
        let mut executor = Executor::new(inner.executor_config.clone())
            .with_policy(Arc::clone(&inner.policy))
            .with_approver(Arc::clone(&inner.approver));
        for hook in &inner.hooks {
            executor = executor.with_hook(Arc::clone(hook));
        }
        executor
    }

    /// Every permission rule in force, with its source (`tackle permissions list`).
    pub fn rules(&self) -> &Arc<RuleBook> {
        &self.inner.rules
    }

    /// The hooks around every call.
    pub fn hooks(&self) -> &[Arc<dyn ToolHook>] {
        &self.inner.hooks
    }

    /// The configured command hooks (Claude Code's protocol), if any.
    pub fn command_hooks(&self) -> Option<&Arc<tackle_policy::hooks::protocol::CommandHooks>> {
        self.inner.command_hooks.as_ref()
    }

    /// The workspace root (absolute, canonical).
    pub fn workspace(&self) -> &Path {
        &self.inner.workspace
    }

    /// The person's own skill and agent directories the sessions read (`skills/` and `agents/`
    /// of the user config directory; `~/.claude/skills` and `~/.claude/agents` with
    /// `[compat] claude = true`).
    pub fn user_dirs(&self) -> &UserDirs {
        &self.inner.user_dirs
    }

    /// The configuration the template was built from.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The skills `load_skill` offers in this workspace (`.tackle/skills`, `.claude/skills`,
    /// the user's skills directories), with a warning for each one skipped; files the
    /// session's `Read(...)` deny rules cover are left out.
    pub fn skills(&self) -> tackle_tools::Skills {
        tackle_tools::Skills::discover(self.workspace(), &self.user_dirs().skills, &self.read_rules())
    }

    /// The agent definitions `subagent` can start in this workspace (`.tackle/agents`,
    /// `.claude/agents`, the user's agents directory), with a warning for each one skipped.
    pub fn agent_definitions(&self) -> crate::agent::AgentDefinitions {
        tackle_agent::subagent::definitions(self.workspace(), &self.read_rules(), self.user_dirs())
    }

    /// The session's `Read(...)` deny rules, as the tools that read prompt files apply them.
    fn read_rules(&self) -> ReadRules {
        ReadRules(Some(Arc::clone(self.rules())))
    }

    /// Every tool known: built-ins, the embedder's, and the imported MCP tools.
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The tools each session gets.
    pub fn selection(&self) -> &Selection {
        &self.inner.selection
    }

    /// Tells the person something (the builder's `on_notice`).
    pub(crate) fn notice(&self, line: &str) {
        self.inner.notice.say(line);
    }

    /// The permission mode in force.
    pub fn permission_mode(&self) -> PermissionMode {
        self.inner.mode
    }

    /// Whether the session's commands judged read-only run restricted without asking
    /// (docs/shell.md, "Read-only commands run restricted"); when not, they ask.
    pub fn restricts_read_only(&self) -> bool {
        self.inner.container.is_none() && self.inner.settings.restrict_read_only()
    }

    /// The policy of the session's rules with permission mode `mode` instead of its own.
    pub fn policy_with_mode(&self, mode: PermissionMode) -> Arc<dyn PermissionPolicy> {
        Arc::new(RulePolicy {
            book: Arc::clone(&self.inner.rules),
            mode,
            workspace: self.inner.workspace.clone(),
            restrict_read_only: self.restricts_read_only(),
        })
    }

    /// The permission policy and the approver.
    pub fn permissions(&self) -> (Arc<dyn PermissionPolicy>, Arc<dyn Approver>) {
        (Arc::clone(&self.inner.policy), Arc::clone(&self.inner.approver))
    }

    /// The executor settings.
    pub fn executor_config(&self) -> &ExecutorConfig {
        &self.inner.executor_config
    }

    /// The process sandbox commands run in, when the sessions have a tool that runs
    /// processes (resolved now if no session was made yet: an explicitly chosen mode that is
    /// unavailable is the error).
    pub fn sandbox(&self) -> Option<Result<&Sandbox, BuildError>> {
        self.inner.settings.sandbox()
    }

    /// The container the template's tools run in (closed with [`SessionTemplate::close`], or
    /// with the session [`crate::SessionBuilder::build`] made).
    pub fn container(&self) -> Option<&Arc<tackle_container::InContainer>> {
        self.inner.container.as_ref()
    }

    /// The MCP connections the template's sessions share.
    pub fn mcp(&self) -> Option<&Arc<McpHub>> {
        self.inner.hub.as_ref()
    }

    /// Shuts down the MCP servers the template started (the owner of a template used for
    /// many sessions calls this once, after the last session closed).
    pub async fn close(&self) {
        if let Some(hub) = &self.inner.hub {
            hub.shutdown().await;
        }
        if let Some(container) = &self.inner.container {
            tackle_core::SessionResource::close(container.as_ref()).await;
        }
    }

    /// Takes up the tool changes the MCP servers announced into `session` (the main
    /// session or a child's: each catches up on its own), keeping to the allowlist and, for a
    /// child, to every allowlist it was cut with ([`Allowlists`]); each change found is a
    /// notice for the person, once. True when the tools changed.
    pub async fn refresh(&self, session: &mut ToolSession) -> bool {
        let Some(hub) = &self.inner.hub else { return false };
        let changes = hub.refresh().await;
        for line in hub.take_notices() {
            self.inner.notice.say(&line);
        }
        for change in &changes {
            self.inner.notice.say(&change.to_string());
        }
        let cut = session.state().existing::<Allowlists>();
        let admitted = std::cell::OnceCell::new();
        hub.catch_up(session, &|name| {
            admitted.get_or_init(|| self.admitted(cut.as_ref().map_or(&[][..], |cut| &cut.0))).iter().any(|n| n == name)
        })
    }

    /// The names the allowlist admits among the registry's tools and the hub's current ones
    /// (for tools an MCP server announces later), narrowed by each allowlist of `cut` in turn
    /// (a child session's).
    fn admitted(&self, cut: &[String]) -> Vec<String> {
        let inner = &self.inner;
        let Ok(mut registry) = crate::builder::base_registry(&inner.extra) else { return Vec::new() };
        if let Some(hub) = &inner.hub {
            hub.register(&mut registry);
        }
        let (list, base) = &inner.tools;
        let mut names = registry.select(list, base).map(|s| s.names).unwrap_or_default();
        names.extend(inner.extra.iter().map(|tool| tool.spec().name.clone()));
        for list in cut {
            let within = names.join(",");
            let kept = registry.select(list, &within).map(|s| s.names).unwrap_or_default();
            names.retain(|name| kept.contains(name));
        }
        names
    }
}

/// Child sessions: the requesting session's tools narrowed by the request's allowlist, the
/// same settings, rules, approver, hooks and MCP connections, in the stricter of the
/// template's permission mode and the requested one.
impl SessionFactory for SessionTemplate {
    fn child(&self, request: ChildRequest) -> BoxFuture<'_, Result<ChildSession, ChildError>> {
        Box::pin(async move {
            let template = &self.inner.selection;
            // The MCP tools as they are now: the parent may hold tools a server added since
            // the template was built (and still name one it removed).
            let registry = self.current_registry();
            let within: Vec<String> = request
                .within
                .as_deref()
                .unwrap_or(&template.names)
                .iter()
                .filter(|name| registry.get(name).is_some())
                .cloned()
                .collect();
            let mut selection = match &request.tools {
                None => template.clone(),
                Some(list) => registry.select(list, &within.join(","))?,
            };
            selection.names.retain(|name| within.contains(name));
            if selection.names.is_empty() {
                return Err(ChildError::NoTools);
            }
            let session = self.session_of(&registry, &selection);
            let mut cut = request.ancestry.clone();
            cut.extend(request.tools.clone());
            session.state().insert(Allowlists(cut));
            let mode = request.mode.map_or(self.inner.mode, |asked| self.inner.mode.narrowed_to(asked));
            let executor = if mode == self.inner.mode {
                self.executor()
            } else {
                let policy = RulePolicy {
                    book: Arc::clone(&self.inner.rules),
                    mode,
                    workspace: self.inner.workspace.clone(),
                    restrict_read_only: self.restricts_read_only(),
                };
                self.executor().with_policy(Arc::new(policy))
            };
            Ok(ChildSession { session, executor })
        })
    }
}

/// Where an embedder's tool is registered: its own source, in no toolset (it is added to every
/// selection by name).
pub(crate) const EMBEDDED: ToolSource = ToolSource::Embedded;
