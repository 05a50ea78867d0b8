//! Planning tools (docs/planning.md): the session's todo list, the persisted task board
//! shared by a session and its helpers, skills loaded on demand, and `tool_search` for
//! deferred tools.

pub mod load_skill;
pub mod skills;
pub mod tasks;
pub mod todo;
pub mod tool_search;

pub use load_skill::LoadSkill;
pub use skills::Skills;
pub use tasks::{TaskBoard, TaskCreate, TaskGet, TaskList, TaskUpdate};
pub use todo::{TodoRead, TodoWrite};
pub use tool_search::ToolSearch;
