//! Keeps secrets out of the `tackle` process's environment block (docs/configuration.md,
//! "Secrets"): before anything else runs, `tackle::secrets::isolate` re-executes the
//! binary without them when the environment holds any.

use std::process::ExitCode;

use tackle::secrets::{Isolation, configured_patterns, isolate};

/// Strips the secrets (the default names, and the patterns the user config adds). `Some` is
/// the exit code when the secrets a parent `tackle` passed on cannot be taken over. Call it
/// before anything starts a thread.
pub fn isolate_secrets() -> Option<ExitCode> {
    let patterns = configured_patterns();
    // SAFETY: `main` calls this right after parsing its arguments, before the async runtime,
    // logging or anything else could have started a thread.
    match unsafe { isolate(&patterns) } {
        Ok(Isolation::Unavailable(why)) => {
            diagln!(
                "tackle: secrets stay in Tackle's own environment ({why}); a command sandboxed by Landlock could read \
                 them from /proc"
            );
            None
        }
        Ok(Isolation::Nothing | Isolation::Restored(_)) => None,
        Err(err) => {
            diagln!("tackle: {err}");
            Some(ExitCode::from(2))
        }
    }
}
