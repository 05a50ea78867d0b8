//! The process sandbox (safety.md §6): what a shell command can reach, whatever it says.
//!
//! [`Sandbox::resolve`] turns a [`SandboxPolicy`] into one mechanism, once per session:
//! bubblewrap if it runs here with the real argument list, else Landlock if the kernel has it,
//! else none with a warning (for `mode = "auto"`; an explicit mode that is unavailable is an
//! error). [`Sandbox::command`] then builds the `std::process::Command` for a program run
//! inside it, and [`spawn_session`] starts it in its own process session from a long-lived
//! thread. [`ProcessSessions`] finds and ends what it left behind.

mod bwrap;
mod landlock;
mod policy;
mod spawn;
mod tree;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

pub use self::bwrap::{BWRAP, args as bwrap_args};
pub use self::landlock::kernel_abi as landlock_abi;
pub use self::policy::{DEFAULT_HIDE, PROTECTED_GIT, PROTECTED_IN_ROOT, SandboxMode, SandboxPolicy};
pub use self::spawn::{pipe, spawn_session};
pub use self::tree::{DEFAULT_KILL_GRACE, ProcStat, ProcessSessions, descendants, send, snapshot, stat};

use crate::env::CommandEnv;

/// The mechanism confining commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxKind {
    Bwrap,
    Landlock,
    None,
}

impl SandboxKind {
    /// The name used in `tackle.toml` and messages.
    pub fn name(self) -> &'static str {
        match self {
            SandboxKind::Bwrap => "bwrap",
            SandboxKind::Landlock => "landlock",
            SandboxKind::None => "none",
        }
    }
}

/// How completely the sandbox enforces the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforcement {
    /// Everything in the policy.
    Full,
    /// Writes are confined, but hidden paths stay readable and UDP is not covered (Landlock).
    Partial,
    /// Nothing.
    None,
}

/// A sandbox that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    /// An explicitly chosen mode is unavailable (an error at startup).
    #[error("[sandbox] mode = \"{mode}\" is not available here: {reason}. Install it, or choose another mode.")]
    Unavailable { mode: &'static str, reason: String },
    /// The sandbox could not be prepared for a command.
    #[error("cannot prepare the sandbox: {0}")]
    Prepare(String),
}

/// The resolved sandbox of a session.
#[derive(Debug, Clone)]
pub struct Sandbox {
    policy: SandboxPolicy,
    kind: SandboxKind,
    /// Why there is no sandbox (for the warning), when there is none.
    why_none: Option<String>,
    /// Test hook: refuse the network with seccomp even where Landlock could.
    force_seccomp: bool,
    /// The `bwrap` program; set exactly when the kind is [`SandboxKind::Bwrap`].
    bwrap: Option<PathBuf>,
}

impl Sandbox {
    /// Picks the mechanism for `policy` (safety.md §6): `auto` takes the first of bubblewrap,
    /// Landlock and none that works; an explicit mode that does not work is an error.
    pub fn resolve(policy: SandboxPolicy) -> Result<Sandbox, SandboxError> {
        let landlock_reason = || match landlock::kernel_abi() {
            0 => Err("the kernel does not support Landlock".to_owned()),
            _ => Ok(()),
        };
        // The PATH lookup and the probe run only for the modes that may pick bubblewrap.
        let bwrap_usable = || bwrap::program().and_then(|program| bwrap::probe(&program, &policy).map(|()| program));
        let make =
            |kind, why_none, bwrap| Sandbox { policy: policy.clone(), kind, why_none, force_seccomp: false, bwrap };
        let with_bwrap = |program| make(SandboxKind::Bwrap, None, Some(program));
        let none = |why_none| make(SandboxKind::None, Some(why_none), None);
        let landlock = || make(SandboxKind::Landlock, None, None);
        match policy.mode {
            SandboxMode::None => Ok(none("[sandbox] mode is \"none\"".to_owned())),
            SandboxMode::Bwrap => match bwrap_usable() {
                Ok(program) => Ok(with_bwrap(program)),
                Err(reason) => Err(SandboxError::Unavailable { mode: "bwrap", reason }),
            },
            SandboxMode::Landlock => match landlock_reason() {
                Ok(()) => Ok(landlock()),
                Err(reason) => Err(SandboxError::Unavailable { mode: "landlock", reason }),
            },
            // Landlock is probed only once bubblewrap has failed.
            SandboxMode::Auto => match bwrap_usable() {
                Ok(program) => Ok(with_bwrap(program)),
                Err(bwrap) => match landlock_reason() {
                    Ok(()) => Ok(landlock()),
                    Err(landlock) => Ok(none(format!("{bwrap}, and {landlock}"))),
                },
            },
        }
    }

    /// No sandbox, for the stated reason.
    pub fn none(policy: SandboxPolicy, why: impl Into<String>) -> Sandbox {
        Sandbox { policy, kind: SandboxKind::None, why_none: Some(why.into()), force_seccomp: false, bwrap: None }
    }

    /// Landlock with the network refused by the seccomp filter of pre-ABI-4 kernels, whatever
    /// this kernel supports (to test that path on a new kernel).
    pub fn landlock_with_seccomp_network_filter(policy: SandboxPolicy) -> Sandbox {
        Sandbox { policy, kind: SandboxKind::Landlock, why_none: None, force_seccomp: true, bwrap: None }
    }

    /// The mechanism.
    pub fn kind(&self) -> SandboxKind {
        self.kind
    }

    /// The policy it enforces.
    pub fn policy(&self) -> &SandboxPolicy {
        &self.policy
    }

    /// How completely it enforces the policy.
    pub fn enforcement(&self) -> Enforcement {
        match self.kind {
            SandboxKind::Bwrap => Enforcement::Full,
            SandboxKind::Landlock => Enforcement::Partial,
            SandboxKind::None => Enforcement::None,
        }
    }

    /// The one-line warning for the person when commands run unconfined (shown once per
    /// session).
    pub fn warning(&self) -> Option<String> {
        self.why_none.as_ref().map(|why| {
            format!(
                "Commands run without a sandbox: {why}. Writes outside the workspace and network access are not \
                 blocked."
            )
        })
    }

    /// The command that runs `program` with `args` inside the sandbox, in `cwd`, with exactly
    /// the environment `env`. Stdio is left to the caller.
    pub fn command(
        &self,
        program: &str,
        args: &[&OsStr],
        cwd: &Path,
        env: &CommandEnv,
    ) -> Result<Command, SandboxError> {
        let mut command = match self.kind {
            SandboxKind::Bwrap => {
                // `resolve` sets the program with the kind, so this is never `None`.
                let Some(bwrap) = &self.bwrap else {
                    return Err(SandboxError::Prepare("bubblewrap (bwrap) is not installed".to_owned()));
                };
                let mut command = Command::new(bwrap);
                command.args(bwrap::args(&self.policy, cwd)).arg("--").arg(program).args(args);
                command
            }
            SandboxKind::Landlock => {
                let confinement =
                    landlock::Confinement::build(&self.policy, self.force_seccomp).map_err(SandboxError::Prepare)?;
                tracing::debug!(seccomp = confinement.uses_seccomp(), "landlock confinement prepared");
                let mut command = Command::new(program);
                command.args(args);
                confinement.apply(&mut command);
                command
            }
            SandboxKind::None => {
                let mut command = Command::new(program);
                command.args(args);
                command
            }
        };
        command.current_dir(cwd);
        env.apply(&mut command);
        Ok(command)
    }

    /// The hint line for a failed sandboxed command whose stderr shows the sandbox stopped it
    /// (safety.md §6), if any.
    pub fn hint(&self, stderr: &str) -> Option<String> {
        if self.kind == SandboxKind::None {
            return None;
        }
        // A refused connection (`exec 3<>/dev/tcp/HOST/PORT` under Landlock says `connect:
        // Permission denied` and names a path under /dev) is about the network, never a write.
        let network_line = |line: &str| {
            [
                "Network is unreachable",
                "Temporary failure in name resolution",
                "/dev/tcp/",
                "/dev/udp/",
                "connect: Permission denied",
                "socket: Permission denied",
            ]
            .iter()
            .any(|sign| line.contains(sign))
        };
        let writes = stderr.contains("Read-only file system")
            || stderr
                .lines()
                .any(|line| !network_line(line) && line.contains("Permission denied") && self.names_outside_path(line));
        let network = !self.policy.network && stderr.lines().any(network_line);
        let what = match (writes, network) {
            (true, _) => "writes outside the workspace are blocked",
            (false, true) => "network access is off",
            (false, false) => return None,
        };
        Some(format!("[sandbox: {what}; see [sandbox] in tackle.toml]"))
    }

    /// Whether an error line names an absolute path outside the writable paths.
    fn names_outside_path(&self, line: &str) -> bool {
        line.split(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | ':' | '`' | ','))
            .filter(|word| word.starts_with('/'))
            .any(|word| !self.policy.is_writable(Path::new(word)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn hints_name_what_the_sandbox_blocked() {
        let sandbox = Sandbox {
            policy: SandboxPolicy::new("/ws"),
            kind: SandboxKind::Bwrap,
            why_none: None,
            force_seccomp: false,
            bwrap: Some(PathBuf::from("/usr/bin/bwrap")),
        };
        assert_eq!(
            sandbox.hint("touch: cannot touch '/etc/x': Read-only file system").as_deref(),
            Some("[sandbox: writes outside the workspace are blocked; see [sandbox] in tackle.toml]")
        );
        assert_eq!(
            sandbox.hint("bash: /usr/local/x: Permission denied").as_deref(),
            Some("[sandbox: writes outside the workspace are blocked; see [sandbox] in tackle.toml]")
        );
        assert_eq!(sandbox.hint("bash: /ws/script.sh: Permission denied"), None);
        assert_eq!(
            sandbox.hint("curl: (6) Could not resolve host: Temporary failure in name resolution").as_deref(),
            Some("[sandbox: network access is off; see [sandbox] in tackle.toml]")
        );
        assert_eq!(sandbox.hint("error: no such file"), None);
        let refused = "bash: connect: Permission denied\nbash: line 1: /dev/tcp/127.0.0.1/8080: Permission denied";
        assert_eq!(
            sandbox.hint(refused).as_deref(),
            Some("[sandbox: network access is off; see [sandbox] in tackle.toml]")
        );
        assert_eq!(
            sandbox.hint("bash: /dev/udp/127.0.0.1/53: Permission denied").as_deref(),
            Some("[sandbox: network access is off; see [sandbox] in tackle.toml]")
        );
        // With the network on, such a refusal is not the sandbox's.
        let open = Sandbox { policy: SandboxPolicy { network: true, ..sandbox.policy.clone() }, ..sandbox.clone() };
        assert_eq!(open.hint(refused), None);
        let none = Sandbox::none(SandboxPolicy::new("/ws"), "test");
        assert_eq!(none.hint("Read-only file system"), None);
        assert_eq!(
            none.warning().as_deref(),
            Some(
                "Commands run without a sandbox: test. Writes outside the workspace and network access are not \
                 blocked."
            )
        );
    }
}
