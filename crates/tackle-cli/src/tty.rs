//! Where the person is asked: on stdin when it is a terminal, else on the controlling terminal
//! (`/dev/tty`), as git and ssh ask for a password, so `git diff | tackle run -` at a terminal
//! can still approve a command. Without a controlling terminal (cron, CI, `setsid`) nothing
//! is asked and calls that need approval are denied (docs/reference/safety.md#approvers).

use std::fs::{File, OpenOptions};
use std::io::{BufRead as _, BufReader, IsTerminal as _, Write as _};

use tackle::BoxFuture;
use tackle::agent::Prompter;

/// The controlling terminal, when the process has one.
fn controlling_terminal() -> Option<File> {
    OpenOptions::new().read(true).write(true).open("/dev/tty").ok()
}

/// Whether approvals can be asked: stderr shows them on a terminal, and stdin or the
/// controlling terminal can answer.
pub fn can_ask() -> bool {
    std::io::stderr().is_terminal() && (std::io::stdin().is_terminal() || controlling_terminal().is_some())
}

/// Asks on stderr and reads stdin when stdin is a terminal; otherwise asks and reads on the
/// controlling terminal.
#[derive(Debug, Clone, Copy, Default)]
pub struct TerminalPrompter;

/// Shows `question` and reads one line; `None` at end of input or when no terminal answers.
fn ask_blocking(question: &str) -> Option<String> {
    let mut line = String::new();
    let read = if std::io::stdin().is_terminal() {
        let mut stderr = std::io::stderr().lock();
        let _ = write!(stderr, "{question}");
        let _ = stderr.flush();
        std::io::stdin().lock().read_line(&mut line)
    } else {
        let mut tty = controlling_terminal()?;
        let _ = write!(tty, "{question}");
        let _ = tty.flush();
        BufReader::new(tty).read_line(&mut line)
    };
    match read {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_owned()),
    }
}

impl Prompter for TerminalPrompter {
    fn ask(&self, question: String) -> BoxFuture<'_, Option<String>> {
        Box::pin(async move { tokio::task::spawn_blocking(move || ask_blocking(&question)).await.ok().flatten() })
    }

    fn tell(&self, line: String) {
        let _ = writeln!(std::io::stderr().lock(), "{line}");
    }
}

/// Whether to colour what goes to a stream: it is a terminal and `NO_COLOR` is unset or empty
/// (no-color.org).
pub fn color(stream_is_terminal: bool) -> bool {
    stream_is_terminal && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
}
