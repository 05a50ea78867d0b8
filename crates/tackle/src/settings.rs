//! What the configuration says about the built-in tools, read once when a session is built and
//! put into each new session's state before the session exists (so no tool ever runs with
//! settings patched in afterwards, or with silent defaults because someone forgot them).
//!
//! Each section is read by its owner: `[workspace]` by `tackle_sandbox::policy_from_config`
//! (the path policy), `[sandbox]` by `SandboxPolicy::from_config`, `[env]` by
//! `EnvSettings::from_config`, the file tools' `[tools]` keys by `FsSettings`. This module only
//! combines them.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tackle_core::{PathPolicy, SessionState};
use tackle_policy::config::Config;
use tackle_policy::tools_config::ToolsConfig;
use tackle_sandbox::env::{CommandEnv, EnvSettings};
use tackle_sandbox::process::{Sandbox, SandboxError, SandboxPolicy, restrict};
use tackle_tools::fs::FsSettings;
use tackle_tools::shell::{ShellEnvironment, ShellSetup};

use crate::error::BuildError;
use crate::notice::Notice;

/// The settings of the built-in tools for every session of one template.
#[derive(Clone)]
pub(crate) struct ToolSettings {
    /// The path policy file tools resolve paths with.
    pub(crate) path_policy: Arc<dyn PathPolicy>,
    fs: FsSettings,
    /// Present when the session has a tool that runs processes.
    shell: Option<Arc<ShellSettings>>,
    /// Whether commands judged read-only can run restricted (checked once, when the
    /// settings are read): see [`Self::restrict_read_only`].
    restrict_read_only: bool,
}

/// What the shell tools run commands in, apart from the per-session environment. The
/// sandbox is resolved (bubblewrap probed) when the first command of any of the template's
/// sessions runs, or when someone asks for it ([`ToolSettings::sandbox`]), not before:
/// building a session never probes.
struct ShellSettings {
    policy: SandboxPolicy,
    sandbox: OnceLock<Result<Sandbox, SandboxError>>,
    notice: Notice,
    env: EnvSettings,
    max_output_chars: Option<usize>,
    kill_grace: Option<Duration>,
}

impl ToolSettings {
    /// Reads the settings of `workspace`'s tools. Notices about ignored workspace settings and
    /// the no-sandbox warning go to `notice`, once; an explicitly chosen sandbox that is
    /// unavailable is an error.
    pub(crate) fn from_config(
        config: &Config,
        workspace: &Path,
        runs_processes: bool,
        enforce_read_before_edit: bool,
        notice: &Notice,
    ) -> Result<ToolSettings, BuildError> {
        let built = tackle_sandbox::policy_from_config(config, workspace)?;
        for line in &built.notices {
            notice.say(line);
        }
        let mut fs = FsSettings::from_config(config)?;
        fs.enforce_read_before_edit = enforce_read_before_edit;
        let shell = if runs_processes {
            let writable_roots: Vec<PathBuf> =
                built.policy.roots().iter().filter(|root| root.writable).map(|root| root.path.clone()).collect();
            Some(Arc::new(ShellSettings::from_config(config, workspace, writable_roots, notice)?))
        } else {
            None
        };
        // Commands judged read-only run restricted: with no sandbox, no Landlock or no
        // `tackle` binary to restrict them with, they ask instead (docs/shell.md).
        let restrict_read_only = shell.as_ref().is_some_and(|shell| restrict::availability(&shell.policy).is_ok());
        Ok(ToolSettings { path_policy: Arc::new(built.policy), fs, shell, restrict_read_only })
    }

    /// Whether a command judged read-only may run without asking, under the read-only
    /// restriction (the permission policy's `restrict_read_only`).
    pub(crate) fn restrict_read_only(&self) -> bool {
        self.restrict_read_only
    }

    /// A fresh state for session `session_id`, holding the tools' settings (the shell's as a
    /// setup its first command runs).
    pub(crate) fn state_for(&self, session_id: &str, workspace: &Path) -> SessionState {
        let state = SessionState::default();
        state.insert(self.fs);
        if let Some(shell) = &self.shell {
            let (shell, session_id, workspace) = (Arc::clone(shell), session_id.to_owned(), workspace.to_owned());
            state.insert(ShellSetup::new(move || shell.environment(&session_id, &workspace).map_err(Into::into)));
        }
        state
    }

    /// The process sandbox in force, when the session runs processes (resolved now if no
    /// session was made yet).
    pub(crate) fn sandbox(&self) -> Option<Result<&Sandbox, BuildError>> {
        self.shell.as_ref().map(|shell| shell.sandbox())
    }
}

impl ShellSettings {
    fn from_config(
        config: &Config,
        workspace: &Path,
        writable_roots: Vec<PathBuf>,
        notice: &Notice,
    ) -> Result<ShellSettings, BuildError> {
        let (mut policy, notices) = SandboxPolicy::from_config(config, workspace)?;
        // Commands may write where file tools may: the writable roots of `[workspace]`.
        policy.writable_roots = writable_roots;
        let env = EnvSettings::from_config(config)?;
        for line in &notices {
            notice.say(line);
        }
        let tools = ToolsConfig::from_config(config)?;
        Ok(ShellSettings {
            policy,
            sandbox: OnceLock::new(),
            notice: notice.clone(),
            env,
            max_output_chars: tools.max_output_chars.map(|_| tools.budget().max_chars()),
            kill_grace: tools.kill_grace(),
        })
    }

    /// The sandbox, resolved on first use; its warning (no sandbox here) is told once.
    fn sandbox(&self) -> Result<&Sandbox, BuildError> {
        let resolved = self.sandbox.get_or_init(|| {
            let sandbox = Sandbox::resolve(self.policy.clone())?;
            if let Some(warning) = sandbox.warning() {
                self.notice.say(&warning);
            }
            Ok(sandbox)
        });
        resolved.as_ref().map_err(|err| BuildError::Sandbox(err.clone()))
    }

    fn environment(&self, session_id: &str, workspace: &Path) -> Result<ShellEnvironment, BuildError> {
        let sandbox = self.sandbox()?.clone();
        let mut env = ShellEnvironment::new(sandbox, CommandEnv::new(&self.env, session_id, workspace));
        if let Some(max) = self.max_output_chars {
            env.max_output_chars = max;
        }
        if let Some(grace) = self.kill_grace {
            env.kill_grace = grace;
        }
        Ok(env)
    }
}
