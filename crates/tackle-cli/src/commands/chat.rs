//! `tackle chat`: an interactive session on a terminal. Each line is a task for the same
//! agent (built by `run::build_agent`, so by the library), so the conversation carries on;
//! one trajectory holds the whole session. Line editing and history come from rustyline.
//! Ctrl-C cancels the running task (a second press within 2 s leaves, with 130); at the
//! prompt, a second Ctrl-C (or `/exit`, Ctrl-D) leaves.

use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustyline::error::ReadlineError;
use rustyline::{
    Cmd, ConditionalEventHandler, DefaultEditor, Event, EventContext, EventHandler, KeyCode, KeyEvent, Modifiers,
    RepeatCount,
};
use tackle::PermissionMode;
use tackle::agent::RunStatus;
use tokio_util::sync::CancellationToken;

use super::permissions::rule_lines;
use super::run::{agent_hard_exit, build_agent, interrupt_handler, model_client};
use crate::cli::ChatArgs;
use crate::exit::{CommandResult, Failure, OK};
use crate::session;
use crate::ui::{Mode, RunUi};

/// A second Ctrl-C this soon after the first leaves `chat` (as in `tackle run`).
const SECOND_PRESS: Duration = Duration::from_secs(2);

/// The exit code of a `chat` left by a second Ctrl-C (128 + SIGINT, as `tackle run`).
const INTERRUPTED: u8 = 130;

/// The help shown by `/help`.
const HELP: &str = "\
Type a task and press Enter; the conversation carries on from task to task.
  /clear          start a new conversation (the trajectory goes on)
  /model [P/M]    show the model, or switch to another (e.g. /model openai/gpt-4.1)
  /tools          list the session's tools
  /permissions    show the permission mode and rules; /permissions MODE changes
                  the mode (default, accept-edits, plan, dont-ask, bypass)
  /mcp__SERVER__PROMPT [ARGS]
                  send an MCP server's prompt as the task (ARGS: k=v words, or words
                  in the prompt's order); /mcp__ alone lists the prompts
  /exit           leave (also Ctrl-D, or Ctrl-C twice at the prompt)
Shift-Tab cycles the mode: default, accept-edits, plan.
Ctrl-C while a task runs cancels it (the conversation keeps what it did); a second
Ctrl-C within 2 s leaves.";

/// Shift-Tab at the prompt: ends the line (kept for the next prompt) with the flag set.
struct ShiftTab(Arc<AtomicBool>);

impl ConditionalEventHandler for ShiftTab {
    fn handle(&self, _: &Event, _: RepeatCount, _: bool, _: &EventContext<'_>) -> Option<Cmd> {
        self.0.store(true, Ordering::SeqCst);
        Some(Cmd::AcceptLine)
    }
}

/// The mode after `mode` in Shift-Tab's cycle, as in Claude Code: default, accept-edits,
/// plan, and back (from dont-ask or bypass, to default).
fn next_mode(mode: PermissionMode) -> PermissionMode {
    match mode {
        PermissionMode::Default => PermissionMode::AcceptEdits,
        PermissionMode::AcceptEdits => PermissionMode::Plan,
        PermissionMode::Plan | PermissionMode::DontAsk | PermissionMode::Bypass => PermissionMode::Default,
    }
}

/// `tackle chat`.
pub async fn chat(args: ChatArgs) -> CommandResult {
    if !std::io::stdin().is_terminal() {
        return Err(Failure::usage(
            "tackle chat needs a terminal on stdin; for scripts use tackle run (the task from an argument, - for stdin, or --task-file)",
        ));
    }
    let args = args.agent;
    let workspace = session::workspace(args.workspace.as_ref())?;
    let config = session::config(&workspace, args.trust_workspace, true)?;
    let mode = if std::io::stdout().is_terminal() { Mode::Rich } else { Mode::Plain };
    let ui = Arc::new(RunUi::new(mode));
    let mut agent =
        build_agent(&args, &workspace, config.clone(), true, ui.clone(), Vec::new(), super::run::RunOptions::none())
            .await?;
    let current = Arc::new(Mutex::new(CancellationToken::new()));
    let _interrupt = interrupt_handler(agent_hard_exit(&agent), Arc::clone(&current));
    let mut editor = crate::signals::keeping_sigint(DefaultEditor::new)
        .map_err(|err| Failure::failed(format!("cannot set up the terminal: {err}")))?;
    let model = agent.model().info();
    diagln!(
        "Tackle chat with {}/{} in {}. /help lists the commands.",
        model.provider,
        model.model,
        workspace.display()
    );
    let shift_tab = Arc::new(AtomicBool::new(false));
    editor.bind_sequence(
        KeyEvent(KeyCode::BackTab, Modifiers::NONE),
        EventHandler::Conditional(Box::new(ShiftTab(Arc::clone(&shift_tab)))),
    );
    let mut kept_input = String::new();
    let mut interrupted_at_prompt = false;
    // When Ctrl-C last cancelled a task: a second press within 2 s leaves, even when the
    // task ended before it and the prompt took it.
    let mut task_interrupted: Option<Instant> = None;
    let mut exit = OK;
    loop {
        let read = tokio::task::block_in_place(|| editor.readline_with_initial("tackle> ", (&kept_input, "")));
        kept_input.clear();
        if shift_tab.swap(false, Ordering::SeqCst) {
            // Shift-Tab: the next mode, and the line typed so far comes back.
            if let Ok(line) = read {
                kept_input = line;
            }
            let mode = next_mode(agent.permission_mode());
            agent.set_permission_mode(mode);
            diagln!("Permission mode: {mode} (Shift-Tab: default → accept-edits → plan)");
            continue;
        }
        let line = match read {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) if task_interrupted.is_some_and(|at| at.elapsed() <= SECOND_PRESS) => {
                exit = INTERRUPTED;
                break;
            }
            Err(ReadlineError::Interrupted) if !interrupted_at_prompt => {
                interrupted_at_prompt = true;
                diagln!("(Press Ctrl-C again, Ctrl-D or type /exit to leave.)");
                continue;
            }
            Err(ReadlineError::Interrupted | ReadlineError::Eof) => break,
            Err(err) => {
                diagln!("tackle: cannot read the terminal: {err}");
                break;
            }
        };
        interrupted_at_prompt = false;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let _ = editor.add_history_entry(line);
        let (command, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        match command {
            "/exit" | "/quit" => break,
            "/help" => diagln!("{HELP}"),
            "/clear" => {
                agent.clear_history();
                diagln!("Started a new conversation.");
            }
            "/model" if rest.trim().is_empty() => {
                let model = agent.model().info();
                diagln!("Model: {}/{}", model.provider, model.model);
            }
            "/model" => match model_client(&config, Some(rest.trim()), args.base_url.as_deref(), !args.no_stream) {
                Ok(client) => {
                    agent.set_model(Arc::new(client));
                    diagln!("Model: {}", rest.trim());
                }
                Err(err) => diagln!("tackle: {}", err.message),
            },
            "/tools" => {
                let names: Vec<&str> = agent.session().tools().specs().map(|spec| spec.name.as_str()).collect();
                diagln!("Tools: {}", names.join(", "));
            }
            "/permissions" if rest.trim().is_empty() => {
                let yes = if args.yes { " with --yes (every call that would ask is approved)" } else { "" };
                diag!("Permission mode: {}{yes}\n{}", agent.permission_mode(), rule_lines(agent.rules()));
                diagln!(
                    "Change it with /permissions MODE (default, accept-edits, plan, dont-ask, bypass) or Shift-Tab."
                );
            }
            "/permissions" => match rest.trim().parse::<PermissionMode>() {
                Ok(mode) => {
                    agent.set_permission_mode(mode);
                    diagln!("Permission mode: {mode}");
                }
                Err(err) => diagln!("tackle: {err}"),
            },
            _ if command.starts_with("/mcp__") => {
                match tackle::mcp_servers::chat_prompt(agent.session(), command, rest).await {
                    Ok(task) => {
                        diagln!("(sending the prompt {command}: {} characters)", task.chars().count());
                        run_task(&mut agent, &task, &current, &ui, &mut task_interrupted).await;
                    }
                    Err(why) => diagln!("tackle: {why}"),
                }
            }
            _ if command.starts_with('/') => diagln!("Unknown command {command}; /help lists the commands."),
            _ => run_task(&mut agent, line, &current, &ui, &mut task_interrupted).await,
        }
    }
    agent.close().await;
    Ok(ExitCode::from(exit))
}

/// Runs one task of the conversation; Ctrl-C cancels it.
async fn run_task(
    agent: &mut tackle::Agent,
    task: &str,
    current: &Mutex<CancellationToken>,
    ui: &RunUi,
    task_interrupted: &mut Option<Instant>,
) {
    let cancel = CancellationToken::new();
    if let Ok(mut slot) = current.lock() {
        *slot = cancel.clone();
    }
    let outcome = agent.run_with_cancel(task, &cancel).await;
    let exit_code = crate::exit::of_run(&outcome, None);
    ui.finish(&outcome, &crate::ui::RunEnd { exit_code, diff: None });
    *task_interrupted = (outcome.status == RunStatus::Interrupted).then(Instant::now);
}
