//! The read-only restriction of commands that run without asking only because the shell
//! analysis judged them read-only (docs/shell.md, "Read-only commands run restricted").
//!
//! The analysis decides whether to ask; it cannot be certain (a parser that reads a command
//! differently from bash, an option nobody listed). So a command it let through runs under a
//! restriction that makes its mistakes harmless: the `tackle` binary, as a hidden subcommand
//! ([`SUBCOMMAND`], handled first thing in `main`, before anything else starts), applies a
//! Landlock ruleset with no write access but to a private temporary directory and
//! `/dev/null`, the seccomp filter that refuses sockets, clears every capability, and then
//! runs the program. Landlock stacks, so this also holds inside bubblewrap; the binary is
//! bound read-only at its own path there ([`super::bwrap::args`]).
//!
//! The binary registers itself as the helper ([`register_helper`]); a library embedder
//! without such a binary has none, and then [`availability`] says no and read-only commands
//! ask.

use std::ffi::{CString, OsString};
use std::os::unix::ffi::OsStringExt as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use landlock::{
    ABI, Access, AccessFs, AccessNet, Ruleset, RulesetAttr as _, RulesetCreatedAttr as _, RulesetStatus, Scope,
    path_beneath_rules,
};

use super::landlock::{NET_ABI, SCOPE_ABI, kernel_abi};
use super::policy::{SandboxMode, SandboxPolicy};
use super::{caps, seccomp};

/// The hidden subcommand of the `tackle` binary: `tackle __restrict -- PROGRAM ARGS...`.
pub const SUBCOMMAND: &str = "__restrict";

/// The Landlock ABI the restriction needs: 3 handles truncation, so no file can be changed.
const NEEDED_ABI: i32 = 3;

/// The file-system rights handled: every right of [`NEEDED_ABI`], and from [`IOCTL_ABI`] on
/// also `ioctl` on device files, which is granted only on `/dev/null`.
const FS_ABI: ABI = ABI::V3;

/// The Landlock ABI that handles `ioctl` on device files: without it a command could open a
/// terminal for reading and change its settings (`stty -F /dev/pts/0 -echo` on the person's
/// terminal).
const IOCTL_ABI: i32 = 5;

static HELPER: OnceLock<PathBuf> = OnceLock::new();

/// Records `binary` (a `tackle` that handles [`SUBCOMMAND`]) as this process's helper. The
/// first registration wins.
pub fn register_helper(binary: PathBuf) {
    let _ = HELPER.set(binary);
}

/// The registered helper, if any.
pub fn helper() -> Option<&'static Path> {
    HELPER.get().map(PathBuf::as_path)
}

/// The helper to restrict read-only commands with under `policy`, or why they cannot be:
/// no sandbox, a kernel without Landlock ABI 3 or seccomp, no helper, or a helper that
/// commands could replace. Under bubblewrap the binary is bound read-only at its own path
/// (`/tmp` is a private tmpfs there); under Landlock, which leaves `/tmp` writable, a binary
/// there is run from a copy staged in the user's cache directory ([`staged_copy`]).
pub fn availability(policy: &SandboxPolicy) -> Result<PathBuf, Unrestricted> {
    if policy.mode == SandboxMode::None {
        return Err(Unrestricted::NoSandbox);
    }
    let abi = kernel_abi();
    if abi < NEEDED_ABI {
        return Err(Unrestricted::OldKernel { abi });
    }
    if !seccomp::available() {
        return Err(Unrestricted::NoSeccomp);
    }
    let Some(helper) = helper() else {
        return Err(Unrestricted::NoHelper);
    };
    if !helper.is_file() {
        return Err(Unrestricted::HelperMissing(helper.to_owned()));
    }
    let commands_may_write =
        |path: &Path| policy.is_writable(path) || (policy.mode == SandboxMode::Landlock && path.starts_with("/tmp"));
    if !commands_may_write(helper) {
        return Ok(helper.to_owned());
    }
    let writable = |source| Unrestricted::HelperWritable { helper: helper.to_owned(), source };
    if policy.mode != SandboxMode::Landlock {
        return Err(writable(None));
    }
    let staged = staged_copy(helper).map_err(|err| writable(Some(err)))?;
    if commands_may_write(&staged) {
        return Err(writable(None));
    }
    Ok(staged)
}

/// Why read-only commands cannot run restricted ([`availability`]); the text is shown as is
/// (the denial of a command that would run restricted, `tackle doctor`).
#[derive(Debug, thiserror::Error)]
pub enum Unrestricted {
    /// `[sandbox] mode = "none"`.
    #[error("[sandbox] mode is \"none\"")]
    NoSandbox,
    /// The session resolved to no sandbox (none was available).
    #[error("commands run without a sandbox")]
    Unsandboxed,
    /// The kernel's Landlock is too old.
    #[error("the kernel's Landlock ABI is {abi}, and {NEEDED_ABI} is needed")]
    OldKernel {
        /// The kernel's Landlock ABI.
        abi: i32,
    },
    /// No seccomp for this architecture.
    #[error("the kernel has no seccomp filter for this architecture")]
    NoSeccomp,
    /// No helper binary registered.
    #[error("no tackle binary is registered to restrict commands with")]
    NoHelper,
    /// The helper binary is gone.
    #[error("the tackle binary {} is missing", .0.display())]
    HelperMissing(PathBuf),
    /// Commands could replace the helper (and no safe copy could be staged, when `source`).
    #[error(
        "the tackle binary {} is writable by commands{}",
        helper.display(),
        source.as_ref().map(|err| format!(" ({err})")).unwrap_or_default()
    )]
    HelperWritable {
        /// The helper.
        helper: PathBuf,
        /// Why no copy could be staged.
        source: Option<std::io::Error>,
    },
}

/// A copy of `helper` in the user's cache directory (`~/.cache/tackle/helpers`), made once
/// per binary (named by its size and modification time) with a write to a temporary name and
/// a rename, so concurrent sessions never run a half-written copy.
fn staged_copy(helper: &Path) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
    static STAGED: OnceLock<PathBuf> = OnceLock::new();
    if let Some(staged) = STAGED.get() {
        return Ok(staged.clone());
    }
    let dir = dirs::cache_dir()
        .ok_or_else(|| std::io::Error::other("no cache directory to stage a copy in"))?
        .join("tackle/helpers");
    let meta = std::fs::metadata(helper)?;
    let staged = dir.join(format!("tackle-{}-{}.{}", meta.len(), meta.mtime(), meta.mtime_nsec()));
    let current = std::fs::symlink_metadata(&staged).is_ok_and(|m| m.is_file() && m.len() == meta.len());
    if !current {
        std::fs::create_dir_all(&dir)?;
        let partial = dir.join(format!(".partial-{}", std::process::id()));
        std::fs::copy(helper, &partial)?;
        std::fs::set_permissions(&partial, std::fs::Permissions::from_mode(0o755))?;
        std::fs::rename(&partial, &staged)?;
    }
    Ok(STAGED.get_or_init(|| staged).clone())
}

/// Runs `tackle __restrict -- PROGRAM ARGS...` (`args` are those after [`SUBCOMMAND`]):
/// runs the program restricted in a child and waits for it, so its private temporary
/// directory can be removed. Returns the exit status to leave with.
pub fn run(args: Vec<OsString>) -> i32 {
    let mut args = args.into_iter();
    if args.next().as_deref() != Some("--".as_ref()) {
        eprintln!("tackle {SUBCOMMAND}: usage: tackle {SUBCOMMAND} -- PROGRAM [ARGS...]");
        return 2;
    }
    let Some(program) = args.next() else {
        eprintln!("tackle {SUBCOMMAND}: no program given");
        return 2;
    };
    let tmp = match private_tmp() {
        Ok(tmp) => tmp,
        Err(err) => {
            eprintln!("tackle {SUBCOMMAND}: cannot create a private temporary directory: {err}");
            return 126;
        }
    };
    let mut command = std::process::Command::new(&program);
    command.args(args).env("TMPDIR", &tmp);
    if let Err(err) = confine(&mut command, &tmp) {
        let _ = std::fs::remove_dir(&tmp);
        eprintln!("tackle {SUBCOMMAND}: cannot restrict the command: {err}");
        return 126;
    }
    // This process stays unrestricted only to remove the directory afterwards (without
    // following any link the command left in it).
    let status = command.status();
    let _ = std::fs::remove_dir_all(&tmp);
    match status {
        Ok(status) => exit_code(status),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("{}: command not found", program.to_string_lossy());
            127
        }
        Err(err) => {
            eprintln!("{}: {err}", program.to_string_lossy());
            126
        }
    }
}

/// The status a shell reports for `status`: the exit code, or 128 plus the signal after
/// this process has died of the same signal where it can.
fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt as _;
    if let Some(code) = status.code() {
        return code;
    }
    let signal = status.signal().unwrap_or(libc::SIGKILL);
    // SAFETY: resetting a signal to its default action and raising it on this process.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
    128 + signal
}

/// A new directory under `/tmp`, only for this command (its `TMPDIR`).
fn private_tmp() -> std::io::Result<PathBuf> {
    let template = CString::new("/tmp/tackle-ro-XXXXXX").map_err(std::io::Error::other)?;
    let mut bytes = template.into_bytes_with_nul();
    // SAFETY: mkdtemp rewrites the X's of the NUL-terminated template in place.
    let made = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) };
    if made.is_null() {
        return Err(std::io::Error::last_os_error());
    }
    bytes.pop();
    Ok(PathBuf::from(OsString::from_vec(bytes)))
}

/// Arranges for `command` to run under Landlock (reads everywhere, writes only to `tmp` and
/// `/dev/null`, no device `ioctl`, no TCP, no signals or abstract sockets outside), with no
/// capabilities and the seccomp filter that allows no socket family, no change of a file's
/// mode, owner, extended attributes or times, no System V or POSIX message queue, semaphore,
/// shared memory or keyring, and no change of another process's priority, limits or
/// scheduling (none of which Landlock covers, and all of which outlive the command or reach
/// other processes). The ruleset is built here; the child
/// applies it between `fork` and `exec`, and does not start if the kernel did not enforce it.
fn confine(command: &mut std::process::Command, tmp: &Path) -> Result<(), landlock::RulesetError> {
    use std::os::unix::process::CommandExt as _;
    let abi = kernel_abi();
    let fs_abi = if abi >= IOCTL_ABI { ABI::V5 } else { FS_ABI };
    let mut ruleset = Ruleset::default().handle_access(AccessFs::from_all(fs_abi))?;
    if abi >= NET_ABI {
        ruleset = ruleset.handle_access(AccessNet::from_all(ABI::V4))?;
    }
    if abi >= SCOPE_ABI {
        ruleset = ruleset.scope(Scope::Signal).and_then(|r| r.scope(Scope::AbstractUnixSocket))?;
    }
    let writable = [tmp, Path::new("/dev/null")];
    let mut ruleset = Some(
        ruleset
            .create()
            .and_then(|r| r.add_rules(path_beneath_rules(["/"], AccessFs::from_read(fs_abi))))
            .and_then(|r| r.add_rules(path_beneath_rules(writable, AccessFs::from_all(fs_abi))))?,
    );
    let filter = seccomp::restriction();
    let hook = move || -> std::io::Result<()> {
        let ruleset = ruleset.take().ok_or_else(|| std::io::Error::other("the ruleset was used"))?;
        let status = ruleset.restrict_self().map_err(|err| std::io::Error::other(err.to_string()))?;
        if status.ruleset != RulesetStatus::FullyEnforced {
            return Err(std::io::Error::other("the kernel did not enforce the Landlock ruleset"));
        }
        caps::drop_all()?;
        // A descriptor the shell opened for writing earlier (`exec 5>>file`) would let the
        // command write without opening anything: only stdin, stdout, stderr and fd 3 (the
        // shell's report pipe) are passed on.
        // SAFETY: close_range takes integers only; EINVAL or ENOSYS leave the descriptors,
        // which is an error below.
        if unsafe { libc::syscall(libc::SYS_close_range, 4u32, u32::MAX, 0u32) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
        seccomp::install(&filter)
    };
    // SAFETY: this process has one thread (the subcommand runs before anything starts one),
    // so the hook may allocate; it calls prctl, capset and the Landlock system calls.
    unsafe {
        command.pre_exec(hook);
    }
    Ok(())
}
