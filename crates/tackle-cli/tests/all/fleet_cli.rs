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

    // The Ray engine needs an address, and one with no job server behind it is infrastructure.
    let path = root.path().join("tasks.jsonl");
    std::fs::write(&path, "{\"id\": \"a\", \"task\": \"x\"}\n").unwrap();
    let tasks = path.display().to_string();
    let ran = output(fleet(config.path(), &["run", &tasks, "--out", &out, "--engine", "ray"])).await;
    assert_eq!(ran.status.code(), Some(2), "{}", String::from_utf8_lossy(&ran.stderr));
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let nowhere = format!("http://127.0.0.1:{port}");
    let ran =
        output(fleet(config.path(), &["run", &tasks, "--out", &out, "--engine", "ray", "--ray-address", &nowhere]))
            .await;
    assert_eq!(ran.status.code(), Some(3), "{}", String::from_utf8_lossy(&ran.stderr));
    assert!(String::from_utf8_lossy(&ran.stderr).contains("no Ray job server answers"));
}

/// A local fleet of two workers whose tasks each run `marker` (a `sleep`) in the shell, with
/// what keeps it going, once both of its first two tasks are in flight.
struct SleepingFleet {
    child: std::process::Child,
    marker: String,
    _server: FakeLlm,
    _config: tempfile::TempDir,
}

impl SleepingFleet {
    async fn start(root: &Path, marker: &str, ids: &[&str]) -> SleepingFleet {
        std::fs::create_dir(root.join("repo")).unwrap();
        let script = Script::new([Turn::reply(Reply::text("Waiting.").call("b", "bash", json!({"command": marker})))])
            .repeat_last();
        let server = FakeLlm::start(script).await;
        let url = server.base_url(Protocol::OpenAi);
        let tasks = task_file(root, ids);
        let (tasks_arg, out_arg) = (tasks.display().to_string(), root.join("out").display().to_string());
        let config = config();
        let child = fleet(config.path(), &base_args(&tasks_arg, &out_arg, &url)).spawn().unwrap();
        let fleet = SleepingFleet { child, marker: marker.to_owned(), _server: server, _config: config };
        let mut count = 0;
        for _ in 0..300 {
            count = fleet.sleeping();
            if count == 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(count, 2, "two workers, two tasks in flight");
        fleet
    }

    /// How many of the tasks' `sleep`s are alive.
    fn sleeping(&self) -> usize {
        let found = Command::new("pgrep").args(["-f", &format!("^{}$", self.marker)]).output().unwrap();
        String::from_utf8_lossy(&found.stdout).lines().count()
    }

    /// Waits up to `tries` × 50 ms for every `sleep` to end; how many are left.
    async fn sleeping_after(&self, tries: usize) -> usize {
        for _ in 0..tries {
            if self.sleeping() == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.sleeping()
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_ends_the_tasks_in_flight_interrupted_and_they_run_again_later() {
    let root = tempfile::tempdir().unwrap();
    let mut fleet = SleepingFleet::start(root.path(), "sleep 44.5", &["s1", "s2", "s3"]).await;
    let out = root.path().join("out");
    let killed = Command::new("kill").args(["-INT", &fleet.child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let mut waited = 0;
    while fleet.child.try_wait().unwrap().is_none() && waited < 400 {
        std::thread::sleep(Duration::from_millis(50));
        waited += 1;
    }
    let _ = fleet.child.kill();
    let status = fleet.child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert_eq!(fleet.sleeping_after(40).await, 0, "a task's command outlived the fleet");
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

#[tokio::test(flavor = "multi_thread")]
async fn a_fleet_killed_outright_leaves_no_run_behind() {
    let root = tempfile::tempdir().unwrap();
    let mut fleet = SleepingFleet::start(root.path(), "sleep 45.5", &["k1", "k2"]).await;
    fleet.child.kill().unwrap();
    fleet.child.wait().unwrap();
    // Each run gets SIGTERM from the kernel, ends its session (the shell and its `sleep`) and
    // exits; without the signal both `sleep`s would live on for 45 seconds.
    assert_eq!(fleet.sleeping_after(200).await, 0, "a run outlived the fleet killed with SIGKILL");
}

/// Deserializes every document of `files` into the Kubernetes API type of its kind with the
/// official Python client (`.venv-test`, from scripts/install-test-deps.sh) and serializes it
/// back: a field the API types do not know is dropped on the way, so the round trip must be
/// the document itself. Prints the documents as JSON.
const K8S_VALIDATE: &str = r#"
import json, sys, yaml
from kubernetes.client import ApiClient
api = ApiClient()
class Response:
    def __init__(self, data): self.data = json.dumps(data)
kinds = {"Job": "V1Job", "ConfigMap": "V1ConfigMap"}
out = []
for path in sys.argv[1:]:
    for doc in yaml.safe_load_all(open(path)):
        model = api.deserialize(Response(doc), kinds[doc["kind"]])
        back = api.sanitize_for_serialization(model)
        if back != doc:
            sys.exit(f"{path}: {doc['kind']} does not round-trip through the API types:\n{json.dumps(back, sort_keys=True)}\n!=\n{json.dumps(doc, sort_keys=True)}")
        out.append(doc)
print(json.dumps(out))
"#;

#[tokio::test(flavor = "multi_thread")]
async fn k8s_manifests_are_valid_api_objects_and_run_the_run_contract() {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv-test/bin/python");
    let has_client =
        python.exists() && Command::new(&python).args(["-c", "import kubernetes"]).status().is_ok_and(|s| s.success());
    if !has_client {
        assert!(
            std::env::var_os("TACKLE_REQUIRE_PEERS").is_none(),
            "the kubernetes Python client is missing: run scripts/install-test-deps.sh"
        );
        eprintln!("skipped: the kubernetes Python client is missing (scripts/install-test-deps.sh)");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let hostile = "Fix it; then say $(touch pwned) and `id` and 'quote'";
    let mut lines = vec![
        json!({"id": "plain-1", "task": "Fix the parser."}),
        json!({"instance_id": "repo__x-2", "problem_statement": hostile, "setup": "echo 'set up' > ready", "timeout": "5m", "max_steps": 7}),
    ];
    // Enough text to need a second ConfigMap (a ConfigMap holds at most 1 MiB).
    lines.extend((0..3).map(|i| json!({"id": format!("big-{i}"), "task": "x".repeat(400 * 1024)})));
    let tasks = root.path().join("tasks.jsonl");
    std::fs::write(&tasks, lines.iter().map(Value::to_string).collect::<Vec<_>>().join("\n") + "\n").unwrap();
    let out = root.path().join("k8s");
    let config = config();
    let wrote = output(fleet(
        config.path(),
        &[
            "k8s",
            &tasks.display().to_string(),
            "--image",
            "swe-tasks:latest",
            "--out",
            &out.display().to_string(),
            "--model",
            "anthropic/claude-sonnet-4-5",
            "--permission-mode",
            "accept-edits",
            "--timeout",
            "30m",
            "--allow",
            "Bash(pytest:*)",
        ],
    ))
    .await;
    assert_eq!(wrote.status.code(), Some(0), "{}", String::from_utf8_lossy(&wrote.stderr));
    let checked = Command::new(&python)
        .arg("-c")
        .arg(K8S_VALIDATE)
        .arg(out.join("job.yaml"))
        .arg(out.join("tasks.yaml"))
        .output()
        .unwrap();
    assert!(checked.status.success(), "{}", String::from_utf8_lossy(&checked.stderr));
    let documents: Vec<Value> = serde_json::from_slice(&checked.stdout).unwrap();
    let job = &documents[0];
    let maps: Vec<&Value> = documents[1..].iter().collect();
    assert_eq!(job["kind"], "Job");
    assert_eq!((&job["spec"]["completions"], &job["spec"]["completionMode"]), (&json!(5), &json!("Indexed")));
    assert!(maps.len() >= 2, "the tasks are split over ConfigMaps below 1 MiB each");
    for map in &maps {
        assert!(serde_json::to_string(&map["data"]).unwrap().len() < 1024 * 1024);
    }
    let projected: Vec<&str> = job["spec"]["template"]["spec"]["volumes"][2]["projected"]["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["configMap"]["name"].as_str().unwrap())
        .collect();
    let names: Vec<&str> = maps.iter().map(|m| m["metadata"]["name"].as_str().unwrap()).collect();
    assert_eq!(projected, names, "every ConfigMap is mounted");
    let pod = &job["spec"]["template"]["spec"];
    assert_eq!(pod["containers"][0]["envFrom"][0]["secretRef"]["name"], "tackle-provider");
    assert_eq!(pod["volumes"][1]["persistentVolumeClaim"]["claimName"], "tackle-results");

    // The script of task 1, run with a stand-in binary that prints its arguments: the run
    // contract, the task's own limits over the fleet's, hostile text kept literal.
    let data = maps.iter().find_map(|m| m["data"].get("run-1.sh")).unwrap().as_str().unwrap();
    assert_eq!(maps.iter().find_map(|m| m["data"].get("task-1.md")).unwrap(), hostile);
    let stand_in = root.path().join("tackle");
    std::fs::write(&stand_in, "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done\n").unwrap();
    std::fs::set_permissions(&stand_in, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let results = root.path().join("results");
    let script = data
        .replace("/opt/tackle/tackle", &stand_in.display().to_string())
        .replace("/results/", &format!("{}/", results.display()));
    let ran = Command::new("sh").arg("-c").arg(&script).current_dir(root.path()).output().unwrap();
    assert!(ran.status.success(), "{}", String::from_utf8_lossy(&ran.stderr));
    let printed = std::fs::read_to_string(results.join("repo__x-2/result.json")).unwrap();
    let args: Vec<&str> = printed.lines().collect();
    assert_eq!(&args[..2], ["run", "--task-file"]);
    assert!(args.windows(2).any(|w| w == ["--setup", "echo 'set up' > ready"]), "{args:?}");
    assert!(args.windows(2).any(|w| w == ["--max-steps", "7"]), "{args:?}");
    assert!(args.windows(2).any(|w| w == ["--timeout", "300000ms"]), "the task's own timeout: {args:?}");
    assert!(!args.contains(&"1800000ms"), "the fleet's timeout is dropped: {args:?}");
    assert!(args.windows(2).any(|w| w == ["--allow", "Bash(pytest:*)"]), "{args:?}");
    assert!(args.windows(2).any(|w| w == ["--model", "anthropic/claude-sonnet-4-5"]), "{args:?}");
    assert!(!root.path().join("pwned").exists() && !root.path().join("ready").exists());

    // One Job runs one image, and a pod cannot copy a directory of this machine.
    for (line, expect) in [
        (json!({"id": "a", "task": "t", "image": "other:1"}), "one Job runs one image"),
        (json!({"id": "a", "task": "t", "workspace": "repo"}), "bake the repository into the image"),
    ] {
        std::fs::write(&tasks, line.to_string() + "\n").unwrap();
        let args =
            ["k8s", &tasks.display().to_string(), "--image", "swe-tasks:latest", "--out", &out.display().to_string()];
        let refused = output(fleet(config.path(), &args)).await;
        assert_eq!(refused.status.code(), Some(2));
        assert!(
            String::from_utf8_lossy(&refused.stderr).contains(expect),
            "{}",
            String::from_utf8_lossy(&refused.stderr)
        );
    }
}

/// A Ray cluster of two nodes on 127.0.0.1 (`ray` from `.venv-ray`, scripts/install-test-deps.sh),
/// stopped when dropped.
struct RayCluster {
    ray: std::path::PathBuf,
    dashboard: String,
    _temp: tempfile::TempDir,
}

impl RayCluster {
    fn start(ray: &Path) -> RayCluster {
        let free = || std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let (gcs, dashboard) = (free(), free());
        let temp = tempfile::Builder::new().prefix("ray").tempdir_in("/tmp").unwrap();
        let start = |args: &[String]| {
            let out = Command::new(ray)
                .arg("start")
                .args(args)
                .args(["--node-ip-address=127.0.0.1", "--num-cpus=1", "--disable-usage-stats"])
                .env("RAY_USAGE_STATS_ENABLED", "0")
                .stdin(Stdio::null())
                .output()
                .unwrap();
            assert!(out.status.success(), "ray start: {}", String::from_utf8_lossy(&out.stderr));
        };
        let cluster =
            RayCluster { ray: ray.to_owned(), dashboard: format!("http://127.0.0.1:{dashboard}"), _temp: temp };
        start(&[
            "--head".into(),
            format!("--port={gcs}"),
            "--dashboard-host=127.0.0.1".into(),
            format!("--dashboard-port={dashboard}"),
            "--include-dashboard=true".into(),
            format!("--temp-dir={}", cluster._temp.path().display()),
            // A lost node is noticed in seconds, not half a minute.
            r#"--system-config={"health_check_period_ms":1000,"health_check_failure_threshold":3,"health_check_initial_delay_ms":1000}"#.into(),
        ]);
        start(&[format!("--address=127.0.0.1:{gcs}")]);
        cluster
    }

    /// The raylets: (pid, node id, is the head).
    fn raylets(&self) -> Vec<(i32, String, bool)> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let args: Vec<String> =
                cmdline.split(|b| *b == 0).map(|a| String::from_utf8_lossy(a).into_owned()).collect();
            if !args.first().is_some_and(|a| a.ends_with("/raylet/raylet"))
                || !args.iter().any(|a| a.contains(&*self._temp.path().to_string_lossy()))
            {
                continue;
            }
            let node = args.iter().find_map(|a| a.strip_prefix("--node_id=")).unwrap_or_default().to_owned();
            let head = args.iter().any(|a| a.starts_with("--raylet_socket_name=") && a.ends_with("/raylet"));
            found.push((pid, node, head));
        }
        found
    }

    fn jobs(&self) -> Vec<Value> {
        let out = Command::new("curl").args(["-s", &format!("{}/api/jobs/", self.dashboard)]).output().unwrap();
        serde_json::from_slice::<Value>(&out.stdout).ok().and_then(|v| v.as_array().cloned()).unwrap_or_default()
    }
}

impl Drop for RayCluster {
    fn drop(&mut self) {
        let _ = Command::new(&self.ray).args(["stop", "--force"]).stdout(Stdio::null()).stderr(Stdio::null()).status();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_ray_fleet_spreads_over_two_nodes_and_reruns_the_tasks_of_a_killed_node() {
    let ray = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.venv-ray/bin/ray");
    if !ray.exists() {
        assert!(
            std::env::var_os("TACKLE_REQUIRE_PEERS").is_none(),
            "{} is missing: run scripts/install-test-deps.sh",
            ray.display()
        );
        eprintln!("skipped: Ray is not installed (scripts/install-test-deps.sh)");
        return;
    }
    let cluster = RayCluster::start(&ray);
    let raylets = cluster.raylets();
    assert_eq!(raylets.len(), 2, "a head and a worker node: {raylets:?}");
    let (worker_pid, worker_node) =
        raylets.iter().find(|(_, _, head)| !head).map(|(pid, node, _)| (*pid, node.clone())).unwrap();
    let head_node = raylets.iter().find(|(_, _, head)| *head).map(|(_, node, _)| node.clone()).unwrap();

    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("repo")).unwrap();
    let script = Script::new([Turn::reply(
        Reply::text("Working.").call("b", "bash", json!({"command": "sleep 3; echo worked > worked.txt"})).call(
            "d",
            "task_done",
            json!({}),
        ),
    )])
    .repeat_last();
    let server = FakeLlm::start(script).await;
    let url = server.base_url(Protocol::OpenAi);
    let tasks = task_file(root.path(), &["r1", "r2", "r3", "r4"]);
    let out = root.path().join("out");
    let (tasks_arg, out_arg) = (tasks.display().to_string(), out.display().to_string());
    let config = config();
    let mut args = base_args(&tasks_arg, &out_arg, &url);
    args.extend(["--engine", "ray", "--ray-address", &cluster.dashboard, "--ray-env", "TACKLE_CONFIG_DIR"]);
    args.extend(["--retry", "infra", "--attempts", "3"]);
    let mut child = fleet(config.path(), &args).spawn().unwrap();

    // Once a job runs on the worker node (and one on the head), the worker node dies.
    let mut placed = Vec::new();
    for _ in 0..600 {
        placed = cluster.jobs();
        let running_on = |node: &str| placed.iter().any(|j| j["status"] == "RUNNING" && j["driver_node_id"] == node);
        if running_on(&worker_node) && running_on(&head_node) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let nodes: std::collections::BTreeSet<&str> = placed.iter().filter_map(|j| j["driver_node_id"].as_str()).collect();
    assert!(
        nodes.contains(worker_node.as_str()) && nodes.contains(head_node.as_str()),
        "jobs on both nodes: {placed:?}"
    );
    let killed = Command::new("kill").args(["-KILL", &worker_pid.to_string()]).status().unwrap();
    assert!(killed.success());

    let mut waited = 0;
    while child.try_wait().unwrap().is_none() && waited < 1800 {
        std::thread::sleep(Duration::from_millis(100));
        waited += 1;
    }
    let _ = child.kill();
    let ran = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&ran.stderr).into_owned();
    // Runs a dead node left going are not Ray's to stop: end them here.
    let _ = Command::new("pkill").args(["-f", &out.display().to_string()]).status();
    assert_eq!(ran.status.code(), Some(0), "{stderr}");
    for id in ["r1", "r2", "r3", "r4"] {
        let result = json_file(&out.join(id).join("result.json"));
        assert_eq!((&result["status"], &result["exit_code"]), (&json!("success"), &json!(0)), "{id}: {result}");
        let diff = std::fs::read_to_string(out.join(id).join("diff.patch")).unwrap();
        assert!(diff.contains("+worked"), "{id}: {diff}");
        assert!(out.join(id).join("trajectory.jsonl").is_file());
    }
    assert!(stderr.contains("2 attempts"), "the killed node's task ran again: {stderr}");
    let jobs = cluster.jobs();
    assert!(
        jobs.iter().any(|j| j["status"] == "FAILED" && j["driver_exit_code"].is_null()),
        "Ray failed the job of the dead node: {jobs:?}"
    );
    assert_eq!(json_file(&out.join("summary.json"))["done"], 4);

    // Ctrl-C of a Ray fleet stops its jobs: Ray ends the run (SIGTERM), whose command is killed.
    let marker = "sleep 47.5";
    let sleeper = FakeLlm::start(
        Script::new([Turn::reply(Reply::text("Waiting.").call("b", "bash", json!({"command": marker})))]).repeat_last(),
    )
    .await;
    let sleeper_url = sleeper.base_url(Protocol::OpenAi);
    let tasks = task_file(root.path(), &["s1"]);
    let (tasks_arg, out2_arg) = (tasks.display().to_string(), root.path().join("out2").display().to_string());
    let mut args = base_args(&tasks_arg, &out2_arg, &sleeper_url);
    args.extend(["--engine", "ray", "--ray-address", &cluster.dashboard, "--ray-env", "TACKLE_CONFIG_DIR"]);
    let mut child = fleet(config.path(), &args).spawn().unwrap();
    let sleeping = || Command::new("pgrep").args(["-f", &format!("^{marker}$")]).output().unwrap().status.success();
    let mut started = false;
    for _ in 0..600 {
        started = sleeping();
        if started {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(started, "the job's command never started");
    let interrupted = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(interrupted.success());
    let mut waited = 0;
    while child.try_wait().unwrap().is_none() && waited < 600 {
        std::thread::sleep(Duration::from_millis(100));
        waited += 1;
    }
    let _ = child.kill();
    let ran = child.wait_with_output().unwrap();
    assert_eq!(ran.status.code(), Some(130), "{}", String::from_utf8_lossy(&ran.stderr));
    let stopped = cluster
        .jobs()
        .into_iter()
        .filter(|j| j["entrypoint"].as_str().is_some_and(|e| e.contains(&out2_arg)))
        .collect::<Vec<_>>();
    assert!(!stopped.is_empty() && stopped.iter().all(|j| j["status"] == "STOPPED"), "{stopped:?}");
    for _ in 0..50 {
        if !sleeping() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!sleeping(), "the stopped job's command is still running");
}
