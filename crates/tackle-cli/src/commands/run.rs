//! `tackle run "TASK"`: the main job. Wires the workspace, configuration, provider, tools,
//! permissions and trajectory into a `tackle::agent::Agent`, shows the run, and maps its end to
//! the exit codes of docs/reference/providers.md#rules-for-calls.

use std::io::{IsTerminal as _, Read as _};
use std::path::Path;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tackle::Agent;
use tackle::agent::{AgentBuilder, CallFormat, Observer, OutputSchema, TerminalApprover, Trajectory};
use tackle::llm::default_model;
use tackle::permission::{AutoApprover, NonInteractiveApprover};
use tackle::{Approver, KillSwitch, trajectory};
use tokio_util::sync::CancellationToken;

use crate::cli::{AgentArgs, RunArgs, ToolSelection};
use crate::exit::{CommandResult, Failure};
use crate::session;
use crate::ui::{Mode, RunUi};

/// The toolset `tackle run` starts from.
const RUN_DEFAULT: &str = "default";

/// The tools of `tackle run --call-format markdown` without `--tools`.
const RUN_DEFAULT_MARKDOWN: &str = "default,save,append,patch";

/// A variable of the environment, or of the secrets Tackle moved out of it at start (API keys).
fn env(name: &str) -> Option<String> {
    tackle::secrets::var(name)
}

/// `tackle run`.
pub async fn run(args: RunArgs) -> CommandResult {
    let started = Instant::now();
    let task = read_task(args.task.as_deref(), args.task_file.as_deref())?;
    let output_schema = args.output_schema.as_deref().map(read_output_schema).transpose()?;
    let json = args.json || output_schema.is_some();
    let workspace = session::workspace(args.agent.workspace.as_ref())?;
    let earlier = match (&args.resume, args.continue_latest) {
        (Some(path), _) => Some(path.clone()),
        (None, true) => Some(trajectory::latest(&workspace).ok_or_else(|| {
            Failure::usage(format!(
                "--continue: no trajectory in {} yet; run a task first, or pass --resume TRAJECTORY",
                tackle::state::TRAJECTORIES.path(&workspace).display()
            ))
        })?),
        (None, false) => None,
    };
    let history = match &earlier {
        Some(path) => trajectory::conversation(path).map_err(|e| Failure::usage(e.to_string()))?,
        None => Vec::new(),
    };
    // With stdin a pipe (`git diff | tackle run -`), approvals are asked on /dev/tty.
    let interactive = !json && crate::tty::can_ask();
    let ui_mode = if json {
        Mode::Json
    } else if std::io::stdout().is_terminal() {
        Mode::Rich
    } else {
        Mode::Plain
    };
    let ui = Arc::new(RunUi::new(ui_mode));
    let config = session::config(&workspace, args.agent.trust_workspace, session::interactive())?;
    let cancel = CancellationToken::new();
    // SIGTERM and SIGHUP from the start: a pod preempted while the session starts still ends
    // with a result.
    let signals = crate::signals::cancel_on(cancel.clone(), &crate::signals::TERM_AND_HUP);
    let options = RunOptions { started, limits: args.limits.clone(), output_schema };
    let mut agent = build_agent(&args.agent, &workspace, config, interactive, ui.clone(), history, options)
        .await
        .inspect_err(|failure| report_unstarted(json, failure, started))?;
    // What the run changes is measured from the moment the session (and its set-up) is ready,
    // in the container when the workspace is there.
    let baseline = match json {
        true => Some(tackle::changes::RunBaseline::take(&agent).await),
        false => None,
    };
    let _interrupt = interrupt_handler(agent_hard_exit(&agent), Arc::new(Mutex::new(cancel.clone())));
    let outcome = agent.run_with_cancel(&task, &cancel).await;
    let diff = match &baseline {
        Some(baseline) => Some(baseline.diff().await.unwrap_or_else(|err| {
            diagln!("tackle: the workspace's changes could not be measured: {err}");
            String::new()
        })),
        None => None,
    };
    agent.close().await;
    let code = crate::exit::of_run(&outcome, signals.exit_code());
    ui.finish(&outcome, &crate::ui::RunEnd { exit_code: code, diff });
    Ok(ExitCode::from(code))
}

/// With `--json`, a run whose infrastructure failed before it started (the container engine,
/// the image, `--setup`) still prints one result object, so a harness reads it as it reads any
/// result and retries it; a usage error prints only its message (exit 2).
fn report_unstarted(json: bool, failure: &Failure, started: Instant) {
    if !json || failure.code != ExitCode::from(crate::exit::INFRA) {
        return;
    }
    let object = serde_json::json!({
        "status": "error", "steps": 0, "exit_code": crate::exit::INFRA,
        "duration_ms": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        "error": {"kind": "infrastructure", "message": failure.message},
    });
    let _ = crate::stdout::print_json_line(&object);
}

/// What `tackle run` holds its runs to: the limits (time counted from the command's start)
/// and the final answer's schema.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub started: Instant,
    pub limits: crate::cli::RunLimits,
    pub output_schema: Option<serde_json::Value>,
}

impl RunOptions {
    /// No limits and no schema (`tackle chat`).
    pub fn none() -> RunOptions {
        RunOptions { started: Instant::now(), limits: crate::cli::RunLimits::default(), output_schema: None }
    }
}

/// The task: the argument, stdin for `-`, or `--task-file`.
fn read_task(task: Option<&str>, file: Option<&Path>) -> Result<String, Failure> {
    let text = match (task, file) {
        (_, Some(file)) => std::fs::read_to_string(file)
            .map_err(|err| Failure::usage(format!("--task-file {}: {err}", file.display())))?,
        (Some("-"), None) => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|err| Failure::usage(format!("cannot read the task from stdin: {err}")))?;
            text
        }
        (Some(task), None) => task.to_owned(),
        (None, None) => String::new(),
    };
    if text.trim().is_empty() {
        return Err(Failure::usage("the task is empty: say what to do, e.g. tackle run \"fix the failing test\""));
    }
    Ok(text)
}

/// The largest `--output-schema` file read.
const MAX_OUTPUT_SCHEMA_FILE_BYTES: u64 = 1024 * 1024;

/// The schema of `--output-schema FILE`, checked before anything starts: a file that cannot be
/// read, is not JSON or is not a usable JSON Schema is a usage error naming it.
fn read_output_schema(path: &Path) -> Result<serde_json::Value, Failure> {
    let fail = |why: String| Failure::usage(format!("--output-schema {}: {why}", path.display()));
    let file = std::fs::File::open(path).map_err(|err| fail(format!("cannot read it: {err}")))?;
    let mut bytes = Vec::new();
    file.take(MAX_OUTPUT_SCHEMA_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| fail(format!("cannot read it: {err}")))?;
    if bytes.len() as u64 > MAX_OUTPUT_SCHEMA_FILE_BYTES {
        return Err(fail(format!("larger than {MAX_OUTPUT_SCHEMA_FILE_BYTES} bytes")));
    }
    let schema: serde_json::Value = serde_json::from_slice(&bytes).map_err(|err| fail(format!("not JSON: {err}")))?;
    OutputSchema::new(schema.clone()).map_err(|err| fail(format!("the schema {err}")))?;
    Ok(schema)
}

/// The agent of `tackle run` and `tackle chat`: the provider, the session (built by the
/// library's `SessionBuilder`), the trajectory and the observer, carrying on `history`, with
/// the final answer held to `output_schema` when one is given.
pub async fn build_agent(
    args: &AgentArgs,
    workspace: &Path,
    config: tackle::Config,
    interactive: bool,
    ui: Arc<RunUi>,
    history: Vec<tackle::llm::Message>,
    options: RunOptions,
) -> Result<Agent, Failure> {
    let RunOptions { started, limits, output_schema } = options;
    let observer: Arc<dyn Observer> = ui.clone();
    let client = model_client(&config, args.model.as_deref(), args.base_url.as_deref(), !args.no_stream)?;
    let approver: Arc<dyn Approver> = if args.yes {
        Arc::new(AutoApprover)
    } else if interactive {
        let color = crate::tty::color(std::io::stderr().is_terminal());
        let approver = TerminalApprover::new(Arc::new(crate::tty::TerminalPrompter)).with_color(color);
        // "Always for this project" saves in the user config dir, never in the workspace.
        match tackle::permission::ProjectRules::in_user_config() {
            Some(store) => Arc::new(approver.for_project(workspace, store)),
            None => Arc::new(approver),
        }
    } else {
        Arc::new(NonInteractiveApprover)
    };
    // The markdown format also gets gptme's block tools (docs/reference/cli.md).
    let default = if args.call_format == CallFormat::Text(tackle::text_calls::TextFormat::Markdown) {
        RUN_DEFAULT_MARKDOWN
    } else {
        RUN_DEFAULT
    };
    let selection = ToolSelection { tools: args.tools.clone(), allow_project_mcp: args.allow_project_mcp };
    let builder = session::builder(workspace, config, &selection);
    // On a terminal, an imported server's forms are filled in there; otherwise the user
    // config's `[mcp] elicitation` answers them (the builder's default).
    let builder = if interactive {
        let hold: Arc<dyn Fn(bool) + Send + Sync> = Arc::new(move |hold| ui.hold_bars(hold));
        builder
            .mcp_elicitor(Arc::new(crate::elicit::TerminalElicitor::new(Arc::new(crate::tty::TerminalPrompter), hold)))
    } else {
        builder
    };
    let tackle = crate::commands::containers::apply(builder, &args.container, workspace)
        .default_tools(default)
        .permission_mode(args.permission_mode)
        .rules(args.rules.flags())
        .approver(approver)
        .build()
        .await?;
    // Which sandbox and network policy confine the commands, said once at the start.
    if let Err(failure) = session::announce_sandbox(tackle.template()) {
        tackle.close().await;
        return Err(failure);
    }
    if let Some(setup) = &limits.setup {
        let output = tackle.run_setup(setup, &CancellationToken::new()).await;
        if output.is_error {
            tackle.close().await;
            return Err(Failure::infra(format!(
                "--setup failed, so the task did not start: {}",
                output.text_content().trim_end()
            )));
        }
    }
    exclude_tackle_dir(workspace);
    // The default trajectory is one of Tackle's state files: a linked `.tackle` or
    // `.tackle/trajectories` is refused with a notice, and the run goes on without one.
    let path = match &args.trajectory {
        Some(path) => Some(path.clone()),
        None => {
            let refused = [tackle::state::TACKLE, tackle::state::TRAJECTORIES]
                .iter()
                .map(|entry| entry.refuse_link(workspace))
                .find_map(Result::err);
            match refused {
                Some(err) => {
                    err.notice();
                    None
                }
                None => Some(trajectory::default_path(workspace, tackle.session().id())),
            }
        }
    };
    let builder = AgentBuilder::new(Arc::new(client), tackle);
    let builder = match path {
        Some(path) => builder.trajectory(path),
        None => builder,
    };
    let builder = match output_schema {
        Some(schema) => builder.output_schema(schema),
        None => builder,
    };
    // The time limit counts from the command's start: the session's start-up is part of it.
    let builder = match limits.timeout {
        Some(timeout) => builder.time_limit(timeout.saturating_sub(started.elapsed())),
        None => builder,
    };
    let builder = match limits.max_tokens {
        Some(max) => builder.max_tokens(max),
        None => builder,
    };
    let builder = match limits.max_cost {
        Some(usd) => builder.max_cost(usd),
        None => builder,
    };
    Ok(builder
        .max_steps(args.max_steps)
        .call_format(args.call_format)
        .trajectory_full(args.trajectory_full)
        .observer(observer)
        .history(history)
        .build()?)
}

/// The client for `model` (default: `TACKLE_MODEL` or the key's default) at `base_url`.
pub fn model_client(
    config: &tackle::Config,
    model: Option<&str>,
    base_url: Option<&str>,
    stream: bool,
) -> Result<tackle::llm::LlmClient, Failure> {
    let model = match model {
        Some(model) => model.to_owned(),
        None => default_model(&env).map_err(|e| Failure::usage(e.to_string()))?,
    };
    let client = tackle::llm::from_config(config, &model, base_url).map_err(|e| Failure::usage(e.to_string()))?;
    Ok(client.streaming(stream))
}

/// Adds `.tackle/` (trajectories, spilled outputs) to the workspace's `.git/info/exclude` on
/// first use, so git does not show it; the user's `.gitignore` is never edited. Nothing happens
/// outside a git work tree (a `.git` directory at the workspace root) or when it is listed.
/// The file is one of Tackle's state paths (`GIT_EXCLUDE`): read and appended beneath the
/// workspace, and a `.git`, `.git/info` or `exclude` that is a symbolic link is refused with a
/// notice, never followed (the workspace's files are untrusted).
fn exclude_tackle_dir(workspace: &Path) {
    use tackle::state::{self, GIT_EXCLUDE};
    const MAX_EXCLUDE_BYTES: u64 = 1024 * 1024;
    match state::open_dir(workspace, ".git", false) {
        Ok(Some(_)) => {}
        Ok(None) => return,
        // A `.git` file (a worktree's `gitdir:`) is not a directory: nothing to do.
        Err(err) if std::fs::symlink_metadata(workspace.join(".git")).is_ok_and(|m| m.is_file()) => {
            tracing::debug!("{err}");
            return;
        }
        Err(err) => return err.notice(),
    }
    let current = match GIT_EXCLUDE.read(workspace, MAX_EXCLUDE_BYTES) {
        Ok(current) => String::from_utf8_lossy(&current.unwrap_or_default()).into_owned(),
        Err(err) => return err.notice(),
    };
    if current.lines().any(|line| matches!(line.trim(), ".tackle" | ".tackle/" | "/.tackle" | "/.tackle/")) {
        return;
    }
    let mut text = String::new();
    if !current.is_empty() && !current.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# Tackle's trajectories and saved outputs (added by tackle)\n/.tackle/\n");
    if let Err(err) = GIT_EXCLUDE.append(workspace, text.as_bytes()) {
        err.notice();
    }
}

/// What a second Ctrl-C must end, from `agent`.
pub fn agent_hard_exit(agent: &Agent) -> Hard {
    Hard { processes: agent.kill_switch(), trajectory: agent.trajectory() }
}

/// What a second Ctrl-C ends before Tackle exits.
pub struct Hard {
    /// The session's shell and jobs.
    processes: KillSwitch,
    trajectory: Option<Arc<Trajectory>>,
}

impl Hard {
    /// Kills every process the session started (SIGKILL, no grace), closes the trajectory
    /// with the calls still running cancelled, and exits with 130 (docs/reference/providers.md#rules-for-calls).
    fn exit(&self) -> ! {
        self.processes.kill_processes();
        if let Some(trajectory) = &self.trajectory {
            trajectory.end_now();
        }
        diagln!("Interrupted: every process of the session was killed.");
        std::process::exit(130)
    }
}

/// Ctrl-C cancels the running task (the token in `current`; each running call still
/// answers); a second press within 2 s exits at once, after killing the session's processes.
/// `tackle chat` puts a new token in `current` for each task. The handler ends when the
/// returned guard is dropped.
pub fn interrupt_handler(hard: Hard, current: Arc<Mutex<CancellationToken>>) -> tokio_util::sync::DropGuard {
    let stop = CancellationToken::new();
    let guard = stop.clone().drop_guard();
    tokio::spawn(async move {
        let mut first: Option<Instant> = None;
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                signal = tokio::signal::ctrl_c() => if signal.is_err() { return },
            }
            match first {
                Some(at) if at.elapsed() <= Duration::from_secs(2) => hard.exit(),
                _ => {
                    first = Some(Instant::now());
                    if let Ok(token) = current.lock() {
                        token.cancel();
                    }
                    diagln!(
                        "\nInterrupting: running tools are being cancelled. Press Ctrl-C again within 2 s to exit at once."
                    );
                }
            }
        }
    });
    guard
}
