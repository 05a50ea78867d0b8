//! The process sandbox (docs/shell.md, "The process sandbox"): what a shell command can reach,
//! whatever it says.
//!
//! [`Sandbox::resolve`] turns a [`SandboxPolicy`] into one mechanism, once per session:
//! bubblewrap if it runs here with the real argument list, else Landlock if the kernel has it,
//! else none with a warning (for `mode = "auto"`; an explicit mode that is unavailable is an
//! error). [`Sandbox::command`] then builds the `std::process::Command` for a program run
//! inside it, with the descriptors it must inherit, and [`spawn_session`] starts it in its own
//! process session from a long-lived thread. [`ProcessSessions`] finds and ends what it left
//! behind; [`ProtectedWatch`] notices what it changed that the sandbox could not stop.

mod bwrap;
mod caps;
mod landlock;
mod policy;
pub mod restrict;
mod seccomp;
mod spawn;
mod tree;
mod watch;

use std::ffi::OsStr;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::Command;

pub use self::bwrap::{BWRAP, SECCOMP_FD, args as bwrap_args};
pub use self::landlock::kernel_abi as landlock_abi;
pub use self::policy::{DEFAULT_HIDE, PROTECTED_GIT, PROTECTED_IN_ROOT, SandboxMode, SandboxPolicy};
pub use self::spawn::{pipe, spawn_session};
pub use self::tree::{DEFAULT_KILL_GRACE, ProcStat, ProcessSessions, descendants, send, snapshot, stat};
pub use self::watch::{Change, ChangeKind, PathStat, ProtectedWatch, Snapshot, WATCHED_GIT, WATCHED_IN_ROOT};

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
    /// Writes outside the writable paths are confined, but not all of the rest
    /// ([`Sandbox::gaps`] says what is not).
    Partial,
    /// Nothing.
    None,
}

/// A command ready to start inside the sandbox, with the descriptors it must inherit (give
/// both to [`spawn_session`], adding the caller's own descriptors to `pass_fds`).
#[derive(Debug)]
pub struct SandboxedCommand {
    pub command: Command,
    /// `(source, target)` pairs: bubblewrap's seccomp program on [`SECCOMP_FD`].
    pub pass_fds: Vec<(OwnedFd, i32)>,
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
    /// The `bwrap` program; set exactly when the kind is [`SandboxKind::Bwrap`].
    bwrap: Option<PathBuf>,
}

impl Sandbox {
    /// Picks the mechanism for `policy` (docs/reference/safety.md#process-sandbox): `auto` takes the first of bubblewrap,
    /// Landlock and none that works; an explicit mode that does not work is an error.
    pub fn resolve(policy: SandboxPolicy) -> Result<Sandbox, SandboxError> {
        let landlock_reason = || match landlock::kernel_abi() {
            0 => Err("the kernel does not support Landlock".to_owned()),
            _ => Ok(()),
        };
        // The PATH lookup and the probe run only for the modes that may pick bubblewrap.
        let bwrap_usable = || bwrap::program().and_then(|program| bwrap::probe(&program, &policy).map(|()| program));
        let make = |kind, why_none, bwrap| Sandbox { policy: policy.clone(), kind, why_none, bwrap };
        let with_bwrap = |program| make(SandboxKind::Bwrap, None, Some(program));
        let none = |why_none| make(SandboxKind::None, Some(why_none), None);
        let landlock = || make(SandboxKind::Landlock, None, None);
        match policy.mode {
            SandboxMode::None => Ok(none("[sandbox] mode is \"none\"".to_owned())),
            SandboxMode::Bwrap => match bwrap_usable() {
                Ok(program) => Ok(with_bwrap(program)),
                Err(reason) => Err(SandboxError::Unavailable { mode: "bwrap", reason: reason.to_string() }),
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
        Sandbox { policy, kind: SandboxKind::None, why_none: Some(why.into()), bwrap: None }
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
            SandboxKind::Bwrap if self.gaps().is_empty() => Enforcement::Full,
            SandboxKind::Bwrap | SandboxKind::Landlock => Enforcement::Partial,
            SandboxKind::None => Enforcement::None,
        }
    }

    /// What this sandbox, on this kernel, does not stop of what the policy asks, one short
    /// clause each (empty for bubblewrap on a kernel with seccomp; not meaningful without a
    /// sandbox).
    pub fn gaps(&self) -> Vec<&'static str> {
        let network_off = !self.policy.network;
        let seccomp = seccomp::available();
        let mut gaps = Vec::new();
        match self.kind {
            SandboxKind::Bwrap => {
                if network_off && !seccomp {
                    gaps.push("Unix sockets outside stay reachable");
                }
            }
            SandboxKind::Landlock => {
                let abi = landlock::kernel_abi();
                gaps.push("paths in hide stay readable");
                gaps.push(".git and the settings files stay writable (changes are reported after each command)");
                if abi < landlock::SCOPE_ABI {
                    gaps.push("signals reach processes outside the sandbox");
                }
                if network_off && !seccomp {
                    gaps.push(if abi < landlock::NET_ABI {
                        "the network stays reachable"
                    } else {
                        "UDP and Unix sockets outside stay reachable"
                    });
                }
            }
            SandboxKind::None => {}
        }
        gaps
    }

    /// One line for the person saying what confines commands, such as `commands run under
    /// bubblewrap (network off)`.
    pub fn summary(&self) -> String {
        let name = match self.kind {
            SandboxKind::Bwrap => "bubblewrap",
            SandboxKind::Landlock => "Landlock",
            SandboxKind::None => return "commands run without a sandbox".to_owned(),
        };
        let network = if self.policy.network { "network on" } else { "network off" };
        match self.gaps() {
            gaps if gaps.is_empty() => format!("commands run under {name} ({network})"),
            gaps => format!("commands run under {name}, partial ({network}; {})", gaps.join("; ")),
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
    /// the environment `env`, and the descriptors it must inherit. Stdio is left to the caller.
    pub fn command(
        &self,
        program: &str,
        args: &[&OsStr],
        cwd: &Path,
        env: &CommandEnv,
    ) -> Result<SandboxedCommand, SandboxError> {
        let mut pass_fds = Vec::new();
        let mut command = match self.kind {
            SandboxKind::Bwrap => {
                // `resolve` sets the program with the kind, so this is never `None`.
                let Some(bwrap) = &self.bwrap else {
                    return Err(SandboxError::Prepare("bubblewrap (bwrap) is not installed".to_owned()));
                };
                let seccomp = bwrap::uses_seccomp(&self.policy);
                if seccomp {
                    let program = bwrap::seccomp_pipe().map_err(|err| {
                        SandboxError::Prepare(format!("cannot pass the seccomp filter to bubblewrap: {err}"))
                    })?;
                    pass_fds.push((program, SECCOMP_FD));
                }
                let mut command = Command::new(bwrap);
                command.args(bwrap::args(&self.policy, cwd, seccomp)).arg("--").arg(program).args(args);
                command
            }
            SandboxKind::Landlock => {
                let confinement =
                    landlock::Confinement::build(&self.policy).map_err(|err| SandboxError::Prepare(err.to_string()))?;
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
        Ok(SandboxedCommand { command, pass_fds })
    }

    /// The hint line for a failed sandboxed command whose stderr shows the sandbox stopped it,
    /// if any (docs/shell.md, "Hints").
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
                "Could not resolve host",
                "Name or service not known",
                "unable to resolve host address",
                "Connection refused",
                "Couldn't connect to server",
                "Failed to connect to",
                "/dev/tcp/",
                "/dev/udp/",
                "connect: Permission denied",
                "socket: Permission denied",
                "socket: Operation not permitted",
            ]
            .iter()
            .any(|sign| line.contains(sign))
        };
        // The protected paths that refusals name (a read-only mount; a mount point that cannot
        // be renamed or removed); `.git` first, it says the most.
        let protected = self.policy.protected_paths();
        let named: Vec<&PathBuf> = stderr
            .lines()
            .filter(|line| line.contains("Read-only file system") || line.contains("Device or resource busy"))
            .flat_map(|line| self.paths_in(line))
            .filter_map(|path| protected.iter().find(|p| path.starts_with(p)))
            .collect();
        if named.iter().any(|path| path.file_name() == Some(OsStr::new(".git"))) {
            return Some(format!(
                "[sandbox: .git is read-only for commands, so git cannot write it (add, commit, checkout); {}]",
                user_can("[sandbox] protect_git = false")
            ));
        }
        if !named.is_empty() {
            return Some(
                "[sandbox: Tackle's state and the workspace's settings files (.tackle, tackle.toml, .mcp.json, \
                 .claude) are read-only for commands]"
                    .to_owned(),
            );
        }
        let writes = stderr.contains("Read-only file system")
            || stderr.lines().any(|line| {
                !network_line(line)
                    && line.contains("Permission denied")
                    && self.paths_in(line).any(|path| !self.policy.is_writable(&path))
            });
        let network = !self.policy.network && stderr.lines().any(network_line);
        // Under bubblewrap each shell session and each background job has its own /tmp: a
        // file another one wrote there is not visible (docs/shell.md).
        let private_tmp = self.kind == SandboxKind::Bwrap
            && stderr.lines().any(|line| line.contains("/tmp/") && line.contains("No such file or directory"));
        let what = match (writes, network, private_tmp) {
            (true, _, _) => {
                format!(
                    "writes outside the workspace are blocked; {}",
                    user_can("[sandbox] extra_writable = [\"DIR\"]")
                )
            }
            (false, true, _) => format!(
                "network access is off, so connections (127.0.0.1 too) and name lookups fail; {}",
                user_can("[sandbox] network = true")
            ),
            (false, false, true) => "/tmp is private to this shell session and each background job has its own, so \
                 files another one wrote there are not visible; keep files that must be shared in the workspace"
                .to_owned(),
            (false, false, false) => return None,
        };
        Some(format!("[sandbox: {what}]"))
    }

    /// The paths an error line may name: its words, relative ones taken from the workspace
    /// (`bash: .git/config: Read-only file system`).
    fn paths_in<'a>(&'a self, line: &'a str) -> impl Iterator<Item = PathBuf> + 'a {
        line.split(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | ':' | '`' | ','))
            .filter(|word| !word.is_empty())
            .map(|word| self.policy.workspace.join(word))
    }
}

/// `the user can set SETTING in /home/me/.config/tackle/config.toml`: where a hint's setting
/// lives. A workspace's own `tackle.toml` may not widen the sandbox, so the hint names the
/// user config as Tackle resolved it.
fn user_can(setting: &str) -> String {
    format!("the user can set {setting} in {}", tackle_policy::config::user_config_shown())
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
            bwrap: Some(PathBuf::from("/usr/bin/bwrap")),
        };
        // Each hint names the setting and the user config file that holds it, never tackle.toml.
        let config = tackle_policy::config::user_config_shown();
        let writes = format!(
            "[sandbox: writes outside the workspace are blocked; the user can set [sandbox] extra_writable = \
             [\"DIR\"] in {config}]"
        );
        assert_eq!(sandbox.hint("touch: cannot touch '/etc/x': Read-only file system"), Some(writes.clone()));
        assert_eq!(sandbox.hint("bash: /usr/local/x: Permission denied"), Some(writes));
        assert_eq!(sandbox.hint("bash: /ws/script.sh: Permission denied"), None);
        let network = Some(format!(
            "[sandbox: network access is off, so connections (127.0.0.1 too) and name lookups fail; the user can \
             set [sandbox] network = true in {config}]"
        ));
        assert_eq!(sandbox.hint("curl: (6) Could not resolve host: example.com"), network);
        assert_eq!(sandbox.hint("ping: example.com: Name or service not known"), network);
        // A refused connection to loopback: the sandbox's own network namespace has no listener.
        assert_eq!(
            sandbox.hint("curl: (7) Failed to connect to 127.0.0.1 port 4010 after 0 ms: Couldn't connect to server"),
            network
        );
        assert_eq!(sandbox.hint("psql: error: connection to server failed: Connection refused"), network);
        assert_eq!(sandbox.hint("ping: connect: Network is unreachable"), network);
        assert_eq!(
            sandbox.hint("cat: /tmp/out.txt: No such file or directory").as_deref(),
            Some(
                "[sandbox: /tmp is private to this shell session and each background job has its own, so files \
                 another one wrote there are not visible; keep files that must be shared in the workspace]"
            )
        );
        assert_eq!(sandbox.hint("cat: /ws/out.txt: No such file or directory"), None);
        let git = format!(
            "[sandbox: .git is read-only for commands, so git cannot write it (add, commit, checkout); the user can \
             set [sandbox] protect_git = false in {config}]"
        );
        assert_eq!(
            sandbox.hint("fatal: Unable to create '/ws/.git/index.lock': Read-only file system"),
            Some(git.clone())
        );
        assert_eq!(sandbox.hint("mv: cannot move '.git' to '.git_old': Device or resource busy"), Some(git));
        assert_eq!(
            sandbox.hint("bash: tackle.toml: Read-only file system\nbash: .tackle/x: Read-only file system").as_deref(),
            Some(
                "[sandbox: Tackle's state and the workspace's settings files (.tackle, tackle.toml, .mcp.json, \
                 .claude) are read-only for commands]"
            )
        );
        assert_eq!(sandbox.hint("curl: (6) Could not resolve host: Temporary failure in name resolution"), network);
        assert_eq!(sandbox.hint("error: no such file"), None);
        let refused = "bash: connect: Permission denied\nbash: line 1: /dev/tcp/127.0.0.1/8080: Permission denied";
        assert_eq!(sandbox.hint(refused), network);
        assert_eq!(sandbox.hint("bash: /dev/udp/127.0.0.1/53: Permission denied"), network);
        // With the network on, such a refusal is not the sandbox's.
        let open = Sandbox { policy: SandboxPolicy { network: true, ..sandbox.policy.clone() }, ..sandbox };
        assert_eq!(open.hint(refused), None);
        assert_eq!(open.hint("curl: (7) Failed to connect to 127.0.0.1 port 4010: Connection refused"), None);
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
