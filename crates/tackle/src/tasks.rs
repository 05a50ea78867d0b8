//! The task board of a workspace (`.tackle/tasks.json`): what the task tools and agent teams
//! share, and what `tackle tasks` lists and edits (docs/teams.md).

pub use tackle_tools::planning::tasks::{BoardError, Listed, Task, TaskBoard, TaskStatus};
