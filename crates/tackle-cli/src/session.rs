//! Builds the tool session a command runs in: the registry, the selection, the workspace and
//! the executor with its permission mode.

use std::path::PathBuf;
use std::sync::Arc;

use tackle_core::permission::{ModePolicy, NonInteractiveApprover, PermissionMode};
use tackle_core::registry::Selection;
use tackle_core::{Executor, ExecutorConfig, Registry, Session, SessionConfig};

use crate::cli::SessionArgs;
use crate::exit::Failure;

/// The default selection of the `tools` commands: every built-in, opt-in ones included.
pub const TOOLS_DEFAULT: &str = "all";

/// Every tool Tackle knows.
pub fn registry() -> Registry {
    tackle_tools::builtin_registry()
}

/// Applies `--tools` to the registry.
pub fn select(registry: &Registry, tools: Option<&str>) -> Result<Selection, Failure> {
    let selection = registry
        .select(tools.unwrap_or(TOOLS_DEFAULT), TOOLS_DEFAULT)
        .map_err(|err| Failure::usage(err.to_string()))?;
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

/// A session and executor for a `tools call` or `tools batch`.
pub fn open(args: &SessionArgs, enforce_read_before_edit: bool) -> Result<(Session, Executor), Failure> {
    let registry = registry();
    let selection = select(&registry, args.selection.tools.as_deref())?;
    let mode: PermissionMode = args
        .permission_mode
        .parse()
        .map_err(|err: tackle_core::permission::UnknownMode| Failure::usage(err.to_string()))?;
    let mut config = SessionConfig::new(workspace(args.workspace.as_ref())?);
    config.enforce_read_before_edit = enforce_read_before_edit;
    let session = Session::new(config, registry.instantiate(&selection));
    let executor = Executor::new(ExecutorConfig::default())
        .with_policy(Arc::new(ModePolicy::new(mode)))
        .with_approver(Arc::new(NonInteractiveApprover));
    Ok((session, executor))
}
