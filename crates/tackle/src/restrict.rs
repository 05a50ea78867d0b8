//! The read-only wrapper: `tackle __restrict -- PROGRAM ...` runs a command with no writes
//! (but its own /tmp) and no network; the shell starts read-only commands through it
//! (docs/shell.md, "Read-only commands run restricted").

pub use tackle_sandbox::process::restrict::{SUBCOMMAND, register_helper, run};
