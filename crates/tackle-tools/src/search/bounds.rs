//! The bounds on the patterns the search tools compile (docs/architecture.md, "Bounded
//! input"; figures from `bench/stack_depth.sh`): a model's glob or regex is refused past a
//! length, and regexes compile under explicit nesting and memory limits instead of ripgrep's
//! (100 MiB programs, a 1000 MiB lazy-DFA cache per search thread). Glob nesting is bounded by
//! globset itself: 100 nested `{…}` at most, and no depth overflowed a 2 MiB stack.

use tackle_core::ToolError;

/// Longest glob accepted, in bytes (a path is at most 4096).
pub const MAX_GLOB_BYTES: usize = 4096;
/// Longest regex accepted, in bytes.
pub const MAX_REGEX_BYTES: usize = 64 * 1024;
/// Deepest nesting of groups, repetitions and classes in a regex: the matcher overflowed a
/// 2 MiB stack at 702 nested groups in a debug build (regex's own default is 250).
pub const REGEX_NEST_LIMIT: u32 = 64;
/// Largest compiled regex program, in bytes (the regex crate's default).
pub const REGEX_SIZE_LIMIT: usize = 10 << 20;
/// Largest lazy-DFA cache of one search thread, in bytes.
pub const REGEX_DFA_SIZE_LIMIT: usize = 16 << 20;

/// Refuses a `kind` pattern (`"glob"`, `"regex"`) longer than `max` bytes.
pub fn check_length(kind: &str, pattern: &str, max: usize) -> Result<(), ToolError> {
    if pattern.len() <= max {
        return Ok(());
    }
    Err(ToolError::InvalidInput(format!(
        "The {kind} pattern is {} bytes long; the most accepted is {max}. Use a shorter pattern, or search in \
         several calls.",
        pattern.len()
    )))
}
