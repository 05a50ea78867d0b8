//! The task board (docs/planning.md#tasks): tasks with dependencies, persisted in
//! `.tackle/tasks.json` and shared by every process working in the workspace (a session, its
//! subagents and teammates, `tackle tasks`, another `tackle`).
//!
//! Every operation is one transaction: take the advisory lock (`flock` on
//! `.tackle/tasks.lock`, std's `File::lock`), read the file again, change it in memory, write
//! it whole to a temporary file and rename it over the old one. So no update is lost between
//! processes, and no reader ever sees half a file. A file that does not parse is never
//! overwritten: a change moves it aside to `tasks.json.bak-{time}` and says so; a read (which
//! takes no lock: a rename replaces the file whole) reports it and changes nothing.
//!
//! The workspace may be hostile: `.tackle` or a file in it may be a symlink planted to make
//! Tackle write elsewhere. The directory is opened beneath the workspace root without
//! following any link, and every file in it is opened, created and renamed relative to that
//! directory with `O_NOFOLLOW` ([`crate::fs::own_dir`]), so a link is refused, never followed.

use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::io::{Read as _, Write as _};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use rustix::fs::{AtFlags, Mode, OFlags};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::fs::atomic::temp_name_for;
use crate::fs::own_dir::{self, OwnDirError};

/// The board's directory, relative to the workspace root.
pub const DIR: &str = tackle_core::fs::state::TACKLE.rel;
/// The board's file name in [`DIR`].
pub const FILE: &str = "tasks.json";
/// The lock file's name in [`DIR`] (the board itself is replaced by renames, so it cannot
/// carry the lock).
pub const LOCK: &str = "tasks.lock";
/// The store format's version.
pub const VERSION: u32 = 1;
/// A board file larger than this is not read (it is not one Tackle wrote).
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// The most tasks a board holds.
pub const MAX_TASKS: usize = 10_000;
/// The longest title, in characters.
pub const MAX_TITLE_CHARS: usize = 500;
/// The longest description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 20_000;
/// The most dependencies of one task.
pub const MAX_DEPENDENCIES: usize = 100;

/// Where a task stands. (No doc comments on the variants, so the schema is a plain `enum`.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(missing_docs)]
pub enum TaskStatus {
    Pending,
    InProgress,
    Done,
    Failed,
}

impl TaskStatus {
    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::InProgress => "in_progress",
            TaskStatus::Done => "done",
            TaskStatus::Failed => "failed",
        }
    }
}

/// One task, as stored and as the tools answer it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    /// 8 random letters and digits.
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub description: String,
    pub status: TaskStatus,
    /// Ids of the tasks that must be done first.
    #[serde(default)]
    pub depends_on: Vec<String>,
    /// Who works on it (a teammate's name), if anyone claimed it.
    #[serde(default)]
    pub owner: Option<String>,
    /// RFC 3339, UTC, milliseconds; strictly increasing in creation order on one board.
    pub created_at: String,
    pub updated_at: String,
}

/// A task in a listing, with whether it can be started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Listed {
    #[serde(flatten)]
    pub task: Task,
    /// Pending, and every dependency is done.
    pub ready: bool,
}

/// The file's content.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Store {
    version: u32,
    tasks: BTreeMap<String, Task>,
}

/// What a `task_update` changes; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskChange {
    pub status: Option<TaskStatus>,
    pub title: Option<String>,
    pub depends_on: Option<Vec<String>>,
    /// `Some(None)` clears the owner.
    pub owner: Option<Option<String>>,
    /// The update happens only if the task's status is this one (an optimistic claim).
    pub expected_status: Option<TaskStatus>,
}

/// Why an operation did not happen. Nothing was changed in any case.
#[derive(Debug, thiserror::Error)]
pub enum BoardError {
    #[error("Unknown task id: {0}")]
    UnknownTask(String),
    #[error("Unknown dependency task id: {0}")]
    UnknownDependency(String),
    #[error("Cyclic task dependency detected at: {0}")]
    Cycle(String),
    #[error("status or title is required (or depends_on)")]
    NothingToChange,
    #[error("Task {id} status is {actual}, expected {expected}")]
    Conflict { id: String, actual: &'static str, expected: &'static str },
    /// A limit of the board (title length, number of tasks, ...).
    #[error("{0}")]
    Limit(String),
    #[error(
        "{DIR}/{FILE} is not a valid task board ({reason}); it was moved to {DIR}/{backup} and was not changed. \
         Its tasks can still be read there; the next task call starts a new board."
    )]
    Corrupt { reason: String, backup: String },
    /// What a read finds in a board that does not parse: a read leaves the file as it is.
    #[error(
        "{DIR}/{FILE} is not a valid task board ({reason}); it was left as it is. The next task_create or \
         task_update moves it aside and starts a new board."
    )]
    Invalid { reason: String },
    #[error(
        "the task board's lock ({DIR}/{LOCK}) has been held by another process for {0} s; try again, or end \
         the process holding it"
    )]
    Busy(u64),
    #[error(
        "{DIR}/{0} is a symlink or leads outside the workspace; the task board refuses to follow it. Remove it \
         (the board lives in real files under {DIR}/)."
    )]
    Escaped(&'static str),
    #[error("cannot {what} the task board in {DIR}/: {source}")]
    Io { what: &'static str, source: std::io::Error },
}

impl BoardError {
    fn io(what: &'static str) -> impl FnOnce(std::io::Error) -> BoardError {
        move |source| BoardError::Io { what, source }
    }

    /// Whether the request itself was wrong (the model can fix it), as opposed to the board's
    /// state or the file system.
    pub fn is_invalid_request(&self) -> bool {
        matches!(
            self,
            BoardError::UnknownTask(_)
                | BoardError::UnknownDependency(_)
                | BoardError::Cycle(_)
                | BoardError::NothingToChange
                | BoardError::Limit(_)
        )
    }
}

/// The task board of one workspace. Cheap to make: every operation opens, locks, reads and
/// (for changes) writes the file anew.
#[derive(Debug, Clone)]
pub struct TaskBoard {
    root: PathBuf,
}

impl TaskBoard {
    /// The board of the workspace at `root` (its canonical path). Nothing is opened yet.
    pub fn open(root: impl Into<PathBuf>) -> TaskBoard {
        TaskBoard { root: root.into() }
    }

    /// The board file's path (for messages).
    pub fn path(&self) -> PathBuf {
        self.root.join(DIR).join(FILE)
    }

    /// Creates a pending task.
    pub fn create(&self, title: &str, description: &str, depends_on: &[String]) -> Result<Task, BoardError> {
        check_text("title", title, MAX_TITLE_CHARS)?;
        if title.trim().is_empty() {
            return Err(BoardError::Limit("title must not be empty".to_owned()));
        }
        check_text("description", description, MAX_DESCRIPTION_CHARS)?;
        let depends_on = dedup(depends_on)?;
        self.transact(true, |store| {
            if store.tasks.len() >= MAX_TASKS {
                return Err(BoardError::Limit(format!(
                    "the board holds {MAX_TASKS} tasks, its limit; remove finished ones from {DIR}/{FILE}"
                )));
            }
            if let Some(missing) = depends_on.iter().find(|dep| !store.tasks.contains_key(*dep)) {
                return Err(BoardError::UnknownDependency(missing.clone()));
            }
            let id = fresh_id(store);
            let created_at = next_stamp(store);
            let task = Task {
                id: id.clone(),
                title: title.to_owned(),
                description: description.to_owned(),
                status: TaskStatus::Pending,
                depends_on,
                owner: None,
                updated_at: created_at.clone(),
                created_at,
            };
            store.tasks.insert(id, task.clone());
            Ok((task, true))
        })
    }

    /// Changes a task. `expected_status` makes it conditional: another status answers
    /// [`BoardError::Conflict`] and nothing changes.
    pub fn update(&self, id: &str, change: &TaskChange) -> Result<Task, BoardError> {
        if change.status.is_none() && change.title.is_none() && change.depends_on.is_none() && change.owner.is_none() {
            return Err(BoardError::NothingToChange);
        }
        if let Some(title) = &change.title {
            check_text("title", title, MAX_TITLE_CHARS)?;
            if title.trim().is_empty() {
                return Err(BoardError::Limit("title must not be empty".to_owned()));
            }
        }
        let depends_on = change.depends_on.as_deref().map(dedup).transpose()?;
        self.transact(true, |store| {
            let current = store.tasks.get(id).ok_or_else(|| BoardError::UnknownTask(id.to_owned()))?;
            if let Some(expected) = change.expected_status
                && current.status != expected
            {
                return Err(BoardError::Conflict {
                    id: id.to_owned(),
                    actual: current.status.name(),
                    expected: expected.name(),
                });
            }
            if let Some(deps) = &depends_on {
                if let Some(missing) = deps.iter().find(|dep| !store.tasks.contains_key(*dep)) {
                    return Err(BoardError::UnknownDependency(missing.clone()));
                }
                if let Some(at) = cycle_through(store, id, deps) {
                    return Err(BoardError::Cycle(at));
                }
            }
            let now = stamp(SystemTime::now());
            let task = store.tasks.get_mut(id).ok_or_else(|| BoardError::UnknownTask(id.to_owned()))?;
            if let Some(status) = change.status {
                task.status = status;
            }
            if let Some(title) = &change.title {
                task.title.clone_from(title);
            }
            if let Some(deps) = depends_on {
                task.depends_on = deps;
            }
            if let Some(owner) = &change.owner {
                task.owner.clone_from(owner);
            }
            task.updated_at = now;
            Ok((task.clone(), true))
        })
    }

    /// Claims a task for `owner`: it becomes `in_progress` with that owner, only if its
    /// status is still `expected` (what a teammate saw when it chose the task).
    pub fn claim(&self, id: &str, expected: TaskStatus, owner: &str) -> Result<Task, BoardError> {
        let change = TaskChange {
            status: Some(TaskStatus::InProgress),
            owner: Some(Some(owner.to_owned())),
            expected_status: Some(expected),
            ..TaskChange::default()
        };
        self.update(id, &change)
    }

    /// One task.
    pub fn get(&self, id: &str) -> Result<Task, BoardError> {
        self.transact(false, |store| {
            store.tasks.get(id).cloned().map(|task| (task, false)).ok_or_else(|| BoardError::UnknownTask(id.to_owned()))
        })
    }

    /// Every task (with `status`, only those), oldest first, each with whether it is ready.
    pub fn list(&self, status: Option<TaskStatus>) -> Result<Vec<Listed>, BoardError> {
        self.transact(false, |store| {
            let mut listed: Vec<Listed> = store
                .tasks
                .values()
                .filter(|task| status.is_none_or(|wanted| task.status == wanted))
                .map(|task| Listed { ready: is_ready(store, task), task: task.clone() })
                .collect();
            listed.sort_by(|a, b| (&a.task.created_at, &a.task.id).cmp(&(&b.task.created_at, &b.task.id)));
            Ok((listed, false))
        })
    }

    /// Runs `apply` on the board; a change (`write`) runs under the lock and writes the board
    /// back when `apply` says it changed it. A read takes no lock and creates nothing: every
    /// write replaces the file whole by a rename, so a reader sees the old board or the new one.
    /// A board that does not exist yet is empty.
    fn transact<T>(
        &self,
        write: bool,
        apply: impl FnOnce(&mut Store) -> Result<(T, bool), BoardError>,
    ) -> Result<T, BoardError> {
        let Some(dir) = self.open_dir(write)? else {
            let (value, _) = apply(&mut Store { version: VERSION, tasks: BTreeMap::new() })?;
            return Ok(value);
        };
        if !write {
            let (value, _) = apply(&mut read_store(&dir, false)?)?;
            return Ok(value);
        }
        let lock = File::from(openat(&dir, LOCK, OFlags::RDWR | OFlags::CREATE, "open the lock of")?);
        take_lock(&lock)?;
        let mut store = read_store(&dir, true)?;
        let (value, changed) = apply(&mut store)?;
        if changed {
            write_store(&dir, &store)?;
        }
        // The lock goes with the file.
        drop(lock);
        Ok(value)
    }

    /// `.tackle`, opened beneath the root without following links; created when `create`
    /// (else `None` when it does not exist).
    fn open_dir(&self, create: bool) -> Result<Option<OwnedFd>, BoardError> {
        own_dir::open_dir(&self.root, Path::new(DIR), create).map_err(|err| match err {
            OwnDirError::Escaped => BoardError::Escaped(""),
            OwnDirError::Io { what, source } => BoardError::Io { what, source },
        })
    }
}

/// How long a change waits for another process's transaction (each takes milliseconds).
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// Takes the board's lock, waiting at most [`LOCK_WAIT`].
fn take_lock(lock: &File) -> Result<(), BoardError> {
    let deadline = std::time::Instant::now() + LOCK_WAIT;
    loop {
        match lock.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(std::fs::TryLockError::WouldBlock) => return Err(BoardError::Busy(LOCK_WAIT.as_secs())),
            Err(std::fs::TryLockError::Error(err)) => return Err(BoardError::io("lock")(err)),
        }
    }
}

/// Opens `name` in the board's directory, never following a link.
fn openat(dir: &OwnedFd, name: &'static str, flags: OFlags, what: &'static str) -> Result<OwnedFd, BoardError> {
    own_dir::open_file(dir, name, flags, what).map_err(|err| match err {
        OwnDirError::Escaped => BoardError::Escaped(name),
        OwnDirError::Io { what, source } => BoardError::Io { what, source },
    })
}

/// Reads the board (empty when the file does not exist). A file that does not parse is
/// reported, and moved aside when `move_aside` (a change, under the lock, about to write a new
/// board; a read changes nothing).
fn read_store(dir: &OwnedFd, move_aside: bool) -> Result<Store, BoardError> {
    let fd = match openat(dir, FILE, OFlags::RDONLY, "read") {
        Ok(fd) => fd,
        Err(BoardError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Store { version: VERSION, tasks: BTreeMap::new() });
        }
        Err(err) => return Err(err),
    };
    let mut bytes = Vec::new();
    File::from(fd).take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(BoardError::io("read"))?;
    let problem = if bytes.len() as u64 > MAX_FILE_BYTES {
        format!("larger than {} MiB", MAX_FILE_BYTES / 1024 / 1024)
    } else {
        match serde_json::from_slice::<Store>(&bytes) {
            Ok(store) => match check_store(&store) {
                None => return Ok(store),
                Some(problem) => problem,
            },
            Err(err) => tackle_core::text::json_error(&err),
        }
    };
    if !move_aside {
        return Err(BoardError::Invalid { reason: problem });
    }
    let backup = format!("{FILE}.bak-{}", tackle_core::time::file_stamp(SystemTime::now()));
    let backup = unique_backup(dir, backup);
    rustix::fs::renameat(dir, FILE, dir, backup.as_str())
        .map_err(|errno| BoardError::Io { what: "move aside the invalid file of", source: errno.into() })?;
    Err(BoardError::Corrupt { reason: problem, backup })
}

/// A backup name not taken yet (two corrupt files within one second).
fn unique_backup(dir: &OwnedFd, base: String) -> String {
    let taken = |name: &str| rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW).is_ok();
    if !taken(&base) {
        return base;
    }
    (1..1000).map(|n| format!("{base}-{n}")).find(|name| !taken(name)).unwrap_or(base)
}

/// What makes a parsed store unusable: another version, ids that do not match their keys,
/// dependencies on missing tasks.
fn check_store(store: &Store) -> Option<String> {
    if store.version != VERSION {
        return Some(format!("version {} where {VERSION} was expected", store.version));
    }
    for (key, task) in &store.tasks {
        if task.id != *key {
            return Some(format!("task {key} holds the id {}", task.id));
        }
        if let Some(dep) = task.depends_on.iter().find(|dep| !store.tasks.contains_key(*dep)) {
            return Some(format!("task {key} depends on {dep}, which is not on the board"));
        }
    }
    None
}

/// Writes the board whole to a temporary file in the directory, then renames it over the
/// board: a reader sees the old board or the new one, never a mix.
fn write_store(dir: &OwnedFd, store: &Store) -> Result<(), BoardError> {
    let mut text = serde_json::to_vec_pretty(store)
        .map_err(|err| BoardError::Io { what: "encode", source: std::io::Error::other(err.to_string()) })?;
    text.push(b'\n');
    let temp = temp_name_for(Path::new(FILE));
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(dir, temp.as_os_str(), flags, Mode::from_raw_mode(0o644))
        .map_err(|errno| BoardError::Io { what: "write", source: errno.into() })?;
    let written = File::from(fd).write_all(&text);
    let renamed = written.map_err(BoardError::io("write")).and_then(|()| {
        rustix::fs::renameat(dir, temp.as_os_str(), dir, FILE)
            .map_err(|errno| BoardError::Io { what: "write", source: errno.into() })
    });
    if renamed.is_err() {
        let _ = rustix::fs::unlinkat(dir, temp.as_os_str(), AtFlags::empty());
    }
    renamed
}

fn check_text(field: &str, text: &str, max: usize) -> Result<(), BoardError> {
    if text.chars().count() > max {
        return Err(BoardError::Limit(format!("{field} is longer than {max} characters")));
    }
    Ok(())
}

/// The dependencies in their order, each once.
fn dedup(deps: &[String]) -> Result<Vec<String>, BoardError> {
    if deps.len() > MAX_DEPENDENCIES {
        return Err(BoardError::Limit(format!("a task may depend on at most {MAX_DEPENDENCIES} tasks")));
    }
    let mut seen = HashSet::new();
    Ok(deps.iter().filter(|dep| seen.insert(dep.as_str())).cloned().collect())
}

/// A fresh 8-character id.
fn fresh_id(store: &Store) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    loop {
        let bits: u64 = rand::random();
        let id: String = (0..8).map(|i| ALPHABET[((bits >> (i * 6)) & 63) as usize % ALPHABET.len()] as char).collect();
        if !store.tasks.contains_key(&id) {
            return id;
        }
    }
}

/// Now, or 1 ms after the newest task's creation if that is later, so creation order is
/// the order of `created_at` even within one millisecond or across a clock step back.
fn next_stamp(store: &Store) -> String {
    let now = stamp(SystemTime::now());
    match store.tasks.values().map(|task| task.created_at.as_str()).max() {
        Some(latest) if latest >= now.as_str() => {
            tackle_core::time::parse_rfc3339_millis(latest).map_or(now, |time| stamp(time + Duration::from_millis(1)))
        }
        _ => now,
    }
}

/// `2026-03-01T12:00:00.123Z`.
pub(crate) fn stamp(time: SystemTime) -> String {
    tackle_core::time::rfc3339_millis(time)
}

/// Pending, and every dependency done.
fn is_ready(store: &Store, task: &Task) -> bool {
    task.status == TaskStatus::Pending
        && task.depends_on.iter().all(|dep| store.tasks.get(dep).is_some_and(|d| d.status == TaskStatus::Done))
}

/// With `id` depending on `deps`, the task where a cycle closes, if one does: a walk from
/// each dependency along the board's dependencies that comes back to `id`.
fn cycle_through(store: &Store, id: &str, deps: &[String]) -> Option<String> {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut stack: Vec<&str> = deps.iter().map(String::as_str).collect();
    while let Some(current) = stack.pop() {
        if current == id {
            return Some(id.to_owned());
        }
        if !seen.insert(current) {
            continue;
        }
        if let Some(task) = store.tasks.get(current) {
            stack.extend(task.depends_on.iter().map(String::as_str));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

    #[test]
    fn stamps_read_back_and_order() {
        let time = UNIX_EPOCH + Duration::from_millis(1_772_366_400_123);
        assert_eq!(tackle_core::time::parse_rfc3339_millis(&stamp(time)), Some(time));
        let mut store = Store::default();
        let later = stamp(SystemTime::now() + Duration::from_secs(3_600));
        store.tasks.insert(
            "a".into(),
            Task {
                id: "a".into(),
                title: "t".into(),
                description: String::new(),
                status: TaskStatus::Pending,
                depends_on: vec![],
                owner: None,
                created_at: later.clone(),
                updated_at: later.clone(),
            },
        );
        let one_ms_after = tackle_core::time::parse_rfc3339_millis(&later).unwrap() + Duration::from_millis(1);
        assert_eq!(next_stamp(&store), stamp(one_ms_after));
    }
}
