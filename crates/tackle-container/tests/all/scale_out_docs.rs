//! docs/scale-out.md's manifests are valid YAML (parsed by PyYAML, from the test virtualenv
//! `scripts/install-test-deps.sh` makes) and hang together: the Indexed Job's init container
//! fills the volume the task container runs tackle from, every mounted volume is declared,
//! and the task runs `tackle run --json` with its trajectory on the results volume.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every ```yaml block of the page, parsed (a block may hold several documents).
fn yaml_documents() -> Vec<Value> {
    let page = std::fs::read_to_string(root().join("docs/scale-out.md")).unwrap();
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in page.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```yaml") => current = Some(String::new()),
            (Some(block), "```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            (Some(block), text) => {
                block.push_str(text);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    assert!(blocks.len() >= 2, "docs/scale-out.md lost its manifests");
    let python = root().join(".venv-test/bin/python");
    assert!(python.exists(), "{} is missing: run scripts/install-test-deps.sh", python.display());
    let mut documents = Vec::new();
    for block in blocks {
        let mut child = Command::new(&python)
            .args(["-c", "import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(sys.stdin))))"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), block.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "not valid YAML:\n{block}\n{}", String::from_utf8_lossy(&out.stderr));
        let parsed: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
        documents.extend(parsed);
    }
    documents
}

fn names(list: &Value) -> Vec<String> {
    list.as_array().unwrap().iter().map(|item| item["name"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn the_indexed_job_and_its_inputs_are_valid_and_consistent() {
    let documents = yaml_documents();
    let kinds: Vec<&str> = documents.iter().filter_map(|d| d["kind"].as_str()).collect();
    assert_eq!(kinds, ["Job", "ConfigMap", "Secret"]);
    assert!(documents.iter().all(|d| d["apiVersion"].is_string() && d["metadata"]["name"].is_string()));

    let job = &documents[0];
    assert_eq!(job["apiVersion"], "batch/v1");
    assert_eq!(job["spec"]["completionMode"], "Indexed");
    assert!(job["spec"]["completions"].as_u64().unwrap() >= 1000, "a fleet, not a handful");
    let pod = &job["spec"]["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never");
    let volumes = names(&pod["volumes"]);
    let (init, task) = (&pod["initContainers"][0], &pod["containers"][0]);
    for container in [init, task] {
        for mount in names(&container["volumeMounts"]) {
            assert!(volumes.contains(&mount), "volume {mount} is mounted but not declared");
        }
    }
    // The init container copies the binary into the volume the task runs it from.
    let copied_to = init["command"].as_array().unwrap().last().unwrap().as_str().unwrap();
    let shared = &init["volumeMounts"][0];
    assert!(copied_to.starts_with(shared["mountPath"].as_str().unwrap()), "{copied_to}");
    let task_mount = task["volumeMounts"].as_array().unwrap().iter().find(|m| m["name"] == shared["name"]).unwrap();
    assert_eq!(task_mount["readOnly"], true);
    let script = task["args"][0].as_str().unwrap();
    assert!(script.contains(&format!("{copied_to} run")), "{script}");
    for needed in ["--json", "--trajectory", "JOB_COMPLETION_INDEX", "/results/"] {
        assert!(script.contains(needed), "the task script lacks {needed}: {script}");
    }
    // The task files the script reads are the ConfigMap's keys.
    let tasks = &documents[1]["data"];
    assert!(tasks["task-0.md"].is_string() && tasks["task-1.md"].is_string());
    let secret_key = &task["env"][1]["valueFrom"]["secretKeyRef"];
    assert_eq!(secret_key["name"], documents[2]["metadata"]["name"]);
    assert!(documents[2]["stringData"][secret_key["key"].as_str().unwrap()].is_string());
}

#[test]
fn the_containerfile_builds_a_static_musl_tackle() {
    let file = std::fs::read_to_string(root().join("deploy/Containerfile")).unwrap();
    assert!(file.contains("x86_64-unknown-linux-musl") && file.contains("-p tackle-cli"), "{file}");
    assert!(file.contains("COPY --from=build /out/tackle /tackle"), "{file}");
}
