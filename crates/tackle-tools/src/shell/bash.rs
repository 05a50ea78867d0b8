//! `bash`: run a command in the session's persistent shell (docs/reference/tools.md#bash), or hand it to the
//! job manager (`run_in_background`), or restart the shell.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tackle_core::{BlockMapping, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

use super::jobs::Job;
use super::process::{CallResult, Ended, ShellStartError};
use super::render::{StreamText, fit, split_budget};
use super::{ShellState, readonly};

/// The wire name.
pub const NAME: &str = "bash";

/// The default timeout of a command, in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;

/// The longest timeout a foreground command may ask for.
pub const MAX_TIMEOUT_MS: u64 = 600_000;

const DESCRIPTION: &str = "Run a command in a persistent bash session in the workspace. The working directory, \
exported variables, functions and aliases persist between calls; multi-line scripts and heredocs work. stdin is \
/dev/null, so a command that waits for input gets end-of-file at once: do not start interactive programs (editors, \
pagers, `git rebase -i`, bare REPLs). Output over 30,000 characters keeps its head and tail, and the full output \
is saved to the file named in the output. A command is killed after `timeout` ms (default 120000, at most \
600000): start servers, watchers and other long-running work with run_in_background (then read it with \
job_output) instead of `&`. Prefer the file tools for reading, searching and editing files. Commands run in a \
sandbox that may block writes outside the workspace and network access. /tmp: under the bubblewrap sandbox it is \
private to this shell session (each background job has its own, and it is emptied when the session restarts); \
under Landlock or no sandbox it is the machine's /tmp. Keep files that other commands, jobs or tools must see in \
the workspace.";

/// The arguments of `bash`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashInput {
    /// The command to run. Required unless restart is true.
    pub command: Option<String>,
    /// Timeout in milliseconds (default 120000, at most 600000).
    #[schemars(range(min = 1, max = 600000))]
    pub timeout: Option<u64>,
    /// Start the command as a background job and return at once; read its output with job_output.
    pub run_in_background: Option<bool>,
    /// What the command does, in 5-10 words.
    pub description: Option<String>,
    /// Kill the shell session and start a new one; command is ignored.
    pub restart: Option<bool>,
}

/// The `bash` tool.
#[derive(Debug, Default)]
pub struct Bash;

impl Tool for Bash {
    type Input = BashInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(NAME, DESCRIPTION)
            .title("Bash")
            .alias("Bash")
            .destructive()
            .command_param("command")
            .manages_output_budget()
            .param_hint_above_maximum("timeout", "use run_in_background for longer commands")
            .block(BlockMapping {
                langtags: vec!["bash".into(), "shell".into(), "sh".into()],
                body_param: "command".into(),
                words_param: None,
                strip_prompt: true,
            })
    }

    fn written_paths(&self, input: &BashInput) -> Vec<String> {
        // A routed `apply_patch` command edits files like the apply_patch tool.
        input
            .command
            .as_deref()
            .and_then(routed_patch)
            .map(|patch| crate::fs::patch::patch_paths(&patch))
            .unwrap_or_default()
    }

    fn is_read_only(&self, input: &BashInput) -> bool {
        input.restart != Some(true) && input.command.as_deref().is_some_and(readonly::is_read_only)
    }

    fn timeout(&self, input: &BashInput) -> Option<Duration> {
        // The tool reports its own timeout; the executor's deadline is a safety net after the
        // kill procedure (two grace periods) and a restart.
        let own = if input.run_in_background == Some(true) { 0 } else { input.timeout.unwrap_or(DEFAULT_TIMEOUT_MS) };
        Some(Duration::from_millis(own) + Duration::from_secs(10))
    }

    fn validate(&self, input: &BashInput) -> Result<(), ToolError> {
        if input.restart != Some(true) {
            command(input)?;
        }
        Ok(())
    }

    async fn call(&self, input: BashInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let state = ShellState::of(ctx)?;
        if input.restart == Some(true) {
            return restart(&state).await;
        }
        let command = command(&input)?.to_owned();
        if command.contains('\0') {
            return Err(ToolError::InvalidInput(
                "The command contains a NUL character, which bash cannot run; remove it.".into(),
            ));
        }
        // Codex-trained models write patches as `apply_patch <<'EOF' … EOF`: the apply_patch
        // tool applies them (with the session's path policy), not the shell.
        if let Some(patch) = routed_patch(&command).filter(|_| !ctx.read_only_restricted()) {
            return crate::fs::patch::apply_patch(ctx, patch).await;
        }
        let background = input.run_in_background == Some(true);
        let command = state.command_for(ctx, &command, background)?;
        if background {
            let timeout = input.timeout.map(Duration::from_millis);
            let job = state.start_job(&command, timeout).await?;
            return Ok(started_in_background(&job));
        }
        let timeout_ms = input.timeout.unwrap_or(DEFAULT_TIMEOUT_MS).min(MAX_TIMEOUT_MS);
        run(&state, &command, timeout_ms, ctx).await
    }
}

/// The command to run; a missing or blank one is refused (at admission, by `validate`).
fn command(input: &BashInput) -> Result<&str, ToolError> {
    match input.command.as_deref() {
        Some(command) if !command.trim().is_empty() => Ok(command),
        _ => Err(ToolError::InvalidInput("No command provided for the bash tool".into())),
    }
}

/// The patch of a command that is exactly `apply_patch` (or `applypatch`) with a heredoc body
/// or with the patch as its one quoted argument (docs/reference/tools.md#bash).
fn routed_patch(command: &str) -> Option<String> {
    crate::fs::patch::patch_from_command(command).or_else(|| quoted_patch(command))
}

/// `apply_patch '<patch>'` (with `'\''` for a quote inside) or `apply_patch "<patch>"` (with
/// no expansion inside).
fn quoted_patch(command: &str) -> Option<String> {
    let command = command.trim();
    let rest = command.strip_prefix("apply_patch").or_else(|| command.strip_prefix("applypatch"))?;
    if !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let argument = rest.trim();
    let patch = if let Some(inner) = argument.strip_prefix('\'').and_then(|a| a.strip_suffix('\'')) {
        if inner.replace("'\\''", "").contains('\'') {
            return None;
        }
        inner.replace("'\\''", "'")
    } else if let Some(inner) = argument.strip_prefix('"').and_then(|a| a.strip_suffix('"')) {
        let mut patch = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            match c {
                '\\' => match chars.next() {
                    Some(escaped @ ('"' | '\\' | '$' | '`')) => patch.push(escaped),
                    Some('\n') => {}
                    Some(other) => {
                        patch.push('\\');
                        patch.push(other);
                    }
                    None => return None,
                },
                '"' | '$' | '`' => return None,
                other => patch.push(other),
            }
        }
        patch
    } else {
        return None;
    };
    patch.trim_start().starts_with("*** Begin Patch").then_some(patch)
}

/// `restart: true`.
async fn restart(state: &ShellState) -> Result<ToolOutput, ToolError> {
    let mut guard = state.shell.lock().await;
    if let Some(old) = guard.take() {
        old.close().await;
    }
    let shell = state.start_shell().await.map_err(start_error)?;
    *guard = Some(shell);
    Ok(ToolOutput::text("tool has been restarted."))
}

fn start_error(reason: ShellStartError) -> ToolError {
    ToolError::Failed(format!("Error starting bash session: {reason}"))
}

/// How often a running command's last output line is reported as progress.
const TAIL_INTERVAL: Duration = Duration::from_millis(250);

/// Reports the last line of a running command's output as progress (a terminal shows it
/// under the call's spinner; MCP sends it as a progress notification). Never returns.
async fn live_tail(stdout: &super::stream::SharedStream, ctx: &ToolContext) -> std::convert::Infallible {
    let started = Instant::now();
    let mut shown: Option<String> = None;
    loop {
        tokio::time::sleep(TAIL_INTERVAL).await;
        let line = super::stream::lock(stdout).last_line();
        if line.is_some() && line != shown {
            ctx.progress(tackle_core::Progress {
                progress: started.elapsed().as_secs_f64(),
                total: None,
                message: line.clone(),
            });
            shown = line;
        }
    }
}

/// Runs a command in the persistent shell and renders its output.
async fn run(state: &ShellState, command: &str, timeout_ms: u64, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let deadline = Instant::now() + Duration::from_millis(timeout_ms);
    let mut guard = state.shell.lock().await;
    let mut notes = Vec::new();
    if guard.as_ref().is_some_and(|shell| !shell.is_usable()) {
        if let Some(old) = guard.take() {
            old.kill().await;
        }
        notes.push(format!(
            "[The shell session had ended; this command ran in a new session started in {}.]",
            state.workspace.display()
        ));
    }
    let shell = match guard.as_mut() {
        Some(shell) => shell,
        None => guard.insert(state.start_shell().await.map_err(start_error)?),
    };
    let stdout = shell.stdout_stream();
    let protected = state.guard.before();
    let result = tokio::select! {
        result = shell.run(command, ctx.call_id(), deadline, ctx.cancel_token()) => result,
        never = live_tail(&stdout, ctx) => match never {},
    };
    notes.extend(state.guard.after_command(&protected));
    let workspace = state.workspace.display().to_string();
    let restart_failed = match &result.ended {
        Ended::Done { .. } | Ended::Interrupted { kept: true, .. } => None,
        Ended::ShellExited { .. } | Ended::Interrupted { kept: false, .. } => {
            if let Some(old) = guard.take() {
                old.kill().await;
            }
            match state.start_shell().await {
                Ok(shell) => {
                    *guard = Some(shell);
                    None
                }
                Err(reason) => Some(reason.to_string()),
            }
        }
    };
    drop(guard);
    Ok(render(state, result, timeout_ms, &workspace, restart_failed, notes))
}

/// Assembles the model's text, the structured payload and the meta of a foreground call.
fn render(
    state: &ShellState,
    result: CallResult,
    timeout_ms: u64,
    workspace: &str,
    restart_failed: Option<String>,
    notes: Vec<String>,
) -> ToolOutput {
    let stdout = result.stdout.finish();
    let stderr = result.stderr.finish();
    let (out_budget, err_budget) = split_budget(state.env.max_output_chars, stdout.chars, stderr.chars);
    let out = fit(stdout, out_budget);
    let err = fit(stderr, err_budget);

    let new_session = |what: &str| match &restart_failed {
        None => what.to_owned(),
        Some(reason) => format!("a new session could not be started (Error starting bash session: {reason})"),
    };
    let (exit_code, cwd, interrupted, timed_out, tail): (Option<i32>, String, bool, bool, Option<String>) = match result
        .ended
    {
        Ended::Done { exit_code, cwd } => (Some(exit_code), cwd, false, false, None),
        Ended::ShellExited { code } => {
            let line =
                format!("[The shell exited; {}.]", new_session(&format!("a new session was started in {workspace}")));
            (Some(code.unwrap_or(-1)), workspace.to_owned(), false, false, Some(line))
        }
        Ended::Interrupted { timed_out, kept, cwd } => {
            let clause = if timed_out {
                format!("Command timed out after {timeout_ms} ms")
            } else {
                "Command cancelled by the user".to_owned()
            };
            let line = if kept {
                format!(
                    "[{clause} and was killed. The shell session was kept: working directory and environment are unchanged.]"
                )
            } else {
                let session = new_session(&format!(
                    "The shell session was restarted: the working directory is {workspace} again and exported variables are gone"
                ));
                format!("[{clause} and was killed. {session}.]")
            };
            (None, cwd.unwrap_or_else(|| workspace.to_owned()), true, timed_out, Some(line))
        }
    };

    let mut parts: Vec<String> = Vec::new();
    if !out.text.is_empty() {
        parts.push(out.text.clone());
    }
    if !err.text.is_empty() {
        parts.push(format!("[stderr]\n{}", err.text));
    }
    if let Some(code) = exit_code.filter(|code| *code != 0) {
        parts.push(format!("[exit code: {code}]"));
        if let Some(hint) = state.env.sandbox.hint(&err.text) {
            parts.push(hint);
        }
    }
    parts.extend(tail);
    parts.extend(notes);
    let text = if parts.is_empty() { "(no output)".to_owned() } else { parts.join("\n") };

    let is_error = interrupted || exit_code.is_some_and(|code| code != 0);
    let mut structured = json!({
        "stdout": out.text,
        "stderr": err.text,
        "exit_code": exit_code,
        "cwd": cwd,
        "interrupted": interrupted,
    });
    if timed_out {
        structured["timed_out_after_ms"] = json!(timeout_ms);
    }
    add_spill(&mut structured, "stdout_spill", &out);
    add_spill(&mut structured, "stderr_spill", &err);
    let mut output = if is_error { ToolOutput::error(text) } else { ToolOutput::text(text) };
    output.meta.exit_code = exit_code;
    output.meta.truncated = out.truncated || err.truncated;
    output.meta.spill_path = out.spill.clone().or_else(|| err.spill.clone());
    output.with_structured(structured)
}

fn add_spill(structured: &mut Value, key: &str, stream: &StreamText) {
    if let Some(spill) = &stream.spill {
        structured[key] = json!(spill);
    }
}

/// The answer to `bash` with `run_in_background`: the job manager's text, and the structured
/// shape of every `bash` result with the job's id.
fn started_in_background(job: &Job) -> ToolOutput {
    let mut output = job.started_output();
    output.structured = Some(json!({
        "stdout": "",
        "stderr": "",
        "exit_code": null,
        "cwd": job.cwd.display().to_string(),
        "interrupted": false,
        "background_job_id": job.id,
    }));
    output
}
