//! Exit codes of the command line (docs/reference/cli.md#exit-codes): 0 success; 1 the tool or
//! task reported failure; 2 a failure before any tool ran (usage, unknown tool, invalid
//! arguments, denial); 3 infrastructure, worth a retry; 4 a limit of the run was reached;
//! 130 interrupted; 143 terminated.

use std::process::ExitCode;

use tackle::{RunOutcome, RunStatus, StopKind};

/// Success.
pub const OK: u8 = 0;
/// A tool (or the task) reported failure.
pub const TOOL_FAILED: u8 = 1;
/// Usage, unknown tool, invalid arguments or a denial: nothing ran.
pub const USAGE: u8 = 2;

/// A command that could not do its job, with the message for stderr.
#[derive(Debug)]
pub struct Failure {
    pub code: ExitCode,
    pub message: String,
}

impl Failure {
    /// A failure before anything ran (exit 2).
    pub fn usage(message: impl Into<String>) -> Self {
        Failure { code: ExitCode::from(USAGE), message: message.into() }
    }

    /// A runtime failure (exit 1).
    pub fn failed(message: impl Into<String>) -> Self {
        Failure { code: ExitCode::from(TOOL_FAILED), message: message.into() }
    }

    /// A failure of the infrastructure, worth a retry (exit 3).
    pub fn infra(message: impl Into<String>) -> Self {
        Failure { code: ExitCode::from(INFRA), message: message.into() }
    }
}

/// Interrupted (Ctrl-C, SIGTERM, SIGHUP): 128 + SIGINT, as shells report it.
pub const INTERRUPTED: u8 = 130;

/// The infrastructure failed, not the agent: the provider stayed unreachable or failing after
/// its retries, the rate limit was exhausted, the container engine or image failed. A harness
/// retries the task.
pub const INFRA: u8 = 3;

/// A limit of the run was reached (steps, time, spending): the work may be unfinished.
pub const LIMIT: u8 = 4;

/// The exit code of `tackle run` for how the run ended (docs/reference/cli.md#exit-codes):
/// only an answer is success. `signal` is the exit code of the signal that stopped it, if one
/// did (143 for SIGTERM: a preempted pod; Ctrl-C is 130).
pub fn of_run(outcome: &RunOutcome, signal: Option<u8>) -> u8 {
    match outcome.status {
        RunStatus::Success => OK,
        RunStatus::Incomplete => TOOL_FAILED,
        status if status.is_limit() => LIMIT,
        RunStatus::Interrupted => signal.unwrap_or(INTERRUPTED),
        _ => match outcome.error_kind {
            Some(StopKind::Provider(class)) if class.is_retryable() => INFRA,
            _ => TOOL_FAILED,
        },
    }
}

/// The result of a command.
pub type CommandResult = Result<ExitCode, Failure>;

/// A failed write to stdout. A reader that went away (`tackle … | head`) ends the command
/// quietly with exit 0, as other command-line tools do; any other error is a runtime failure.
pub fn write_failure(err: std::io::Error) -> Failure {
    if err.kind() == std::io::ErrorKind::BrokenPipe {
        return Failure { code: ExitCode::from(OK), message: String::new() };
    }
    Failure::failed(format!("cannot write output: {err}"))
}
