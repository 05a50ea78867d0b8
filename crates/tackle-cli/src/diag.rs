//! Diagnostics on stderr that cannot end the process. `eprintln!` panics when stderr is a
//! closed pipe (`tackle … 2>&1 | head -0`), and the panic report then writes to stderr again
//! and aborts: so every diagnostic of the command line (messages, the log, the panic hook)
//! goes through [`write`], which drops a message it cannot write and carries on. Stdout keeps
//! its own handling: a command's answer that cannot be written is that command's failure.

use std::fmt;
use std::io::Write as _;

/// Writes `args` to stderr; a write error (a closed pipe, a full disk) loses the message.
pub fn write(args: fmt::Arguments<'_>) {
    let _ = std::io::stderr().lock().write_fmt(args);
}

/// `eprint!` whose write error is ignored (see the module docs).
macro_rules! diag {
    ($($arg:tt)*) => {
        $crate::diag::write(format_args!($($arg)*))
    };
}

/// `eprintln!` whose write error is ignored (see the module docs).
macro_rules! diagln {
    () => {
        $crate::diag::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::diag::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// The log's writer: stderr through [`write`]. It reports every write as done, so the log
/// never reports a failure of its own (tracing-subscriber would `eprintln!` it).
#[derive(Debug, Clone, Copy, Default)]
pub struct Stderr;

impl std::io::Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let _ = std::io::stderr().lock().write_all(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Stderr {
    type Writer = Stderr;

    fn make_writer(&'a self) -> Stderr {
        Stderr
    }
}
