//! `bash` through the executor with a real shell: state persists across calls, every kind of
//! command ends with exactly one output, hostile commands cannot break the session or leave
//! processes behind, and large outputs stay within the budget with the rest spilled to files.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::shell_common;

use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;
use shell_common::{Harness, Mode, processes_of_session};
use tokio_util::sync::CancellationToken;

/// A session whose kill grace period is short, so timeout tests stay quick.
fn quick() -> Harness {
    Harness::with_env(Mode::Bwrap { network: false }, |env| env.kill_grace = Duration::from_millis(300))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cwd_exports_variables_functions_and_aliases_persist() {
    let h = Harness::new();
    std::fs::create_dir(h.path("sub")).unwrap();
    let out = h.bash("cd sub && export GREETING=hello && plain=kept && greet() { echo \"$1 from fn\"; }").await;
    assert_eq!((out.text_content(), out.is_error), ("(no output)".to_owned(), false));
    assert_eq!(out.structured.as_ref().unwrap()["cwd"], json!(h.path("sub").to_str().unwrap()));
    h.bash("alias ll='echo listed'").await;
    assert_eq!(
        h.sh("pwd; echo $GREETING $plain; greet hi; ll").await,
        format!("{}\nhello kept\nhi from fn\nlisted", h.path("sub").display())
    );
    // Exported variables reach child processes too.
    assert_eq!(h.sh("bash -c 'echo $GREETING'").await, "hello");
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heredocs_multiline_scripts_and_quoting_work() {
    let h = Harness::new();
    let script = "cat <<'EOF' > notes.txt\nliteral $HOME `x`\nEOF\nname=world\ncat <<EOF\nhello $name\nEOF\nif [ -f notes.txt ]; then\n  cat notes.txt\nfi\necho 'single \"double\"' \"it's\"";
    assert_eq!(h.sh(script).await, "hello world\nliteral $HOME `x`\nsingle \"double\" it's");
    // A heredoc whose terminator ends the command without a newline.
    assert_eq!(h.sh("cat <<EOF\nno newline\nEOF").await, "no newline");
    // A large command (200 KB) arrives whole.
    let big = format!("cat <<'EOF' | wc -c\n{}\nEOF", "x".repeat(200_000));
    assert_eq!(h.sh(&big).await, "200001");
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_codes_stderr_and_empty_output() {
    let h = Harness::new();
    let out = h.bash("echo out; echo err >&2; exit_with() { return $1; }; exit_with 3").await;
    assert_eq!(out.text_content(), "out\n[stderr]\nerr\n[exit code: 3]");
    assert!(out.is_error);
    assert_eq!(out.meta.exit_code, Some(3));
    let structured = out.structured.unwrap();
    assert_eq!((structured["stdout"].clone(), structured["stderr"].clone()), (json!("out"), json!("err")));
    assert_eq!((structured["exit_code"].clone(), structured["interrupted"].clone()), (json!(3), json!(false)));

    // stderr from a successful command is not an error.
    let out = h.bash("echo warning >&2").await;
    assert_eq!((out.text_content(), out.is_error), ("[stderr]\nwarning".to_owned(), false));
    let out = h.bash("true").await;
    assert_eq!((out.text_content(), out.is_error), ("(no output)".to_owned(), false));
    assert_eq!(out.structured.unwrap()["stderr"], json!(""));
    let out = h.bash("false").await;
    assert_eq!((out.text_content(), out.is_error), ("[exit code: 1]".to_owned(), true));

    let out = h.bash("invalid_command_123").await;
    let text = out.text_content();
    let line = text.lines().nth(1).unwrap();
    assert!(line.starts_with("bash: line ") && line.ends_with(": invalid_command_123: command not found"), "{text}");
    assert_eq!(out.meta.exit_code, Some(127));
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_that_read_stdin_get_end_of_file() {
    let h = Harness::new();
    assert_eq!(h.sh("cat; read line; echo \"got:[$line] $?\"").await, "got:[] 1");
    let out = h.bash("python3 -c 'input()' 2>&1 | tail -1").await;
    assert_eq!(out.text_content(), "EOFError: EOF when reading a line");
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn odd_output_is_decoded_and_never_ends_a_call_early() {
    let h = Harness::new();
    assert_eq!(h.sh("printf 'no newline'").await, "no newline");
    assert_eq!(h.sh("printf 'a\\xffb\\xfe\\n'").await, "a\u{fffd}b\u{fffd}");
    assert_eq!(h.sh("printf '\\033[1;31mred\\033[0m plain'").await, "red plain");
    // Lookalike sentinels, with and without the leading newline.
    let fake =
        "printf '\\n__tackle_done_00000000000000000000000000000000 0 /\\0'; echo; echo __tackle_done_x 0; echo real";
    assert_eq!(h.sh(fake).await, "\n__tackle_done_00000000000000000000000000000000 0 /\u{0}\n__tackle_done_x 0\nreal");
    // Reading the control descriptor is impossible: it is closed for commands.
    let out = h.bash("cat <&63").await;
    assert!(out.text_content().contains("63: Bad file descriptor"), "{}", out.text_content());
    let out = h.bash("ls /proc/self/fd | sort -n | tr '\\n' ' '").await;
    assert_eq!(out.text_content(), "0 1 2 3 ", "only stdio (and ls's own directory) are open");
    assert_eq!(h.sh("echo still fine").await, "still fine");
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_kills_the_command_and_keeps_the_session() {
    let h = quick();
    let out = h
        .call("bash", json!({"command": "cd /usr && export KEEP=1 && echo partial && sleep 100", "timeout": 300}))
        .await;
    assert!(out.is_error);
    assert_eq!(
        out.text_content(),
        "partial\n[stderr]\nTerminated\n[Command timed out after 300 ms and was killed. The shell session was kept: \
         working directory and environment are unchanged.]"
    );
    let structured = out.structured.unwrap();
    assert_eq!(structured["timed_out_after_ms"], json!(300));
    assert_eq!((structured["interrupted"].clone(), structured["exit_code"].clone()), (json!(true), json!(null)));
    assert_eq!(h.sh("pwd; echo $KEEP").await, "/usr\n1");

    // A command that ignores SIGTERM is killed after the grace period.
    let out = h.call("bash", json!({"command": "trap '' TERM; sleep 100", "timeout": 300})).await;
    assert!(
        out.text_content().ends_with("The shell session was kept: working directory and environment are unchanged.]")
    );
    assert_eq!(h.sh("echo $KEEP").await, "1");
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_that_does_not_answer_after_a_timeout_is_restarted() {
    let h = quick();
    h.bash("cd /usr; export GONE=1").await;
    let ws = h.workspace().display().to_string();
    let out = h.call("bash", json!({"command": "while true; do :; done", "timeout": 300})).await;
    assert_eq!(
        out.text_content(),
        format!(
            "[Command timed out after 300 ms and was killed. The shell session was restarted: the working directory is \
             {ws} again and exported variables are gone.]"
        )
    );
    assert_eq!(out.structured.unwrap()["cwd"], json!(ws));
    assert_eq!(h.sh("pwd; echo \"[$GONE]\"").await, format!("{ws}\n[]"));
    // `exec` of a program that never ends replaces the shell: restarted too.
    let out = h.call("bash", json!({"command": "exec sleep 100", "timeout": 300})).await;
    assert!(out.text_content().contains("The shell session was restarted"), "{}", out.text_content());
    assert_eq!(h.sh("echo alive").await, "alive");
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancellation_kills_the_command_and_answers_with_partial_output() {
    let h = quick();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let out = h.call_with("bash", json!({"command": "echo begun; sleep 100"}), &cancel).await;
    assert!(out.is_error);
    let text = out.text_content();
    assert!(text.starts_with("begun\n"), "{text}");
    assert!(
        text.ends_with(
            "[Command cancelled by the user and was killed. The shell session was kept: working directory and \
             environment are unchanged.]"
        ),
        "{text}"
    );
    assert_eq!(h.sh("echo next").await, "next");
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_exec_and_killing_the_shell_start_a_new_session_with_a_notice() {
    let h = quick();
    let ws = h.workspace().display().to_string();
    let notice = format!("[The shell exited; a new session was started in {ws}.]");
    h.bash("cd /usr").await;
    let out = h.bash("echo bye; exit 5").await;
    assert_eq!(out.text_content(), format!("bye\n[exit code: 5]\n{notice}"));
    assert!(out.is_error);
    assert_eq!(h.sh("pwd").await, ws);

    let out = h.bash("exec echo replaced").await;
    assert_eq!((out.text_content(), out.is_error), (format!("replaced\n{notice}"), false));

    // SIGTERM to its own process group leaves the shell standing.
    assert_eq!(h.sh("kill 0; echo survived").await, "survived");
    assert_eq!(h.sh("kill -TERM $$; echo survived").await, "survived");
    // SIGKILL to its own process group does not.
    let out = h.bash("kill -9 0").await;
    assert_eq!(out.text_content(), format!("[exit code: 137]\n{notice}"));
    // `set -e` with a failing command exits the shell as bash does.
    let out = h.bash("set -e; false; echo unreachable").await;
    assert_eq!(out.text_content(), format!("[exit code: 1]\n{notice}"));
    assert_eq!(h.sh("echo works").await, "works");
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_resets_the_session_and_works_without_one() {
    let h = Harness::new();
    let out = h.call("bash", json!({"restart": true})).await;
    assert_eq!((out.text_content(), out.is_error), ("tool has been restarted.".to_owned(), false));
    h.bash("cd /usr; export X=1").await;
    let out = h.call("bash", json!({"restart": true, "command": "ignored"})).await;
    assert_eq!(out.text_content(), "tool has been restarted.");
    assert_eq!(h.sh("pwd; echo \"[$X]\"").await, format!("{}\n[]", h.workspace().display()));
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_arguments_are_clear_errors() {
    let h = Harness::new();
    let out = h.call("bash", json!({})).await;
    assert_eq!((out.text_content(), out.is_error), ("No command provided for the bash tool".to_owned(), true));
    let out = h.call("bash", json!({"command": "sleep 1", "timeout": 600001})).await;
    assert_eq!(
        out.text_content(),
        "Invalid parameters for tool 'bash': timeout must be <= 600000; use run_in_background for longer commands"
    );
    let out = h.call("bash", json!({"command": "echo a\u{0}b"})).await;
    assert_eq!(out.text_content(), "The command contains a NUL character, which bash cannot run; remove it.");
    // None of these started a shell.
    assert!(processes_of_session(h.session.id()).is_empty());
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_processes_keep_running_and_their_output_appears_later() {
    let h = Harness::new();
    assert_eq!(h.sh("(sleep 0.3; echo late) & echo started").await, "started");
    tokio::time::sleep(Duration::from_millis(600)).await;
    let out = h.bash("echo now").await;
    assert_eq!(out.text_content().lines().take(2).collect::<Vec<_>>(), ["late", "now"]);
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_that_redirects_or_closes_the_shells_output_hides_only_its_own() {
    for mode in modes_with_landlock(vec![Mode::Bwrap { network: false }]) {
        let h = Harness::with(mode);
        let out = h.bash("exec 1>captured.txt; echo hidden").await;
        assert_eq!(out.text_content(), "(no output)", "{mode:?}");
        assert_eq!(h.sh("echo shown; echo also >&2").await, "shown\n[stderr]\nalso", "{mode:?}");
        assert_eq!(std::fs::read_to_string(h.path("captured.txt")).unwrap(), "hidden\n");

        let out = h.bash("exec 1>&- 2>&-; echo lost; true").await;
        assert_eq!(out.text_content(), "(no output)", "{mode:?}");
        assert_eq!(h.sh("echo back; echo err >&2").await, "back\n[stderr]\nerr", "{mode:?}");

        // Tackle's own query of the exported variables (for a job) is not redirected either.
        h.bash("export SEEN=yes; exec 1>/dev/null 2>&1").await;
        h.call("background_run", json!({"command": "echo job $SEEN"})).await;
        let out = h.call("job_output", json!({"job_id": "job-1", "block": true})).await;
        assert_eq!(out.text_content(), "Job job-1 [exited 0]: echo job $SEEN\njob yes", "{mode:?}");
        h.close().await;
    }
}

/// The sandbox modes to try: Landlock only where the kernel has it.
fn modes_with_landlock(mut modes: Vec<Mode>) -> Vec<Mode> {
    if tackle_sandbox::process::landlock_abi() > 0 {
        modes.push(Mode::Landlock);
    } else {
        eprintln!("skipping Mode::Landlock: the kernel does not support Landlock");
    }
    modes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_leaves_no_process_behind() {
    for mode in modes_with_landlock(vec![Mode::Bwrap { network: false }, Mode::None]) {
        let h = Harness::with_env(mode, |env| env.kill_grace = Duration::from_millis(300));
        // `setsid` starts a session of its own and its parent exits at once: without a
        // subreaper the sleep's parent becomes init and no session id of ours leads to it.
        let spawn = "sleep 1000 & (sleep 1001 &) ; nohup sleep 1002 >/dev/null 2>&1 & \
                     (trap '' TERM HUP; exec sleep 1003) & setsid sleep 1004 >/dev/null 2>&1 & disown; echo spawned";
        assert_eq!(h.sh(spawn).await, "spawned");
        // A child caught mid-exec has no readable environment for a moment, so wait for all.
        let all_seen = shell_common::eventually(Duration::from_secs(2), || {
            let found = processes_of_session(h.session.id());
            (1000..=1004).all(|n| found.iter().any(|(_, cmd)| cmd == &format!("sleep {n} ")))
        });
        assert!(all_seen.await, "{mode:?}: the shell and its sleeps run: {:?}", processes_of_session(h.session.id()));
        h.close().await;
        assert_eq!(processes_of_session(h.session.id()), Vec::<(i32, String)>::new(), "{mode:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_and_timeout_end_setsid_children_too() {
    for mode in modes_with_landlock(vec![Mode::None]) {
        let h = Harness::with_env(mode, |env| env.kill_grace = Duration::from_millis(300));
        let out = h.call("bash", json!({"command": "setsid sleep 353 & sleep 354", "timeout": 500})).await;
        assert!(
            out.text_content()
                .ends_with("The shell session was kept: working directory and environment are unchanged.]")
        );
        let sleeping =
            |n: u32| processes_of_session(h.session.id()).iter().any(|(_, cmd)| cmd == &format!("sleep {n} "));
        assert!(!sleeping(353) && !sleeping(354), "{mode:?}: {:?}", processes_of_session(h.session.id()));
        assert_eq!(h.sh("echo still here").await, "still here");

        h.sh("setsid sleep 355 >/dev/null 2>&1 & echo started").await;
        assert!(shell_common::eventually(Duration::from_secs(2), || sleeping(355)).await);
        h.call("bash", json!({"restart": true})).await;
        assert!(!sleeping(355), "{mode:?}: {:?}", processes_of_session(h.session.id()));
        h.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_session_ends_what_escaped_an_exited_shell_or_job() {
    let h = Harness::with_env(Mode::None, |env| env.kill_grace = Duration::from_millis(300));
    // The job's bash and the shell exit once their `setsid` children have a session of their
    // own: those lose every parent and session of ours, and only their environment still names
    // the session.
    // Each parent waits until its child has become `sleep` in a session of its own: a parent
    // that exits sooner (a slow machine) takes the still-grouped child down with it, as it should.
    let escape = |n: u32| {
        format!(
            "setsid sh -c 'echo $$ >escaped-{n}; exec sleep {n}' >/dev/null 2>&1 & \
             until [ -s escaped-{n} ] && grep -q '^sleep' /proc/$(cat escaped-{n})/cmdline 2>/dev/null; \
             do sleep 0.02; done"
        )
    };
    h.call("background_run", json!({"command": escape(356)})).await;
    h.bash(&format!("{}; exit 0", escape(357))).await;
    let escaped = || {
        let found = processes_of_session(h.session.id());
        ["sleep 356 ", "sleep 357 "].iter().all(|cmd| found.iter().any(|(_, c)| c == cmd))
    };
    // Generous: on a loaded two-core machine the job may take seconds to start its child.
    assert!(shell_common::eventually(Duration::from_secs(15), escaped).await);
    h.close().await;
    assert_eq!(processes_of_session(h.session.id()), Vec::<(i32, String)>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_session_without_close_kills_its_shell_and_jobs() {
    let h = Harness::new();
    let id = h.session.id().to_owned();
    h.sh("sleep 1000 & echo ok").await;
    h.call("background_run", json!({"command": "sleep 1001"})).await;
    drop(h);
    assert!(shell_common::eventually(Duration::from_secs(2), || processes_of_session(&id).is_empty()).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_output_keeps_head_and_tail_and_spills_the_rest() {
    let h = Harness::new();
    let out = h.bash("seq 1 100000").await;
    let text = out.text_content();
    assert!(out.meta.truncated);
    let spill = out.meta.spill_path.clone().unwrap();
    assert_eq!(spill, format!(".tackle/outputs/{}/call_1.stdout.txt", h.session.id()));
    let full: String = (1..=100_000).map(|i| format!("{i}\n")).collect();
    assert_eq!(std::fs::read_to_string(h.path(&spill)).unwrap(), full);
    assert!(text.starts_with("1\n2\n3\n"));
    assert!(text.ends_with("99999\n100000"));
    let marker = text.lines().find(|l| l.starts_with("[... ")).unwrap();
    assert!(marker.ends_with(&format!("omitted; full output saved to {spill} ...]")), "{marker}");
    assert!(text.chars().count() <= 30_000 + marker.len() + 1, "{}", text.chars().count());
    assert_eq!(out.structured.unwrap()["stdout_spill"], json!(spill));

    // Both streams overflowing: stderr keeps a third of the budget.
    let out = h.bash("seq 1 100000; seq 1 100000 >&2").await;
    let text = out.text_content();
    let (stdout_part, stderr_part) = text.split_once("\n[stderr]\n").unwrap();
    let shown = |part: &str| part.lines().filter(|l| !l.starts_with("[... ")).map(|l| l.len() + 1).sum::<usize>();
    assert!((19_000..=20_000).contains(&shown(stdout_part)), "{}", shown(stdout_part));
    assert!((9_000..=10_000).contains(&shown(stderr_part)), "{}", shown(stderr_part));
    assert!(stderr_part.contains(&format!(".tackle/outputs/{}/call_2.stderr.txt", h.session.id())));
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gigabyte_of_output_is_drained_with_bounded_memory_and_a_capped_spill_file() {
    let h = Harness::new();
    let out = h
        .call(
            "bash",
            json!({"command": "head -c 1000000000 /dev/zero | tr '\\0' 'y'; echo; echo done", "timeout": 120000}),
        )
        .await;
    let text = out.text_content();
    assert!(!out.is_error, "{text}");
    assert!(text.ends_with("\ndone"), "{}", &text[text.len().saturating_sub(200)..]);
    assert!(text.contains("[the saved file holds only the first 64 MiB of this stream]"));
    let spill = h.path(out.meta.spill_path.as_ref().unwrap());
    let size = std::fs::metadata(&spill).unwrap().len();
    let note = "\n[tackle: output beyond 64 MiB was not saved]\n".len() as u64;
    assert_eq!(size, 64 * 1024 * 1024 + note);
    assert_eq!(h.sh("echo after").await, "after");
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn apply_patch_commands_are_routed_to_the_apply_patch_tool() {
    let h = Harness::new();
    let heredoc =
        "apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: notes.txt\n+first\n+it's here\n*** End Patch\nEOF";
    let out = h.bash(heredoc).await;
    assert_eq!(
        (out.text_content(), out.is_error),
        ("Success. Updated the following files:\nA notes.txt".to_owned(), false)
    );
    assert_eq!(std::fs::read_to_string(h.path("notes.txt")).unwrap(), "first\nit's here\n");

    let quoted =
        "apply_patch '*** Begin Patch\n*** Update File: notes.txt\n first\n-it'\\''s here\n+it moved\n*** End Patch'";
    let out = h.bash(quoted).await;
    assert_eq!(out.text_content(), "Success. Updated the following files:\nM notes.txt");
    assert_eq!(std::fs::read_to_string(h.path("notes.txt")).unwrap(), "first\nit moved\n");

    // The path policy applies as for the apply_patch tool: nothing is written outside.
    let outside = "applypatch <<EOF\n*** Begin Patch\n*** Add File: /etc/tackle-escape\n+x\n*** End Patch\nEOF";
    let out = h.bash(outside).await;
    assert!(out.is_error);
    assert!(out.text_content().contains("is outside the workspace"), "{}", out.text_content());
    assert!(!std::path::Path::new("/etc/tackle-escape").exists());

    // Anything else named apply_patch is an ordinary command.
    let out = h.bash("apply_patch --help").await;
    assert!(out.text_content().contains("apply_patch: command not found"), "{}", out.text_content());
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_dropped_midway_leaves_no_half_used_shell() {
    let h = Harness::new();
    h.bash("export LOST=1").await;
    let dropped = tokio::time::timeout(Duration::from_millis(300), h.bash("sleep 1000; echo late")).await;
    assert!(dropped.is_err());
    let out = h.bash("echo next; echo \"[$LOST]\"").await;
    assert_eq!(
        out.text_content(),
        format!(
            "next\n[]\n[The shell session had ended; this command ran in a new session started in {}.]",
            h.workspace().display()
        )
    );
    assert!(processes_of_session(h.session.id()).iter().all(|(_, cmd)| !cmd.contains("sleep 1000")));
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shell_runs_inside_the_sandbox() {
    let outside = tempfile::tempdir_in("/var/tmp").unwrap();
    let escaped = outside.path().join("escaped");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    for mode in [Mode::Bwrap { network: false }, Mode::Landlock] {
        let h = Harness::with(mode);
        let out = h.bash(&format!("echo kept > inside.txt; echo x > {}", escaped.display())).await;
        assert!(out.is_error, "{mode:?}");
        assert!(
            out.text_content().ends_with(&format!(
                "[exit code: 1]\n[sandbox: writes outside the workspace are blocked; the user can set [sandbox] \
                 extra_writable = [\"DIR\"] in {}]",
                tackle_policy::config::user_config_shown()
            )),
            "{mode:?}: {}",
            out.text_content()
        );
        assert!(!escaped.exists());
        assert_eq!(std::fs::read_to_string(h.path("inside.txt")).unwrap(), "kept\n");
        let out = h.bash(&connect).await;
        assert!(out.is_error && !out.text_content().contains("connected"), "{mode:?}: {}", out.text_content());
        assert!(
            out.text_content().ends_with(&format!(
                "\n[sandbox: network access is off, so connections (127.0.0.1 too) and name lookups fail; the user \
                 can set [sandbox] network = true in {}]",
                tackle_policy::config::user_config_shown()
            )),
            "{mode:?}: {}",
            out.text_content()
        );
        h.close().await;
    }
    let h = Harness::with(Mode::Bwrap { network: true });
    assert_eq!(h.sh(&connect).await, "connected");
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shell_that_cannot_start_is_a_clear_error() {
    for (mode, reason) in [
        (Mode::None, "cannot run bash: No such file or directory (os error 2)"),
        (Mode::Bwrap { network: false }, "bwrap: execvp bash: No such file or directory"),
    ] {
        let h = Harness::with_env(mode, |env| env.env = env.env.with_vars([("PATH".into(), "/nonexistent".into())]));
        let out = h.bash("echo hi").await;
        assert_eq!((out.text_content(), out.is_error), (format!("Error starting bash session: {reason}"), true));
        let out = h.call("bash", json!({"restart": true})).await;
        assert_eq!(out.text_content(), format!("Error starting bash session: {reason}"));
        h.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn debug_traps_and_traces_show_only_the_commands_own_steps() {
    let h = Harness::with(Mode::None);
    // The trap fires before each of the command's own simple commands, never for the loop's.
    assert_eq!(h.sh("X=exported; export X; trap 'echo dbg' DEBUG; echo one").await, "dbg\none");
    assert_eq!(h.sh("echo two").await, "dbg\ntwo");
    // Tackle's own query of the exported variables (for a job) sees no trap, and leaves it.
    h.call("background_run", json!({"command": "echo job $X"})).await;
    let out = h.call("job_output", json!({"job_id": "job-1", "block": true})).await;
    assert_eq!(out.text_content(), "Job job-1 [exited 0]: echo job $X\njob exported");
    assert_eq!(h.sh("echo three").await, "dbg\nthree");
    assert_eq!(h.sh("trap - DEBUG; echo four").await, "dbg\nfour");
    assert_eq!(h.sh("echo five").await, "five");

    // `set -x` and `set -v` trace the command and persist like any shell option (inside
    // `eval`, bash doubles the `+` of `PS4`).
    assert_eq!(h.sh("set -x; echo six").await, "six\n[stderr]\n++ echo six");
    assert_eq!(h.sh("echo seven").await, "seven\n[stderr]\n++ echo seven");
    h.call("background_run", json!({"command": "true"})).await;
    assert_eq!(h.sh("set +x; set -v; echo eight").await, "eight\n[stderr]\n++ set +x");
    assert_eq!(h.sh("echo nine").await, "nine\n[stderr]\necho nine");
    h.call("background_run", json!({"command": "true"})).await;
    assert_eq!(h.sh("set +v").await, "[stderr]\nset +v");
    assert_eq!(h.sh("echo ten").await, "ten");

    // A trap with quotes is given back whole; `set -e` is not kept.
    assert_eq!(h.sh(r#"trap 'echo "q  x"' DEBUG; set -e; echo eleven"#).await, "q  x\nq  x\neleven");
    assert_eq!(h.sh("false; echo twelve").await, "q  x\nq  x\ntwelve");
    h.close().await;
}
