//! The task file of `tackle fleet run`: one JSON object a line, Tackle's own shape
//! (`id`, `task`, optional `workspace`, `image`, `workdir`, `setup`, `model`, `timeout`,
//! `max_steps`) or SWE-bench's (`instance_id`, `problem_statement`, `image_name`/`image`).
//! Every problem is a usage error naming its line (docs/scale-out.md#the-task-file).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

/// The largest task file read.
const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;
/// The longest task id (a directory name).
const MAX_ID_CHARS: usize = 200;

/// One task of a fleet.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetTask {
    /// Its id: the name of its result directory.
    pub id: String,
    /// What the agent is asked to do.
    pub task: String,
    /// A directory (or git repository) to copy as the task's workspace.
    pub workspace: Option<PathBuf>,
    /// An image to run the task's tools in (`--container`).
    pub image: Option<String>,
    /// The working directory in the image (`--container-workdir`).
    pub workdir: Option<String>,
    /// Shell commands run before the agent starts (`--setup`).
    pub setup: Option<String>,
    /// The model, over the fleet's `--model`.
    pub model: Option<String>,
    /// The time limit, over the fleet's `--timeout`.
    pub timeout: Option<Duration>,
    /// The step limit, over the fleet's `--max-steps`.
    pub max_steps: Option<u32>,
}

/// The tasks of `path`, in file order; relative workspaces are taken from the file's directory.
pub fn read(path: &Path) -> Result<Vec<FleetTask>, String> {
    let size = std::fs::metadata(path).map_err(|err| format!("{}: {err}", path.display()))?.len();
    if size > MAX_FILE_BYTES {
        return Err(format!("{}: larger than {MAX_FILE_BYTES} bytes", path.display()));
    }
    let text = std::fs::read_to_string(path).map_err(|err| format!("{}: {err}", path.display()))?;
    let base = path.parent().unwrap_or(Path::new("."));
    let mut tasks = Vec::new();
    let mut ids = HashSet::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{}:{}", path.display(), index + 1);
        let task = parse_line(line, base).map_err(|why| format!("{at}: {why}"))?;
        if !ids.insert(task.id.clone()) {
            return Err(format!("{at}: the id '{}' is used by an earlier line; each task needs its own", task.id));
        }
        tasks.push(task);
    }
    if tasks.is_empty() {
        return Err(format!("{}: no tasks (one JSON object a line: {{\"id\": ..., \"task\": ...}})", path.display()));
    }
    Ok(tasks)
}

fn parse_line(line: &str, base: &Path) -> Result<FleetTask, String> {
    let value: Value = serde_json::from_str(line).map_err(|err| format!("not JSON: {err}"))?;
    let Value::Object(object) = value else { return Err("not a JSON object".to_owned()) };
    let id = text(&object, &["id", "instance_id"])?.ok_or("no \"id\" (or SWE-bench's \"instance_id\")")?;
    check_id(&id)?;
    let task = text(&object, &["task", "problem_statement"])?
        .filter(|task| !task.trim().is_empty())
        .ok_or("no \"task\" (or SWE-bench's \"problem_statement\"), or it is empty")?;
    let workspace = text(&object, &["workspace"])?.map(|dir| {
        let dir = PathBuf::from(dir);
        if dir.is_absolute() { dir } else { base.join(dir) }
    });
    let timeout = match object.get("timeout") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(crate::duration::parse(text)?),
        Some(Value::Number(n)) => match n.as_u64().filter(|s| *s > 0) {
            Some(seconds) => Some(crate::duration::parse(&seconds.to_string())?),
            None => return Err(format!("\"timeout\": {n} is not a number of seconds above zero")),
        },
        Some(other) => return Err(format!("\"timeout\": {other} is not a duration such as \"30m\"")),
    };
    let max_steps = match object.get("max_steps") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            value
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("\"max_steps\": {value} is not a whole number above zero"))?,
        ),
    };
    Ok(FleetTask {
        id,
        task,
        workspace,
        image: text(&object, &["image", "image_name"])?,
        workdir: text(&object, &["workdir"])?,
        setup: text(&object, &["setup"])?,
        model: text(&object, &["model"])?,
        timeout,
        max_steps,
    })
}

/// The first of `keys` present, as a string; another type is an error naming the key.
fn text(object: &Map<String, Value>, keys: &[&str]) -> Result<Option<String>, String> {
    for key in keys {
        match object.get(*key) {
            None | Some(Value::Null) => continue,
            Some(Value::String(text)) => return Ok(Some(text.clone())),
            Some(other) => return Err(format!("\"{key}\" must be a string, not {other}")),
        }
    }
    Ok(None)
}

/// A task id is a directory name: `[A-Za-z0-9._-]+`, not starting with `.`.
fn check_id(id: &str) -> Result<(), String> {
    let valid = !id.is_empty()
        && id.len() <= MAX_ID_CHARS
        && !id.starts_with('.')
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if valid {
        return Ok(());
    }
    Err(format!(
        "the id {id:?} cannot name a directory: use letters, digits, '.', '_' and '-' (at most {MAX_ID_CHARS}), not starting with '.'"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tasks.jsonl");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn both_shapes_are_read() {
        let (dir, path) = file(concat!(
            r#"{"id": "a-1", "task": "fix it", "workspace": "repo", "setup": "make", "timeout": "30m", "max_steps": 5}"#,
            "\n\n",
            r#"{"instance_id": "django__django-11099", "problem_statement": "bug", "image_name": "sweb.eval", "repo": "django/django", "timeout": 90}"#,
            "\n"
        ));
        let tasks = read(&path).unwrap();
        assert_eq!(tasks.len(), 2);
        assert_eq!(tasks[0].workspace.as_deref(), Some(dir.path().join("repo").as_path()));
        assert_eq!((tasks[0].timeout, tasks[0].max_steps), (Some(Duration::from_secs(1800)), Some(5)));
        assert_eq!(tasks[0].setup.as_deref(), Some("make"));
        assert_eq!(tasks[1].id, "django__django-11099");
        assert_eq!((tasks[1].task.as_str(), tasks[1].image.as_deref()), ("bug", Some("sweb.eval")));
        assert_eq!(tasks[1].timeout, Some(Duration::from_secs(90)));
    }

    #[test]
    fn bad_lines_are_named() {
        for (text, expect) in [
            ("{\"id\": \"a\", \"task\": \"x\"}\n{\"id\": \"a\", \"task\": \"y\"}\n", ":2: the id 'a' is used"),
            ("{\"id\": \"../up\", \"task\": \"x\"}\n", ":1: the id \"../up\" cannot name"),
            ("{\"id\": \".hidden\", \"task\": \"x\"}\n", "cannot name a directory"),
            ("{\"id\": \"a/b\", \"task\": \"x\"}\n", "cannot name a directory"),
            ("{\"id\": \"\", \"task\": \"x\"}\n", "cannot name a directory"),
            ("{\"id\": \"ok\", \"task\": \"x\"}\nnot json\n", ":2: not JSON"),
            ("[1, 2]\n", ":1: not a JSON object"),
            ("{\"task\": \"x\"}\n", "no \"id\""),
            ("{\"id\": \"a\"}\n", "no \"task\""),
            ("{\"id\": \"a\", \"task\": \"   \"}\n", "empty"),
            ("{\"id\": 7, \"task\": \"x\"}\n", "\"id\" must be a string"),
            ("{\"id\": \"a\", \"task\": \"x\", \"timeout\": \"soon\"}\n", "not a duration"),
            ("{\"id\": \"a\", \"task\": \"x\", \"timeout\": -3}\n", "above zero"),
            ("{\"id\": \"a\", \"task\": \"x\", \"max_steps\": 0}\n", "above zero"),
            ("\n\n", "no tasks"),
        ] {
            let (_dir, path) = file(text);
            let err = read(&path).unwrap_err();
            assert!(err.contains(expect), "{text:?}: {err}");
        }
        let long = "x".repeat(MAX_ID_CHARS + 1);
        let (_dir, path) = file(&format!("{{\"id\": \"{long}\", \"task\": \"x\"}}\n"));
        assert!(read(&path).unwrap_err().contains("cannot name a directory"));
    }
}
