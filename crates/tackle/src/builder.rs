//! [`SessionBuilder`]: the one way a tool session is assembled, for embedders and the command
//! line alike. The order is fixed: workspace → configuration layers → registry (built-ins and
//! the embedder's tools) → MCP import with consent → selection → the tools' settings → the
//! executor with its permission policy and approver. A failure at any step closes what the
//! earlier steps started.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tackle_core::hooks::ToolHook;
use tackle_core::permission::{Approver, PermissionMode};
use tackle_core::registry::{AllowlistError, NameIndex, Selection};
use tackle_core::{DynTool, ExecutorConfig, Registry, SessionResource, Tool, ToolSource, ToolSpec, TypedTool};
use tackle_mcp::client::McpHub;
use tackle_mcp::client::config::{Candidate, DEFAULT_DEFER_THRESHOLD};
use tackle_mcp::client::consent::ConsentPolicy;
use tackle_policy::config::Config;
use tackle_policy::config::user_dirs::UserDirs;
use tackle_policy::hooks::protocol::CommandHooks;
use tackle_policy::permission::NonInteractiveApprover;
use tackle_policy::permission::rules::RulePolicy;
use tackle_policy::permission::sources::RuleFlags;
use tokio_util::sync::CancellationToken;

use crate::container::ContainerStart;

use crate::error::BuildError;
use crate::notice::Notice;
use crate::session::TackleSession;
use crate::settings::ToolSettings;
use crate::template::{EMBEDDED, Inner, SessionTemplate};

/// Which MCP servers a session imports tools from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum McpImport {
    /// None (the default for embedders).
    #[default]
    None,
    /// The servers of the user's configuration only.
    User,
    /// The user's servers and, with the person's consent, those the workspace defines
    /// (`.mcp.json`, `[mcp.servers]` of `tackle.toml`), as the command line does.
    UserAndWorkspace,
}

/// The terminal prompt asking whether a workspace-defined MCP server may start.
type ConsentPrompt = Arc<dyn Fn(&Candidate) -> bool + Send + Sync>;

/// A caller's own rule for choosing the tools.
type SelectionRule = Box<dyn Fn(&Registry) -> Result<Selection, AllowlistError> + Send + Sync>;

/// How the tools of a session are chosen.
enum Choice {
    /// An allowlist (the `--tools` grammar) and the base a list starting with a removal, or no
    /// list at all, starts from.
    Allowlist { list: Option<String>, base: String },
    /// A rule of the caller's (`tackle mcp serve` serves imported tools only when named).
    Rule(SelectionRule),
}

/// Builds a [`TackleSession`] (or a [`SessionTemplate`] for many sessions).
///
/// ```no_run
/// # async fn demo() -> Result<(), tackle::BuildError> {
/// let session = tackle::SessionBuilder::new("/path/to/project")
///     .tools("default,-bash")
///     .permission_mode(tackle::PermissionMode::AcceptEdits)
///     .build()
///     .await?;
/// let output = session.call("read_file", serde_json::json!({"file_path": "README.md"})).await;
/// println!("{}", output.text_content());
/// session.close().await;
/// # Ok(()) }
/// ```
pub struct SessionBuilder {
    workspace: PathBuf,
    config: Option<Config>,
    trust_workspace: bool,
    choice: Choice,
    narrow_to: Option<String>,
    extra: Vec<Arc<dyn DynTool>>,
    mode: PermissionMode,
    mode_given: bool,
    rule_flags: RuleFlags,
    hooks: Vec<Arc<dyn ToolHook>>,
    approver: Option<Arc<dyn Approver>>,
    mcp: McpImport,
    allow_project_mcp: bool,
    consent_prompt: Option<ConsentPrompt>,
    mcp_required: bool,
    elicitor: Option<Arc<dyn tackle_mcp::client::elicitation::Elicitor>>,
    notice: Notice,
    enforce_read_before_edit: bool,
    container: Option<ContainerStart>,
}

impl std::fmt::Debug for SessionBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionBuilder")
            .field("workspace", &self.workspace)
            .field("mode", &self.mode)
            .field("mcp", &self.mcp)
            .finish_non_exhaustive()
    }
}

impl SessionBuilder {
    /// A builder for a session in `workspace` (an existing directory).
    pub fn new(workspace: impl Into<PathBuf>) -> SessionBuilder {
        SessionBuilder {
            workspace: workspace.into(),
            config: None,
            trust_workspace: false,
            choice: Choice::Allowlist { list: None, base: "default".to_owned() },
            narrow_to: None,
            extra: Vec::new(),
            mode: PermissionMode::Default,
            mode_given: false,
            rule_flags: RuleFlags::default(),
            hooks: Vec::new(),
            approver: None,
            mcp: McpImport::None,
            allow_project_mcp: false,
            consent_prompt: None,
            mcp_required: true,
            elicitor: None,
            notice: Notice::default(),
            enforce_read_before_edit: true,
            container: None,
        }
    }

    /// The configuration to use (default: the user's file and the workspace's `tackle.toml`,
    /// loaded as the command line loads them).
    pub fn config(mut self, config: Config) -> Self {
        self.config = Some(config);
        self
    }

    /// Lets the workspace's own settings widen access when the configuration is loaded here
    /// (`--trust-workspace`).
    pub fn trust_workspace(mut self, trust: bool) -> Self {
        self.trust_workspace = trust;
        self
    }

    /// The tool allowlist (`--tools` grammar: toolsets, names, globs, `hint:read-only`,
    /// `-NAME`); default `"default"`.
    pub fn tools(mut self, list: &str) -> Self {
        let base = match &self.choice {
            Choice::Allowlist { base, .. } => base.clone(),
            Choice::Rule(_) => "default".to_owned(),
        };
        self.choice = Choice::Allowlist { list: Some(list.to_owned()), base };
        self
    }

    /// The selection used when [`SessionBuilder::tools`] is not given, and the one an
    /// allowlist starting with a removal starts from (default `"default"`; the `tools`
    /// commands use `"all,mcp"`).
    pub fn default_tools(mut self, base: &str) -> Self {
        let list = match &self.choice {
            Choice::Allowlist { list, .. } => list.clone(),
            Choice::Rule(_) => None,
        };
        self.choice = Choice::Allowlist { list, base: base.to_owned() };
        self
    }

    /// Chooses the tools with a rule of the caller's instead of an allowlist.
    pub fn select_with(
        mut self,
        rule: impl Fn(&Registry) -> Result<Selection, AllowlistError> + Send + Sync + 'static,
    ) -> Self {
        self.choice = Choice::Rule(Box::new(rule));
        self
    }

    /// When `name` resolves (by name, alias or normalized name) to a selected tool, the
    /// session holds only that tool (a one-shot call then starts nothing it does not need).
    /// A name that resolves to nothing keeps the whole selection, so its "not found" message
    /// lists every tool.
    pub fn narrow_to(mut self, name: &str) -> Self {
        self.narrow_to = Some(name.to_owned());
        self
    }

    /// Adds a typed tool, selected whatever the allowlist says.
    pub fn tool(self, tool: impl Tool) -> Self {
        self.dyn_tool(Arc::new(TypedTool::new(tool)))
    }

    /// Adds a tool defined at run time, selected whatever the allowlist says.
    pub fn dyn_tool(mut self, tool: Arc<dyn DynTool>) -> Self {
        self.extra.push(tool);
        self
    }

    /// The permission mode (default [`PermissionMode::Default`]).
    pub fn permission_mode(mut self, mode: PermissionMode) -> Self {
        self.mode = mode;
        self.mode_given = true;
        self
    }

    /// Permission rules beyond the configuration's (`--allow`, `--ask`, `--deny`), in Claude
    /// Code's syntax (docs/reference/safety.md#rules). The configuration's rules (the user
    /// config, the workspace's `tackle.toml`, saved project rules, `.claude/` settings with
    /// `[compat] claude = true`) are loaded by the builder.
    pub fn rules(mut self, flags: RuleFlags) -> Self {
        self.rule_flags = flags;
        self
    }

    /// Adds an in-process hook around every call (after the configured command hooks).
    pub fn hook(mut self, hook: Arc<dyn ToolHook>) -> Self {
        self.hooks.push(hook);
        self
    }

    /// Who resolves calls that need approval (default: they are denied with a message that
    /// says how to allow them).
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = Some(approver);
        self
    }

    /// Which MCP servers to import tools from (default none).
    pub fn mcp(mut self, import: McpImport) -> Self {
        self.mcp = import;
        self
    }

    /// Starts the MCP servers the workspace defines without asking (`--allow-project-mcp`).
    pub fn allow_project_mcp(mut self, allow: bool) -> Self {
        self.allow_project_mcp = allow;
        self
    }

    /// Asks the person whether a workspace-defined MCP server may start (the answer is
    /// remembered); without it such servers need another form of consent.
    pub fn mcp_consent_prompt(mut self, prompt: impl Fn(&Candidate) -> bool + Send + Sync + 'static) -> Self {
        self.consent_prompt = Some(Arc::new(prompt));
        self
    }

    /// Whether a configured MCP server that cannot start fails the build (default true: the
    /// servers that did start are shut down and [`BuildError::Mcp`] names the cause). With
    /// false it is left out with a notice, as the command line does.
    pub fn mcp_required(mut self, required: bool) -> Self {
        self.mcp_required = required;
        self
    }

    /// Who fills in the forms imported MCP servers ask for (elicitation). Default: the user
    /// config's `[mcp] elicitation` (`decline`, the default, or `accept-defaults`), never the
    /// workspace's.
    pub fn mcp_elicitor(mut self, elicitor: Arc<dyn crate::mcp_servers::Elicitor>) -> Self {
        self.elicitor = Some(elicitor);
        self
    }

    /// Where notices for the person go (a library never prints; default: logged).
    pub fn on_notice(mut self, callback: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.notice = Notice::new(callback);
        self
    }

    /// Whether file edits need a read of the file first (default true; a one-shot call from
    /// the command line turns it off, the person typing being the reader).
    pub fn enforce_read_before_edit(mut self, enforce: bool) -> Self {
        self.enforce_read_before_edit = enforce;
        self
    }

    /// Runs the session's tools inside a container (docs/containers.md): the flags given here
    /// over the configuration's `[container]`; without an image or container named by either,
    /// the tools run on the host. Start-up steps go to `progress`; when `cancel` fires during
    /// start-up, whatever was created is removed and the build fails.
    pub fn container(
        mut self,
        flags: tackle_container::settings::ContainerFlags,
        progress: impl Fn(tackle_container::LaunchStep) + Send + Sync + 'static,
        cancel: CancellationToken,
    ) -> Self {
        self.container = Some(ContainerStart { flags, progress: Arc::new(progress), cancel });
        self
    }

    /// Builds one session, which owns its MCP connections.
    pub async fn build(self) -> Result<TackleSession, BuildError> {
        let template = self.build_template().await?;
        let session = template.session();
        if let Some(hub) = template.mcp() {
            session.state().add_resource(Arc::clone(hub) as Arc<dyn SessionResource>);
        }
        if let Some(container) = template.container() {
            session.state().add_resource(Arc::clone(container) as Arc<dyn SessionResource>);
        }
        Ok(TackleSession::new(session, template))
    }

    /// Prepares everything for many sessions (`tackle mcp serve` makes one per client
    /// session); the caller closes the template's MCP connections with
    /// [`SessionTemplate::close`].
    pub async fn build_template(self) -> Result<SessionTemplate, BuildError> {
        let workspace = self
            .workspace
            .canonicalize()
            .map_err(|source| BuildError::Workspace { path: self.workspace.clone(), source })?;
        let config = match self.config {
            Some(config) => config,
            None => {
                let config = Config::load(&workspace, self.trust_workspace)?;
                for line in config.notices() {
                    self.notice.say(line);
                }
                config
            }
        };
        let loaded = tackle_policy::permission::sources::load(&config, &workspace, &self.rule_flags)?;
        let (hook_entries, hook_notices) = tackle_policy::hooks::config::load(&config)?;
        for line in loaded.notices.iter().chain(&hook_notices) {
            self.notice.say(line);
        }
        let mode = match loaded.default_mode {
            Some(mode) if !self.mode_given => mode,
            _ => self.mode,
        };
        let rules = Arc::new(loaded.book);
        // `load` above has already refused a malformed `[compat]`.
        let user_dirs = UserDirs::new(tackle_policy::permission::sources::claude_compat(&config).unwrap_or(false));
        let mut hooks: Vec<Arc<dyn ToolHook>> = Vec::new();
        let mut command_hooks = None;
        if !hook_entries.is_empty() {
            let notice = self.notice.clone();
            let warn = Arc::new(move |line: &str| notice.say(line));
            let configured = Arc::new(CommandHooks::new(hook_entries, workspace.clone(), mode, warn));
            hooks.push(Arc::clone(&configured) as Arc<dyn ToolHook>);
            command_hooks = Some(configured);
        }
        hooks.extend(self.hooks.iter().cloned());
        let mut registry = base_registry(&self.extra)?;
        register_web_search(&mut registry, &config)?;
        let container = match &self.container {
            Some(start) => start.run(&config, &workspace, &rules, &mut registry, &self.notice).await?,
            None => None,
        };
        // Tools defined in files run on this machine: a container session does not offer them.
        let file_tools = match &container {
            None => crate::file_tools::load(&config, &workspace, &mut registry, &self.notice),
            Some(_) => crate::file_tools::FileToolReport::default(),
        };
        let hub = match self.mcp {
            McpImport::None => None,
            import => {
                let (consent, listed_notices) = ConsentPolicy::for_workspace(
                    &config,
                    &workspace,
                    self.allow_project_mcp,
                    self.consent_prompt.as_deref(),
                );
                for line in &listed_notices {
                    self.notice.say(line);
                }
                // Only the servers whose tools this session can select (none for a one-shot
                // call of a built-in); a rule of the caller's may pick any of them.
                let (choice, narrow_to, before) = (&self.choice, self.narrow_to.as_deref(), registry.clone());
                let wanted = move |names: &[String]| match choice {
                    Choice::Allowlist { list, base } => crate::mcp_wanted::servers_to_start(
                        &before,
                        list.as_deref().unwrap_or(base),
                        base,
                        narrow_to,
                        names,
                    ),
                    Choice::Rule(_) => names.iter().cloned().collect(),
                };
                let hub = start_mcp(
                    &mut registry,
                    &config,
                    &workspace,
                    &consent,
                    import,
                    &wanted,
                    self.elicitor.clone(),
                    &self.notice,
                )
                .await?;
                if self.mcp_required
                    && let Some((server, reason)) = hub.left_out().first().cloned()
                {
                    hub.shutdown().await;
                    if let Some(container) = &container {
                        container.close().await;
                    }
                    return Err(BuildError::Mcp { server, reason });
                }
                Some(Arc::new(hub))
            }
        };
        let prepared = Prepare {
            registry: &registry,
            config: &config,
            workspace: &workspace,
            choice: &self.choice,
            narrow_to: self.narrow_to.as_deref(),
            extra: &self.extra,
            enforce_read_before_edit: self.enforce_read_before_edit,
            notice: &self.notice,
        }
        .run();
        let (selection, settings, executor_config) = match prepared {
            Ok(prepared) => prepared,
            Err(err) => {
                if let Some(hub) = &hub {
                    hub.shutdown().await;
                }
                if let Some(container) = &container {
                    container.close().await;
                }
                return Err(err);
            }
        };
        let tools = match &self.choice {
            Choice::Allowlist { list, base } => (list.clone().unwrap_or_else(|| base.clone()), base.clone()),
            Choice::Rule(_) => (selection.names.join(","), String::new()),
        };
        let policy = Arc::new(RulePolicy {
            book: Arc::clone(&rules),
            mode,
            workspace: workspace.clone(),
            // Commands in a container run under the container's own tackle, which is not told.
            restrict_read_only: container.is_none() && settings.restrict_read_only(),
        });
        Ok(SessionTemplate::new(Inner {
            workspace,
            config,
            registry,
            selection,
            tools,
            extra: self.extra,
            hub,
            container,
            settings,
            mode,
            policy,
            rules,
            hooks,
            command_hooks,
            approver: self.approver.unwrap_or_else(|| Arc::new(NonInteractiveApprover)),
            executor_config,
            notice: self.notice,
            user_dirs,
            file_tools,
        }))
    }
}

/// Every built-in tool (the code index's `ckg` included, in the `code` toolset, and the agent
/// loop's `subagent` and `team_*`, in `default` and `bare`; the `team_*` also in the closed
/// `team` toolset children are cut with), with every
/// toolset an allowlist may name declared (`mcp` and `files` too, whether or not such a tool
/// is there, so `-mcp` and `-files` are always valid).
pub fn builtin_registry() -> Registry {
    let mut registry = tackle_tools::builtin_registry();
    tackle_ckg::register(&mut registry);
    {
        use tackle_tools::toolset::{BARE, DEFAULT};
        registry.register(&[DEFAULT, BARE], tackle_agent::subagent::Subagent::default);
        use tackle_agent::lineage::TEAM_TOOLSET as TEAM;
        use tackle_agent::team::{TeamList, TeamSend, TeamSpawn};
        registry.declare_closed_toolsets(&[TEAM]);
        registry.register(&[DEFAULT, BARE, TEAM], TeamSpawn::default);
        registry.register(&[DEFAULT, BARE, TEAM], TeamSend::default);
        registry.register(&[DEFAULT, BARE, TEAM], TeamList::default);
    }
    registry.declare_toolsets(&[tackle_mcp::client::MCP_TOOLSET]);
    // The tools defined in files join it when a session loads them (`-files` is always valid);
    // closed, so imported MCP tools do not.
    registry.declare_closed_toolsets(&[crate::file_tools::FILES_TOOLSET]);
    registry
}

/// `web_search` as the user config's `[web]` section makes it (never the workspace's: the
/// section is `Never` in tackle-policy's config/rules.rs, and only the user's is read here).
fn register_web_search(registry: &mut Registry, config: &Config) -> Result<(), BuildError> {
    let section: tackle_tools::web::search::WebSection = config.user_section("web")?.unwrap_or_default();
    let tool = tackle_tools::web::WebSearch::from_section(&section);
    use tackle_tools::toolset::{BARE, DEFAULT};
    registry.register(&[DEFAULT, BARE], move || tool.clone());
    Ok(())
}

/// Every built-in tool plus the embedder's, which may not take a name already taken.
pub(crate) fn base_registry(extra: &[Arc<dyn DynTool>]) -> Result<Registry, BuildError> {
    let mut registry = builtin_registry();
    for tool in extra {
        let name = &tool.spec().name;
        if registry.get(name).is_some() {
            return Err(BuildError::DuplicateTool(name.clone()));
        }
        let tool = Arc::clone(tool);
        registry.register_dyn(&[], EMBEDDED, Arc::new(move || Arc::clone(&tool)));
    }
    Ok(registry)
}

/// Starts the MCP servers `import` names and registers their tools; notices go to the person.
/// Their forms go to `elicitor`, else as the user config's `[mcp] elicitation` says.
#[allow(clippy::too_many_arguments)]
async fn start_mcp(
    registry: &mut Registry,
    config: &Config,
    workspace: &Path,
    consent: &ConsentPolicy<'_>,
    import: McpImport,
    wanted: &dyn Fn(&[String]) -> std::collections::BTreeSet<String>,
    elicitor: Option<Arc<dyn crate::mcp_servers::Elicitor>>,
    notice: &Notice,
) -> Result<McpHub, BuildError> {
    let section = tackle_mcp::client::user_section(config)?;
    let (servers, notices) =
        tackle_mcp::client::servers(config, workspace, consent, import == McpImport::UserAndWorkspace, wanted);
    let threshold = section.defer_threshold.unwrap_or(DEFAULT_DEFER_THRESHOLD);
    let unattended = section.elicitation.unwrap_or_default();
    let elicitor = elicitor.unwrap_or_else(|| Arc::new(unattended));
    let (hub, started) = McpHub::start_eliciting(servers, workspace, registry, threshold, elicitor).await;
    for line in notices.iter().chain(&started) {
        notice.say(line);
    }
    hub.register(registry);
    Ok(hub)
}

/// The steps after the registry is complete: the selection, the tools' settings and the
/// executor settings.
struct Prepare<'a> {
    registry: &'a Registry,
    config: &'a Config,
    workspace: &'a Path,
    choice: &'a Choice,
    narrow_to: Option<&'a str>,
    extra: &'a [Arc<dyn DynTool>],
    enforce_read_before_edit: bool,
    notice: &'a Notice,
}

impl Prepare<'_> {
    fn run(self) -> Result<(Selection, ToolSettings, ExecutorConfig), BuildError> {
        let mut selection = match self.choice {
            Choice::Allowlist { list, base } => self.registry.select(list.as_deref().unwrap_or(base), base),
            Choice::Rule(rule) => rule(self.registry),
        }?;
        for warning in &selection.warnings {
            self.notice.say(warning);
        }
        for tool in self.extra {
            let name = &tool.spec().name;
            if !selection.names.contains(name) {
                selection.names.push(name.clone());
            }
        }
        if let Some(name) = self.narrow_to {
            narrow(self.registry, &mut selection, name);
        }
        let runs_processes = selection.names.iter().any(|name| {
            tackle_tools::shell::TOOLS.contains(&name.as_str())
                || self.registry.get(name).is_some_and(|entry| matches!(entry.source, ToolSource::File(_)))
        });
        let settings = ToolSettings::from_config(
            self.config,
            self.workspace,
            runs_processes,
            self.enforce_read_before_edit,
            self.notice,
        )?;
        let executor_config = tackle_policy::tools_config::ToolsConfig::from_config(self.config)?.executor_config();
        Ok((selection, settings, executor_config))
    }
}

/// `selection` cut down to the tool `name` resolves to, if it resolves.
fn narrow(registry: &Registry, selection: &mut Selection, name: &str) {
    let specs: Vec<&ToolSpec> =
        selection.names.iter().filter_map(|selected| registry.get(selected)).map(|entry| &entry.spec).collect();
    if let Some(position) = NameIndex::new(specs.iter().copied()).resolve(name) {
        selection.names = vec![specs[position].name.clone()];
    }
}
