//! How `tackle fleet run` runs its tasks: at most `--workers` at a time, each one `tackle run
//! --json` on a fresh copy of its workspace, retried after an infrastructure failure, its
//! result recorded (docs/scale-out.md#on-this-machine). Where the `tackle run` happens is the
//! engine: a child process here ([`spawn_run`]) or a Ray job (`ray.rs`).
//!
//! Local children run in their own process groups, so the fleet decides what reaches them:
//! Ctrl-C (SIGINT), SIGTERM and SIGHUP of the fleet are passed on as SIGINT to every running
//! task, which ends `interrupted` with its result written and its container removed; tasks not
//! yet started are not started.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::results::{self, Outcome, TaskResult};
use super::tasks::FleetTask;

/// Where scratch copies of workspaces live, under the output directory.
const WORK_DIR: &str = ".work";

/// What every task of a fleet is run with.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The `tackle` binary the children are.
    pub binary: PathBuf,
    /// The output directory.
    pub out: PathBuf,
    /// Flags given to every `tackle run` (after the task's own).
    pub run_flags: Vec<String>,
    /// The fleet's `--model`, if any (a task's own wins).
    pub model: Option<String>,
    /// How many tasks run at once.
    pub workers: usize,
    /// Attempts per task that ends in infrastructure failure (1: no retry).
    pub attempts: u32,
    /// Where each `tackle run` happens.
    pub engine: Engine,
}

/// Where a task's `tackle run` happens.
#[derive(Debug, Clone)]
pub enum Engine {
    /// A child process of the fleet.
    Local,
    /// A job on a Ray cluster.
    Ray(Arc<super::ray::Ray>),
}

/// How a task ended, for the progress display.
#[derive(Debug, Clone)]
pub struct Finished {
    pub result: TaskResult,
    pub attempts: u32,
}

/// Runs `tasks` under `plan`; `on_start` and `on_finish` are told of each task (the progress
/// display); `stop` ends the fleet early (Ctrl-C). The results of the tasks that finished.
pub async fn run(
    plan: Arc<Plan>,
    tasks: Vec<FleetTask>,
    stop: CancellationToken,
    on_start: Arc<dyn Fn(&str) + Send + Sync>,
    on_finish: Arc<dyn Fn(&Finished) + Send + Sync>,
) -> Vec<TaskResult> {
    let slots = Arc::new(Semaphore::new(plan.workers.max(1)));
    let finished = Arc::new(Mutex::new(Vec::new()));
    let mut running = tokio::task::JoinSet::new();
    for task in tasks {
        let permit = tokio::select! {
            permit = Arc::clone(&slots).acquire_owned() => permit,
            () = stop.cancelled() => break,
        };
        let Ok(permit) = permit else { break };
        if stop.is_cancelled() {
            break;
        }
        let (plan, stop, finished) = (Arc::clone(&plan), stop.clone(), Arc::clone(&finished));
        let (on_start, on_finish) = (Arc::clone(&on_start), Arc::clone(&on_finish));
        running.spawn(async move {
            on_start(&task.id);
            let done = run_with_retries(&plan, &task, &stop).await;
            on_finish(&done);
            if let Ok(mut list) = finished.lock() {
                list.push(done.result);
            }
            drop(permit);
        });
    }
    while running.join_next().await.is_some() {}
    std::mem::take(&mut *finished.lock().unwrap_or_else(std::sync::PoisonError::into_inner))
}

/// Runs `task`, again after an infrastructure failure while attempts remain (backoff 1 s,
/// 2 s, 4 s, ... up to 30 s).
async fn run_with_retries(plan: &Plan, task: &FleetTask, stop: &CancellationToken) -> Finished {
    let mut attempt = 1;
    loop {
        let result = run_once(plan, task, attempt, stop).await;
        if result.outcome != Outcome::Infra || attempt >= plan.attempts || stop.is_cancelled() {
            return Finished { result, attempts: attempt };
        }
        let backoff = Duration::from_secs(1 << (attempt - 1).min(5)).min(Duration::from_secs(30));
        tokio::select! {
            () = tokio::time::sleep(backoff) => {}
            () = stop.cancelled() => return Finished { result, attempts: attempt },
        }
        attempt += 1;
    }
}

/// One attempt: copy the workspace, run `tackle run`, record the result, remove the copy.
/// Each attempt has its own workspace copy, so a run a lost node left going cannot touch the
/// next attempt's.
async fn run_once(plan: &Plan, task: &FleetTask, attempt: u32, stop: &CancellationToken) -> TaskResult {
    let started = Instant::now();
    let task_dir = results::task_dir(&plan.out, &task.id);
    let work = plan.out.join(WORK_DIR).join(format!("{}.{attempt}", task.id));
    let outcome = async {
        std::fs::create_dir_all(&task_dir).map_err(|e| format!("cannot create {}: {e}", task_dir.display()))?;
        // A result of an earlier, unfinished attempt does not stand.
        let _ = std::fs::remove_file(task_dir.join(results::RESULT));
        if work.exists() {
            std::fs::remove_dir_all(&work).map_err(|e| format!("cannot clear {}: {e}", work.display()))?;
        }
        let made = match &task.workspace {
            Some(source) => {
                copy_tree(source, &work).map_err(|e| format!("cannot copy the workspace {}: {e}", source.display()))
            }
            None => std::fs::create_dir_all(&work).map_err(|e| format!("cannot create {}: {e}", work.display())),
        };
        made?;
        std::fs::write(task_dir.join("task.md"), &task.task).map_err(|e| format!("cannot write the task: {e}"))?;
        let args = run_args(plan, task, &task_dir, &work);
        match &plan.engine {
            Engine::Local => spawn_run(plan, &args, &task_dir, stop).await,
            Engine::Ray(ray) => ray.run(&args, task, attempt, &task_dir, stop).await,
        }
    }
    .await;
    let _ = std::fs::remove_dir_all(&work);
    let value = outcome.unwrap_or_else(|message| {
        // Nothing ran, for a reason of this machine's: infrastructure.
        json!({"status": "error", "steps": 0, "exit_code": 3, "error": {"kind": "infrastructure", "message": message}})
    });
    let mut value = value;
    if value.get("duration_ms").is_none() {
        value["duration_ms"] = json!(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX));
    }
    value["id"] = json!(task.id);
    let code = value["exit_code"].as_i64().unwrap_or(3);
    let result = TaskResult { id: task.id.clone(), outcome: Outcome::of(code), value };
    if let Err(err) = results::record(&plan.out, &result) {
        tracing::warn!("cannot record the result of {}: {err}", task.id);
    }
    result
}

/// The arguments of the task's `tackle run` (after the binary).
fn run_args(plan: &Plan, task: &FleetTask, task_dir: &Path, work: &Path) -> Vec<String> {
    let path = |p: &Path| p.display().to_string();
    let mut args = vec![
        "run".to_owned(),
        "--task-file".to_owned(),
        path(&task_dir.join("task.md")),
        "--json".to_owned(),
        "--workspace".to_owned(),
        path(work),
        "--trajectory".to_owned(),
        path(&task_dir.join(results::TRAJECTORY)),
    ];
    let mut pair = |flag: &str, value: Option<String>| {
        if let Some(value) = value {
            args.push(flag.to_owned());
            args.push(value);
        }
    };
    pair("--model", task.model.clone().or_else(|| plan.model.clone()));
    pair("--timeout", task.timeout.map(|t| format!("{}ms", t.as_millis())));
    pair("--max-steps", task.max_steps.map(|n| n.to_string()));
    pair("--container", task.image.clone());
    pair("--container-workdir", task.workdir.clone());
    pair("--setup", task.setup.clone());
    // The fleet's flags, without those the task sets itself.
    let mut flags = plan.run_flags.clone();
    drop_overridden(&mut flags, task);
    args.extend(flags);
    args
}

/// The result a run printed: the last non-empty line of its stdout, when it is an object.
pub fn printed_result(stdout: &[u8]) -> Option<Value> {
    let stdout = String::from_utf8_lossy(stdout);
    let line = stdout.lines().rev().find(|line| !line.trim().is_empty())?;
    match serde_json::from_str::<Value>(line) {
        Ok(value @ Value::Object(_)) => Some(value),
        _ => None,
    }
}

/// Runs the child and reads its result: the last line of its stdout, or a result made from
/// its exit when it printed none (a crash is infrastructure).
async fn spawn_run(plan: &Plan, args: &[String], task_dir: &Path, stop: &CancellationToken) -> Result<Value, String> {
    let log = std::fs::File::create(task_dir.join("stderr.log")).map_err(|e| format!("cannot create the log: {e}"))?;
    let mut command = tokio::process::Command::new(&plan.binary);
    command.args(args);
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::from(log)).process_group(0).kill_on_drop(true);
    // A fleet killed outright (SIGKILL, the OOM killer) leaves no run behind: each gets the
    // SIGTERM a run ends cleanly on (exit 143) when the fleet dies. The signal follows the
    // forking thread, here a runtime worker, which lives as long as the fleet (the fleet never
    // blocks in place; compare tackle-sandbox's spawner thread for tool processes).
    let fleet = std::process::id();
    // SAFETY: prctl and getppid are async-signal-safe and touch no memory of the parent.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The fleet died between the fork and the prctl: the signal will never come.
            if u32::try_from(libc::getppid()).ok() != Some(fleet) {
                return Err(std::io::Error::other("the fleet has ended"));
            }
            Ok(())
        });
    }
    let child = command.spawn().map_err(|e| format!("cannot start {}: {e}", plan.binary.display()))?;
    let pid = child.id();
    let wait = child.wait_with_output();
    tokio::pin!(wait);
    let output = tokio::select! {
        output = &mut wait => output,
        () = stop.cancelled() => {
            // Ctrl-C of the fleet: the task ends as Ctrl-C ends a run, with its result.
            if let Some(pid) = pid.and_then(|p| libc::pid_t::try_from(p).ok()) {
                // SAFETY: kill(2) with the pid of a child this process started and still holds
                // (not yet reaped, so the pid cannot have been reused); no memory is touched.
                unsafe { libc::kill(pid, libc::SIGINT) };
            }
            wait.await
        }
    }
    .map_err(|e| format!("the run's process failed: {e}"))?;
    if let Some(result) = printed_result(&output.stdout) {
        return Ok(result);
    }
    let code = output.status.code();
    let tail = std::fs::read_to_string(task_dir.join("stderr.log")).unwrap_or_default();
    let tail: String = tail.lines().rev().take(5).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n");
    // A usage error or a signal keeps its code; anything else that printed no result crashed,
    // which is this machine's problem, not the task's: infrastructure.
    let (exit_code, kind) = match code {
        Some(code @ (2 | 129 | 130 | 143)) => (code, "no_result"),
        _ => (3, "crashed"),
    };
    Ok(json!({
        "status": "error",
        "exit_code": exit_code,
        "error": {"kind": kind, "message": format!("the run ended without a result (exit {code:?}): {tail}")},
    }))
}

/// Removes from the fleet's flags those the task sets itself.
fn drop_overridden(flags: &mut Vec<String>, task: &FleetTask) {
    let mut drop = Vec::new();
    if task.timeout.is_some() {
        drop.push("--timeout");
    }
    if task.max_steps.is_some() {
        drop.push("--max-steps");
    }
    let mut kept = Vec::with_capacity(flags.len());
    let mut skip_value = false;
    for flag in flags.drain(..) {
        if skip_value {
            skip_value = false;
            continue;
        }
        if drop.contains(&flag.as_str()) {
            skip_value = true;
            continue;
        }
        kept.push(flag);
    }
    *flags = kept;
}

/// Copies the directory `from` to `to` (which must not exist): files with their permissions,
/// symbolic links as links (never followed), directories; other kinds (sockets, devices) are
/// left out.
pub fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(from)?;
    if !meta.is_dir() {
        return Err(std::io::Error::other("not a directory"));
    }
    std::fs::create_dir_all(to)?;
    std::fs::set_permissions(to, meta.permissions())?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&source)?, &target)?;
        } else if kind.is_dir() {
            copy_tree(&source, &target)?;
        } else if kind.is_file() {
            std::fs::copy(&source, &target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_keeps_links_as_links_and_modes() {
        use std::os::unix::fs::PermissionsExt as _;
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        let source = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(source.path().join("a/b")).unwrap();
        std::fs::write(source.path().join("a/b/run.sh"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(source.path().join("a/b/run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink(outside.path(), source.path().join("escape")).unwrap();
        std::os::unix::fs::symlink("a/b/run.sh", source.path().join("short")).unwrap();
        let copy = tempfile::tempdir().unwrap();
        let to = copy.path().join("ws");
        copy_tree(source.path(), &to).unwrap();
        assert_eq!(std::fs::read_link(to.join("escape")).unwrap(), outside.path());
        assert_eq!(std::fs::read_link(to.join("short")).unwrap(), Path::new("a/b/run.sh"));
        let mode = std::fs::metadata(to.join("a/b/run.sh")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
        // Writing through the copy's tree never reaches the original.
        std::fs::write(to.join("a/b/run.sh"), "changed").unwrap();
        assert_eq!(std::fs::read_to_string(source.path().join("a/b/run.sh")).unwrap(), "#!/bin/sh\n");
        assert!(copy_tree(&source.path().join("short"), &copy.path().join("x")).is_err());
    }

    #[test]
    fn a_tasks_own_limits_replace_the_fleets() {
        let task = FleetTask {
            id: "a".into(),
            task: "t".into(),
            workspace: None,
            image: None,
            workdir: None,
            setup: None,
            model: None,
            timeout: Some(Duration::from_secs(5)),
            max_steps: None,
        };
        let mut flags: Vec<String> =
            ["--timeout", "30m", "--max-steps", "9", "--yes"].iter().map(|s| (*s).to_owned()).collect();
        drop_overridden(&mut flags, &task);
        assert_eq!(flags, ["--max-steps", "9", "--yes"]);
    }
}
