//! The hardening run's attacks on the shell tools, replayed through the executor in both
//! sandbox modes: rewriting `.git` or the workspace's settings (stopped by bubblewrap; noticed,
//! told and recorded where the sandbox cannot stop it), reaching a Unix socket outside with the
//! network off, and signalling processes outside the session. Each attack first runs where
//! nothing stops it, so the test can fail.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::shell_common;

use std::path::Path;
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;
use shell_common::{Harness, Mode};
use tackle_core::Notifications;
use tackle_sandbox::process::{ChangeKind, Sandbox};
use tackle_tools::shell::{ProtectedChange, ProtectedChanges};

/// `git` run by the test itself, outside any sandbox.
fn host_git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@localhost", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A harness over a workspace that is a git repository with one commit.
fn with_repository(mode: Mode) -> Harness {
    let h = Harness::with(mode);
    std::fs::write(h.path("README"), "hi\n").unwrap();
    host_git(&h.workspace(), &["init", "-q"]);
    host_git(&h.workspace(), &["add", "README"]);
    host_git(&h.workspace(), &["commit", "-qm", "first"]);
    h
}

const GIT_COMMIT: &str = "git -c user.name=t -c user.email=t@localhost commit -qm second";

/// The modes where Landlock runs (every test kernel here has it; an old one skips it).
fn landlock() -> Option<Mode> {
    (tackle_sandbox::process::landlock_abi() > 0).then_some(Mode::Landlock)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_bubblewrap_git_is_read_only_and_git_writes_get_the_hint() {
    let h = with_repository(Mode::Bwrap { network: false });
    let git_hint = format!(
        "[sandbox: .git is read-only for commands, so git cannot write it (add, commit, checkout); the user can set \
         [sandbox] protect_git = false in {}]",
        tackle_policy::config::user_config_shown()
    );
    let git_hint = git_hint.as_str();
    let out = h.bash("echo more >> README && git add README").await;
    assert!(out.is_error && out.text_content().ends_with(git_hint), "{}", out.text_content());
    let out = h.bash(&format!("{GIT_COMMIT} -a")).await;
    assert!(out.is_error && out.text_content().ends_with(git_hint), "{}", out.text_content());

    // The attacks of the hardening run: `.git` renamed away and rebuilt with a new config, a
    // `commondir` pointing elsewhere, a hook.
    let config = std::fs::read_to_string(h.path(".git/config")).unwrap();
    for attack in [
        "mv .git .git_old && mkdir .git && cp -a .git_old/HEAD .git_old/objects .git_old/refs .git/",
        "echo ../.cache/g > .git/commondir",
        "printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> .git/config",
        "echo 'touch pwned' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
    ] {
        let out = h.bash(attack).await;
        assert!(out.is_error && out.text_content().ends_with(git_hint), "{attack}: {}", out.text_content());
    }
    assert_eq!(std::fs::read_to_string(h.path(".git/config")).unwrap(), config);
    assert!(!h.path(".git_old").exists() && !h.path(".git/commondir").exists());
    // A host `git status` runs nothing of the command's.
    host_git(&h.workspace(), &["status", "--short"]);
    assert!(!h.path("pwned").exists());
    h.close().await;

    // `protect_git = false` (user configuration only) is the way out.
    let h = Harness::with_env(Mode::Bwrap { network: false }, |env| {
        let mut policy = env.sandbox.policy().clone();
        policy.protect_git = false;
        env.sandbox = Sandbox::resolve(policy).unwrap();
    });
    host_git(&h.workspace(), &["init", "-q"]);
    let out = h.bash(&format!("echo x > a.txt && git add a.txt && {GIT_COMMIT} && git log --format=%s")).await;
    assert_eq!(out.text_content(), "second");
    h.close().await;
}

/// The changes recorded in the session, as `(path relative to the workspace, kind, by)`.
fn recorded(h: &Harness) -> Vec<(String, ChangeKind, String)> {
    let changes = h.session.state().get::<ProtectedChanges>().all();
    changes
        .into_iter()
        .map(|ProtectedChange { path, kind, by }| {
            (path.strip_prefix(h.workspace()).unwrap().display().to_string(), kind, by)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_landlock_changes_to_git_and_the_settings_are_reported_and_recorded() {
    let Some(mode) = landlock() else { return };
    let h = with_repository(mode);
    let mut events = h.session.state().get::<ProtectedChanges>().subscribe();
    // Ordinary work, a commit included, changes nothing protected.
    let out = h.bash(&format!("echo more >> README && git add README && {GIT_COMMIT} && echo committed")).await;
    assert_eq!(out.text_content(), "committed");

    let cases = [
        ("printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> .git/config", ".git/config (modified)"),
        ("echo ../.cache/g > .git/commondir", ".git/commondir (created)"),
        ("printf '[sandbox]\\nmode = \"none\"\\n' > tackle.toml", "tackle.toml (created)"),
        (
            "mv .git .git_old && mkdir .git && cp -a .git_old/HEAD .git_old/objects .git_old/refs .git/",
            ".git (replaced), .git/config (removed), .git/commondir (removed), .git/hooks (removed)",
        ),
        ("mkdir -p .claude && echo '{}' > .claude/settings.json", ".claude (created), .claude/settings.json (created)"),
    ];
    for (attack, listed) in cases {
        let out = h.bash(attack).await;
        assert_eq!(
            out.text_content(),
            format!("[Protected files changed during this command: {listed}. The user has been notified.]"),
            "{attack}"
        );
    }
    assert_eq!(recorded(&h).len(), 9);
    assert!(recorded(&h).iter().all(|(_, _, by)| by == "a bash command"));
    assert_eq!(events.take_pending().len(), 9);

    // A background job's change is queued for the model.
    let queue = h.session.state().get::<Notifications>();
    queue.drain();
    h.call("background_run", json!({"command": "echo '{}' > .mcp.json"})).await;
    h.call("job_output", json!({"job_id": "job-1", "block": true})).await;
    let announced = shell_common::eventually(Duration::from_secs(5), || {
        recorded(&h).last().is_some_and(|(path, _, _)| path == ".mcp.json")
    });
    assert!(announced.await, "{:?}", recorded(&h));
    assert_eq!(
        recorded(&h).last().unwrap(),
        &(".mcp.json".to_owned(), ChangeKind::Created, "background job job-1".to_owned())
    );
    assert!(queue.drain().contains(
        &"Background job job-1 changed protected files: .mcp.json (created). The user has been notified.".to_owned()
    ));
    h.close().await;
}

/// Landlock cannot deny a write inside the workspace, so a change to the real git directory a
/// `.git` symlink, `gitdir:` file or `commondir` leads to is reported as one to `.git` is
/// (issue 24 point 7); a commit's own writes there are not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_landlock_changes_to_the_real_git_directory_are_reported() {
    let Some(mode) = landlock() else { return };
    let layouts: [(&str, PlantGitDir); 3] = [
        ("symlink", |ws| std::os::unix::fs::symlink("gitstore", ws.join(".git")).unwrap()),
        ("gitdir file", |ws| std::fs::write(ws.join(".git"), "gitdir: gitstore\n").unwrap()),
        ("worktree commondir", |ws| {
            std::fs::create_dir_all(ws.join("wtdir")).unwrap();
            std::fs::write(ws.join("wtdir/commondir"), "../gitstore\n").unwrap();
            std::fs::write(ws.join(".git"), "gitdir: wtdir\n").unwrap();
        }),
    ];
    for (name, plant) in layouts {
        let h = Harness::with(mode);
        let ws = h.workspace();
        std::fs::create_dir_all(ws.join("gitstore/hooks")).unwrap();
        std::fs::write(ws.join("gitstore/config"), "[core]\n").unwrap();
        plant(&ws);
        let out = h.bash("echo x > gitstore/index && echo indexed").await;
        assert_eq!(out.text_content(), "indexed", "{name}: the directory's own listing is not a change");
        let cases = [
            ("printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> gitstore/config", "gitstore/config (modified)"),
            ("echo 'touch pwned' > gitstore/hooks/pre-commit", "gitstore/hooks (modified)"),
        ];
        for (attack, listed) in cases {
            let out = h.bash(attack).await;
            assert_eq!(
                out.text_content(),
                format!("[Protected files changed during this command: {listed}. The user has been notified.]"),
                "{name}: {attack}"
            );
        }
        h.close().await;
    }
}

/// A git directory outside the workspace but in `/tmp` (a worktree's, `--separate-git-dir`),
/// which every Landlock command may write: a change to it is reported like one to `.git`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_landlock_changes_to_a_real_git_directory_in_tmp_are_reported() {
    let Some(mode) = landlock() else { return };
    let store = tempfile::Builder::new().prefix("tackle-gitstore-").tempdir_in("/tmp").unwrap();
    let store = store.path().canonicalize().unwrap();
    std::fs::create_dir_all(store.join("hooks")).unwrap();
    std::fs::write(store.join("config"), "[core]\n").unwrap();
    let h = Harness::with(mode);
    let ws = h.workspace();
    assert!(!store.starts_with(&ws));
    std::fs::write(ws.join(".git"), format!("gitdir: {}\n", store.display())).unwrap();
    for (attack, changed) in [
        (format!("printf '[core]\\n\\thooksPath = /tmp/hooks\\n' >> {}/config", store.display()), "config (modified)"),
        (format!("echo 'touch pwned' > {}/hooks/pre-commit", store.display()), "hooks (modified)"),
    ] {
        let text = h.bash(&attack).await.text_content();
        assert!(text.starts_with("[Protected files changed during this command: "), "{attack}: {text}");
        assert!(text.contains(&format!("{}/{changed}", store.display())), "{attack}: {text}");
    }
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_bubblewrap_new_settings_files_are_reported() {
    // A missing `tackle.toml` has no mount point that could cover it, so the command creates it
    // and Tackle reports it.
    let h = Harness::with(Mode::Bwrap { network: false });
    let out = h.bash("printf '[sandbox]\\nmode = \"none\"\\n' > tackle.toml; echo '{}' > .mcp.json").await;
    assert_eq!(
        out.text_content(),
        "[Protected files changed during this command: tackle.toml (created), .mcp.json (created). The user has been \
         notified.]"
    );
    // Once it exists, the next shell's sandbox makes it read-only.
    h.call("bash", json!({"restart": true})).await;
    let out = h.bash("echo 'network = true' >> tackle.toml").await;
    assert!(out.text_content().contains("tackle.toml: Read-only file system"), "{}", out.text_content());
    assert_eq!(recorded(&h).len(), 2);
    h.close().await;
}

/// The interpreter behind `python3` (a shim on `PATH` may not run inside a sandbox).
fn python() -> String {
    let out = std::process::Command::new("python3").args(["-c", "import sys; print(sys.executable)"]).output();
    String::from_utf8(out.expect("python3 is needed by this test").stdout).unwrap().trim().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_network_off_neither_the_shell_nor_a_job_reaches_a_unix_socket_outside() {
    let outside = tempfile::tempdir_in("/var/tmp").unwrap();
    let socket = outside.path().join("agent.sock");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    let script = format!(
        "{} -c 'import socket\ntry:\n  socket.socket(socket.AF_UNIX).connect(\"{}\")\n  print(\"reached\")\nexcept \
         OSError as err:\n  print(err.strerror)'",
        python(),
        socket.display()
    );
    let mut modes = vec![(Mode::None, "reached"), (Mode::Bwrap { network: false }, "Operation not permitted")];
    modes.extend(landlock().map(|mode| (mode, "Operation not permitted")));
    for (mode, expected) in modes {
        let h = Harness::with(mode);
        assert_eq!(h.sh(&script).await, expected, "{mode:?}");
        h.call("background_run", json!({"command": script})).await;
        let out = h.call("job_output", json!({"job_id": "job-1", "block": true})).await.text_content();
        assert!(out.ends_with(&format!("\n{expected}")), "{mode:?}: {out}");
        h.close().await;
    }
}

/// A `sleep` outside every sandbox.
struct Outsider(std::process::Child);

impl Outsider {
    fn state(&self) -> char {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.0.id())).unwrap();
        stat.rsplit_once(')').unwrap().1.trim_start().chars().next().unwrap()
    }
}

impl Drop for Outsider {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_and_jobs_cannot_signal_processes_outside_their_session() {
    let outsider = Outsider(std::process::Command::new("sleep").arg("60").spawn().unwrap());
    let pid = outsider.0.id();
    // `$PPID` of the shell is this test process (Tackle): if SIGKILL got through, the test
    // would die here.
    let attack = format!("kill -STOP {pid}; kill -9 $PPID; echo survived");
    let mut modes = vec![Mode::Bwrap { network: false }];
    if tackle_sandbox::process::landlock_abi() >= 6 {
        modes.push(Mode::Landlock);
    }
    for mode in modes {
        let h = Harness::with(mode);
        let out = h.bash(&attack).await.text_content();
        assert!(out.starts_with("survived\n[stderr]\n"), "{mode:?}: {out}");
        assert_eq!(outsider.state(), 'S', "{mode:?}");
        h.call("background_run", json!({"command": format!("kill -STOP {pid}; echo done")})).await;
        h.call("job_output", json!({"job_id": "job-1", "block": true})).await;
        assert_eq!(outsider.state(), 'S', "{mode:?}");
        assert_eq!(h.sh("echo still answering").await, "still answering");
        h.close().await;
    }
}

/// Plants a `.git` that leads to `gitstore/` in the workspace given.
type PlantGitDir = fn(&Path);
