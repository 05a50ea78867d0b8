//! Tools that change only the session's own state and steer the agent loop: structured
//! thinking and the end-of-task signal.

mod task_done;
mod thinking;

pub use task_done::TaskDone;
pub use thinking::{SequentialThinking, ThinkingState};
