//! The Ray engine of `tackle fleet run --engine ray --ray-address URL`: each task's `tackle
//! run` is one job of the Ray Jobs REST API (the dashboard's `/api/jobs/`: submit, status,
//! stop), so Ray places the work on its nodes (docs/scale-out.md#on-ray). No Python runs in
//! Tackle.
//!
//! The job's entrypoint is `tackle run` itself, at `--tackle-binary` (default: this binary's
//! path), with its stdout written into the task's directory: the output directory and the
//! workspaces must be on a path every node sees (a shared file system; on a one-machine cluster,
//! any path). Each job reserves `entrypoint_num_cpus = 1`, so Ray spreads the jobs over the
//! nodes instead of running every entrypoint on the head. A job that Ray ends for its own
//! reasons (its node died, the job supervisor failed: no exit code of the entrypoint) is an
//! infrastructure failure, exit 3, retried under `--retry infra`; Ctrl-C stops the jobs in
//! flight.

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::tasks::FleetTask;
use super::{quote, results};

/// How often a job's status is asked.
const POLL: Duration = Duration::from_millis(250);
/// How long a stopped job may take to end before the fleet stops waiting.
const STOP_WAIT: Duration = Duration::from_secs(30);

/// A Ray cluster's job server.
#[derive(Debug)]
pub struct Ray {
    /// The dashboard's address, `http://HOST:PORT`, without a trailing slash.
    base: String,
    http: reqwest::Client,
    /// The tackle binary's path on every node.
    binary: String,
    /// Variables of this process's environment given to every job (`--ray-env`).
    env: serde_json::Map<String, Value>,
    /// This fleet's id, in every submission id.
    fleet: String,
}

impl Ray {
    /// Checks that `address` answers as a Ray job server (`GET /api/version`).
    pub async fn connect(address: &str, binary: &Path, env_names: &[String]) -> Result<Ray, String> {
        let base = address.trim_end_matches('/').to_owned();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(format!("--ray-address {address}: write the dashboard's URL, e.g. http://127.0.0.1:8265"));
        }
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(60))
            .build()
            .map_err(|err| format!("cannot make an HTTP client: {err}"))?;
        let version: Value = http
            .get(format!("{base}/api/version"))
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|err| format!("--ray-address {address}: no Ray job server answers: {err}"))?
            .json()
            .await
            .map_err(|err| format!("--ray-address {address}: not a Ray job server: {err}"))?;
        if version.get("ray_version").is_none() {
            return Err(format!("--ray-address {address}: not a Ray job server (no ray_version in /api/version)"));
        }
        let mut env = serde_json::Map::new();
        for name in env_names {
            let value = std::env::var(name).map_err(|_| format!("--ray-env {name}: not set in this environment"))?;
            env.insert(name.clone(), json!(value));
        }
        let fleet = format!("{:x}-{:x}", std::process::id(), now_millis());
        Ok(Ray { base, http, binary: binary.display().to_string(), env, fleet })
    }

    /// Runs `args` (a `tackle run`) as one job for `task`, and reads its result from the
    /// task's directory once the job ends.
    pub async fn run(
        &self,
        args: &[String],
        task: &FleetTask,
        attempt: u32,
        task_dir: &Path,
        stop: &CancellationToken,
    ) -> Result<Value, String> {
        // Per attempt: a run a lost node left going writes beside, not over, the next one's.
        let printed = task_dir.join(format!("ray-result.{attempt}.json"));
        let log = task_dir.join(format!("stderr.{attempt}.log"));
        let trajectory = task_dir.join(results::TRAJECTORY);
        let attempt_trajectory = task_dir.join(format!("trajectory.{attempt}.jsonl"));
        let mut args = args.to_vec();
        if let Some(at) = args.iter().position(|a| a == "--trajectory") {
            args[at + 1] = attempt_trajectory.display().to_string();
        }
        let command: Vec<String> =
            std::iter::once(self.binary.as_str()).chain(args.iter().map(String::as_str)).map(quote).collect();
        let entrypoint = format!(
            "exec {} > {} 2> {}",
            command.join(" "),
            quote(&printed.display().to_string()),
            quote(&log.display().to_string())
        );
        let id = format!("tackle-{}-{}-{attempt}", self.fleet, task.id);
        let body = json!({
            "entrypoint": entrypoint,
            "submission_id": id,
            "entrypoint_num_cpus": 1,
            "runtime_env": {"env_vars": self.env},
            "metadata": {"tackle_task": task.id},
        });
        self.http
            .post(format!("{}/api/jobs/", self.base))
            .json(&body)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|err| format!("Ray refused the job of task {}: {err}", task.id))?;
        let status = self.wait(&id, stop).await?;
        let result = std::fs::read(&printed).ok().and_then(|stdout| super::local::printed_result(&stdout));
        let _ = std::fs::remove_file(&printed);
        let ended_itself = status.get("driver_exit_code").is_some_and(|code| !code.is_null());
        match result {
            // The entrypoint ran to its own end: its result stands, whatever Ray's status.
            Some(mut result) if ended_itself || status["status"] == "SUCCEEDED" => {
                let _ = std::fs::rename(&attempt_trajectory, &trajectory);
                let _ = std::fs::rename(&log, task_dir.join("stderr.log"));
                if result.get("trajectory").is_some_and(|t| !t.is_null()) {
                    result["trajectory"] = json!(trajectory.display().to_string());
                }
                Ok(result)
            }
            _ => {
                let message = status["message"].as_str().unwrap_or("no message");
                Ok(json!({
                    "status": "error",
                    "exit_code": if status["status"] == "STOPPED" { 130 } else { 3 },
                    "error": {"kind": "ray", "message": format!("Ray job {id} ended {}: {message}", status["status"])},
                }))
            }
        }
    }

    /// Polls the job until it ends; on `stop`, asks Ray to stop it and waits for that.
    async fn wait(&self, id: &str, stop: &CancellationToken) -> Result<Value, String> {
        let mut stopped_at: Option<tokio::time::Instant> = None;
        let mut failures = 0;
        loop {
            if stop.is_cancelled() && stopped_at.is_none() {
                stopped_at = Some(tokio::time::Instant::now());
                let _ = self.http.post(format!("{}/api/jobs/{id}/stop", self.base)).send().await;
            }
            match self.status(id).await {
                Ok(status) if matches!(status["status"].as_str(), Some("SUCCEEDED" | "FAILED" | "STOPPED")) => {
                    return Ok(status);
                }
                Ok(_) => failures = 0,
                Err(err) => {
                    failures += 1;
                    if failures >= 40 {
                        return Err(format!("the Ray job server stopped answering about job {id}: {err}"));
                    }
                }
            }
            if stopped_at.is_some_and(|at| at.elapsed() > STOP_WAIT) {
                return Ok(json!({"status": "STOPPED", "message": "stopped by the fleet"}));
            }
            tokio::select! {
                () = tokio::time::sleep(POLL) => {}
                () = stop.cancelled(), if stopped_at.is_none() => {}
            }
        }
    }

    async fn status(&self, id: &str) -> Result<Value, reqwest::Error> {
        self.http.get(format!("{}/api/jobs/{id}", self.base)).send().await?.error_for_status()?.json().await
    }
}

fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(0))
}
