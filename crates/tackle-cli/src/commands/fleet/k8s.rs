//! `tackle fleet k8s TASKS.jsonl --image IMAGE --out DIR`: the fleet as Kubernetes objects
//! (docs/scale-out.md#kubernetes-tackle-fleet-k8s). Tackle writes the manifests and runs
//! nothing: ConfigMaps holding each task (its text and the script of its `tackle run`), and an
//! Indexed Job with one completion per task, the tackle binary copied in by an init container,
//! results on a volume, the provider key from a Secret. Each pod runs the same `tackle run`
//! contract as the local engine, into `/results/ID/`; `tackle fleet collect` reads them back.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::{Value, json};

use super::tasks::{self, FleetTask};
use super::{FleetRunFlags, quote, run_flags};
use crate::exit::{CommandResult, Failure};

/// A ConfigMap holds at most 1 MiB; the tasks are split over several below that.
const CONFIG_MAP_BYTES: usize = 900 * 1024;
/// Where the tackle binary lands in the pod.
const BINARY: &str = "/opt/tackle/tackle";

#[derive(Debug, Args)]
pub struct FleetK8sArgs {
    /// The task file (as for `tackle fleet run`).
    pub tasks: PathBuf,
    /// The task image every pod runs (the tools run in it; tasks may not name another).
    #[arg(long, value_name = "IMAGE")]
    pub image: String,
    /// Where the manifests are written (job.yaml, tasks.yaml).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The image holding the tackle binary at /tackle (deploy/Containerfile builds one).
    #[arg(long, value_name = "IMAGE", default_value = "registry.example.com/tackle:0.1")]
    pub tackle_image: String,
    /// The name of the Job (and the prefix of the ConfigMaps).
    #[arg(long, value_name = "NAME", default_value = "tackle-fleet")]
    pub name: String,
    /// Pods at once.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub parallelism: u32,
    /// The PersistentVolumeClaim the results go to.
    #[arg(long, value_name = "NAME", default_value = "tackle-results")]
    pub results_pvc: String,
    /// The Secret whose keys become the pods' environment (the provider's API key).
    #[arg(long, value_name = "NAME", default_value = "tackle-provider")]
    pub secret: String,
    /// The working directory in the task image (the workspace of every task).
    #[arg(long, value_name = "DIR", default_value = "/testbed")]
    pub workdir: String,
    #[command(flatten)]
    pub run: FleetRunFlags,
}

/// `tackle fleet k8s`.
pub fn write_manifests(args: FleetK8sArgs) -> CommandResult {
    for (flag, name) in [("--name", &args.name), ("--results-pvc", &args.results_pvc), ("--secret", &args.secret)] {
        check_name(flag, name)?;
    }
    let tasks = tasks::read(&args.tasks).map_err(Failure::usage)?;
    for task in &tasks {
        if let Some(image) = task.image.as_ref().filter(|image| **image != args.image) {
            return Err(Failure::usage(format!(
                "task '{}' names the image {image}, but one Job runs one image ({}): split the task file by image and write one Job for each",
                task.id, args.image
            )));
        }
        if task.workspace.is_some() {
            return Err(Failure::usage(format!(
                "task '{}' names a workspace directory, which a pod cannot copy from this machine: bake the repository into the image (its workdir is the workspace)",
                task.id
            )));
        }
    }
    let maps = config_maps(&args, &tasks);
    let job = job(&args, tasks.len(), maps.len());
    std::fs::create_dir_all(&args.out).map_err(|err| Failure::usage(format!("--out {}: {err}", args.out.display())))?;
    let documents: Vec<String> = maps.iter().map(to_yaml).collect::<Result<_, _>>()?;
    write(&args.out.join("tasks.yaml"), &documents.join("---\n"))?;
    write(&args.out.join("job.yaml"), &to_yaml(&job)?)?;
    crate::stdout::print(&format!(
        "wrote {} and {} ({} task(s) in {} ConfigMap(s)); apply with kubectl apply -f {}\n",
        args.out.join("tasks.yaml").display(),
        args.out.join("job.yaml").display(),
        tasks.len(),
        maps.len(),
        args.out.display()
    ))?;
    Ok(ExitCode::from(crate::exit::OK))
}

fn write(path: &std::path::Path, text: &str) -> Result<(), Failure> {
    super::results::write_atomic(path, text.as_bytes())
        .map_err(|err| Failure::failed(format!("cannot write {}: {err}", path.display())))
}

fn to_yaml(value: &Value) -> Result<String, Failure> {
    yaml_serde::to_string(value).map_err(|err| Failure::failed(format!("cannot write YAML: {err}")))
}

/// A Kubernetes object name: lowercase letters, digits and `-`, at most 63.
fn check_name(flag: &str, name: &str) -> Result<(), Failure> {
    let valid = !name.is_empty()
        && name.len() <= 63
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if valid {
        return Ok(());
    }
    Err(Failure::usage(format!("{flag} {name:?}: a Kubernetes name is lowercase letters, digits and '-', at most 63")))
}

/// The script one pod runs for `task` (index `index`): the `tackle run` contract, its result
/// written to a temporary name and then renamed, as the local engine does.
fn script(args: &FleetK8sArgs, task: &FleetTask, index: usize) -> String {
    let mut flags = vec![
        "--task-file".to_owned(),
        format!("/tasks/task-{index}.md"),
        "--workspace".to_owned(),
        task.workdir.clone().unwrap_or_else(|| args.workdir.clone()),
        "--json".to_owned(),
        "--trajectory".to_owned(),
        format!("/results/{}/trajectory.jsonl", task.id),
    ];
    if let Some(model) = task.model.as_ref().or(args.run.model.as_ref()) {
        flags.extend(["--model".to_owned(), model.clone()]);
    }
    if let Some(timeout) = task.timeout {
        flags.extend(["--timeout".to_owned(), format!("{}ms", timeout.as_millis())]);
    }
    if let Some(steps) = task.max_steps {
        flags.extend(["--max-steps".to_owned(), steps.to_string()]);
    }
    if let Some(setup) = &task.setup {
        flags.extend(["--setup".to_owned(), setup.clone()]);
    }
    let mut fleet = run_flags(&args.run);
    if task.timeout.is_some() || task.max_steps.is_some() {
        // The task's own limits win: drop the fleet's.
        let mut kept = Vec::new();
        let mut iter = fleet.into_iter();
        while let Some(flag) = iter.next() {
            let own =
                (flag == "--timeout" && task.timeout.is_some()) || (flag == "--max-steps" && task.max_steps.is_some());
            if own {
                iter.next();
            } else {
                kept.push(flag);
            }
        }
        fleet = kept;
    }
    flags.extend(fleet);
    let command: Vec<String> = flags.iter().map(|f| quote(f)).collect();
    let out = format!("/results/{}", task.id);
    format!(
        "set -u\nmkdir -p {out}\n{BINARY} run {} > {out}/result.json.tmp 2> {out}/stderr.log\ncode=$?\nmv {out}/result.json.tmp {out}/result.json\nexit $code\n",
        command.join(" "),
        out = quote(&out)
    )
}

/// The ConfigMaps: `task-N.md` and `run-N.sh` for each task, split below the size limit.
fn config_maps(args: &FleetK8sArgs, tasks: &[FleetTask]) -> Vec<Value> {
    let mut maps: Vec<serde_json::Map<String, Value>> = Vec::new();
    let mut current = serde_json::Map::new();
    let mut size = 0;
    for (index, task) in tasks.iter().enumerate() {
        let script = script(args, task, index);
        let entry = task.task.len() + script.len() + 32;
        if size + entry > CONFIG_MAP_BYTES && !current.is_empty() {
            maps.push(std::mem::take(&mut current));
            size = 0;
        }
        size += entry;
        current.insert(format!("task-{index}.md"), json!(task.task));
        current.insert(format!("run-{index}.sh"), json!(script));
    }
    maps.push(current);
    maps.into_iter()
        .enumerate()
        .map(|(n, data)| {
            json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": format!("{}-tasks-{n}", args.name), "labels": {"app.kubernetes.io/name": "tackle"}},
                "data": data,
            })
        })
        .collect()
}

/// The Indexed Job: one completion per task.
fn job(args: &FleetK8sArgs, tasks: usize, maps: usize) -> Value {
    let sources: Vec<Value> =
        (0..maps).map(|n| json!({"configMap": {"name": format!("{}-tasks-{n}", args.name)}})).collect();
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": args.name, "labels": {"app.kubernetes.io/name": "tackle"}},
        "spec": {
            "completionMode": "Indexed",
            "completions": tasks,
            "parallelism": args.parallelism.min(u32::try_from(tasks).unwrap_or(u32::MAX)),
            "backoffLimitPerIndex": 2,
            "maxFailedIndexes": tasks,
            "podFailurePolicy": {"rules": [
                // Exit 3: infrastructure, worth another pod; anything else the index's own result.
                {"action": "Count", "onExitCodes": {"containerName": "task", "operator": "In", "values": [3]}},
                {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
                {"action": "FailIndex", "onExitCodes": {"containerName": "task", "operator": "NotIn", "values": [0, 3]}},
            ]},
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": "tackle"}},
                "spec": {
                    "restartPolicy": "Never",
                    "terminationGracePeriodSeconds": 60,
                    "volumes": [
                        {"name": "tackle-bin", "emptyDir": {}},
                        {"name": "results", "persistentVolumeClaim": {"claimName": args.results_pvc}},
                        {"name": "tasks", "projected": {"sources": sources}},
                    ],
                    "initContainers": [{
                        "name": "copy-tackle",
                        "image": args.tackle_image,
                        "command": ["cp", "/tackle", BINARY],
                        "volumeMounts": [{"name": "tackle-bin", "mountPath": "/opt/tackle"}],
                    }],
                    "containers": [{
                        "name": "task",
                        "image": args.image,
                        "workingDir": args.workdir,
                        "command": ["/bin/sh", "-c", "exec /bin/sh \"/tasks/run-${JOB_COMPLETION_INDEX}.sh\""],
                        "envFrom": [{"secretRef": {"name": args.secret, "optional": true}}],
                        "resources": {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"memory": "4Gi"}},
                        "volumeMounts": [
                            {"name": "tackle-bin", "mountPath": "/opt/tackle", "readOnly": true},
                            {"name": "results", "mountPath": "/results"},
                            {"name": "tasks", "mountPath": "/tasks", "readOnly": true},
                        ],
                    }],
                },
            },
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_quote_what_the_task_file_says() {
        assert_eq!(quote("it's"), r"'it'\''s'");
        assert_eq!(quote("$(rm -rf /)"), "'$(rm -rf /)'");
    }

    #[test]
    fn names_must_be_kubernetes_names() {
        assert!(check_name("--name", "tackle-fleet-2").is_ok());
        for bad in ["", "Tackle", "a_b", "-a", "a-", &"a".repeat(64), "a/b"] {
            assert!(check_name("--name", bad).is_err(), "{bad}");
        }
    }
}
