//! `tackle run "TASK"`: the main job. Wires the workspace, configuration, provider, tools,
//! permissions and trajectory into a `tackle_agent::Agent`, shows the run, and maps its end to
//! the exit codes of providers.md §6.2.

use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tackle_agent::provider::{default_model, provider_config};
use tackle_agent::{
    Agent, AgentConfig, CallFormat, Permissions, StdioPrompter, TerminalApprover, ToolRefresh, Trajectory,
};
use tackle_core::permission::{Approver, AutoApprover, ModePolicy, NonInteractiveApprover, PermissionMode};
use tackle_core::{BoxFuture, ExecutorConfig, Session, SessionState};
use tackle_llm::LlmClient;
use tackle_tools::shell::ShellState;
use tokio_util::sync::CancellationToken;

use crate::cli::RunArgs;
use crate::exit::{CommandResult, Failure};
use crate::session;
use crate::ui::{Mode, RunUi};

/// The toolset `tackle run` starts from.
const RUN_DEFAULT: &str = "default";

/// The tools of `tackle run --call-format markdown` without `--tools`.
const RUN_DEFAULT_MARKDOWN: &str = "default,save,append,patch";

/// A variable of the environment, or of the secrets Tackle moved out of it at start (API keys).
fn env(name: &str) -> Option<String> {
    tackle_core::secrets::var(name)
}

/// `tackle run`.
pub async fn run(args: RunArgs) -> CommandResult {
    let format: CallFormat =
        args.call_format.parse().map_err(|e: tackle_agent::UnknownFormat| Failure::usage(e.to_string()))?;
    let mode: PermissionMode = args
        .permission_mode
        .parse()
        .map_err(|e: tackle_core::permission::UnknownMode| Failure::usage(e.to_string()))?;
    let workspace = session::workspace(args.workspace.as_ref())?;
    let config = session::config(&workspace, args.trust_workspace, session::interactive())?;
    let model = match &args.model {
        Some(model) => model.clone(),
        None => default_model(&env).map_err(|e| Failure::usage(e.to_string()))?,
    };
    let mut provider =
        provider_config(&config, &model, args.base_url.as_deref(), &env).map_err(|e| Failure::usage(e.to_string()))?;
    provider.stream = !args.no_stream;
    let client = LlmClient::new(provider).map_err(|e| Failure::usage(e.to_string()))?;

    let mut registry = session::registry();
    let hub =
        session::import_mcp(&mut registry, &config, &workspace, args.allow_project_mcp, session::interactive()).await;
    // The markdown format also gets gptme's block tools (DESIGN §8).
    let markdown = CallFormat::Text(tackle_calls::CallFormat::Markdown);
    let default = if format == markdown { RUN_DEFAULT_MARKDOWN } else { RUN_DEFAULT };
    let selection = session::select_from(&registry, args.tools.as_deref(), default)?;
    let session = Session::new(session::session_config(&config, &workspace, true)?, registry.instantiate(&selection));
    hub.attach(&session);
    session::tool_settings(&config, &session)?;
    let sandbox = session
        .state()
        .existing::<tackle_tools::shell::ShellEnvironment>()
        .map_or("none (no shell tools)", |shell| shell.sandbox.kind().name())
        .to_owned();

    let path =
        args.trajectory.clone().unwrap_or_else(|| tackle_agent::trajectory::default_path(&workspace, session.id()));
    let trajectory = Trajectory::create(&path)
        .map_err(|e| Failure::usage(format!("cannot create the trajectory {}: {e}", path.display())))?;

    let interactive = !args.json && std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let approver: Arc<dyn Approver> = if args.yes {
        Arc::new(AutoApprover)
    } else if interactive {
        Arc::new(TerminalApprover::new(Arc::new(StdioPrompter)))
    } else {
        Arc::new(NonInteractiveApprover)
    };
    let permissions = Permissions { policy: Arc::new(ModePolicy::new(mode)), approver, interactive };
    let agent_config = AgentConfig {
        max_steps: args.max_steps,
        call_format: format,
        permission_mode: mode,
        sandbox,
        trajectory_full: args.trajectory_full,
        ..AgentConfig::default()
    };
    let ui_mode = if args.json {
        Mode::Json
    } else if std::io::stdout().is_terminal() {
        Mode::Rich
    } else {
        Mode::Plain
    };
    let ui = Arc::new(RunUi::new(ui_mode));
    let tools = args.tools.clone().unwrap_or_else(|| default.to_owned());
    let mut agent = Agent::new(client, session, ExecutorConfig::default(), permissions, agent_config, Some(trajectory))
        .with_observer(ui.clone())
        .with_tool_refresh(Arc::new(McpRefresh { tools }));

    let cancel = interrupt_token(Hard { shells: Arc::clone(agent.session().state()), trajectory: agent.trajectory() });
    crate::signals::cancel_on(cancel.clone(), &crate::signals::TERM_AND_HUP);
    let outcome = agent.run(&args.task, &cancel).await;
    session::close(agent.session()).await;
    ui.finish(&outcome);
    Ok(ExitCode::from(outcome.status.exit_code()))
}

/// Takes up MCP servers' tool-list changes before each model request, within the run's
/// allowlist.
struct McpRefresh {
    tools: String,
}

impl ToolRefresh for McpRefresh {
    fn refresh<'a>(&'a self, session: &'a mut Session) -> BoxFuture<'a, bool> {
        Box::pin(session::refresh_mcp(session, Some(&self.tools)))
    }
}

/// What a second Ctrl-C ends before Tackle exits.
struct Hard {
    /// The session state, where the shell and its jobs live once a shell tool ran.
    shells: Arc<SessionState>,
    trajectory: Option<Arc<Trajectory>>,
}

impl Hard {
    /// Kills every process the session started (SIGKILL, no grace), closes the trajectory
    /// with the calls still running cancelled, and exits with 130 (providers.md §6.2).
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
