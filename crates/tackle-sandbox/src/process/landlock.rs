//! Landlock, where bubblewrap is missing (safety.md §6): reads and execution everywhere, writes
//! only to the writable roots, `/tmp`, `/dev/null` and `/dev/tty`, TCP bind and connect off when the
//! network is (Landlock ABI 4 and later; older kernels get a seccomp filter that refuses
//! `socket(AF_INET | AF_INET6)`).
//!
//! The ruleset is built in the parent, before `fork`; the child only calls `restrict_self`
//! (and, on old kernels, installs the prepared seccomp program) between `fork` and `exec`.
//! Landlock cannot hide paths once reads are allowed everywhere and does not cover UDP, so its
//! enforcement is reported as partial and bubblewrap is preferred.

use std::os::unix::process::CommandExt as _;
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, Ruleset, RulesetAttr as _, RulesetCreated, RulesetCreatedAttr as _,
    path_beneath_rules,
};

use super::policy::SandboxPolicy;

/// The file-system rights Tackle handles (truncation and cross-directory renames included).
const FS_ABI: ABI = ABI::V3;

/// The first Landlock ABI with TCP rules.
const NET_ABI: i32 = 4;

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

/// How a command is confined: a ruleset ready for `restrict_self`, and a seccomp program when
/// the kernel is too old for Landlock's network rules.
pub(crate) struct Confinement {
    ruleset: Option<RulesetCreated>,
    net_filter: Option<Vec<libc::sock_filter>>,
}

impl Confinement {
    /// Builds the ruleset for `policy` (in the parent, before any fork).
    pub(crate) fn build(policy: &SandboxPolicy, force_seccomp: bool) -> Result<Confinement, String> {
        let abi = kernel_abi();
        if abi < 1 {
            return Err("the kernel does not support Landlock".into());
        }
        let net_by_landlock = !policy.network && abi >= NET_ABI && !force_seccomp;
        let mut writable: Vec<PathBuf> = policy.writable_paths().map(PathBuf::from).collect();
        writable.extend(["/tmp", "/dev/null", "/dev/tty"].map(PathBuf::from));
        let ruleset = (|| -> Result<RulesetCreated, landlock::RulesetError> {
            let mut ruleset = Ruleset::default().handle_access(AccessFs::from_all(FS_ABI))?;
            if net_by_landlock {
                ruleset = ruleset.handle_access(AccessNet::from_all(ABI::V4))?;
            }
            ruleset
                .create()?
                .add_rules(path_beneath_rules(["/"], AccessFs::from_read(FS_ABI)))?
                .add_rules(path_beneath_rules(&writable, AccessFs::from_all(FS_ABI)))
        })()
        .map_err(|err| format!("cannot build the Landlock ruleset: {err}"))?;
        let net_filter = (!policy.network && !net_by_landlock).then(net_filter_program);
        Ok(Confinement { ruleset: Some(ruleset), net_filter })
    }

    /// Whether network access is refused by a seccomp filter rather than by Landlock.
    pub(crate) fn uses_seccomp(&self) -> bool {
        self.net_filter.is_some()
    }

    /// Arranges for `command` to confine itself between `fork` and `exec`.
    pub(crate) fn apply(self, command: &mut std::process::Command) {
        let Confinement { mut ruleset, net_filter } = self;
        let hook = move || -> std::io::Result<()> {
            if let Some(ruleset) = ruleset.take() {
                ruleset.restrict_self().map_err(|err| std::io::Error::other(err.to_string()))?;
            }
            if let Some(filter) = &net_filter {
                install_filter(filter)?;
            }
            Ok(())
        };
        // SAFETY: the hook only calls prctl and the Landlock syscalls on objects prepared
        // before the fork; it takes no lock and allocates only on its error path.
        unsafe {
            command.pre_exec(hook);
        }
    }
}

/// A classic BPF program that answers `EPERM` to `socket(AF_INET | AF_INET6, …)` and lets
/// every other system call through.
fn net_filter_program() -> Vec<libc::sock_filter> {
    const LD_W_ABS: u16 = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    const JEQ_K: u16 = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
    const RET_K: u16 = (libc::BPF_RET | libc::BPF_K) as u16;
    #[cfg(target_arch = "x86_64")]
    const ARCH: u32 = 0xC000_003E; // AUDIT_ARCH_X86_64
    #[cfg(target_arch = "aarch64")]
    const ARCH: u32 = 0xC000_00B7; // AUDIT_ARCH_AARCH64
    const NR: u32 = 0; // offsetof(struct seccomp_data, nr)
    const ARCH_OFFSET: u32 = 4; // offsetof(struct seccomp_data, arch)
    const ARG0_LOW: u32 = 16; // the low 32 bits of args[0] on a little-endian machine
    let op = |code, k, jt, jf| libc::sock_filter { code, jt, jf, k };
    vec![
        op(LD_W_ABS, ARCH_OFFSET, 0, 0),
        op(JEQ_K, ARCH, 0, 6),
        op(LD_W_ABS, NR, 0, 0),
        op(JEQ_K, libc::SYS_socket as u32, 0, 4),
        op(LD_W_ABS, ARG0_LOW, 0, 0),
        op(JEQ_K, libc::AF_INET as u32, 1, 0),
        op(JEQ_K, libc::AF_INET6 as u32, 0, 1),
        op(RET_K, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32, 0, 0),
        op(RET_K, libc::SECCOMP_RET_ALLOW, 0, 0),
    ]
}

/// Installs a seccomp filter on the calling thread (no-new-privileges is set first).
fn install_filter(filter: &[libc::sock_filter]) -> std::io::Result<()> {
    let program = libc::sock_fprog {
        len: u16::try_from(filter.len()).map_err(|_| std::io::Error::other("seccomp program too long"))?,
        filter: filter.as_ptr().cast_mut(),
    };
    // SAFETY: prctl with these options reads the program through the pointer, which stays
    // valid for the call.
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &raw const program) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}
