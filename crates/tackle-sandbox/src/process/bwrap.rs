//! bubblewrap: the argument list of safety.md §6, and the probe that decides whether it works
//! here (`bwrap` with the real arguments, running `true`).
//!
//! One `bwrap` runs per shell session, so the persistent shell lives inside it; background jobs
//! get their own. `--cap-drop ALL` is never left out: Tackle may run as root, and bwrap would
//! otherwise keep every capability inside, `CAP_SYS_ADMIN` included (enough to remount `/`
//! writable).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::policy::SandboxPolicy;

/// The bubblewrap program.
pub const BWRAP: &str = "bwrap";

/// The bubblewrap options for a command started in `cwd` (everything before `--`).
pub fn args(policy: &SandboxPolicy, cwd: &Path) -> Vec<OsString> {
    let mut args: Vec<OsString> = Vec::new();
    let mut push = |parts: &[&std::ffi::OsStr]| args.extend(parts.iter().map(|p| p.to_os_string()));
    push(&["--die-with-parent".as_ref(), "--new-session".as_ref(), "--unshare-all".as_ref()]);
    push(&["--cap-drop".as_ref(), "ALL".as_ref()]);
    if policy.network {
        push(&["--share-net".as_ref()]);
    }
    push(&["--ro-bind".as_ref(), "/".as_ref(), "/".as_ref()]);
    push(&["--dev".as_ref(), "/dev".as_ref()]);
    push(&["--proc".as_ref(), "/proc".as_ref()]);
    push(&["--tmpfs".as_ref(), "/tmp".as_ref()]);
    // After `--tmpfs /tmp`, so a workspace under /tmp stays visible.
    let extra_outside_roots =
        policy.extra_writable.iter().filter(|p| !policy.writable_roots.iter().any(|root| p.starts_with(root)));
    for root in &policy.writable_roots {
        push(&["--bind".as_ref(), root.as_os_str(), root.as_os_str()]);
    }
    for path in extra_outside_roots {
        push(&["--bind-try".as_ref(), path.as_os_str(), path.as_os_str()]);
    }
    for path in policy.protected_paths() {
        push(&["--ro-bind-try".as_ref(), path.as_os_str(), path.as_os_str()]);
    }
    for hidden in &policy.hide {
        if hidden.exists() && !policy.is_writable(hidden) {
            push(&["--tmpfs".as_ref(), hidden.as_os_str()]);
        }
    }
    push(&["--chdir".as_ref(), cwd.as_os_str()]);
    args
}

/// The `bwrap` program on Tackle's own `PATH` (commands may get another `PATH`).
pub fn program() -> Result<PathBuf, String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(BWRAP))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| "bubblewrap (bwrap) is not installed".to_owned())
}

/// Runs `bwrap` with the real arguments and `true`; `Err` says why it cannot be used.
pub fn probe(bwrap: &Path, policy: &SandboxPolicy) -> Result<(), String> {
    let output = Command::new(bwrap)
        .args(args(policy, &policy.workspace))
        .arg("--")
        .arg("true")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    match output {
        Ok(output) if output.status.success() => Ok(()),
        Ok(output) => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let first = stderr.lines().next().unwrap_or_default().trim();
            Err(if first.is_empty() {
                format!("bubblewrap failed ({})", output.status)
            } else {
                format!("bubblewrap failed: {first}")
            })
        }
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Err("bubblewrap (bwrap) is not installed".into()),
        Err(err) => Err(format!("bubblewrap cannot be started: {err}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::path::PathBuf;

    #[test]
    fn the_argument_list_is_the_specified_one() {
        let home = tempfile::tempdir().unwrap();
        let ssh = home.path().join(".ssh");
        std::fs::create_dir(&ssh).unwrap();
        let mut policy = SandboxPolicy::new("/ws");
        policy.hide = vec![ssh.clone(), home.path().join(".aws"), PathBuf::from("/ws/inside")];
        policy.extra_writable = vec![PathBuf::from("/cache"), PathBuf::from("/ws/.git/hooks")];
        let args: Vec<String> =
            args(&policy, Path::new("/ws/sub")).into_iter().map(|a| a.into_string().unwrap()).collect();
        let mut expected: Vec<String> = [
            "--die-with-parent",
            "--new-session",
            "--unshare-all",
            "--cap-drop",
            "ALL",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
            "--bind",
            "/ws",
            "/ws",
            "--bind-try",
            "/cache",
            "/cache",
        ]
        .map(String::from)
        .to_vec();
        for protected in [".tackle", "tackle.toml", ".mcp.json", ".claude", ".git/config"] {
            expected.extend(["--ro-bind-try".to_owned(), format!("/ws/{protected}"), format!("/ws/{protected}")]);
        }
        let ssh = ssh.to_str().unwrap().to_owned();
        expected.extend(["--tmpfs".to_owned(), ssh, "--chdir".to_owned(), "/ws/sub".to_owned()]);
        assert_eq!(args, expected);

        policy.network = true;
        let with_net = super::args(&policy, Path::new("/ws"));
        assert_eq!(with_net[5], "--share-net");
    }
}
