//! Background jobs through the executor: `background_run` (and `bash` with
//! `run_in_background`) answer at once, `job_output` reads new output and the status,
//! `job_kill` stops a job, finished jobs become notifications, and nothing outlives the session.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::shell_common;

use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::json;
use shell_common::{Harness, Mode, processes_of_session};
use tackle_core::Notifications;
use tackle_tools::shell::{JobNotification, JobNotifications, JobStatus};

fn quick() -> Harness {
    Harness::with_env(Mode::Bwrap { network: false }, |env| env.kill_grace = Duration::from_millis(300))
}

async fn output(h: &Harness, args: serde_json::Value) -> String {
    h.call("job_output", args).await.text_content()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_starts_at_once_and_its_output_is_read_incrementally() {
    let h = quick();
    let out = h.call("background_run", json!({"command": "echo one; sleep 0.3; echo two"})).await;
    assert_eq!(
        out.text_content(),
        "Started background job job-1: echo one; sleep 0.3; echo two. Use job_output to read its output and job_kill \
         to stop it."
    );
    assert_eq!(out.structured.unwrap(), json!({"job_id": "job-1"}));

    let done = output(&h, json!({"job_id": "job-1", "block": true, "timeout": 10000})).await;
    assert_eq!(done, "Job job-1 [exited 0]: echo one; sleep 0.3; echo two\none\ntwo");
    assert_eq!(
        output(&h, json!({"job_id": "job-1"})).await,
        "Job job-1 [exited 0]: echo one; sleep 0.3; echo two\n(no new output)"
    );
    assert_eq!(output(&h, json!({"job_id": "job-1", "from_start": true})).await, done);
    let log = h.path(&format!(".tackle/outputs/{}/jobs/job-1.log", h.session.id()));
    assert_eq!(std::fs::read_to_string(log).unwrap(), "one\ntwo\n");
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_inherits_the_shells_directory_and_exports_and_merges_its_streams() {
    let h = quick();
    std::fs::create_dir(h.path("sub")).unwrap();
    h.bash("cd sub; export FROM_SHELL='a b'; not_exported=x; (sleep 0.2; echo between) &").await;
    let out = h
        .call(
            "bash",
            json!({"command": "pwd; echo \"$FROM_SHELL[$not_exported]\"; echo err >&2", "run_in_background": true}),
        )
        .await;
    assert!(out.text_content().starts_with("Started background job job-1: "), "{}", out.text_content());
    assert_eq!(
        out.structured.unwrap(),
        json!({"stdout": "", "stderr": "", "exit_code": null, "cwd": h.path("sub").to_str().unwrap(),
               "interrupted": false, "background_job_id": "job-1"})
    );
    let text = output(&h, json!({"job_id": "job-1", "block": true})).await;
    assert_eq!(text.lines().skip(1).collect::<Vec<_>>(), [h.path("sub").to_str().unwrap(), "a b[]", "err"]);
    // Output printed by the shell's own background process is still delivered to the shell.
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(h.sh("echo mine").await.starts_with("between\n"));
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn job_kill_stops_a_running_job_and_reports_a_finished_one() {
    let h = quick();
    h.call("background_run", json!({"command": "trap '' TERM; echo up; sleep 1000"})).await;
    h.call("background_run", json!({"command": "true"})).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let out = h.call("job_kill", json!({"job_id": "job-1"})).await;
    assert_eq!((out.text_content(), out.is_error), ("Job job-1 killed.".to_owned(), false));
    assert!(output(&h, json!({"job_id": "job-1"})).await.starts_with("Job job-1 [killed]: "));
    let out = h.call("job_kill", json!({"job_id": "job-1"})).await;
    assert_eq!((out.text_content(), out.is_error), ("Job job-1 had already finished (killed).".to_owned(), false));
    h.call("job_output", json!({"job_id": "job-2", "block": true})).await;
    assert_eq!(
        h.call("job_kill", json!({"job_id": "job-2"})).await.text_content(),
        "Job job-2 had already finished (exited 0)."
    );

    for tool in ["job_output", "job_kill"] {
        let out = h.call(tool, json!({"job_id": "job-9"})).await;
        assert!(out.is_error);
        assert_eq!(out.text_content(), "Unknown job id: job-9. Jobs: job-1 [killed], job-2 [exited 0]");
    }
    assert!(processes_of_session(h.session.id()).iter().all(|(_, cmd)| !cmd.contains("sleep 1000")));
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finished_jobs_become_notifications_and_killed_ones_do_not() {
    let h = quick();
    let queue = h.session.state().get::<Notifications>();
    let mut events = h.session.state().get::<JobNotifications>().subscribe();
    h.call("background_run", json!({"command": "exit 3"})).await;
    h.call("background_run", json!({"command": "sleep 1000", "timeout": 300})).await;
    h.call("background_run", json!({"command": "sleep 1000"})).await;
    h.call("job_kill", json!({"job_id": "job-3"})).await;
    let first = tokio::time::timeout(Duration::from_secs(10), events.next()).await.unwrap().unwrap();
    let second = tokio::time::timeout(Duration::from_secs(10), events.next()).await.unwrap().unwrap();
    let mut got = [first, second];
    got.sort_by(|a, b| a.job_id.cmp(&b.job_id));
    assert_eq!(
        got,
        [
            JobNotification { job_id: "job-1".into(), command: "exit 3".into(), status: JobStatus::Exited(3) },
            JobNotification { job_id: "job-2".into(), command: "sleep 1000".into(), status: JobStatus::TimedOut },
        ]
    );
    let mut texts = queue.drain();
    texts.sort();
    assert_eq!(
        texts,
        [
            "Background job job-1 (exit 3) finished: exited 3. Use job_output to read its output.",
            "Background job job-2 (sleep 1000) finished: timed out. Use job_output to read its output.",
        ]
    );
    // A later job's notification arrives; the killed job's never came before it.
    h.call("background_run", json!({"command": "exit 4"})).await;
    let marker = tokio::time::timeout(Duration::from_secs(10), events.next()).await.unwrap().unwrap();
    assert_eq!(
        marker,
        JobNotification { job_id: "job-4".into(), command: "exit 4".into(), status: JobStatus::Exited(4) }
    );
    assert!(events.take_pending().is_empty(), "job_kill is not notified");
    assert_eq!(queue.drain().len(), 1, "only the later job is in the queue");
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_most_sixteen_jobs_run_at_once() {
    let h = quick();
    for _ in 0..16 {
        assert!(!h.call("background_run", json!({"command": "sleep 1000"})).await.is_error);
    }
    let out = h.call("background_run", json!({"command": "sleep 1000"})).await;
    assert_eq!(
        (out.text_content(), out.is_error),
        ("Too many background jobs running (16); stop one with job_kill first.".to_owned(), true)
    );
    h.call("job_kill", json!({"job_id": "job-4"})).await;
    assert!(!h.call("background_run", json!({"command": "true"})).await.is_error);
    h.close().await;
    assert_eq!(processes_of_session(h.session.id()), Vec::<(i32, String)>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_session_kills_every_job_and_their_children() {
    for mode in [Mode::Bwrap { network: false }, Mode::None] {
        let h = Harness::with_env(mode, |env| env.kill_grace = Duration::from_millis(300));
        h.call("background_run", json!({"command": "sleep 1000 & (sleep 1001 &); trap '' TERM; sleep 1002"})).await;
        h.bash("echo shell too").await;
        assert!(
            shell_common::eventually(Duration::from_secs(2), || processes_of_session(h.session.id()).len() >= 4).await
        );
        h.close().await;
        assert_eq!(processes_of_session(h.session.id()), Vec::<(i32, String)>::new(), "{mode:?}");
        let out = h.call("background_run", json!({"command": "true"})).await;
        assert_eq!(out.text_content(), "The session has ended; no background job can start.");
    }
}

// A call still on its way when the session closed (`tackle mcp serve` ended by a signal) may
// be the session's first command: it must not make a shell state nobody will close.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_closed_before_its_first_command_starts_no_job_or_shell() {
    let h = quick();
    h.close().await;
    let out = h.call("background_run", json!({"command": "sleep 1000"})).await;
    assert!(out.is_error, "{}", out.text_content());
    assert!(out.text_content().contains("The session has ended"), "{}", out.text_content());
    let out = h.call("bash", json!({"command": "sleep 1000 &"})).await;
    assert!(out.is_error && out.text_content().contains("The session has ended"), "{}", out.text_content());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(processes_of_session(h.session.id()), Vec::<(i32, String)>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_job_output_is_cut_and_names_the_log() {
    let h = quick();
    h.call("background_run", json!({"command": "seq 1 100000"})).await;
    let out = h.call("job_output", json!({"job_id": "job-1", "block": true})).await;
    let log = format!(".tackle/outputs/{}/jobs/job-1.log", h.session.id());
    let text = out.text_content();
    assert!(out.meta.truncated);
    assert_eq!(out.meta.spill_path.as_deref(), Some(log.as_str()));
    assert!(text.starts_with("Job job-1 [exited 0]: seq 1 100000\n1\n2\n"), "{}", &text[..100]);
    assert!(text.contains(&format!("omitted; full output saved to {log} ...]")));
    assert!(text.ends_with("99999\n100000"));
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_killed_while_its_sandbox_starts_leaves_nothing() {
    let h = quick();
    for n in 1..=8 {
        h.call("background_run", json!({"command": "sleep 1000"})).await;
        let out = h.call("job_kill", json!({"job_id": format!("job-{n}")})).await;
        assert_eq!(out.text_content(), format!("Job job-{n} killed."));
    }
    assert_eq!(processes_of_session(h.session.id()), Vec::<(i32, String)>::new());
    h.close().await;
}
