//! Trajectories: the JSON-lines record of a run (docs/agent.md). Where a run's file goes
//! by default, the latest one of a workspace, the conversation to resume from one, and the
//! checker of a file's shape, and its export to Harbor's Agent Trajectory Interchange Format
//! ([`atif`]).

pub use tackle_agent::trajectory::{
    CheckSummary, Line, LineError, ResumeError, Violation, atif, check, conversation, default_path, latest,
};
pub use tackle_agent::{Trajectory, TrajectoryEvent};
