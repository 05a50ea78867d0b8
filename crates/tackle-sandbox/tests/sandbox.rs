//! The process sandbox with real processes: bubblewrap (installed by
//! `scripts/install-test-deps.sh`) and Landlock (where the kernel has it) each keep writes
//! inside the workspace, keep Tackle's state and `.git/hooks` read-only, and refuse a loopback
//! connection unless the policy allows the network.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsStr;
use std::io::Read as _;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use pretty_assertions::assert_eq;
use tackle_sandbox::env::{CommandEnv, EnvSettings};
use tackle_sandbox::process::{Sandbox, SandboxKind, SandboxMode, SandboxPolicy, landlock_abi};

struct Fixture {
    workspace: tempfile::TempDir,
    outside: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Fixture {
        let workspace = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(workspace.path().join(".tackle")).unwrap();
        std::fs::create_dir_all(workspace.path().join(".git/hooks")).unwrap();
        // Outside the workspace and outside /tmp (which bubblewrap replaces by a tmpfs).
        let outside = tempfile::tempdir_in("/var/tmp").unwrap();
        Fixture { workspace, outside }
    }

    fn ws(&self) -> PathBuf {
        self.workspace.path().canonicalize().unwrap()
    }

    fn policy(&self, mode: SandboxMode, network: bool) -> SandboxPolicy {
        let mut policy = SandboxPolicy::new(self.ws());
        policy.mode = mode;
        policy.network = network;
        policy
    }

    fn run(&self, sandbox: &Sandbox, script: &str) -> Output {
        let env = CommandEnv::new(&EnvSettings::default(), "sandbox-test", &self.ws());
        let args = [OsStr::new("--noprofile"), OsStr::new("--norc"), OsStr::new("-c"), OsStr::new(script)];
        let mut command = sandbox.command("bash", &args, &self.ws(), &env).unwrap();
        command.stdin(Stdio::null()).output().unwrap()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn require_bwrap(fixture: &Fixture, network: bool) -> Sandbox {
    let sandbox = Sandbox::resolve(fixture.policy(SandboxMode::Bwrap, network))
        .unwrap_or_else(|err| panic!("{err} (scripts/install-test-deps.sh installs bubblewrap)"));
    assert_eq!(sandbox.kind(), SandboxKind::Bwrap);
    sandbox
}

fn landlock(fixture: &Fixture, network: bool) -> Option<Sandbox> {
    if landlock_abi() < 1 {
        eprintln!("skipped: this kernel has no Landlock");
        return None;
    }
    Some(Sandbox::resolve(fixture.policy(SandboxMode::Landlock, network)).unwrap())
}

/// A loopback listener on the host; `connect_script` tries to reach it from bash.
fn listener() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected >&3 && echo connected"))
}

fn check_confines_writes(fixture: &Fixture, sandbox: &Sandbox) {
    let outside = fixture.outside.path().join("escaped");
    let out = fixture.run(sandbox, &format!("echo x > '{}'", outside.display()));
    assert!(!out.status.success(), "write outside succeeded: {}", text(&out.stderr));
    assert!(!outside.exists());

    let out = fixture.run(sandbox, "echo inside > made.txt && mkdir -p sub && echo deep > sub/f && cat made.txt");
    assert_eq!((text(&out.stdout), text(&out.stderr)), ("inside\n".to_owned(), String::new()));
    assert_eq!(std::fs::read_to_string(fixture.ws().join("sub/f")).unwrap(), "deep\n");

    let out = fixture.run(sandbox, "echo x > /tmp/scratch && cat /tmp/scratch");
    assert_eq!(text(&out.stdout), "x\n", "{}", text(&out.stderr));
}

#[test]
fn bubblewrap_confines_writes_to_the_workspace() {
    let fixture = Fixture::new();
    let sandbox = require_bwrap(&fixture, false);
    check_confines_writes(&fixture, &sandbox);

    let out = fixture.run(&sandbox, "echo x > .tackle/forged; echo y > .git/hooks/pre-commit; echo z > .git/index");
    let stderr = text(&out.stderr);
    assert!(stderr.contains(".tackle/forged: Read-only file system"), "{stderr}");
    assert!(stderr.contains(".git/hooks/pre-commit: Read-only file system"), "{stderr}");
    assert!(!fixture.ws().join(".tackle/forged").exists());
    assert!(fixture.ws().join(".git/index").exists(), "the rest of .git stays writable");
    assert_eq!(
        sandbox.hint(&stderr).as_deref(),
        Some("[sandbox: writes outside the workspace are blocked; see [sandbox] in tackle.toml]")
    );
}

#[test]
fn bubblewrap_hides_secrets_and_keeps_no_capabilities() {
    let fixture = Fixture::new();
    std::fs::write(fixture.outside.path().join("id_rsa"), "secret").unwrap();
    let mut policy = fixture.policy(SandboxMode::Bwrap, false);
    policy.hide = vec![fixture.outside.path().to_owned()];
    let sandbox = Sandbox::resolve(policy).unwrap();
    let out =
        fixture.run(&sandbox, &format!("ls -A '{}'; grep CapEff /proc/self/status", fixture.outside.path().display()));
    assert_eq!(text(&out.stdout), "CapEff:\t0000000000000000\n", "{}", text(&out.stderr));
}

#[test]
fn bubblewrap_refuses_loopback_unless_the_network_is_allowed() {
    let fixture = Fixture::new();
    let (listener, script) = listener();
    let out = fixture.run(&require_bwrap(&fixture, false), &script);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("Connection refused"), "{}", text(&out.stderr));

    let out = fixture.run(&require_bwrap(&fixture, true), &script);
    assert_eq!(text(&out.stdout), "connected\n", "{}", text(&out.stderr));
    let (mut stream, _) = listener.accept().unwrap();
    let mut received = String::new();
    stream.read_to_string(&mut received).unwrap();
    assert_eq!(received, "connected\n");
}

#[test]
fn landlock_confines_writes_to_the_workspace() {
    let fixture = Fixture::new();
    let Some(sandbox) = landlock(&fixture, false) else { return };
    check_confines_writes(&fixture, &sandbox);
}

#[test]
fn landlock_refuses_loopback_unless_the_network_is_allowed() {
    let fixture = Fixture::new();
    let Some(off) = landlock(&fixture, false) else { return };
    let (listener, script) = listener();
    let out = fixture.run(&off, &script);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("Permission denied"), "{}", text(&out.stderr));

    let on = landlock(&fixture, true).unwrap();
    let out = fixture.run(&on, &script);
    assert_eq!(text(&out.stdout), "connected\n", "{}", text(&out.stderr));
    drop(listener);
}

#[test]
fn the_seccomp_network_filter_of_old_kernels_refuses_inet_sockets_only() {
    let fixture = Fixture::new();
    if landlock_abi() < 1 {
        return;
    }
    let sandbox = Sandbox::landlock_with_seccomp_network_filter(fixture.policy(SandboxMode::Landlock, false));
    let (_listener, script) = listener();
    let out = fixture.run(&sandbox, &script);
    assert!(text(&out.stderr).contains("Operation not permitted"), "{}", text(&out.stderr));
    // Unix sockets and everything else still work.
    let out = fixture.run(&sandbox, "python3 -c 'import socket; socket.socket(socket.AF_UNIX); print(\"unix ok\")' 2>&1 || echo no-python; echo done");
    assert!(text(&out.stdout).ends_with("done\n"));
    assert!(!text(&out.stdout).contains("Traceback"), "{}", text(&out.stdout));
}

#[test]
fn commands_see_exactly_the_command_environment() {
    let fixture = Fixture::new();
    let sandbox = Sandbox::none(fixture.policy(SandboxMode::None, false), "test");
    let out =
        fixture.run(&sandbox, "echo \"$PAGER $GIT_TERMINAL_PROMPT $TERM $TACKLE_SESSION_ID ${OPENAI_API_KEY-unset}\"");
    assert_eq!(text(&out.stdout), "cat 0 dumb sandbox-test unset\n");
}

#[test]
fn an_unavailable_explicit_mode_is_an_error() {
    let fixture = Fixture::new();
    let mut policy = fixture.policy(SandboxMode::Bwrap, false);
    policy.writable_roots.push(Path::new("/nonexistent/root/for/the/test").to_owned());
    let err = Sandbox::resolve(policy).unwrap_err().to_string();
    assert!(err.starts_with("[sandbox] mode = \"bwrap\" is not available here: bubblewrap failed:"), "{err}");
}
