//! Read-only commands run restricted (docs/shell.md, "Read-only commands run restricted"), in
//! both sandbox modes, with this crate's `tackle` binary as the wrapper: a command the analysis
//! wrongly judged read-only (simulated by a policy that judges every command so) writes
//! nothing but its own temporary directory, reaches no socket and keeps no capability; `cd`
//! and harmless exports still change the persistent shell, nothing else it does is kept. And a
//! root command under either sandbox keeps no capability (no `mknod`, no `sethostname`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use tackle_core::permission::{Decision, PermissionPolicy, PermissionRequest};
use tackle_core::{Executor, ExecutorConfig, PathPolicy, ToolCall, ToolOutput, ToolSession, ToolSessionConfig};
use tackle_sandbox::WorkspacePolicy;
use tackle_sandbox::env::{CommandEnv, EnvSettings};
use tackle_sandbox::process::{Sandbox, SandboxMode, SandboxPolicy, restrict};
use tokio_util::sync::CancellationToken;

/// Judges every call read-only: what a mistaken analysis would decide.
struct JudgedReadOnly;

impl PermissionPolicy for JudgedReadOnly {
    fn decide(&self, _: &PermissionRequest<'_>) -> Decision {
        Decision::AllowReadOnly
    }
}

/// Allows every call outright (bypass).
struct Outright;

impl PermissionPolicy for Outright {
    fn decide(&self, _: &PermissionRequest<'_>) -> Decision {
        Decision::Allow
    }
}

struct Shell {
    _dir: tempfile::TempDir,
    workspace: PathBuf,
    session: ToolSession,
    restricted: Executor,
    outright: Executor,
}

impl Shell {
    fn new(mode: SandboxMode, network: bool) -> Shell {
        restrict::register_helper(PathBuf::from(env!("CARGO_BIN_EXE_tackle")));
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let workspace = dir.path().canonicalize().unwrap();
        std::fs::create_dir(workspace.join("src")).unwrap();
        std::fs::write(workspace.join("a.txt"), "alpha\n").unwrap();
        let registry = tackle::builtin_registry();
        let selection = registry.select("bash,background_run,job_output", "all").unwrap();
        let mut config = ToolSessionConfig::new(workspace.clone());
        config.path_policy = Some(Arc::new(WorkspacePolicy::new(&workspace).unwrap()) as Arc<dyn PathPolicy>);
        let session = ToolSession::new(config, registry.instantiate(&selection));
        let mut policy = SandboxPolicy::new(&workspace);
        policy.mode = mode;
        policy.network = network;
        let sandbox = Sandbox::resolve(policy).unwrap();
        let env = CommandEnv::new(&EnvSettings::default(), session.id(), &workspace);
        session.state().get_or_insert_with(|| tackle_tools::shell::ShellEnvironment::new(sandbox, env));
        let executor = |policy: Arc<dyn PermissionPolicy>| Executor::new(ExecutorConfig::default()).with_policy(policy);
        Shell {
            _dir: dir,
            workspace,
            session,
            restricted: executor(Arc::new(JudgedReadOnly)),
            outright: executor(Arc::new(Outright)),
        }
    }

    async fn run(&self, executor: &Executor, command: &str) -> ToolOutput {
        let call = ToolCall::new("call", "bash", json!({ "command": command }));
        executor.run(&self.session, call, &CancellationToken::new()).await
    }

    /// `command` as a call the analysis judged read-only.
    async fn judged(&self, command: &str) -> String {
        self.run(&self.restricted, command).await.text_content()
    }

    /// `command` allowed outright.
    async fn allowed(&self, command: &str) -> String {
        self.run(&self.outright, command).await.text_content()
    }
}

const MODES: [SandboxMode; 2] = [SandboxMode::Bwrap, SandboxMode::Landlock];

fn exists(path: &Path) -> bool {
    path.symlink_metadata().is_ok()
}

#[tokio::test]
async fn a_command_wrongly_judged_read_only_writes_nothing() {
    for mode in MODES {
        let shell = Shell::new(mode, false);
        let ws = &shell.workspace;
        // Outside the workspace, where the sandbox alone would let a Landlock command write.
        let outside = PathBuf::from(format!("/tmp/tackle-restricted-{}-{}", std::process::id(), mode.name()));
        let cases = [
            "ls; touch made.txt".to_owned(),
            "sed -n 'w made.txt' a.txt".to_owned(),
            "python3 -c \"open('made.txt', 'w').write('x')\"".to_owned(),
            "perl -e 'open(my $f, \">\", \"made.txt\") or die \"refused: $!\"'".to_owned(),
            "cat a.txt > made.txt".to_owned(),
            "echo x >> a.txt".to_owned(),
            "truncate -s 0 a.txt".to_owned(),
            "rm a.txt".to_owned(),
            "mv a.txt made.txt".to_owned(),
            "mkdir made.txt".to_owned(),
            "ln -s a.txt made.txt".to_owned(),
            format!("touch {}", outside.display()),
            format!("mkdir {}", outside.display()),
            // A heredoc the analysis might end elsewhere: everything runs restricted anyway.
            "cat <<E\"O\"F\nx\nEOF\ntouch made.txt\nEOF".to_owned(),
            "f() { touch made.txt; }; f".to_owned(),
            "(cd src && touch ../made.txt)".to_owned(),
            "echo $(touch made.txt)".to_owned(),
            "touch src/made.txt & wait".to_owned(),
            // Metadata, which Landlock does not cover: the filter refuses it.
            "chmod 000 a.txt".to_owned(),
            "touch -d 2001-01-01 a.txt".to_owned(),
            "chown nobody a.txt".to_owned(),
            "python3 -c \"import os; os.setxattr('a.txt', 'user.x', b'1')\"".to_owned(),
            "chattr +A a.txt".to_owned(),
            "python3 -c \"import fcntl, os, struct; fcntl.ioctl(os.open('a.txt', os.O_RDONLY), 0x40086602, struct.pack('i', 0x80))\"".to_owned(),
        ];
        let metadata = |path: &Path| {
            use std::os::unix::fs::MetadataExt as _;
            let m = std::fs::metadata(path).unwrap();
            let flags = std::process::Command::new("lsattr").arg(path).output().map(|o| o.stdout).unwrap_or_default();
            (m.mode(), m.uid(), m.mtime(), m.mtime_nsec(), flags)
        };
        let before = metadata(&ws.join("a.txt"));
        for command in &cases {
            let text = shell.judged(command).await;
            assert!(!exists(&ws.join("made.txt")), "{mode:?} `{command}` wrote made.txt: {text}");
            assert!(!exists(&ws.join("src/made.txt")), "{mode:?} `{command}`: {text}");
            assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "alpha\n", "{mode:?} `{command}`: {text}");
            assert!(!exists(&outside), "{mode:?} `{command}` wrote {}: {text}", outside.display());
            assert_eq!(metadata(&ws.join("a.txt")), before, "{mode:?} `{command}`: {text}");
        }
        // The same command allowed outright writes (the restriction, not the sandbox, stopped it).
        shell.allowed("touch made.txt").await;
        assert!(exists(&ws.join("made.txt")), "{mode:?}");
        // Its own temporary directory is writable, and removed afterwards.
        let text = shell.judged("echo kept > \"$TMPDIR/t\" && cat \"$TMPDIR/t\" && echo \"$TMPDIR\"").await;
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("kept"), "{mode:?}: {text}");
        let tmp = lines.next().unwrap().to_owned();
        assert!(tmp.starts_with("/tmp/tackle-ro-"), "{mode:?}: {text}");
        if mode == SandboxMode::Landlock {
            assert!(!exists(Path::new(&tmp)), "{mode:?}: {tmp} was left behind");
        }
        // /dev/null stays writable; the capabilities are gone.
        assert_eq!(shell.judged("echo x > /dev/null && echo ok").await, "ok", "{mode:?}");
        let status = shell.judged("grep -E '^Cap(Eff|Prm|Bnd|Amb)' /proc/self/status").await;
        for line in status.lines() {
            assert!(line.ends_with("0000000000000000"), "{mode:?}: {status}");
        }
        shell.session.close().await;
    }
}

#[tokio::test]
async fn a_command_judged_read_only_reaches_no_socket() {
    // Landlock with the network on: only the restriction stands between the command and the
    // listener.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let shell = Shell::new(SandboxMode::Landlock, true);
    let connect = format!("echo hi > /dev/tcp/127.0.0.1/{port} && echo connected");
    let python = format!("python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}))\"");
    for command in [&connect, &python] {
        let text = shell.judged(command).await;
        assert!(!text.contains("connected"), "{text}");
        assert!(listener.accept().is_err(), "`{command}` reached the listener: {text}");
    }
    // Unix sockets outside, too.
    let text = shell.judged("python3 -c \"import socket; socket.socket(socket.AF_UNIX)\" && echo made").await;
    assert!(!text.contains("made"), "{text}");
    // Allowed outright, the same connection goes through.
    assert!(shell.allowed(&connect).await.contains("connected"));
    shell.session.close().await;
}

#[tokio::test]
async fn cd_and_harmless_exports_stay_in_the_shell_and_nothing_else_does() {
    for mode in MODES {
        let shell = Shell::new(mode, false);
        let ws = shell.workspace.display().to_string();
        shell.judged("cd src && ls").await;
        assert_eq!(shell.allowed("pwd").await, format!("{ws}/src"), "{mode:?}");
        shell.judged("cd .. && export LANG=C LC_ALL=C FOO=bar; greet() { echo hi; }; alias ll=ls; BAR=1").await;
        // A locale that names a path is not kept.
        shell.judged("export LC_CTYPE=/tmp/x").await;
        assert_eq!(shell.allowed("echo \"${LC_CTYPE:-unset}\"").await, "unset", "{mode:?}");
        // Nor a time zone that may name a file (`TZ=:/path`).
        shell.judged("export TZ=:/tmp/zone").await;
        assert_eq!(shell.allowed("echo \"${TZ:-unset}\"").await, "unset", "{mode:?}");
        // A descriptor the shell holds open for writing does not reach the command.
        shell.allowed("exec 7>>log.txt").await;
        shell.judged("echo leaked >&7").await;
        assert_eq!(std::fs::read_to_string(shell.workspace.join("log.txt")).unwrap(), "", "{mode:?}");
        let after = shell.allowed("pwd; echo \"$LANG $LC_ALL ${FOO:-no-foo} ${BAR:-no-bar}\"; type greet ll").await;
        assert!(after.starts_with(&format!("{ws}\nC C no-foo no-bar\n")), "{mode:?}: {after}");
        assert!(!after.contains("greet is a function"), "{mode:?}: {after}");
        // Exported variables of the shell reach the restricted command; its functions do not
        // shadow programs there.
        shell.allowed("export ANSWER=42; ls() { echo shadowed; }").await;
        assert_eq!(shell.judged("echo $ANSWER; ls a.txt").await, "42\na.txt", "{mode:?}");
        // The exit status is the command's.
        let output = shell.run(&shell.restricted, "ls no-such-file").await;
        assert_eq!(output.meta.exit_code, Some(2), "{mode:?}: {}", output.text_content());
        // A restricted background job writes nothing either.
        let call =
            ToolCall::new("bg", "bash", json!({"command": "touch job.txt; echo job ran", "run_in_background": true}));
        let started = shell.restricted.run(&shell.session, call, &CancellationToken::new()).await;
        let job = started.structured.as_ref().and_then(|s| s["background_job_id"].as_str()).unwrap().to_owned();
        let call = ToolCall::new("out", "job_output", json!({"job_id": job, "block": true}));
        let output = shell.outright.run(&shell.session, call, &CancellationToken::new()).await.text_content();
        assert!(output.contains("job ran"), "{mode:?}: {output}");
        assert!(!exists(&shell.workspace.join("job.txt")), "{mode:?}: {output}");
        shell.session.close().await;
    }
}

#[tokio::test]
async fn a_root_command_keeps_no_capability_in_either_sandbox() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("skipped: the capability test needs root");
        return;
    }
    for mode in MODES {
        let shell = Shell::new(mode, false);
        let status = shell.allowed("grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status").await;
        assert_eq!(status.lines().count(), 5, "{mode:?}: {status}");
        for line in status.lines() {
            assert!(line.ends_with("0000000000000000"), "{mode:?}: {status}");
        }
        // A device node in the workspace (writable, so only a capability could stop it).
        let text = shell.allowed("mknod kmsg c 1 11 && echo made").await;
        assert!(!text.contains("made") && !exists(&shell.workspace.join("kmsg")), "{mode:?}: {text}");
        // Setting the host name to what it is: refused without CAP_SYS_ADMIN, a no-op otherwise.
        let text = shell.allowed("hostname \"$(hostname)\" && echo set").await;
        assert!(!text.contains("set"), "{mode:?}: {text}");
        shell.session.close().await;
    }
}

/// Whether the terminal `fd` echoes its input.
fn echoes(fd: i32) -> bool {
    // SAFETY: tcgetattr writes into the termios it is given; `fd` is a terminal we opened.
    unsafe {
        let mut attrs: libc::termios = std::mem::zeroed();
        assert_eq!(libc::tcgetattr(fd, &mut attrs), 0);
        attrs.c_lflag & libc::ECHO != 0
    }
}

#[tokio::test]
async fn a_command_judged_read_only_changes_no_terminal_no_ipc_object_and_no_other_process() {
    // A terminal of the person's, which a command can open for reading: an `ioctl` on it
    // (`stty -F`) would change it without any write access.
    let (mut primary, mut replica) = (0, 0);
    // SAFETY: openpty writes two descriptors; the name, termios and window size are optional.
    let opened =
        unsafe { libc::openpty(&mut primary, &mut replica, std::ptr::null_mut(), std::ptr::null(), std::ptr::null()) };
    assert_eq!(opened, 0);
    let terminal = std::fs::read_link(format!("/proc/self/fd/{replica}")).unwrap();
    assert!(echoes(replica));
    let ipc_objects = || std::fs::read_to_string("/proc/sysvipc/shm").unwrap_or_default().lines().count();
    let before = ipc_objects();
    // SAFETY: getpriority of this process takes integers only.
    let nice = unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
    for mode in MODES {
        let shell = Shell::new(mode, false);
        let terminal = terminal.display();
        let cases = [
            format!("stty -F {terminal} -echo && echo changed"),
            format!(
                "python3 -c \"import os, termios; fd = os.open('{terminal}', os.O_RDONLY | os.O_NOCTTY); \
                 a = termios.tcgetattr(fd); a[3] &= ~termios.ECHO; termios.tcsetattr(fd, termios.TCSANOW, a); \
                 print('changed')\""
            ),
            // System V IPC and keyrings: objects outside the file system that outlive the command.
            "ipcmk -M 4096 && echo changed".to_owned(),
            "ipcmk -Q && echo changed".to_owned(),
            "ipcmk -S 1 && echo changed".to_owned(),
            // add_key (248 on x86_64) into the user keyring (-4).
            "python3 -c \"import ctypes, sys; r = ctypes.CDLL(None).syscall(248, b'user', b'tackle-ro', b'x', 1, -4); \
             sys.exit(r < 0) \" && echo changed"
                .to_owned(),
            // Another process (this test's) by its id: priority, limits, CPUs. Landlock's
            // scopes refuse signals and ptrace, not these.
            format!("renice -n 5 -p {test} && echo changed", test = std::process::id()),
            format!("prlimit --pid {test} --core=0:0 && echo changed", test = std::process::id()),
            format!("taskset -p 1 {test} && echo changed", test = std::process::id()),
        ];
        for command in &cases {
            let text = shell.judged(command).await;
            assert!(!text.contains("changed"), "{mode:?} `{command}`: {text}");
            assert!(echoes(replica), "{mode:?} `{command}` turned the terminal's echo off: {text}");
        }
        assert_eq!(ipc_objects(), before, "{mode:?}: a shared memory segment was left");
        // SAFETY: getpriority of this process takes integers only.
        assert_eq!(unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) }, nice, "{mode:?}: reniced");
        // Allowed outright (Landlock: the host's terminal is there), the same ioctl works:
        // the restriction stopped it.
        if mode == SandboxMode::Landlock {
            shell.allowed(&cases[0]).await;
            assert!(!echoes(replica), "{mode:?}");
        }
        shell.session.close().await;
    }
    // SAFETY: closing the two descriptors openpty made.
    unsafe {
        libc::close(primary);
        libc::close(replica);
    }
}
