//! `background_run`, `job_output`, `job_kill` (docs/reference/tools.md#background_run).

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tackle_core::agent_jobs::{AgentJob, AgentJobStatus, AgentJobs};
use tackle_core::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

use crate::shell::render::fit;
use crate::shell::{ShellState, readonly};

use super::JobStatus;

/// The default timeout of a background job, in milliseconds.
pub const DEFAULT_JOB_TIMEOUT_MS: u64 = 1_800_000;

/// How long `job_output` with `block` waits by default, in milliseconds.
const DEFAULT_BLOCK_MS: u64 = 30_000;

/// How long `job_kill` waits for a cancelled background subagent to record its end.
const AGENT_KILL_WAIT: Duration = Duration::from_secs(5);

/// A background subagent (`agent-N`, started by the `subagent` tool of `tackle-agent`), if the
/// id names one of this session's.
fn agent_job(ctx: &ToolContext, id: &str) -> Option<std::sync::Arc<AgentJob>> {
    ctx.state().existing::<AgentJobs>()?.find(id)
}

/// The arguments of `background_run`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BackgroundRunInput {
    /// The command to run with `bash -c`, in the session shell's working directory and with
    /// its exported variables.
    pub command: String,
    /// Kill the job after this many milliseconds (default 1800000, at most 7200000).
    #[schemars(range(min = 1, max = 7200000))]
    pub timeout: Option<u64>,
    /// What the command does, in 5-10 words.
    pub description: Option<String>,
}

/// The `background_run` tool.
#[derive(Debug, Default)]
pub struct BackgroundRun;

impl Tool for BackgroundRun {
    type Input = BackgroundRunInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "background_run",
            "Start a command as a background job and return its job id at once. Use it for servers, watchers, \
             long builds and test runs. The job runs with `bash -c` in the shell session's working directory with its \
             exported variables; stdout and stderr go to a log. Read new output with job_output, stop the job with \
             job_kill; you are notified when it finishes. At most 16 jobs run at once.",
        )
        .title("Background run")
        .destructive()
        .command_param("command")
    }

    fn is_read_only(&self, input: &BackgroundRunInput) -> bool {
        readonly::is_read_only(&input.command)
    }

    async fn call(&self, input: BackgroundRunInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if input.command.trim().is_empty() {
            return Err(ToolError::InvalidInput("No command provided for the background_run tool".into()));
        }
        let state = ShellState::of(ctx)?;
        let command = state.command_for(ctx, &input.command, true)?;
        let job = state.start_job(&command, input.timeout.map(Duration::from_millis)).await?;
        Ok(job.started_output())
    }
}

/// The arguments of `job_output`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JobOutputInput {
    /// The job id, e.g. job-1.
    pub job_id: String,
    /// Wait until the job ends or `timeout` passes before answering.
    pub block: Option<bool>,
    /// How long `block` waits, in milliseconds (default 30000, at most 600000).
    #[schemars(range(min = 0, max = 600000))]
    pub timeout: Option<u64>,
    /// Return the output from the start instead of only what is new since the last read.
    pub from_start: Option<bool>,
}

/// The `job_output` tool.
#[derive(Debug, Default)]
pub struct JobOutput;

impl Tool for JobOutput {
    type Input = JobOutputInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "job_output",
            "Read a background job's output produced since the previous job_output call (or from the start with \
             from_start), with its status: running, exited N, killed or timed out. With block, wait until the job \
             ends or timeout ms pass.",
        )
        .title("Job output")
        .read_only()
        .concurrency_safe()
        .manages_output_budget()
    }

    fn timeout(&self, input: &JobOutputInput) -> Option<Duration> {
        let block = if input.block == Some(true) { input.timeout.unwrap_or(DEFAULT_BLOCK_MS) } else { 0 };
        Some(Duration::from_millis(block) + Duration::from_secs(30))
    }

    async fn call(&self, input: JobOutputInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if let Some(job) = agent_job(ctx, &input.job_id) {
            if input.block == Some(true) {
                let wait = Duration::from_millis(input.timeout.unwrap_or(DEFAULT_BLOCK_MS));
                tokio::select! {
                    _ = job.wait(wait) => {}
                    () = ctx.cancel_token().cancelled() => {}
                }
            }
            let status = job.status().to_string();
            return Ok(ToolOutput::text(job.report())
                .with_structured(json!({"job_id": job.id, "status": status, "output": job.result()})));
        }
        let state = ShellState::of(ctx)?;
        let job = state.jobs.get(&input.job_id)?;
        if input.block == Some(true) {
            let wait = Duration::from_millis(input.timeout.unwrap_or(DEFAULT_BLOCK_MS));
            tokio::select! {
                _ = job.wait(wait) => {}
                () = ctx.cancel_token().cancelled() => {}
            }
        }
        // The status is read before the output, so output that completes a finished job is
        // never missed: a later read can only add to it.
        let status = job.status();
        let captured = job
            .read_new(input.from_start == Some(true), state.env.memory_per_part())
            .map_err(|err| ToolError::Failed(format!("Cannot read the log of {}: {err}", job.id)))?;
        let header = format!("Job {} [{status}]: {}", job.id, job.command);
        let (body, truncated, spill) = match captured {
            None => ("(no new output)".to_owned(), false, None),
            Some(captured) => {
                let fitted = fit(captured, state.env.max_output_chars);
                let body = if fitted.text.is_empty() { "(no new output)".to_owned() } else { fitted.text };
                (body, fitted.truncated, fitted.spill)
            }
        };
        // A job that failed because the sandbox stopped it gets the hint a `bash` call would
        // (its log holds stdout and stderr together).
        let hint = match status {
            JobStatus::Exited(code) if code != 0 => state.env.sandbox.hint(&body),
            _ => None,
        };
        let text = match hint {
            Some(hint) => format!("{header}\n{body}\n{hint}"),
            None => format!("{header}\n{body}"),
        };
        let mut output = ToolOutput::text(text).with_structured(json!({
            "job_id": job.id,
            "status": status.to_string(),
            "output": body,
        }));
        output.meta.truncated = truncated;
        output.meta.spill_path = spill;
        if let JobStatus::Exited(code) = status {
            output.meta.exit_code = Some(code);
        }
        Ok(output)
    }
}

/// The arguments of `job_kill`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JobKillInput {
    /// The job id, e.g. job-1.
    pub job_id: String,
}

/// The `job_kill` tool.
#[derive(Debug, Default)]
pub struct JobKill;

impl Tool for JobKill {
    type Input = JobKillInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "job_kill",
            "Stop a background job: SIGTERM to its processes, SIGKILL after 2 s if they are still running.",
        )
        .title("Job kill")
        .destructive()
        .idempotent()
    }

    async fn call(&self, input: JobKillInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if let Some(job) = agent_job(ctx, &input.job_id) {
            if job.status() != AgentJobStatus::Running {
                return Ok(ToolOutput::text(format!("Job {} had already finished ({}).", job.id, job.status())));
            }
            job.cancel_token().cancel();
            let status = job.wait(AGENT_KILL_WAIT).await;
            return Ok(ToolOutput::text(format!("Job {} killed.", job.id))
                .with_structured(json!({"job_id": job.id, "status": status.to_string()})));
        }
        let state = ShellState::of(ctx)?;
        let job = state.jobs.get(&input.job_id)?;
        let status = job.status();
        if status != JobStatus::Running {
            return Ok(ToolOutput::text(format!("Job {} had already finished ({status}).", job.id)));
        }
        let status = job.kill(state.env.kill_grace).await;
        if let JobStatus::Exited(_) = status {
            // It ended on its own while the kill was on its way.
            return Ok(ToolOutput::text(format!("Job {} had already finished ({status}).", job.id)));
        }
        Ok(ToolOutput::text(format!("Job {} killed.", job.id)).with_structured(json!({
            "job_id": job.id,
            "status": status.to_string(),
        })))
    }
}
