//! `tackle tasks list|show ID` (docs/reference/cli.md#tackle-tasks): the workspace's task
//! board, as the `task_*` tools keep it, for the person. The board is the `tackle` library's
//! (`tackle::tasks::TaskBoard`); this module only parses and prints.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use tackle::tasks::{BoardError, Listed, Task, TaskBoard, TaskStatus};

use crate::exit::{CommandResult, Failure, OK};
use crate::session;
use crate::stdout::print;

#[derive(Debug, Subcommand)]
pub enum TasksCommand {
    /// One line per task, oldest first: id, status (or "ready"), title, dependencies, owner.
    List(TasksListArgs),
    /// One task in full.
    Show(TasksShowArgs),
}

#[derive(Debug, Args)]
pub struct TasksListArgs {
    /// Only tasks with this status: pending, in_progress, done or failed.
    #[arg(long, value_name = "STATUS")]
    pub status: Option<String>,
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Print one JSON array (the task_list tool's answer).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TasksShowArgs {
    /// The task's id.
    pub id: String,
    /// The workspace root (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub workspace: Option<PathBuf>,
    /// Print the task as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs a `tackle tasks` command.
pub fn run(command: TasksCommand) -> CommandResult {
    match command {
        TasksCommand::List(args) => list(&args),
        TasksCommand::Show(args) => show(&args),
    }
}

fn board_failure(err: BoardError) -> Failure {
    match err {
        BoardError::UnknownTask(_) => Failure::usage(format!("{err}; `tackle tasks list` shows the ids")),
        other => Failure::failed(other.to_string()),
    }
}

fn status(text: &str) -> Result<TaskStatus, Failure> {
    serde_json::from_value(serde_json::Value::String(text.to_owned()))
        .map_err(|_| Failure::usage(format!("unknown status '{text}'; use pending, in_progress, done or failed")))
}

fn json(value: &impl serde::Serialize) -> Result<String, Failure> {
    serde_json::to_string_pretty(value).map_err(|err| Failure::failed(err.to_string()))
}

fn list(args: &TasksListArgs) -> CommandResult {
    let filter = args.status.as_deref().map(status).transpose()?;
    let board = TaskBoard::open(session::workspace(args.workspace.as_ref())?);
    let tasks = board.list(filter).map_err(board_failure)?;
    if args.json {
        print(&format!("{}\n", json(&tasks)?))?;
    } else if tasks.is_empty() {
        print("No tasks.\n")?;
    } else {
        let lines: Vec<String> = tasks.iter().map(line).collect();
        print(&format!("{}\n", lines.join("\n")))?;
    }
    Ok(ExitCode::from(OK))
}

/// `{id}  {status|ready}  {title}[  after {deps}][  @{owner}]`.
fn line(listed: &Listed) -> String {
    let task = &listed.task;
    let state = if listed.ready { "ready" } else { task.status.name() };
    let mut line = format!("{}  {state:<11}  {}", task.id, task.title);
    if !task.depends_on.is_empty() {
        line.push_str(&format!("  after {}", task.depends_on.join(",")));
    }
    if let Some(owner) = &task.owner {
        line.push_str(&format!("  @{owner}"));
    }
    line
}

fn show(args: &TasksShowArgs) -> CommandResult {
    let board = TaskBoard::open(session::workspace(args.workspace.as_ref())?);
    let task: Task = board.get(&args.id).map_err(board_failure)?;
    if args.json {
        print(&format!("{}\n", json(&task)?))?;
        return Ok(ExitCode::from(OK));
    }
    let mut text = format!("{}  {}\nstatus: {}\n", task.id, task.title, task.status.name());
    if !task.depends_on.is_empty() {
        text.push_str(&format!("depends on: {}\n", task.depends_on.join(", ")));
    }
    if let Some(owner) = &task.owner {
        text.push_str(&format!("owner: {owner}\n"));
    }
    text.push_str(&format!("created: {}\nupdated: {}\n", task.created_at, task.updated_at));
    if !task.description.is_empty() {
        text.push_str(&format!("\n{}\n", task.description));
    }
    print(&text)?;
    Ok(ExitCode::from(OK))
}
