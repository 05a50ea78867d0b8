//! Builds the tool session a command runs in, one concern per function: the configuration
//! layers, the registry (built-ins, later imported MCP tools), the selection, the workspace,
//! the path policy, and the executor with its permission mode.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tackle_core::config::Config;
use tackle_core::permission::{ModePolicy, NonInteractiveApprover, PermissionMode};
use tackle_core::registry::Selection;
use tackle_core::{Executor, ExecutorConfig, PathPolicy, Registry, Session, SessionConfig};

use crate::cli::SessionArgs;
use crate::exit::Failure;

/// The default selection of the `tools` commands: every built-in, opt-in ones included.
pub const TOOLS_DEFAULT: &str = "all";

/// The configuration layers of `workspace`.
pub fn config(workspace: &Path, trust_workspace: bool) -> Result<Config, Failure> {
    Config::load(workspace, trust_workspace).map_err(|err| Failure::usage(err.to_string()))
}

/// Every tool Tackle knows.
pub fn registry() -> Registry {
    tackle_tools::builtin_registry()
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
        eprintln!("tackle: {notice}");
    }
    Ok(Some(Arc::new(built.policy)))
}

/// Installs what the built-in tools read from the configuration (`[tools] durable_writes`)
/// into a new session.
pub fn tool_settings(config: &Config, session: &Session) -> Result<(), Failure> {
    let settings = tackle_tools::fs::FsSettings::from_config(config).map_err(|err| Failure::usage(err.to_string()))?;
    settings.install(session.state());
    Ok(())
}

/// The executor: the permission mode's policy and the non-interactive approver.
pub fn executor(permission_mode: &str) -> Result<Executor, Failure> {
    let mode: PermissionMode =
        permission_mode.parse().map_err(|err: tackle_core::permission::UnknownMode| Failure::usage(err.to_string()))?;
    Ok(Executor::new(ExecutorConfig::default())
        .with_policy(Arc::new(ModePolicy::new(mode)))
        .with_approver(Arc::new(NonInteractiveApprover)))
}

/// A session and executor for a `tools call` or `tools batch`.
pub fn open(args: &SessionArgs, enforce_read_before_edit: bool) -> Result<(Session, Executor), Failure> {
    let executor = executor(&args.permission_mode)?;
    let workspace = workspace(args.workspace.as_ref())?;
    let config = config(&workspace, args.trust_workspace)?;
    let registry = registry();
    let selection = select(&registry, args.selection.tools.as_deref())?;
    let session_config = session_config(&config, &workspace, enforce_read_before_edit)?;
    let session = Session::new(session_config, registry.instantiate(&selection));
    tool_settings(&config, &session)?;
    Ok((session, executor))
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
