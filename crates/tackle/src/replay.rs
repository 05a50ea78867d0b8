//! Replay: a recorded trajectory shown as a transcript, or its calls run again in a copy of
//! the workspace and compared with what was recorded (`tackle replay`, docs/agent.md).

pub use tackle_agent::replay::{
    Difference, ReadError, ReplayError, RerunReport, copy_workspace, read_events, recorded_setup, rerun, transcript,
};
