//! Landlock, where bubblewrap is missing (docs/shell.md, "The process sandbox"): reads and
//! execution everywhere, writes only to the writable roots, `/tmp`, `/dev/null` and `/dev/tty`;
//! signals only to processes of the command's own sandbox (ABI 6 and later); and with the
//! network off, TCP bind and connect refused (ABI 4 and later), abstract Unix sockets outside
//! unreachable (ABI 6 and later), and socket creation refused by the seccomp filter
//! ([`super::seccomp`]) on every kernel that has seccomp.
//!
//! The ruleset is built in the parent, before `fork`; the child only calls `restrict_self` and
//! installs the prepared seccomp program between `fork` and `exec`. Landlock cannot hide paths
//! once reads are allowed everywhere, nor deny a write inside a writable root (`.git` and the
//! settings files stay writable; Tackle detects their changes instead), so its enforcement is
//! reported as partial and bubblewrap is preferred.

use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, Ruleset, RulesetAttr as _, RulesetCreated, RulesetCreatedAttr as _, Scope,
    path_beneath_rules,
};

use super::policy::SandboxPolicy;
use super::seccomp;

/// What every command may write under Landlock besides the policy's writable paths.
pub(crate) const ALWAYS_WRITABLE: [&str; 3] = ["/tmp", "/dev/null", "/dev/tty"];

/// The file-system rights Tackle handles (truncation and cross-directory renames included).
const FS_ABI: ABI = ABI::V3;

/// The first Landlock ABI with TCP rules.
pub(crate) const NET_ABI: i32 = 4;

/// The first Landlock ABI with scopes (signals and abstract Unix sockets).
pub(crate) const SCOPE_ABI: i32 = 6;

/// The Landlock ABI the running kernel reports (0: unsupported or disabled).
pub fn kernel_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute pointer, size 0 and the VERSION flag, the call only
    // returns the ABI version (or an error); it touches no memory.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    i32::try_from(version).unwrap_or(0).max(0)
}

/// How a command is confined: a ruleset ready for `restrict_self`, and the seccomp program
/// when the network is off.
/// Why a command cannot be confined with Landlock.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ConfinementError {
    /// The kernel has no Landlock.
    #[error("the kernel does not support Landlock")]
    Unsupported,
    /// The ruleset could not be built.
    #[error("cannot build the Landlock ruleset: {0}")]
    Ruleset(#[source] landlock::RulesetError),
}

pub(crate) struct Confinement {
    ruleset: Option<RulesetCreated>,
    net_filter: Option<Vec<libc::sock_filter>>,
}

impl Confinement {
    /// Builds the ruleset for `policy` (in the parent, before any fork).
    pub(crate) fn build(policy: &SandboxPolicy) -> Result<Confinement, ConfinementError> {
        let abi = kernel_abi();
        if abi < 1 {
            return Err(ConfinementError::Unsupported);
        }
        let mut writable: Vec<PathBuf> = policy.writable_paths().map(PathBuf::from).collect();
        writable.extend(ALWAYS_WRITABLE.map(PathBuf::from));
        let ruleset = (|| -> Result<RulesetCreated, landlock::RulesetError> {
            let mut ruleset = Ruleset::default().handle_access(AccessFs::from_all(FS_ABI))?;
            if !policy.network && abi >= NET_ABI {
                ruleset = ruleset.handle_access(AccessNet::from_all(ABI::V4))?;
            }
            if abi >= SCOPE_ABI {
                ruleset = ruleset.scope(Scope::Signal)?;
                if !policy.network {
                    ruleset = ruleset.scope(Scope::AbstractUnixSocket)?;
                }
            }
            ruleset
                .create()?
                .add_rules(path_beneath_rules(["/"], AccessFs::from_read(FS_ABI)))?
                .add_rules(path_beneath_rules(&writable, AccessFs::from_all(FS_ABI)))
        })()
        .map_err(ConfinementError::Ruleset)?;
        let net_filter = (!policy.network && seccomp::available()).then(|| seccomp::program(&[]));
        Ok(Confinement { ruleset: Some(ruleset), net_filter })
    }

    /// Arranges for `command` to confine itself between `fork` and `exec`.
    pub(crate) fn apply(self, command: &mut std::process::Command) {
        let Confinement { mut ruleset, net_filter } = self;
        let hook = move || -> std::io::Result<()> {
            if let Some(ruleset) = ruleset.take() {
                ruleset.restrict_self().map_err(|err| std::io::Error::other(err.to_string()))?;
            }
            // A root command keeps no capability (bubblewrap drops them itself).
            super::caps::drop_all()?;
            if let Some(filter) = &net_filter {
                seccomp::install(filter)?;
            }
            Ok(())
        };
        // SAFETY: the hook only calls prctl, capset and the Landlock syscalls on objects
        // prepared before the fork; it takes no lock and allocates only on its error path.
        unsafe {
            command.pre_exec(hook);
        }
    }
}
