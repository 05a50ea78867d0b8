//! Secrets: API keys moved out of the environment at start, so that no command Tackle runs can
//! read them from its environment block (docs/reference/safety.md, "Secrets").

pub use tackle_policy::secrets::{Isolation, configured_patterns, isolate, var};
