//! Secrets stay out of every environment block a command could read (docs/configuration.md,
//! "Secrets").
//!
//! A process's environment block stays readable at `/proc/PID/environ` for its whole life,
//! whatever it later unsets, and under Landlock a command can read that file of any process of
//! the same user. So Tackle does not keep a secret there: first thing in `main`, before any
//! thread exists, [`isolate`] moves every variable that names a secret (by default any name
//! containing `KEY`, `SECRET`, `TOKEN` or `PASSWORD`, in any case, plus the configured
//! patterns) into a sealed memfd and re-executes Tackle with the rest of the environment and
//! one variable, `TACKLE_SECRETS_FD`, naming that fd. The new process reads the secrets into
//! this process-wide store, closes the fd and forgets the variable before anything else runs.
//! When there is nothing to strip nothing happens (no re-execution), and a re-executed
//! process never re-executes again.
//!
//! Every consumer reads secrets through this module: provider API keys ([`var`]), the
//! `[env] passthrough` of the user config, and the `${VAR}` expansions of MCP server
//! definitions; commands never get a stored variable unless it is passed through.

use std::ffi::{OsStr, OsString};
use std::sync::OnceLock;

/// The variable that names the fd of the secrets in a re-executed Tackle.
pub const SECRETS_FD_VAR: &str = "TACKLE_SECRETS_FD";

/// A variable whose name contains one of these (in any case) is a secret.
pub const SECRET_NAME_PARTS: &[&str] = &["KEY", "SECRET", "TOKEN", "PASSWORD"];

/// Names that are secrets whatever the parts say (`*` matches any run of characters).
pub const SECRET_NAMES: &[&str] = &["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "TACKLE_*_KEY"];

/// The most bytes of secrets passed to the re-executed process (the kernel limits a whole
/// environment to less).
const MAX_PAYLOAD_BYTES: u64 = 8 * 1024 * 1024;

/// The memfd's name, checked by the receiving side.
const MEMFD_NAME: &str = "tackle-secrets";

static STORE: OnceLock<Vec<(OsString, OsString)>> = OnceLock::new();

/// Whether `name` is a secret by the default rule.
pub fn is_secret_name(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SECRET_NAME_PARTS.iter().any(|part| upper.contains(part))
        || SECRET_NAMES.iter().any(|pattern| crate::wildcard::matches(pattern, name))
}

/// Variables Tackle needs to find its own configuration and programs; a configured pattern
/// never takes them from Tackle's own environment (commands may still lose them).
pub const KEPT_FOR_TACKLE: &[&str] = &["PATH", "HOME", "XDG_CONFIG_HOME", "TACKLE_CONFIG_DIR"];

/// Whether `name` is a secret by the default rule or matched by one of `patterns` (`*` globs):
/// what a command's environment goes without.
pub fn is_removed(name: &OsStr, patterns: &[String]) -> bool {
    let name = name.to_string_lossy();
    is_secret_name(&name) || patterns.iter().any(|pattern| crate::wildcard::matches(pattern, &name))
}

/// Whether [`isolate`] takes the variable `name` out of Tackle's own environment: as
/// [`is_removed`], except that a pattern never takes one of [`KEPT_FOR_TACKLE`].
pub fn strips(name: &OsStr, patterns: &[String]) -> bool {
    let kept = KEPT_FOR_TACKLE.iter().any(|own| name == *own);
    if kept { is_secret_name(&name.to_string_lossy()) } else { is_removed(name, patterns) }
}

/// Every stripped variable this process holds, in the order they were found.
pub fn stored() -> &'static [(OsString, OsString)] {
    STORE.get().map_or(&[], Vec::as_slice)
}

/// Whether `name` was stripped into the store.
pub fn is_stored(name: &OsStr) -> bool {
    stored().iter().any(|(stored, _)| stored == name)
}

/// The value of the variable `name`: from the store when it was stripped, else from the
/// environment. Every reader of a possibly secret variable (an API key) uses this.
pub fn var(name: &str) -> Option<String> {
    match stored().iter().find(|(stored, _)| stored == name) {
        Some((_, value)) => value.to_str().map(str::to_owned),
        None => std::env::var(name).ok(),
    }
}

/// The patterns stripped besides the default rule, from the user config: `[env] remove` and
/// the `api_key_env` of each `[providers.*]`. The workspace's `[env] remove` is not among
/// them: it keeps names from commands only, since a workspace must not change the
/// environment Tackle itself runs with (its proxy, its certificates). An unreadable or
/// malformed file adds nothing here; loading the configuration reports it.
pub fn configured_patterns() -> Vec<String> {
    use toml::Value;
    let user_file = crate::config::user_config_dir().map(|dir| dir.join("config.toml"));
    let Some(user) = user_file.and_then(|file| crate::config::read_table(&file).ok()) else {
        return Vec::new();
    };
    let removed = user.get("env").and_then(|env| env.get("remove")).and_then(Value::as_array);
    let mut patterns: Vec<String> =
        removed.into_iter().flatten().filter_map(Value::as_str).map(str::to_owned).collect();
    let providers = user.get("providers").and_then(Value::as_table).into_iter().flat_map(|table| table.values());
    patterns.extend(providers.filter_map(|p| p.get("api_key_env")?.as_str().map(str::to_owned)));
    patterns
}

/// What [`isolate`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Isolation {
    /// No variable needed stripping; nothing changed.
    Nothing,
    /// This is the re-executed process; it holds this many stripped variables.
    Restored(usize),
    /// The variables could not leave the environment block (the text says why, in one
    /// line); they are in the store as well, so consumers still work.
    Unavailable(String),
}

/// The secrets passed by the parent Tackle could not be taken over.
#[derive(Debug, thiserror::Error)]
#[error("{SECRETS_FD_VAR} does not name the secrets a Tackle process passed on ({0}); unset it and run again")]
pub struct ReceiveError(#[source] TransferError);

/// What is wrong with the memfd [`SECRETS_FD_VAR`] names.
#[derive(Debug, thiserror::Error)]
pub enum TransferError {
    /// The variable's value is not a descriptor number.
    #[error("{0:?} is not a file descriptor number")]
    NotAnFd(OsString),
    /// No such descriptor is open.
    #[error("file descriptor {fd} is not open: {source}")]
    NotOpen {
        /// The descriptor.
        fd: i32,
        /// Why its /proc link cannot be read.
        #[source]
        source: std::io::Error,
    },
    /// The descriptor is open but is something else.
    #[error("file descriptor {fd} is {}, not Tackle's memfd", .target.display())]
    NotOurs {
        /// The descriptor.
        fd: i32,
        /// What its /proc link names.
        target: std::path::PathBuf,
    },
    /// The memfd's seals cannot be read.
    #[error("cannot read its seals: {0}")]
    Seals(#[source] rustix::io::Errno),
    /// The memfd could still be written.
    #[error("the memfd is not sealed against writes")]
    Unsealed,
    /// The memfd cannot be read.
    #[error("cannot read it: {0}")]
    Read(#[source] std::io::Error),
    /// The bytes do not end a `name NUL value NUL` pair.
    #[error("the data is cut short")]
    CutShort,
    /// Not Linux.
    #[error("this platform has no memfd")]
    NoMemfd,
}

/// Moves the stripped variables out of this process's environment block, re-executing Tackle
/// when there are any (see the module docs). Returns only when there was nothing to strip,
/// when this is the re-executed process, or when re-execution was not possible.
///
/// # Safety
///
/// Call it first in `main`, before any other thread exists: it changes the process
/// environment and may replace the process image.
pub unsafe fn isolate(patterns: &[String]) -> Result<Isolation, ReceiveError> {
    if let Some(fd) = std::env::var_os(SECRETS_FD_VAR) {
        // SAFETY: the caller guarantees no other thread exists.
        unsafe { std::env::remove_var(SECRETS_FD_VAR) };
        let pairs = transfer::receive(&fd).map_err(ReceiveError)?;
        let count = pairs.len();
        let _ = STORE.set(pairs);
        return Ok(Isolation::Restored(count));
    }
    let (stripped, kept): (Vec<_>, Vec<_>) = std::env::vars_os().partition(|(name, _)| strips(name, patterns));
    if stripped.is_empty() {
        return Ok(Isolation::Nothing);
    }
    let why = transfer::reexec(&stripped, kept);
    let _ = STORE.set(stripped);
    Ok(Isolation::Unavailable(why))
}

/// The bytes passed between the two processes: `name NUL value NUL`, repeated (neither can
/// hold a NUL).
fn encode(pairs: &[(OsString, OsString)]) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt as _;
    let mut out = Vec::new();
    for (name, value) in pairs {
        out.extend_from_slice(name.as_bytes());
        out.push(0);
        out.extend_from_slice(value.as_bytes());
        out.push(0);
    }
    out
}

fn decode(bytes: &[u8]) -> Result<Vec<(OsString, OsString)>, TransferError> {
    use std::os::unix::ffi::OsStrExt as _;
    let Some(body) = bytes.strip_suffix(&[0]) else {
        return if bytes.is_empty() { Ok(Vec::new()) } else { Err(TransferError::CutShort) };
    };
    let fields: Vec<&[u8]> = body.split(|b| *b == 0).collect();
    if !fields.len().is_multiple_of(2) {
        return Err(TransferError::CutShort);
    }
    Ok(fields
        .chunks(2)
        .map(|pair| (OsStr::from_bytes(pair[0]).to_owned(), OsStr::from_bytes(pair[1]).to_owned()))
        .collect())
}

#[cfg(target_os = "linux")]
mod transfer {
    //! The memfd that carries the secrets across `exec`.

    use std::ffi::{OsStr, OsString};
    use std::io::{Read as _, Seek as _, Write as _};
    use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
    use std::os::unix::process::CommandExt as _;

    use rustix::fs::{MemfdFlags, SealFlags};

    use super::{MAX_PAYLOAD_BYTES, MEMFD_NAME, SECRETS_FD_VAR, TransferError};

    /// Writes the secrets to a sealed memfd that survives `exec` and re-executes this program
    /// with `kept` as its whole environment. Returns only on failure, saying why.
    pub(super) fn reexec(stripped: &[(OsString, OsString)], kept: Vec<(OsString, OsString)>) -> String {
        let memfd = match rustix::fs::memfd_create(MEMFD_NAME, MemfdFlags::ALLOW_SEALING) {
            Ok(fd) => fd,
            Err(err) => return format!("memfd_create failed: {err}"),
        };
        let mut file = std::fs::File::from(memfd);
        if let Err(err) = file.write_all(&super::encode(stripped)) {
            return format!("cannot write the memfd: {err}");
        }
        let seals = SealFlags::SEAL | SealFlags::SHRINK | SealFlags::GROW | SealFlags::WRITE;
        if let Err(err) = rustix::fs::fcntl_add_seals(&file, seals) {
            return format!("cannot seal the memfd: {err}");
        }
        let mut args = std::env::args_os();
        let argv0 = args.next().unwrap_or_else(|| OsString::from("tackle"));
        let args: Vec<OsString> = args.collect();
        // The program's own path keeps the process name (`ps`, `pgrep tackle`); the magic
        // link serves when that path is gone.
        let programs = std::env::current_exe().into_iter().chain([std::path::PathBuf::from("/proc/self/exe")]);
        let mut last = String::new();
        for program in programs {
            let err = std::process::Command::new(&program)
                .arg0(&argv0)
                .args(&args)
                .env_clear()
                .envs(kept.iter().map(|(k, v)| (k, v)))
                .env(SECRETS_FD_VAR, file.as_raw_fd().to_string())
                .exec();
            last = format!("cannot re-execute {}: {err}", program.display());
        }
        last
    }

    /// Takes over the memfd named by `fd_text`, reads the secrets and closes it.
    pub(super) fn receive(fd_text: &OsStr) -> Result<Vec<(OsString, OsString)>, TransferError> {
        let fd: i32 = fd_text
            .to_str()
            .and_then(|text| text.parse().ok())
            .filter(|fd| *fd >= 0)
            .ok_or_else(|| TransferError::NotAnFd(fd_text.to_owned()))?;
        // Only an open memfd of ours is taken over: its /proc link names it.
        let target = std::fs::read_link(format!("/proc/self/fd/{fd}"))
            .map_err(|source| TransferError::NotOpen { fd, source })?;
        if !target.to_string_lossy().starts_with(&format!("/memfd:{MEMFD_NAME}")) {
            return Err(TransferError::NotOurs { fd, target });
        }
        // SAFETY: the descriptor is open (its /proc link exists) and is the memfd the parent
        // left for this process; nothing else in this process owns it, and it is closed
        // when `owned` drops below.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        let seals = rustix::fs::fcntl_get_seals(&owned).map_err(TransferError::Seals)?;
        if !seals.contains(SealFlags::WRITE) {
            return Err(TransferError::Unsealed);
        }
        let mut file = std::fs::File::from(owned);
        file.rewind().map_err(TransferError::Read)?;
        let mut bytes = Vec::new();
        // Reading through `take` consumes the file, so the descriptor is closed right after.
        file.take(MAX_PAYLOAD_BYTES).read_to_end(&mut bytes).map_err(TransferError::Read)?;
        super::decode(&bytes)
    }
}

#[cfg(not(target_os = "linux"))]
mod transfer {
    use std::ffi::{OsStr, OsString};

    pub(super) fn reexec(_: &[(OsString, OsString)], _: Vec<(OsString, OsString)>) -> String {
        "this platform has no memfd".to_owned()
    }

    pub(super) fn receive(_: &OsStr) -> Result<Vec<(OsString, OsString)>, super::TransferError> {
        Err(super::TransferError::NoMemfd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_secret_parts_are_secrets_in_any_case() {
        for name in
            ["OPENAI_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "db_password", "TACKLE_GROQ_KEY", "Monkey"]
        {
            assert!(is_secret_name(name), "{name}");
        }
        for name in ["PATH", "HOME", "TACKLE_CONFIG_DIR", "LANG", "SSH_AUTH_SOCK"] {
            assert!(!is_secret_name(name), "{name}");
        }
        assert!(strips(OsStr::new("DATABASE_URL"), &["DATABASE_*".to_owned()]));
        assert!(!strips(OsStr::new("DATABASE_URL"), &[]));
        // Tackle keeps what it needs to find its configuration and programs; commands may not.
        let everything = ["*".to_owned()];
        assert!(!strips(OsStr::new("PATH"), &everything) && !strips(OsStr::new("TACKLE_CONFIG_DIR"), &everything));
        assert!(is_removed(OsStr::new("PATH"), &everything));
    }

    #[test]
    fn the_payload_round_trips_and_cut_data_is_refused() {
        use std::os::unix::ffi::OsStrExt as _;
        let pairs = vec![
            (OsString::from("A_KEY"), OsString::from("v=1 with spaces")),
            (OsString::from("EMPTY_TOKEN"), OsString::new()),
            (OsString::from("RAW_SECRET"), OsStr::from_bytes(b"\xff\xfe").to_owned()),
        ];
        let bytes = encode(&pairs);
        assert_eq!(decode(&bytes).unwrap(), pairs);
        assert_eq!(decode(&[]).unwrap(), vec![]);
        assert!(decode(&bytes[..bytes.len() - 1]).is_err());
        assert!(decode(b"NAME\0").is_err());
    }

    #[test]
    fn var_falls_back_to_the_environment() {
        assert_eq!(var("TACKLE_SURELY_UNSET_VARIABLE"), None);
        assert!(var("PATH").is_some());
        assert!(stored().is_empty() && !is_stored(OsStr::new("PATH")));
    }
}
