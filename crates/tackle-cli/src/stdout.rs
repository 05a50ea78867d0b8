//! Everything a command prints on stdout goes through here. Rust's stdout flushes at every
//! line break, so a pretty-printed document written straight to it costs one `write` system
//! call per line (33,859 for the 7 MB of a `tackle parse`); here a command's output is
//! buffered ([`buffered`], 64 KiB) and flushed once at the end, or per line where a reader
//! waits for each line (`tools batch`, `parse --streaming --events`). A reader that went away
//! ends the command quietly ([`write_failure`]).

use std::io::{BufWriter, StdoutLock, Write};

use serde::Serialize;

use crate::exit::{Failure, write_failure};

/// The buffer between a command and stdout: a 7 MB document leaves in about a hundred writes.
const BUFFER_BYTES: usize = 64 * 1024;

/// Stdout, locked and buffered. Flush it when the output (or the line a reader waits for) is
/// complete; a dropped writer flushes too, but drops the error.
pub fn buffered() -> BufWriter<StdoutLock<'static>> {
    BufWriter::with_capacity(BUFFER_BYTES, std::io::stdout().lock())
}

/// Writes `text` to stdout.
pub fn print(text: &str) -> Result<(), Failure> {
    let mut out = buffered();
    out.write_all(text.as_bytes()).and_then(|()| out.flush()).map_err(write_failure)
}

/// Writes `value` to stdout as indented JSON and a line break.
pub fn print_json(value: &impl Serialize) -> Result<(), Failure> {
    let mut out = buffered();
    write_json(&mut out, value, true)?;
    out.flush().map_err(write_failure)
}

/// Writes `value` to stdout as JSON on one line.
pub fn print_json_line(value: &impl Serialize) -> Result<(), Failure> {
    let mut out = buffered();
    write_json(&mut out, value, false)?;
    out.flush().map_err(write_failure)
}

/// Writes `value` to `out` as JSON (indented when `pretty`) and a line break, without
/// flushing.
pub fn write_json(out: &mut impl Write, value: &impl Serialize, pretty: bool) -> Result<(), Failure> {
    let written =
        if pretty { serde_json::to_writer_pretty(&mut *out, value) } else { serde_json::to_writer(&mut *out, value) };
    written.map_err(|err| match err.io_error_kind() {
        Some(kind) => write_failure(kind.into()),
        None => Failure::failed(format!("cannot write output: {err}")),
    })?;
    out.write_all(b"\n").map_err(write_failure)
}
