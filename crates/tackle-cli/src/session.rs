//! Builds the tool session a command runs in, one concern per function: the configuration
//! layers, the registry (built-ins and imported MCP tools), the selection, the workspace,
//! the path policy, the process sandbox and environment of shell tools, and the executor with
//! its permission mode; and ends it.

use std::io::{IsTerminal as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tackle_core::config::consent::{TrustPrompt, TrustRequest};
use tackle_core::config::{Config, LoadOptions};
use tackle_core::permission::{ModePolicy, NonInteractiveApprover, PermissionMode};
use tackle_core::registry::{NameIndex, Selection};
use tackle_core::{Executor, ExecutorConfig, PathPolicy, Registry, Session, SessionConfig};
use tackle_sandbox::env::{CommandEnv, EnvSettings};
use tackle_sandbox::process::{Sandbox, SandboxPolicy};
use tackle_tools::shell::ShellEnvironment;

use tackle_mcp::client::McpHub;
use tackle_mcp::client::config::Candidate;
use tackle_mcp::client::consent::{ConsentPolicy, Prompt};

use crate::cli::SessionArgs;
use crate::exit::Failure;

/// The default selection of the `tools` commands: every built-in, opt-in ones included, and
/// every imported MCP tool.
pub const TOOLS_DEFAULT: &str = "all,mcp";

/// The configuration layers of `workspace`, with the workspace's settings trusted as the person
/// consented (asked on a terminal when `interactive`). Notices about ignored workspace settings
/// and about trust go to stderr, once.
pub fn config(workspace: &Path, trust_workspace: bool, interactive: bool) -> Result<Config, Failure> {
    let prompt: Option<TrustPrompt<'_>> = if interactive { Some(&ask_trust) } else { None };
    let options = LoadOptions { trust_flag: trust_workspace, prompt, store: None };
    let config = Config::load_with(workspace, options).map_err(|err| Failure::usage(err.to_string()))?;
    for notice in config.notices() {
        diagln!("tackle: {notice}");
    }
    Ok(config)
}

/// The terminal prompt for the workspace's settings (a yes is remembered until they change).
fn ask_trust(request: &TrustRequest<'_>) -> bool {
    let why = if request.changed.is_empty() {
        format!("has settings that need your consent: {}", request.wanted.join(", "))
    } else {
        format!("has settings that changed since you trusted them: {}", request.changed.join(", "))
    };
    diag!(
        "tackle: the workspace {} {why}\nTrust its settings (remembered until they change)? [y/N] ",
        request.workspace.display()
    );
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer).is_ok() && matches!(answer.trim(), "y" | "Y" | "yes" | "Yes")
}

/// Every built-in tool.
pub fn registry() -> Registry {
    tackle_tools::builtin_registry()
}

/// Starts the MCP servers the configuration names (mcp.md §2.1: the user's own, and the
/// workspace's with consent) and registers their tools. Notices go to stderr. The person is
/// asked about workspace servers only when `interactive` (stdin and stderr are terminals).
pub async fn import_mcp(
    registry: &mut Registry,
    config: &Config,
    workspace: &Path,
    allow_project_mcp: bool,
    interactive: bool,
) -> McpHub {
    let section = tackle_mcp::client::user_section(config);
    let prompt: Option<Prompt<'_>> = if interactive { Some(&ask_consent) } else { None };
    let (listed_trusted, listed_notices) =
        tackle_mcp::client::consent::listed_trust(config, workspace, allow_project_mcp);
    let consent = ConsentPolicy {
        allow_project_flag: allow_project_mcp,
        workspace_trusted: config.workspace_trusted,
        listed_trusted,
        store: tackle_mcp::client::consent::default_store(),
        prompt,
    };
    let (servers, mut notices) = tackle_mcp::client::servers(config, workspace, &consent);
    notices.splice(0..0, listed_notices);
    let threshold = section.defer_threshold.unwrap_or(tackle_mcp::client::config::DEFAULT_DEFER_THRESHOLD);
    let (hub, started) = McpHub::start(servers, workspace, registry, threshold).await;
    for notice in notices.iter().chain(&started) {
        diagln!("tackle: {notice}");
    }
    hub.register(registry);
    hub
}

/// The terminal prompt for a workspace MCP server (the answer is remembered).
fn ask_consent(candidate: &Candidate) -> bool {
    let what = match (&candidate.raw.command, &candidate.raw.url) {
        (Some(command), _) => std::iter::once(command.as_str())
            .chain(candidate.raw.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        (None, Some(url)) => url.clone(),
        (None, None) => "(nothing to run)".to_owned(),
    };
    diag!(
        "tackle: {} defines the MCP server '{}', which runs: {what}\nStart it (the answer is remembered)? [y/N] ",
        candidate.origin.label(),
        candidate.name
    );
    let mut answer = String::new();
    std::io::stdin().read_line(&mut answer).is_ok() && matches!(answer.trim(), "y" | "Y" | "yes" | "Yes")
}

/// Whether prompts can be shown (stdin and stderr are terminals).
pub fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Ends a session: closes its tools, then its MCP servers.
pub async fn close(session: &Session) {
    tackle_mcp::client::close_session(session).await;
}

/// Between turns: takes up the tool changes MCP servers announced (mcp.md §2.5), keeping
/// to the session's allowlist; each change is told on stderr. True when the tools changed.
pub async fn refresh_mcp(session: &mut Session, tools: Option<&str>) -> bool {
    let Some(hub) = McpHub::of(session) else { return false };
    let changes = hub.refresh().await;
    if changes.is_empty() {
        return false;
    }
    let mut registry = registry();
    hub.register(&mut registry);
    let admitted = registry.select(tools.unwrap_or(TOOLS_DEFAULT), TOOLS_DEFAULT).map(|s| s.names).unwrap_or_default();
    hub.update_session(session, &changes, &|name| admitted.iter().any(|n| n == name));
    for change in &changes {
        diagln!("tackle: {change}");
    }
    true
}

/// Applies `--tools` to the registry.
pub fn select(registry: &Registry, tools: Option<&str>) -> Result<Selection, Failure> {
    select_from(registry, tools, TOOLS_DEFAULT)
}

/// Applies `--tools` to the registry, starting from `default` (`tackle run` uses `default`).
pub fn select_from(registry: &Registry, tools: Option<&str>, default: &str) -> Result<Selection, Failure> {
    let selection =
        registry.select(tools.unwrap_or(default), default).map_err(|err| Failure::usage(err.to_string()))?;
    for warning in &selection.warnings {
        tracing::warn!("{warning}");
    }
    Ok(selection)
}

/// The workspace root: `--workspace` or the current directory, made absolute.
pub fn workspace(dir: Option<&PathBuf>) -> Result<PathBuf, Failure> {
    let dir = match dir {
        Some(dir) => dir.clone(),
        None => std::env::current_dir()
            .map_err(|err| Failure::usage(format!("cannot read the current directory: {err}")))?,
    };
    dir.canonicalize().map_err(|err| {
        Failure::usage(format!(
            "workspace {} is not usable: {err}; pass an existing directory to --workspace",
            dir.display()
        ))
    })
}

/// The path policy file tools resolve paths with: the workspace, plus the roots and openings
/// of `[workspace]` (settings from the workspace's own file that widen access need trust;
/// each ignored one is a one-line notice on stderr).
pub fn path_policy(config: &Config, workspace: &Path) -> Result<Option<Arc<dyn PathPolicy>>, Failure> {
    let built = tackle_sandbox::policy_from_config(config, workspace).map_err(|err| Failure::usage(err.to_string()))?;
    for notice in &built.notices {
        diagln!("tackle: {notice}");
    }
    Ok(Some(Arc::new(built.policy)))
}

/// Installs what the built-in tools read from the configuration (`[tools] durable_writes`,
/// and for the shell tools `[sandbox]`, `[env]` and the `[tools]` limits) into a new session.
pub fn tool_settings(config: &Config, session: &Session) -> Result<(), Failure> {
    let settings = tackle_tools::fs::FsSettings::from_config(config).map_err(|err| Failure::usage(err.to_string()))?;
    settings.install(session.state());
    process_sandbox(config, session)
}

/// The `[tools]` keys the shell tools read.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct ToolsLimits {
    max_output_chars: Option<usize>,
    kill_grace_ms: Option<u64>,
}

/// Resolves the process sandbox (`[sandbox]`, with the writable roots of `[workspace]`) and the
/// command environment (`[env]`) once for the session, when it has a tool that runs processes, and puts them in the session state for
/// the shell tools. Notices about ignored workspace settings and the no-sandbox warning go to
/// stderr, once; an explicitly chosen sandbox that is unavailable is a usage error.
pub fn process_sandbox(config: &Config, session: &Session) -> Result<(), Failure> {
    if !tackle_tools::shell::TOOLS.iter().any(|name| session.tools().resolve(name).is_some()) {
        return Ok(());
    }
    let workspace = &session.info().workspace;
    let usage = |err: tackle_core::config::ConfigError| Failure::usage(err.to_string());
    let (mut policy, mut notices) = SandboxPolicy::from_config(config, workspace).map_err(usage)?;
    // Commands may write where file tools may: the writable roots of `[workspace]` (its
    // notices were shown with the path policy).
    let roots = tackle_sandbox::policy_from_config(config, workspace).map_err(|err| Failure::usage(err.to_string()))?;
    policy.writable_roots =
        roots.policy.roots().iter().filter(|root| root.writable).map(|root| root.path.clone()).collect();
    let env_settings = EnvSettings::from_config(config).map_err(usage)?;
    let sandbox = Sandbox::resolve(policy).map_err(|err| Failure::usage(err.to_string()))?;
    notices.extend(sandbox.warning());
    for notice in notices {
        diagln!("tackle: {notice}");
    }
    let mut env = ShellEnvironment::new(sandbox, CommandEnv::new(&env_settings, session.id(), workspace));
    let limits: ToolsLimits = config.section("tools").map_err(usage)?;
    if let Some(max) = limits.max_output_chars {
        env.max_output_chars = max.clamp(4_000, 128_000);
    }
    if let Some(grace) = limits.kill_grace_ms {
        env.kill_grace = std::time::Duration::from_millis(grace);
    }
    session.state().get_or_insert_with(|| env);
    Ok(())
}

/// Says on stderr which sandbox confines the session's commands (`tackle: commands run under
/// bubblewrap (network off)`), for `tools call` and `mcp serve`: only for a session with a shell
/// tool, and not when Tackle already warned that commands run without a sandbox. A closed
/// stderr is no reason to fail.
pub fn announce_sandbox(session: &Session) {
    let Some(env) = session.state().existing::<ShellEnvironment>() else { return };
    if env.sandbox.warning().is_none() {
        let _ = writeln!(std::io::stderr().lock(), "tackle: {}", env.sandbox.summary());
    }
}

/// The executor: the permission mode's policy and the non-interactive approver.
pub fn executor(permission_mode: &str) -> Result<Executor, Failure> {
    let mode: PermissionMode =
        permission_mode.parse().map_err(|err: tackle_core::permission::UnknownMode| Failure::usage(err.to_string()))?;
    Ok(Executor::new(ExecutorConfig::default())
        .with_policy(Arc::new(ModePolicy::new(mode)))
        .with_approver(Arc::new(NonInteractiveApprover)))
}

/// A session and executor for a `tools call` or `tools batch`, with the MCP servers of the
/// configuration attached (end it with [`close`]).
///
/// `only` is the one tool a one-shot `tools call` will run: when it names a selected tool (by
/// name, alias or normalized name), the session holds just that tool, so calling `glob` does
/// not start the shell's sandbox probe. A name that resolves to nothing keeps the whole
/// selection, so its "not found" message lists every tool.
pub async fn open(
    args: &SessionArgs,
    enforce_read_before_edit: bool,
    only: Option<&str>,
) -> Result<(Session, Executor), Failure> {
    let executor = executor(&args.permission_mode)?;
    let workspace = workspace(args.workspace.as_ref())?;
    let config = config(&workspace, args.trust_workspace, interactive())?;
    let mut registry = registry();
    let hub = import_mcp(&mut registry, &config, &workspace, args.selection.allow_project_mcp, interactive()).await;
    let selection = match select(&registry, args.selection.tools.as_deref()) {
        Ok(selection) => selection,
        Err(failure) => {
            hub.shutdown().await;
            return Err(failure);
        }
    };
    let selection = match only {
        Some(name) => narrowed(&registry, selection, name),
        None => selection,
    };
    let session_config = session_config(&config, &workspace, enforce_read_before_edit)?;
    let session = Session::new(session_config, registry.instantiate(&selection));
    hub.attach(&session);
    tool_settings(&config, &session)?;
    Ok((session, executor))
}

/// `selection` cut down to the tool `name` resolves to, if it resolves.
fn narrowed(registry: &Registry, mut selection: Selection, name: &str) -> Selection {
    let specs: Vec<&tackle_core::ToolSpec> =
        selection.names.iter().filter_map(|selected| registry.get(selected)).map(|entry| &entry.spec).collect();
    if let Some(position) = NameIndex::new(specs.iter().copied()).resolve(name) {
        selection.names = vec![specs[position].name.clone()];
    }
    selection
}

/// How to build a session in `workspace` (each MCP session of `mcp serve` builds its own).
pub fn session_config(
    config: &Config,
    workspace: &Path,
    enforce_read_before_edit: bool,
) -> Result<SessionConfig, Failure> {
    let mut session_config = SessionConfig::new(workspace.to_path_buf());
    session_config.enforce_read_before_edit = enforce_read_before_edit;
    session_config.path_policy = path_policy(config, workspace)?;
    Ok(session_config)
}
