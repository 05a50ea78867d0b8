//! Exit codes of the command line (docs/reference/cli.md): 0 success; 1 the tool or task reported
//! failure; 2 a failure before any tool ran (usage, unknown tool, invalid arguments, denial);
//! 130 interrupted.

use std::process::ExitCode;

use tackle::RunStatus;

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
}

/// Interrupted (Ctrl-C, SIGTERM, SIGHUP): 128 + SIGINT, as shells report it.
pub const INTERRUPTED: u8 = 130;

/// The exit code of `tackle run` for how the run ended (docs/reference/cli.md#exit-codes):
/// only an answer is success; an incomplete run, the step limit and an error fail a CI job.
pub fn of_run(status: RunStatus) -> u8 {
    match status {
        RunStatus::Success => OK,
        RunStatus::Incomplete | RunStatus::MaxSteps | RunStatus::Error => TOOL_FAILED,
        RunStatus::Interrupted => INTERRUPTED,
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
