//! Persisted tasks with dependencies: the [`board`] (a library other crates build on, such
//! as teams claiming tasks) and the [`tools`] the model uses.

pub mod board;
pub mod tools;

pub use board::{BoardError, Listed, Task, TaskBoard, TaskChange, TaskStatus};
pub use tools::{CreatedHere, TaskCreate, TaskGet, TaskList, TaskUpdate};
