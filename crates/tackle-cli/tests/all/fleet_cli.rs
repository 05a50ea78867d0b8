//! `tackle fleet run` and `tackle fleet collect` through the real binary against the scripted
//! model server (issue 29, part 2, the local engine): results, diffs and predictions per task
//! on copies of the workspace, resume into the same directory, `--retry infra`, a half-finished
//! task run again, bad task files named, Ctrl-C, and collect.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tackle_testkit::{FakeLlm, Fault, Protocol, Reply, Script, Turn};

/// `tackle fleet ARGS` with `config` as the user config dir.
fn fleet(config: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tackle"));
    command
        .arg("fleet")
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .env_remove("TACKLE_MODEL")
        .env_remove("TACKLE_TRUST_WORKSPACE")
        .env("TACKLE_CONFIG_DIR", config)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

async fn output(mut command: Command) -> Output {
    tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap()
}

fn config() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.toml"), "[sandbox]\nmode = \"none\"\n[providers.openai]\nmax_retries = 0\n")
        .unwrap();
    dir
}

/// Every reply writes `out.txt` and finishes.
fn writer() -> Script {
    Script::new([Turn::reply(
        Reply::text("Writing.")
            .call("w", "write_file", json!({"file_path": "out.txt", "content": "written\n"}))
            .call("d", "task_done", json!({}))
            .usage(10, 2),
    )])
    .repeat_last()
}

/// A git repository with one file, the tasks' shared source workspace.
fn source_repo(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("README.md"), "hello\n").unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git").args(args).current_dir(dir).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "start"]);
}

fn task_file(dir: &Path, ids: &[&str]) -> std::path::PathBuf {
    let path = dir.join("tasks.jsonl");
    let lines: Vec<String> = ids
        .iter()
        .map(|id| json!({"id": id, "task": format!("write out.txt for {id}"), "workspace": "repo"}).to_string())
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

fn json_file(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn base_args<'a>(tasks: &'a str, out: &'a str, url: &'a str) -> Vec<&'a str> {
    vec![
        "run",
        tasks,
        "--out",
        out,
        "--workers",
        "2",
        "--model",
        "openai/fake",
        "--base-url",
        url,
        "--permission-mode",
        "bypass",
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn a_local_fleet_writes_results_diffs_and_predictions_and_resumes() {
    let root = tempfile::tempdir().unwrap();
    source_repo(&root.path().join("repo"));
    let tasks = task_file(root.path(), &["t1", "t2", "t3", "t4"]);
    let out = root.path().join("out");
    let (tasks_arg, out_arg) = (tasks.display().to_string(), out.display().to_string());
    let server = FakeLlm::start(writer()).await;
    let url = server.base_url(Protocol::OpenAi);
    let config = config();
    let ran = output(fleet(config.path(), &base_args(&tasks_arg, &out_arg, &url))).await;
    assert_eq!(ran.status.code(), Some(0), "{}", String::from_utf8_lossy(&ran.stderr));
    assert_eq!(server.requests().len(), 4);
    for id in ["t1", "t2", "t3", "t4"] {
        let result = json_file(&out.join(id).join("result.json"));
        assert_eq!((&result["status"], &result["exit_code"]), (&json!("success"), &json!(0)), "{result}");
        let diff = std::fs::read_to_string(out.join(id).join("diff.patch")).unwrap();
        assert!(diff.contains("+++ b/out.txt") && diff.contains("+written"), "{id}: {diff}");
        assert!(out.join(id).join("trajectory.jsonl").is_file());
    }
    // Each task worked on its own copy: the source is untouched, the copies are gone.
    assert!(!root.path().join("repo/out.txt").exists());
    assert_eq!(std::fs::read_dir(out.join(".work")).unwrap().count(), 0);
    let predictions: Vec<Value> = std::fs::read_to_string(out.join("predictions.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids: Vec<&str> = predictions.iter().map(|p| p["instance_id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["t1", "t2", "t3", "t4"], "in task-file order at the end");
    assert_eq!(predictions[0]["model_name_or_path"], "openai/fake");
    assert!(predictions[0]["model_patch"].as_str().unwrap().contains("+written"));
    let summary = json_file(&out.join("summary.json"));
    assert_eq!((&summary["tasks"], &summary["done"], &summary["pending"]), (&json!(4), &json!(4), &json!(0)));
    assert_eq!((&summary["input_tokens"], &summary["output_tokens"]), (&json!(40), &json!(8)));
    assert!(
        String::from_utf8_lossy(&ran.stdout).contains("tasks 4  done 4"),
        "{}",
        String::from_utf8_lossy(&ran.stdout)
    );

    // Again into the same directory: every task has a final result, nothing runs.
    let again = output(fleet(config.path(), &base_args(&tasks_arg, &out_arg, &url))).await;
    assert_eq!(again.status.code(), Some(0), "{}", String::from_utf8_lossy(&again.stderr));
    assert_eq!(server.requests().len(), 4);
    assert!(String::from_utf8_lossy(&again.stderr).contains("4 task(s) already have a final result"));

    // A task whose result never got written (the fleet was killed mid-task) runs again, alone.
    std::fs::remove_file(out.join("t3").join("result.json")).unwrap();
    let resumed = output(fleet(config.path(), &base_args(&tasks_arg, &out_arg, &url))).await;
    assert_eq!(resumed.status.code(), Some(0), "{}", String::from_utf8_lossy(&resumed.stderr));
    assert_eq!(server.requests().len(), 5);
    assert_eq!(json_file(&out.join("t3").join("result.json"))["status"], "success");
    assert_eq!(std::fs::read_to_string(out.join("predictions.jsonl")).unwrap().lines().count(), 4);

    // collect rebuilds the same predictions from the directories alone.
    std::fs::remove_file(out.join("predictions.jsonl")).unwrap();
    let collected = output(fleet(config.path(), &["collect", &out_arg, "--model-name", "openai/fake"])).await;
    assert_eq!(collected.status.code(), Some(0), "{}", String::from_utf8_lossy(&collected.stderr));
    let rebuilt: Vec<Value> = std::fs::read_to_string(out.join("predictions.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rebuilt, predictions);
}

#[tokio::test(flavor = "multi_thread")]
async fn infrastructure_failures_exit_3_and_retry_infra_runs_them_again() {
    let root = tempfile::tempdir().unwrap();
    source_repo(&root.path().join("repo"));
    let tasks = task_file(root.path(), &["a", "b"]);
    let out = root.path().join("out");
    let (tasks_arg, out_arg) = (tasks.display().to_string(), out.display().to_string());
    let config = config();
    let down = FakeLlm::start(Script::new([Turn::fault(Fault::status(503).body("{}"))]).repeat_last()).await;
    let url = down.base_url(Protocol::OpenAi);
    let ran = output(fleet(config.path(), &base_args(&tasks_arg, &out_arg, &url))).await;
    assert_eq!(ran.status.code(), Some(3), "{}", String::from_utf8_lossy(&ran.stderr));
    assert_eq!(json_file(&out.join("summary.json"))["infra"], 2);

    // Without --retry the infrastructure results are final: nothing runs.
    let up = FakeLlm::start(writer()).await;
    let url = up.base_url(Protocol::OpenAi);
    let skipped = output(fleet(config.path(), &base_args(&tasks_arg, &out_arg, &url))).await;
    assert_eq!(skipped.status.code(), Some(3));
    assert_eq!(up.requests().len(), 0);

    // --retry infra against the healthy server: both run and succeed.
    let mut args = base_args(&tasks_arg, &out_arg, &url);
    args.extend(["--retry", "infra"]);
    let retried = output(fleet(config.path(), &args)).await;
    assert_eq!(retried.status.code(), Some(0), "{}", String::from_utf8_lossy(&retried.stderr));
    assert_eq!(up.requests().len(), 2);
    assert_eq!(json_file(&out.join("summary.json"))["done"], 2);

    // Retried within one invocation: the server fails the first request, answers the second.
    let flaky = FakeLlm::start(Script::new([
        Turn::fault(Fault::status(503).body("{}")),
        Turn::reply(Reply::text("Done.").call("d", "task_done", json!({}))),
    ]))
    .await;
    let flaky_url = flaky.base_url(Protocol::OpenAi);
    let tasks_one = root.path().join("one.jsonl");
    std::fs::write(&tasks_one, json!({"id": "x", "task": "t", "workspace": "repo"}).to_string() + "\n").unwrap();
    let (one_arg, out2_arg) = (tasks_one.display().to_string(), root.path().join("out2").display().to_string());
    let mut args = base_args(&one_arg, &out2_arg, &flaky_url);
    args.extend(["--retry", "infra", "--attempts", "2"]);
    let ran = output(fleet(config.path(), &args)).await;
    assert_eq!(ran.status.code(), Some(0), "{}", String::from_utf8_lossy(&ran.stderr));
    assert_eq!(flaky.requests().len(), 2);
    assert!(
        String::from_utf8_lossy(&ran.stderr).contains("x done · exit 0"),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    assert!(String::from_utf8_lossy(&ran.stderr).contains("2 attempts"), "{}", String::from_utf8_lossy(&ran.stderr));
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_task_files_are_usage_errors_naming_the_line() {
    let root = tempfile::tempdir().unwrap();
    let config = config();
    let out = root.path().join("out").display().to_string();
    for (text, expect) in [
        ("{\"id\": \"a\", \"task\": \"x\"}\n{\"id\": \"a\", \"task\": \"y\"}\n", "tasks.jsonl:2: the id 'a' is used"),
        ("{\"id\": \"../escape\", \"task\": \"x\"}\n", "tasks.jsonl:1: the id \"../escape\" cannot name a directory"),
        ("{\"id\": \"ok\", \"task\": \"x\"}\n{oops\n", "tasks.jsonl:2: not JSON"),
    ] {
        let path = root.path().join("tasks.jsonl");
        std::fs::write(&path, text).unwrap();
        let ran = output(fleet(config.path(), &["run", &path.display().to_string(), "--out", &out])).await;
        assert_eq!(ran.status.code(), Some(2), "{text}");
        assert!(String::from_utf8_lossy(&ran.stderr).contains(expect), "{}", String::from_utf8_lossy(&ran.stderr));
        assert!(!root.path().join("escape").exists());
    }
    let ran = output(fleet(config.path(), &["collect", &root.path().display().to_string()])).await;
    assert_eq!(ran.status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_ends_the_tasks_in_flight_interrupted_and_they_run_again_later() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("repo")).unwrap();
    let marker = "sleep 44.5";
    let script =
        Script::new([Turn::reply(Reply::text("Waiting.").call("b", "bash", json!({"command": marker})))]).repeat_last();
    let server = FakeLlm::start(script).await;
    let url = server.base_url(Protocol::OpenAi);
    let tasks = task_file(root.path(), &["s1", "s2", "s3"]);
    let out = root.path().join("out");
    let (tasks_arg, out_arg) = (tasks.display().to_string(), out.display().to_string());
    let config = config();
    let mut child = fleet(config.path(), &base_args(&tasks_arg, &out_arg, &url)).spawn().unwrap();
    let sleeping = || {
        let found = Command::new("pgrep").args(["-f", &format!("^{marker}$")]).output().unwrap();
        String::from_utf8_lossy(&found.stdout).lines().count()
    };
    let mut count = 0;
    for _ in 0..300 {
        count = sleeping();
        if count == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(count, 2, "two workers, two tasks in flight");
    let killed = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let mut waited = 0;
    while child.try_wait().unwrap().is_none() && waited < 400 {
        std::thread::sleep(Duration::from_millis(50));
        waited += 1;
    }
    let _ = child.kill();
    let ran = child.wait_with_output().unwrap();
    assert_eq!(ran.status.code(), Some(130), "{}", String::from_utf8_lossy(&ran.stderr));
    for _ in 0..40 {
        if sleeping() == 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(sleeping(), 0, "a task's command outlived the fleet");
    let interrupted: Vec<&str> = ["s1", "s2", "s3"]
        .into_iter()
        .filter(|id| {
            let path = out.join(id).join("result.json");
            path.exists() && json_file(&path)["status"] == "interrupted"
        })
        .collect();
    assert_eq!(interrupted.len(), 2, "the two tasks in flight end interrupted, the third never started");
    let summary = json_file(&out.join("summary.json"));
    assert_eq!((&summary["pending"], &summary["done"]), (&json!(3), &json!(0)), "{summary}");
    assert_eq!(std::fs::read_to_string(out.join("predictions.jsonl")).unwrap(), "", "nothing final yet");
}
