//! The session's todo list (docs/planning.md#todos): the plan the model keeps with
//! `todo_write`, kept in the session's state so that the tools that change it (in
//! `tackle-tools`), the agent loop that records it in the trajectory, and a front end that
//! shows it under its spinner all see one list without knowing each other.
//!
//! Each session has its own list (a subagent's child session gets a fresh one). Every
//! replacement bumps a version, so a watcher can tell a change from a repeat cheaply.

use std::sync::Mutex;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where an item stands: not started, being worked on now, or done. (The variants carry no
/// doc comments, so the schema is a plain `enum` of the three names.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum TodoStatus {
    Pending,
    InProgress,
    Completed,
}

/// One item of the list: what to do, its status, and the label shown while it is in progress.
// Claude Code's item shape (`activeForm` is its wire name).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoItem {
    /// What is to be done, in the imperative ("Run the tests").
    #[schemars(length(min = 1))]
    pub content: String,
    /// `pending`, `in_progress` or `completed`.
    pub status: TodoStatus,
    /// The present-continuous label shown while the item is in progress ("Running the tests").
    #[serde(rename = "activeForm", default, skip_serializing_if = "Option::is_none")]
    pub active_form: Option<String>,
    /// An identifier of the model's choosing, kept as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

impl TodoItem {
    /// The line of the item in every rendering: `[x]`, `[~]` or `[ ]`, then the content.
    pub fn line(&self) -> String {
        let mark = match self.status {
            TodoStatus::Completed => "[x]",
            TodoStatus::InProgress => "[~]",
            TodoStatus::Pending => "[ ]",
        };
        format!("{mark} {}", self.content)
    }

    /// What a front end shows while the item is in progress: its `activeForm`, else its content.
    pub fn label(&self) -> &str {
        self.active_form.as_deref().filter(|form| !form.trim().is_empty()).unwrap_or(&self.content)
    }
}

/// The list of one session, with the number of times it was replaced.
#[derive(Debug, Default)]
pub struct TodoList {
    inner: Mutex<(u64, Vec<TodoItem>)>,
}

impl TodoList {
    /// Replaces the whole list (an empty one clears it); returns the new version.
    pub fn replace(&self, items: Vec<TodoItem>) -> u64 {
        let mut inner = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        inner.0 += 1;
        inner.1 = items;
        inner.0
    }

    /// The version (0 before the first replacement) and the items.
    pub fn snapshot(&self) -> (u64, Vec<TodoItem>) {
        let inner = self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        (inner.0, inner.1.clone())
    }

    /// The items.
    pub fn items(&self) -> Vec<TodoItem> {
        self.snapshot().1
    }
}

/// The rendering `todo_write` answers with and `todo_read` prints:
/// `Todo list updated ({n} items: {c} completed, {i} in progress, {p} pending):` (or
/// `Todo list ({n} items: …):` for a read), one line per item, and a note when more than one
/// item is in progress. An empty list reads as `No todos.`.
pub fn render(items: &[TodoItem], updated: bool) -> String {
    if items.is_empty() && !updated {
        return "No todos.".to_owned();
    }
    let count = |status: TodoStatus| items.iter().filter(|item| item.status == status).count();
    let (done, active, pending) =
        (count(TodoStatus::Completed), count(TodoStatus::InProgress), count(TodoStatus::Pending));
    let head = if updated { "Todo list updated" } else { "Todo list" };
    let mut text =
        format!("{head} ({} items: {done} completed, {active} in progress, {pending} pending):", items.len());
    for item in items {
        text.push('\n');
        text.push_str(&item.line());
    }
    if active > 1 {
        text.push_str(&format!("\nNote: {active} items are in progress; keep one at a time."));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(content: &str, status: TodoStatus) -> TodoItem {
        TodoItem { content: content.into(), status, active_form: None, id: None }
    }

    #[test]
    fn renders_marks_counts_and_the_note_for_two_active_items() {
        let items = vec![
            item("Read", TodoStatus::Completed),
            item("Fix", TodoStatus::InProgress),
            item("Test", TodoStatus::InProgress),
            item("Ship", TodoStatus::Pending),
        ];
        assert_eq!(
            render(&items, true),
            "Todo list updated (4 items: 1 completed, 2 in progress, 1 pending):\n[x] Read\n[~] Fix\n[~] Test\n[ ] Ship\n\
             Note: 2 items are in progress; keep one at a time."
        );
        assert_eq!(render(&items[..1], false), "Todo list (1 items: 1 completed, 0 in progress, 0 pending):\n[x] Read");
        assert_eq!(render(&[], false), "No todos.");
        assert_eq!(render(&[], true), "Todo list updated (0 items: 0 completed, 0 in progress, 0 pending):");
    }

    #[test]
    fn every_replacement_is_a_new_version() {
        let list = TodoList::default();
        assert_eq!(list.snapshot(), (0, vec![]));
        assert_eq!(list.replace(vec![item("a", TodoStatus::Pending)]), 1);
        assert_eq!(list.replace(vec![]), 2);
        assert!(list.items().is_empty());
    }
}
