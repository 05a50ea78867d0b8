//! A fleet's output directory: `DIR/ID/result.json` (the `tackle run --json` result),
//! `DIR/ID/trajectory.jsonl`, `DIR/ID/diff.patch`, and over them `DIR/predictions.jsonl` in
//! SWE-bench's format and `DIR/summary.json` (docs/scale-out.md#the-output-directory).
//!
//! A task's result counts only once its `result.json` is in place (written to a temporary
//! name, then renamed): a fleet that crashed or was killed leaves the task without one, and it
//! runs again. A result of an interrupted run (exit 130 or 143) is kept to read but is not
//! final either.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// A task's result file.
pub const RESULT: &str = "result.json";
/// A task's diff.
pub const DIFF: &str = "diff.patch";
/// A task's trajectory.
pub const TRAJECTORY: &str = "trajectory.jsonl";
/// The predictions of every final result, SWE-bench's format.
pub const PREDICTIONS: &str = "predictions.jsonl";
/// The counts.
pub const SUMMARY: &str = "summary.json";

/// How a task's result counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0.
    Done,
    /// Exit 1 or 2: the agent (or the task's settings) failed.
    Failed,
    /// Exit 3: infrastructure; `--retry infra` runs it again.
    Infra,
    /// Exit 4: a limit was reached.
    Limit,
    /// Exit 130 or 143: not final, runs again.
    Interrupted,
}

impl Outcome {
    /// How `exit_code` counts.
    pub fn of(exit_code: i64) -> Outcome {
        match exit_code {
            0 => Outcome::Done,
            3 => Outcome::Infra,
            4 => Outcome::Limit,
            130 | 143 | 129 => Outcome::Interrupted,
            _ => Outcome::Failed,
        }
    }

    /// Whether a result of this kind is final (the task is skipped on the next run).
    pub fn is_final(self) -> bool {
        self != Outcome::Interrupted
    }

    pub fn name(self) -> &'static str {
        match self {
            Outcome::Done => "done",
            Outcome::Failed => "failed",
            Outcome::Infra => "infra",
            Outcome::Limit => "limit",
            Outcome::Interrupted => "interrupted",
        }
    }
}

/// One task's result as read back.
#[derive(Debug, Clone)]
pub struct TaskResult {
    pub id: String,
    pub outcome: Outcome,
    pub value: Value,
}

impl TaskResult {
    /// The workspace's changes (empty when the run measured none).
    pub fn diff(&self) -> &str {
        self.value["diff"].as_str().unwrap_or_default()
    }

    /// The SWE-bench prediction line.
    pub fn prediction(&self, model: &str) -> Value {
        json!({"instance_id": self.id, "model_name_or_path": model, "model_patch": self.diff()})
    }
}

/// The result in `dir/ID/result.json`, if there is one that parses.
pub fn read(dir: &Path, id: &str) -> Option<TaskResult> {
    let text = std::fs::read_to_string(dir.join(id).join(RESULT)).ok()?;
    let value: Value = serde_json::from_str(&text).ok()?;
    let code = value["exit_code"].as_i64()?;
    Some(TaskResult { id: id.to_owned(), outcome: Outcome::of(code), value })
}

/// Writes `text` to `path` whole: a temporary file beside it, then a rename.
pub fn write_atomic(path: &Path, text: &[u8]) -> std::io::Result<()> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let temporary = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let mut file = std::fs::File::create(&temporary)?;
    file.write_all(text)?;
    file.sync_all()?;
    std::fs::rename(&temporary, path)
}

/// Records a task's result: `diff.patch` first, then `result.json` (what makes it count).
pub fn record(dir: &Path, result: &TaskResult) -> std::io::Result<()> {
    let task_dir = dir.join(&result.id);
    write_atomic(&task_dir.join(DIFF), result.diff().as_bytes())?;
    let mut text = serde_json::to_vec_pretty(&result.value).unwrap_or_default();
    text.push(b'\n');
    write_atomic(&task_dir.join(RESULT), &text)
}

/// The result directories under `dir` (collect: whoever ran them), sorted by id.
pub fn scan(dir: &Path) -> std::io::Result<Vec<TaskResult>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let Some(id) = entry.file_name().to_str().map(str::to_owned) else { continue };
        if id.starts_with('.') || !entry.file_type()?.is_dir() {
            continue;
        }
        if let Some(result) = read(dir, &id) {
            found.push(result);
        }
    }
    found.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(found)
}

/// `predictions.jsonl` from the final results, in their order.
pub fn write_predictions(dir: &Path, results: &[TaskResult], model: &str) -> std::io::Result<()> {
    let mut text = Vec::new();
    for result in results.iter().filter(|r| r.outcome.is_final()) {
        serde_json::to_writer(&mut text, &result.prediction(model)).map_err(std::io::Error::other)?;
        text.push(b'\n');
    }
    write_atomic(&dir.join(PREDICTIONS), &text)
}

/// The counts over `results` (and `pending` tasks without a final result).
pub fn summary(results: &[TaskResult], pending: usize, wall_ms: Option<u64>) -> Value {
    let count = |outcome: Outcome| results.iter().filter(|r| r.outcome == outcome).count();
    let sum = |pointer: &str| results.iter().filter_map(|r| r.value.pointer(pointer)?.as_u64()).sum::<u64>();
    let costs: Vec<f64> = results.iter().filter_map(|r| r.value.pointer("/usage/cost_usd")?.as_f64()).collect();
    let mut summary = json!({
        "tasks": results.len() + pending,
        "done": count(Outcome::Done),
        "failed": count(Outcome::Failed),
        "infra": count(Outcome::Infra),
        "limit": count(Outcome::Limit),
        "interrupted": count(Outcome::Interrupted),
        "pending": pending,
        "input_tokens": sum("/usage/input_tokens"),
        "output_tokens": sum("/usage/output_tokens"),
        "task_time_ms": sum("/duration_ms"),
    });
    if !costs.is_empty() {
        summary["cost_usd"] = json!(costs.iter().sum::<f64>());
    }
    if let Some(wall) = wall_ms {
        summary["wall_time_ms"] = json!(wall);
    }
    summary
}

/// The summary as a small table for a person.
pub fn table(summary: &Value) -> String {
    let field = |key: &str| summary[key].as_u64().unwrap_or(0);
    let mut text = format!(
        "tasks {}  done {}  failed {}  infra {}  limit {}  interrupted {}  pending {}\n",
        field("tasks"),
        field("done"),
        field("failed"),
        field("infra"),
        field("limit"),
        field("interrupted"),
        field("pending")
    );
    text.push_str(&format!("tokens {} in, {} out", field("input_tokens"), field("output_tokens")));
    if let Some(cost) = summary["cost_usd"].as_f64() {
        text.push_str(&format!("  cost ${cost:.4}"));
    }
    text.push_str(&format!("  task time {:.1} s", field("task_time_ms") as f64 / 1000.0));
    if let Some(wall) = summary["wall_time_ms"].as_u64() {
        text.push_str(&format!("  wall time {:.1} s", wall as f64 / 1000.0));
    }
    text.push('\n');
    text
}

/// The directory of task `id`.
pub fn task_dir(dir: &Path, id: &str) -> PathBuf {
    dir.join(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_count_by_exit_code_and_predictions_skip_interrupted_ones() {
        let dir = tempfile::tempdir().unwrap();
        for (id, code, diff) in [("a", 0, "diff a"), ("b", 3, ""), ("c", 130, "diff c"), ("d", 4, "")] {
            std::fs::create_dir(dir.path().join(id)).unwrap();
            let value = json!({"exit_code": code, "diff": diff, "usage": {"input_tokens": 10, "output_tokens": 1, "cost_usd": 0.5}, "duration_ms": 100});
            record(dir.path(), &TaskResult { id: id.into(), outcome: Outcome::of(code), value }).unwrap();
        }
        // A directory without a result (a task that never finished) and a broken result.
        std::fs::create_dir(dir.path().join("e")).unwrap();
        std::fs::create_dir(dir.path().join("f")).unwrap();
        std::fs::write(dir.path().join("f").join(RESULT), "{\"exit_code\": ").unwrap();
        let results = scan(dir.path()).unwrap();
        let ids: Vec<&str> = results.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c", "d"]);
        assert_eq!(std::fs::read_to_string(dir.path().join("a").join(DIFF)).unwrap(), "diff a");
        write_predictions(dir.path(), &results, "openai/m").unwrap();
        let lines: Vec<Value> = std::fs::read_to_string(dir.path().join(PREDICTIONS))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 3, "the interrupted task is not a prediction");
        assert_eq!(lines[0], json!({"instance_id": "a", "model_name_or_path": "openai/m", "model_patch": "diff a"}));
        let summary = summary(&results, 2, Some(1000));
        assert_eq!(
            (&summary["tasks"], &summary["done"], &summary["infra"], &summary["limit"], &summary["interrupted"]),
            (&json!(6), &json!(1), &json!(1), &json!(1), &json!(1))
        );
        assert_eq!((&summary["input_tokens"], &summary["cost_usd"]), (&json!(40), &json!(2.0)));
        assert!(table(&summary).contains("done 1  failed 0  infra 1"));
    }
}
