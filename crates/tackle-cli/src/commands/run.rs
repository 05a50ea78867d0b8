//! `tackle run "TASK"`: the main job. Wires the workspace, configuration, provider, tools,
//! permissions and trajectory into a `tackle::agent::Agent`, shows the run, and maps its end to
//! the exit codes of docs/reference/providers.md#rules-for-calls.

use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tackle::agent::{AgentBuilder, CallFormat, StdioPrompter, TerminalApprover, Trajectory};
use tackle::core::SessionState;
use tackle::core::permission::{Approver, AutoApprover, NonInteractiveApprover};
use tackle::llm::default_model;
use tackle::tools::shell::ShellState;
use tokio_util::sync::CancellationToken;

use crate::cli::{RunArgs, ToolSelection};
use crate::exit::{CommandResult, Failure};
use crate::session;
use crate::ui::{Mode, RunUi};

/// The toolset `tackle run` starts from.
const RUN_DEFAULT: &str = "default";

/// The tools of `tackle run --call-format markdown` without `--tools`.
const RUN_DEFAULT_MARKDOWN: &str = "default,save,append,patch";

/// A variable of the environment, or of the secrets Tackle moved out of it at start (API keys).
fn env(name: &str) -> Option<String> {
    tackle::core::secrets::var(name)
}

/// `tackle run`.
pub async fn run(args: RunArgs) -> CommandResult {
    let workspace = session::workspace(args.workspace.as_ref())?;
    let config = session::config(&workspace, args.trust_workspace, session::interactive())?;
    let model = match &args.model {
        Some(model) => model.clone(),
        None => default_model(&env).map_err(|e| Failure::usage(e.to_string()))?,
    };
    let mut client = tackle::llm::from_config(&config, &model, args.base_url.as_deref())
        .map_err(|e| Failure::usage(e.to_string()))?;
    client = client.streaming(!args.no_stream);

    let interactive = !args.json && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let approver: Arc<dyn Approver> = if args.yes {
        Arc::new(AutoApprover)
    } else if interactive {
        Arc::new(TerminalApprover::new(Arc::new(StdioPrompter)))
    } else {
        Arc::new(NonInteractiveApprover)
    };
    // The markdown format also gets gptme's block tools (docs/reference/cli.md).
    let default = if args.call_format == CallFormat::Text(tackle::calls::CallFormat::Markdown) {
        RUN_DEFAULT_MARKDOWN
    } else {
        RUN_DEFAULT
    };
    let selection = ToolSelection { tools: args.tools.clone(), allow_project_mcp: args.allow_project_mcp };
    let tackle = session::builder(&workspace, config, &selection)
        .default_tools(default)
        .permission_mode(args.permission_mode)
        .rules(args.rules.flags())
        .approver(approver)
        .build()
        .await?;
    if let Err(failure) = session::check_sandbox(tackle.template()) {
        tackle.close().await;
        return Err(failure);
    }

    let path = args
        .trajectory
        .clone()
        .unwrap_or_else(|| tackle::agent::trajectory::default_path(&workspace, tackle.session().id()));
    let ui_mode = if args.json {
        Mode::Json
    } else if std::io::stdout().is_terminal() {
        Mode::Rich
    } else {
        Mode::Plain
    };
    let ui = Arc::new(RunUi::new(ui_mode));
    let mut agent = AgentBuilder::new(Arc::new(client), tackle)
        .max_steps(args.max_steps)
        .call_format(args.call_format)
        .trajectory(path)
        .trajectory_full(args.trajectory_full)
        .observer(ui.clone())
        .build()?;

    let cancel = interrupt_token(Hard { shells: Arc::clone(agent.session().state()), trajectory: agent.trajectory() });
    crate::signals::cancel_on(cancel.clone(), &crate::signals::TERM_AND_HUP);
    let outcome = agent.run_with_cancel(&args.task, &cancel).await;
    agent.close().await;
    ui.finish(&outcome);
    Ok(ExitCode::from(outcome.status.exit_code()))
}

/// What a second Ctrl-C ends before Tackle exits.
struct Hard {
    /// The session state, where the shell and its jobs live once a shell tool ran.
    shells: Arc<SessionState>,
    trajectory: Option<Arc<Trajectory>>,
}

impl Hard {
    /// Kills every process the session started (SIGKILL, no grace), closes the trajectory
    /// with the calls still running cancelled, and exits with 130 (docs/reference/providers.md#rules-for-calls).
    fn exit(&self) -> ! {
        if let Some(shell) = self.shells.existing::<ShellState>() {
            shell.kill_now();
        }
        if let Some(trajectory) = &self.trajectory {
            trajectory.end_now();
        }
        diagln!("Interrupted: every process of the session was killed.");
        std::process::exit(130)
    }
}

/// Ctrl-C cancels the run (each running call still answers); a second press within 2 s
/// exits at once, after killing the session's processes.
fn interrupt_token(hard: Hard) -> CancellationToken {
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        let mut first: Option<Instant> = None;
        while tokio::signal::ctrl_c().await.is_ok() {
            match first {
                Some(at) if at.elapsed() <= Duration::from_secs(2) => hard.exit(),
                _ => {
                    first = Some(Instant::now());
                    cancel.cancel();
                    diagln!(
                        "\nInterrupting: running tools are being cancelled. Press Ctrl-C again within 2 s to exit at once."
                    );
                }
            }
        }
    });
    token
}
