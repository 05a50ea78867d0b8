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
use tackle_sandbox::process::{Sandbox, SandboxKind, SandboxMode, SandboxPolicy, landlock_abi, spawn_session};

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

    /// Runs `bash -c script` in the sandbox the way the shell tools start it.
    fn run(&self, sandbox: &Sandbox, script: &str) -> Output {
        let env = CommandEnv::new(&EnvSettings::default(), "sandbox-test", &self.ws());
        let args = [OsStr::new("--noprofile"), OsStr::new("--norc"), OsStr::new("-c"), OsStr::new(script)];
        let mut sandboxed = sandbox.command("bash", &args, &self.ws(), &env).unwrap();
        sandboxed.command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            let child = spawn_session(sandboxed.command, sandboxed.pass_fds).await.unwrap();
            child.wait_with_output().await.unwrap()
        })
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
    assert!(stderr.contains(".git/index: Read-only file system"), "{stderr}");
    assert!(!fixture.ws().join(".tackle/forged").exists());
    assert!(!fixture.ws().join(".git/index").exists());
    assert!(sandbox.hint(&stderr).unwrap().starts_with("[sandbox: .git is read-only for commands"), "{stderr}");
}

/// Runs each attack of `attacks` (name, script) in its own subshell and returns the names of
/// those that succeeded.
fn escaped(fixture: &Fixture, sandbox: &Sandbox, attacks: &[(&str, &str)]) -> Vec<String> {
    let script: String =
        attacks.iter().map(|(name, attack)| format!("( {attack} ) 2>/dev/null && echo {name}\n")).collect();
    let out = fixture.run(sandbox, &script);
    text(&out.stdout).lines().map(str::to_owned).collect()
}

/// The attacks of the hardening run on `.git` and the workspace's settings: renaming `.git`
/// away and making a new one, pointing `commondir` elsewhere, a new hook or `core.fsmonitor`.
const GIT_ATTACKS: &[(&str, &str)] = &[
    ("rename_git", "mv .git .git_old && mkdir .git && cp -a .git_old/HEAD .git/"),
    ("commondir", "echo ../.cache/g > .git/commondir"),
    ("fsmonitor", "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config"),
    ("hook", "echo 'touch /tmp/pwned' > .git/hooks/pre-commit"),
    ("remove_git", "rm -rf .git && test ! -e .git"),
];

const SETTINGS_ATTACKS: &[(&str, &str)] = &[
    ("append_toml", "echo '[sandbox]' >> tackle.toml"),
    ("rename_toml", "mv tackle.toml old.toml"),
    ("replace_mcp", "echo '{}' > new.json && mv new.json .mcp.json"),
    ("rename_claude", "mv .claude .claude_old"),
    ("claude_settings", "echo '{}' > .claude/settings.json"),
    ("tackle_state", "echo x > .tackle/state"),
];

/// A workspace with a repository, `tackle.toml`, `.mcp.json` and `.claude/settings.json`.
fn with_settings(fixture: &Fixture) {
    let ws = fixture.ws();
    std::fs::write(ws.join(".git/config"), "[core]\n").unwrap();
    std::fs::write(ws.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(ws.join("tackle.toml"), "").unwrap();
    std::fs::write(ws.join(".mcp.json"), "{}").unwrap();
    std::fs::create_dir_all(ws.join(".claude")).unwrap();
    std::fs::write(ws.join(".claude/settings.json"), "{}").unwrap();
}

#[test]
fn bubblewrap_keeps_git_and_the_settings_read_only() {
    let fixture = Fixture::new();
    with_settings(&fixture);
    let sandbox = require_bwrap(&fixture, false);
    assert_eq!(escaped(&fixture, &sandbox, GIT_ATTACKS), Vec::<String>::new());
    assert_eq!(escaped(&fixture, &sandbox, SETTINGS_ATTACKS), Vec::<String>::new());
    let ws = fixture.ws();
    assert_eq!(std::fs::read_to_string(ws.join(".git/config")).unwrap(), "[core]\n");
    assert!(!ws.join(".git/commondir").exists() && !ws.join(".git_old").exists());
    assert_eq!(std::fs::read_to_string(ws.join("tackle.toml")).unwrap(), "");
    assert_eq!(escaped(&fixture, &sandbox, &[("elsewhere", "echo ok > notes.txt")]), ["elsewhere"]);

    // Without a sandbox every attack gets through: the corpus can fail.
    let none = Sandbox::none(fixture.policy(SandboxMode::None, false), "test");
    assert_eq!(escaped(&fixture, &none, &GIT_ATTACKS[1..4]), ["commondir", "fsmonitor", "hook"]);
}

#[test]
fn bubblewrap_protects_a_worktrees_git_file_and_protect_git_false_opens_git() {
    let fixture = Fixture::new();
    let ws = fixture.ws();
    std::fs::remove_dir_all(ws.join(".git")).unwrap();
    std::fs::write(ws.join(".git"), "gitdir: /elsewhere/.git/worktrees/w\n").unwrap();
    let sandbox = require_bwrap(&fixture, false);
    let attacks = [("point_elsewhere", "echo 'gitdir: ../evil' > .git"), ("rename", "mv .git .git_old")];
    assert_eq!(escaped(&fixture, &sandbox, &attacks), Vec::<String>::new());
    assert_eq!(std::fs::read_to_string(ws.join(".git")).unwrap(), "gitdir: /elsewhere/.git/worktrees/w\n");

    std::fs::remove_file(ws.join(".git")).unwrap();
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    let mut policy = fixture.policy(SandboxMode::Bwrap, false);
    policy.protect_git = false;
    let open = Sandbox::resolve(policy).unwrap();
    assert_eq!(escaped(&fixture, &open, &[("commondir", "echo x > .git/commondir")]), ["commondir"]);
}

#[test]
fn protected_files_that_do_not_exist_yet_cannot_be_created_inside_an_existing_protected_directory() {
    // A missing `tackle.toml` has no mount point to cover (Tackle notices a new one after the
    // command instead, see the shell tools' tests); inside a protected directory nothing new
    // can appear.
    let fixture = Fixture::new();
    std::fs::create_dir_all(fixture.ws().join(".claude")).unwrap();
    let sandbox = require_bwrap(&fixture, false);
    let attacks = [("claude_settings", "echo '{}' > .claude/settings.json"), ("git_config", "echo x > .git/config")];
    assert_eq!(escaped(&fixture, &sandbox, &attacks), Vec::<String>::new());
    assert!(!fixture.ws().join(".claude/settings.json").exists());
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
    // The seccomp filter refuses the socket itself.
    assert!(text(&out.stderr).contains("socket: Operation not permitted"), "{}", text(&out.stderr));
    assert_eq!(
        off.hint(&text(&out.stderr)),
        Some(format!(
            "[sandbox: network access is off, so connections (127.0.0.1 too) and name lookups fail; the user can \
             set [sandbox] network = true in {}]",
            tackle_policy::config::user_config_shown()
        ))
    );

    let on = landlock(&fixture, true).unwrap();
    let out = fixture.run(&on, &script);
    assert_eq!(text(&out.stdout), "connected\n", "{}", text(&out.stderr));
    drop(listener);
}

/// The Python interpreter (the `python3` on `PATH` may be a shim that does not run in a sandbox).
fn python() -> String {
    let out = std::process::Command::new("python3").args(["-c", "import sys; print(sys.executable)"]).output();
    let out = out.expect("python3 is needed by this test");
    text(&out.stdout).trim().to_owned()
}

/// Listeners on the host: a Unix socket file outside the workspace (under /var/tmp, like the
/// attack's) and an abstract Unix socket.
struct UnixTargets {
    _file: std::os::unix::net::UnixListener,
    _abstract: std::os::unix::net::UnixListener,
    file_path: PathBuf,
    abstract_name: String,
}

impl UnixTargets {
    fn new(fixture: &Fixture) -> UnixTargets {
        use std::os::linux::net::SocketAddrExt as _;
        let file_path = fixture.outside.path().join("agent.sock");
        let file = std::os::unix::net::UnixListener::bind(&file_path).unwrap();
        let abstract_name = format!("tackle-test-{}-{}", std::process::id(), rand_suffix());
        let addr = std::os::unix::net::SocketAddr::from_abstract_name(abstract_name.as_bytes()).unwrap();
        let abstract_listener = std::os::unix::net::UnixListener::bind_addr(&addr).unwrap();
        UnixTargets { _file: file, _abstract: abstract_listener, file_path, abstract_name }
    }

    /// A script that tries each way out and prints one line per attempt: `name ok` or
    /// `name errno`.
    fn script(&self) -> String {
        let program = format!(
            r#"
import asyncio, ctypes, errno, socket
def attempt(name, action):
    try:
        action()
        print(name, "ok")
    except OSError as err:
        print(name, errno.errorcode.get(err.errno, err.errno))
def connect(address):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(address)
attempt("file", lambda: connect("{file}"))
attempt("abstract", lambda: connect("\0{name}"))
attempt("vsock", lambda: socket.socket(40, socket.SOCK_STREAM))
attempt("socketpair", lambda: socket.socketpair())
attempt("asyncio", lambda: asyncio.run(asyncio.sleep(0)))
libc = ctypes.CDLL(None, use_errno=True)
def raw(name, number, *args):
    if libc.syscall(number, *args) < 0:
        print(name, errno.errorcode[ctypes.get_errno()])
    else:
        print(name, "ok")
params = ctypes.create_string_buffer(120)
raw("io_uring", 425, 4, params)
if {x86}:
    raw("x32_socket", 0x40000000 | 41, 1, 1, 0)
"#,
            file = self.file_path.display(),
            name = self.abstract_name,
            x86 = if cfg!(target_arch = "x86_64") { "True" } else { "False" },
        );
        format!("{} -c '{}'", python(), program.replace('\'', "'\\''"))
    }
}

fn rand_suffix() -> u64 {
    use std::hash::{BuildHasher as _, Hasher as _};
    std::collections::hash_map::RandomState::new().build_hasher().finish()
}

/// What the script of [`UnixTargets`] printed, one `(attempt, result)` per line.
fn attempts(out: &Output) -> Vec<(String, String)> {
    text(&out.stdout)
        .lines()
        .filter_map(|line| line.split_once(' '))
        .map(|(name, result)| (name.to_owned(), result.to_owned()))
        .collect()
}

/// The attempts as the filter must answer them with the network off.
fn refused() -> Vec<(String, String)> {
    let mut expected = vec![
        ("file", "EPERM"),
        ("abstract", "EPERM"),
        ("vsock", "EPERM"),
        ("socketpair", "ok"),
        ("asyncio", "ok"),
        ("io_uring", "EPERM"),
    ];
    if cfg!(target_arch = "x86_64") {
        expected.push(("x32_socket", "EPERM"));
    }
    expected.into_iter().map(|(a, b)| (a.to_owned(), b.to_owned())).collect()
}

#[test]
fn with_the_network_off_no_unix_socket_outside_is_reachable() {
    let fixture = Fixture::new();
    let targets = UnixTargets::new(&fixture);
    let script = targets.script();
    // Without a sandbox both sockets answer: the attack is real.
    let none = fixture.run(&Sandbox::none(fixture.policy(SandboxMode::None, false), "test"), &script);
    let reached = attempts(&none);
    assert_eq!(
        &reached[..2],
        [("file".into(), "ok".into()), ("abstract".into(), "ok".into())],
        "{}",
        text(&none.stderr)
    );

    let mut sandboxes = vec![require_bwrap(&fixture, false)];
    sandboxes.extend(landlock(&fixture, false));
    for sandbox in &sandboxes {
        let out = fixture.run(sandbox, &script);
        assert_eq!(attempts(&out), refused(), "{:?}: {}", sandbox.kind(), text(&out.stderr));
    }

    // With the network on, Unix sockets are reachable again (they are part of the network).
    let out = fixture.run(&require_bwrap(&fixture, true), &script);
    assert_eq!(attempts(&out)[0], ("file".to_owned(), "ok".to_owned()), "{}", text(&out.stderr));
}

#[test]
fn landlock_refuses_udp_and_every_socket_with_the_network_off() {
    let fixture = Fixture::new();
    let Some(sandbox) = landlock(&fixture, false) else { return };
    let script = format!(
        "{} -c 'import socket\ntry:\n  socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b\"x\", (\"127.0.0.1\", 9))\n  \
         print(\"sent\")\nexcept OSError as err:\n  print(err.errno)'",
        python()
    );
    let out = fixture.run(&sandbox, &script);
    assert_eq!(text(&out.stdout), format!("{}\n", libc::EPERM), "{}", text(&out.stderr));
}

/// A `sleep` outside any sandbox, and whether it is stopped.
struct Outsider(std::process::Child);

impl Outsider {
    fn start() -> Outsider {
        Outsider(std::process::Command::new("sleep").arg("30").spawn().unwrap())
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }

    fn stopped_now(&self) -> bool {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap();
        stat.rsplit_once(')').unwrap().1.trim_start().starts_with('T')
    }

    /// Whether the process is stopped, waiting up to 2 s for a SIGSTOP already sent to take
    /// effect (on a loaded machine the stop waits for the process to be scheduled).
    fn stopped(&self) -> bool {
        for _ in 0..200 {
            if self.stopped_now() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        false
    }
}

impl Drop for Outsider {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn commands_cannot_signal_processes_outside_their_sandbox() {
    let fixture = Fixture::new();
    let outsider = Outsider::start();
    // SIGCONT to the test itself (the command's parent, outside bubblewrap its `$PPID`) is
    // harmless if it gets through, and still counts.
    let script = format!(
        "kill -STOP {} && echo stopped; kill -CONT {} && echo signalled-parent; echo done",
        outsider.pid(),
        std::process::id()
    );
    // Without a sandbox both signals arrive: the attack is real.
    let out = fixture.run(&Sandbox::none(fixture.policy(SandboxMode::None, false), "test"), &script);
    assert_eq!(text(&out.stdout), "stopped\nsignalled-parent\ndone\n");
    assert!(outsider.stopped());
    unsafe {
        libc::kill(outsider.pid() as i32, libc::SIGCONT);
    }

    let mut sandboxes = vec![require_bwrap(&fixture, false)];
    if landlock_abi() >= 6 {
        sandboxes.extend(landlock(&fixture, false));
    } else {
        eprintln!("Landlock before ABI 6 cannot scope signals (reported as partial)");
    }
    for sandbox in &sandboxes {
        let out = fixture.run(sandbox, &script);
        assert_eq!(text(&out.stdout), "done\n", "{:?}: {}", sandbox.kind(), text(&out.stderr));
        assert!(!outsider.stopped(), "{:?}", sandbox.kind());
    }
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

/// The real git directory is read-only for commands wherever `.git` leads (issue 24 point 7):
/// a `.git` symlink, a `gitdir:` file, a worktree gitdir whose `commondir` names the main one.
#[test]
fn bubblewrap_keeps_the_real_git_directory_read_only() {
    let layouts: [(&str, PlantGitDir); 3] = [
        ("symlink", |ws| std::os::unix::fs::symlink("gitstore", ws.join(".git")).unwrap()),
        ("gitdir file", |ws| std::fs::write(ws.join(".git"), "gitdir: gitstore\n").unwrap()),
        ("worktree commondir", |ws| {
            std::fs::create_dir_all(ws.join("wtdir")).unwrap();
            std::fs::write(ws.join("wtdir/commondir"), "../gitstore\n").unwrap();
            std::fs::write(ws.join(".git"), "gitdir: wtdir\n").unwrap();
        }),
    ];
    let attacks: &[(&str, &str)] = &[
        ("fsmonitor", "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> gitstore/config"),
        ("hook", "echo 'touch /tmp/pwned' > gitstore/hooks/pre-commit"),
        ("rename", "mv gitstore gitstore_old"),
        ("replace_config", "rm -f gitstore/config && echo x > gitstore/config"),
    ];
    for (name, plant) in layouts {
        let fixture = Fixture::new();
        let ws = fixture.ws();
        std::fs::remove_dir_all(ws.join(".git")).unwrap();
        std::fs::create_dir_all(ws.join("gitstore/hooks")).unwrap();
        std::fs::write(ws.join("gitstore/config"), "[core]\n").unwrap();
        plant(&ws);
        let sandbox = require_bwrap(&fixture, false);
        assert_eq!(escaped(&fixture, &sandbox, attacks), Vec::<String>::new(), "{name}");
        assert_eq!(std::fs::read_to_string(ws.join("gitstore/config")).unwrap(), "[core]\n", "{name}");
        assert!(!ws.join("gitstore/hooks/pre-commit").exists(), "{name}");
        assert_eq!(escaped(&fixture, &sandbox, &[("elsewhere", "echo ok > notes.txt")]), ["elsewhere"], "{name}");
        // Without protect_git the same commands get through: the attacks can succeed.
        let mut policy = fixture.policy(SandboxMode::Bwrap, false);
        policy.protect_git = false;
        let open = Sandbox::resolve(policy).unwrap();
        assert_eq!(escaped(&fixture, &open, &attacks[..2]), ["fsmonitor", "hook"], "{name}");
    }
}

/// Plants a `.git` that leads to `gitstore/` in the workspace given.
type PlantGitDir = fn(&Path);
