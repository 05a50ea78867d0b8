//! Tackle's state paths in a workspace (`.tackle/…`, `tackle.toml`, `AGENTS.md`, …), each
//! opened without following links out of the workspace (docs/reference/safety.md, "State
//! files").

pub use tackle_core::fs::state::{
    AGENTS_MD, CLAUDE_MD, GIT_EXCLUDE, StateError, StatePath, TACKLE, TACKLE_TOML, TRAJECTORIES, open_dir,
};
