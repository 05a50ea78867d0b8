//! The `tackle` binary: argument parsing and terminal output only. Everything a library user
//! would need lives in the library crates; this crate wires them to the command line contract
//! of docs/reference/cli.md (commands, flags, JSON shapes, exit codes).
// Diagnostics go through `diag!`/`diagln!`, which a closed stderr cannot turn into an abort.
#![deny(clippy::print_stderr)]

#[macro_use]
mod diag;
mod cli;
mod commands;
mod duration;
mod elicit;
mod exit;
mod secrets;
mod session;
mod signals;
mod stdout;
mod tty;
mod ui;

use std::process::ExitCode;

use clap::Parser as _;
use tackle::restrict;

use crate::cli::{Cli, Command, ContainersCommand, McpCommand, PermissionsCommand, ToolsCommand};
use crate::exit::Failure;

fn main() -> ExitCode {
    // `tackle __restrict -- PROGRAM ...`: the read-only wrapper of commands, before anything
    // else starts (docs/shell.md, "Read-only commands run restricted").
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() == Some(restrict::SUBCOMMAND.as_ref()) {
        let code = restrict::run(args.collect());
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    // This binary restricts the read-only commands of its own sessions.
    if let Ok(me) = std::env::current_exe() {
        restrict::register_helper(me);
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return usage_error(err),
    };
    if let Some(code) = secrets::isolate_secrets() {
        return code;
    }
    init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            diagln!("tackle: cannot start the async runtime: {err}");
            return ExitCode::from(1);
        }
    };
    let result = runtime.block_on(async move {
        match cli.command {
            Command::Run(args) => commands::run::run(args).await,
            Command::Chat(args) => commands::chat::chat(args).await,
            Command::Init(args) => commands::init::init(args),
            Command::Completions(args) => completions(args.shell),
            Command::Replay(args) => commands::replay::replay(args).await,
            Command::Tools { command } => match command {
                ToolsCommand::List(args) => commands::tools::list(args).await,
                ToolsCommand::Schema(args) => commands::tools::schema(args).await,
                ToolsCommand::Call(args) => commands::tools::call(args).await,
                ToolsCommand::Batch(args) => commands::tools::batch(args).await,
            },
            Command::Mcp { command } => match command {
                McpCommand::Serve(args) => commands::mcp::serve(args).await,
                McpCommand::Login(args) => commands::mcp_login::login(args).await,
                McpCommand::Logout(args) => commands::mcp_login::logout(args),
                McpCommand::Add(args) => commands::mcp_manage::add(args),
                McpCommand::List(args) => commands::mcp_manage::list(args).await,
                McpCommand::Get(args) => commands::mcp_manage::get(args).await,
                McpCommand::Remove(args) => commands::mcp_manage::remove(args).await,
                McpCommand::Prompt(args) => commands::mcp_manage::prompt(args).await,
            },
            Command::Parse(args) => commands::parse::run(args),
            Command::Ckg { command } => commands::ckg::run(command),
            Command::Tasks { command } => commands::tasks::run(command),
            Command::Fleet { command } => match command {
                commands::fleet::FleetCommand::Run(args) => commands::fleet::run(args).await,
                commands::fleet::FleetCommand::Collect(args) => commands::fleet::collect(args),
                commands::fleet::FleetCommand::K8s(args) => commands::fleet::k8s(*args),
            },
            Command::Permissions { command } => match command {
                PermissionsCommand::Check(args) => commands::permissions::check(args).await,
                PermissionsCommand::List(args) => commands::permissions::list(args).await,
            },
            Command::Containers { command } => match command {
                ContainersCommand::Prune(args) => commands::containers::prune(args).await,
                ContainersCommand::Hold => commands::containers::hold().await,
            },
        }
    });
    // The command is done (its session closed); a blocking read of stdin may still wait for a
    // line that never comes (a batch ended by a signal), so do not wait for it.
    runtime.shutdown_background();
    match result {
        Ok(code) => code,
        Err(Failure { code, message }) => {
            if !message.is_empty() {
                diagln!("tackle: {message}");
            }
            code
        }
    }
}

/// `tackle completions SHELL`: the completion script on stdout.
fn completions(shell: clap_complete::Shell) -> exit::CommandResult {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut <Cli as clap::CommandFactory>::command(), "tackle", &mut script);
    stdout::print(&String::from_utf8_lossy(&script))?;
    Ok(ExitCode::from(exit::OK))
}

/// A command line clap refused. A value its type rejects (`--permission-mode yolo`) is one
/// line naming the accepted values, as every other usage error; the rest (help, version, a
/// missing argument) is clap's own output.
fn usage_error(err: clap::Error) -> ExitCode {
    if err.kind() == clap::error::ErrorKind::ValueValidation
        && let Some(source) = std::error::Error::source(&err)
    {
        diagln!("tackle: {source}");
        return ExitCode::from(exit::USAGE);
    }
    err.exit()
}

/// Logs go to stderr; `TACKLE_LOG` (or `RUST_LOG`) sets the filter, default `warn` (rmcp:
/// `error`, since it warns about every JSON-RPC error it sends or receives).
fn init_logging() {
    let filter = std::env::var("TACKLE_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .unwrap_or_else(|_| "warn,rmcp=error".to_owned());
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(diag::Stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .without_time()
        .init();
    // A tool's panic is caught by the executor and answered; log it as one line instead of
    // the default multi-line report on stderr (through the log's writer, so a closed stderr
    // cannot turn a panic into an abort).
    std::panic::set_hook(Box::new(|info| {
        tracing::error!("panic: {info}");
    }));
}
