//! `tackle fleet`: many tasks, each one `tackle run` (docs/scale-out.md). `fleet run` runs a
//! task file on this machine (the local engine, [`local`]); `fleet collect` builds the
//! predictions and the summary from result directories, whoever ran them.

mod k8s;
mod local;
mod ray;
mod results;
mod tasks;

pub use k8s::write_manifests as k8s;

use std::io::IsTerminal as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use clap::{Args, Subcommand, ValueEnum};
use tokio_util::sync::CancellationToken;

use crate::cli::RuleArgs;
use crate::exit::{CommandResult, Failure};

#[derive(Debug, Subcommand)]
pub enum FleetCommand {
    /// Run every task of a JSONL file, each as `tackle run --json` on its own copy of its
    /// workspace, into DIR/ID/ (result.json, trajectory.jsonl, diff.patch); a second run into
    /// the same DIR skips the tasks that have a final result.
    Run(Box<FleetRunArgs>),
    /// Build DIR/predictions.jsonl (SWE-bench's format) and DIR/summary.json from the result
    /// directories in DIR, wherever they were run.
    Collect(FleetCollectArgs),
    /// Write Kubernetes manifests for the task file into DIR: ConfigMaps of tasks and an
    /// Indexed Job whose pods each run one task with `tackle run`; collect the results with
    /// `tackle fleet collect`.
    K8s(Box<k8s::FleetK8sArgs>),
}

/// Where a fleet's tasks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineKind {
    /// Child processes on this machine.
    Local,
    /// Jobs on a Ray cluster (--ray-address).
    Ray,
}

/// What `--retry` reruns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RetryKind {
    /// Tasks whose last result is exit 3 (infrastructure).
    Infra,
}

#[derive(Debug, Args)]
pub struct FleetRunArgs {
    /// The task file: one JSON object a line, {"id": ..., "task": ...} or SWE-bench's
    /// {"instance_id": ..., "problem_statement": ...}.
    pub tasks: PathBuf,
    /// The output directory (created when missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// How many tasks run at once (default: the number of cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub workers: Option<u32>,
    /// Run again the tasks whose last result is an infrastructure failure (exit 3), and retry
    /// those that fail so again in this run, up to --attempts times with backoff.
    #[arg(long, value_name = "KIND")]
    pub retry: Option<RetryKind>,
    /// Attempts per task with --retry infra.
    #[arg(long, value_name = "K", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub attempts: u32,
    /// Where the tasks run: `local` (child processes) or `ray` (jobs on a Ray cluster).
    #[arg(long, value_name = "ENGINE", default_value = "local")]
    pub engine: EngineKind,
    /// The Ray dashboard's URL (--engine ray), e.g. http://127.0.0.1:8265.
    #[arg(long, value_name = "URL", required_if_eq("engine", "ray"))]
    pub ray_address: Option<String>,
    /// The tackle binary's path on every Ray node (default: this binary's path).
    #[arg(long, value_name = "PATH")]
    pub tackle_binary: Option<PathBuf>,
    /// A variable of this environment to give every Ray job (repeatable; visible to whoever
    /// can read the cluster's jobs).
    #[arg(long = "ray-env", value_name = "NAME")]
    pub ray_env: Vec<String>,
    #[command(flatten)]
    pub run: FleetRunFlags,
}

/// The `tackle run` flags every task of a fleet gets.
#[derive(Debug, Args)]
pub struct FleetRunFlags {
    /// The model of every task without its own (PROVIDER/MODEL).
    #[arg(long, value_name = "P/M")]
    pub model: Option<String>,
    /// The provider endpoint for every task.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// The permission mode of every task.
    #[arg(long, value_name = "MODE")]
    pub permission_mode: Option<String>,
    /// Approve every call that would ask.
    #[arg(long)]
    pub yes: bool,
    #[command(flatten)]
    pub rules: RuleArgs,
    /// The tools of every task.
    #[arg(long, value_name = "LIST")]
    pub tools: Option<String>,
    /// The time limit of every task without its own (90s, 30m).
    #[arg(long, value_name = "DURATION", value_parser = crate::duration::parse)]
    pub timeout: Option<std::time::Duration>,
    /// The cost limit of every task, in US dollars.
    #[arg(long, value_name = "USD")]
    pub max_cost: Option<String>,
    /// The step limit of every task without its own.
    #[arg(long, value_name = "N")]
    pub max_steps: Option<u32>,
}

#[derive(Debug, Args)]
pub struct FleetCollectArgs {
    /// The directory holding one result directory per task.
    pub dir: PathBuf,
    /// The model name written into predictions.jsonl.
    #[arg(long, value_name = "NAME", default_value = "tackle")]
    pub model_name: String,
}

/// `tackle fleet run`.
pub async fn run(args: Box<FleetRunArgs>) -> CommandResult {
    let started = Instant::now();
    let tasks = tasks::read(&args.tasks).map_err(Failure::usage)?;
    std::fs::create_dir_all(&args.out).map_err(|err| Failure::usage(format!("--out {}: {err}", args.out.display())))?;
    // Absolute: the runs (a Ray job's especially) start elsewhere.
    let out =
        std::path::absolute(&args.out).map_err(|err| Failure::usage(format!("--out {}: {err}", args.out.display())))?;
    let binary = std::env::current_exe().map_err(|err| Failure::failed(format!("cannot find tackle itself: {err}")))?;
    let model_name = args.run.model.clone().unwrap_or_else(|| "tackle".to_owned());

    // Final results stand; the rest (no result, interrupted, or infrastructure with --retry
    // infra) run now.
    let mut kept = Vec::new();
    let mut to_run = Vec::new();
    for task in tasks {
        match results::read(&out, &task.id) {
            Some(result)
                if result.outcome.is_final()
                    && !(args.retry == Some(RetryKind::Infra) && result.outcome == results::Outcome::Infra) =>
            {
                kept.push(result);
            }
            _ => to_run.push(task),
        }
    }
    let order: Vec<String> = kept.iter().map(|r| r.id.clone()).chain(to_run.iter().map(|t| t.id.clone())).collect();
    results::write_predictions(&out, &kept, &model_name)
        .map_err(|err| Failure::failed(format!("cannot write {}: {err}", results::PREDICTIONS)))?;

    let workers = args
        .workers
        .map_or_else(|| std::thread::available_parallelism().map_or(2, std::num::NonZeroUsize::get), |n| n as usize);
    let engine = match (args.engine, &args.ray_address) {
        (EngineKind::Ray, Some(address)) => {
            let on_nodes = args.tackle_binary.clone().unwrap_or_else(|| binary.clone());
            local::Engine::Ray(Arc::new(
                ray::Ray::connect(address, &on_nodes, &args.ray_env).await.map_err(Failure::infra)?,
            ))
        }
        (EngineKind::Ray, None) => return Err(Failure::usage("--engine ray needs --ray-address URL")),
        (EngineKind::Local, _) => local::Engine::Local,
    };
    let plan = Arc::new(local::Plan {
        engine,
        binary,
        out: out.clone(),
        run_flags: run_flags(&args.run),
        model: args.run.model.clone(),
        workers,
        attempts: if args.retry.is_some() { args.attempts } else { 1 },
    });
    let stop = CancellationToken::new();
    let signals = crate::signals::interrupt();
    {
        let (stop, token) = (stop.clone(), signals.token.clone());
        tokio::spawn(async move {
            token.cancelled().await;
            stop.cancel();
        });
    }
    let progress = Arc::new(Progress::new(to_run.len(), kept.len()));
    let predictions = Arc::new(std::sync::Mutex::new(()));
    let on_start: Arc<dyn Fn(&str) + Send + Sync> = {
        let progress = Arc::clone(&progress);
        Arc::new(move |_id: &str| progress.started())
    };
    let on_finish: Arc<dyn Fn(&local::Finished) + Send + Sync> = {
        let (progress, out, model_name) = (Arc::clone(&progress), out.clone(), model_name.clone());
        Arc::new(move |finished: &local::Finished| {
            if finished.result.outcome.is_final() {
                let _guard = predictions.lock();
                append_prediction(&out, &finished.result.prediction(&model_name));
            }
            progress.finished(finished);
        })
    };
    let ran = local::run(Arc::clone(&plan), to_run, stop.clone(), on_start, on_finish).await;
    progress.clear();

    // The whole directory, in task-file order.
    let mut all: Vec<results::TaskResult> = kept.into_iter().chain(ran).collect();
    let position = |id: &str| order.iter().position(|o| o == id).unwrap_or(usize::MAX);
    all.sort_by_key(|r| position(&r.id));
    let pending = order.len().saturating_sub(all.iter().filter(|r| r.outcome.is_final()).count());
    let finals: Vec<results::TaskResult> = all.iter().filter(|r| r.outcome.is_final()).cloned().collect();
    results::write_predictions(&out, &finals, &model_name)
        .map_err(|err| Failure::failed(format!("cannot write {}: {err}", results::PREDICTIONS)))?;
    let wall = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let summary = results::summary(&finals, pending, Some(wall));
    write_summary(&out, &summary)?;
    crate::stdout::print(&results::table(&summary))?;
    let code = if stop.is_cancelled() {
        signals.exit_code().unwrap_or(crate::exit::INTERRUPTED)
    } else if finals.iter().any(|r| r.outcome == results::Outcome::Infra) {
        crate::exit::INFRA
    } else {
        crate::exit::OK
    };
    Ok(ExitCode::from(code))
}

/// `tackle fleet collect`.
pub fn collect(args: FleetCollectArgs) -> CommandResult {
    let found = results::scan(&args.dir).map_err(|err| Failure::usage(format!("{}: {err}", args.dir.display())))?;
    if found.is_empty() {
        return Err(Failure::usage(format!(
            "{}: no result directories (DIR/ID/result.json) to collect",
            args.dir.display()
        )));
    }
    let finals: Vec<results::TaskResult> = found.iter().filter(|r| r.outcome.is_final()).cloned().collect();
    let pending = found.len() - finals.len();
    results::write_predictions(&args.dir, &finals, &args.model_name)
        .map_err(|err| Failure::failed(format!("cannot write {}: {err}", results::PREDICTIONS)))?;
    let summary = results::summary(&finals, pending, None);
    write_summary(&args.dir, &summary)?;
    crate::stdout::print(&results::table(&summary))?;
    Ok(ExitCode::from(crate::exit::OK))
}

fn write_summary(dir: &std::path::Path, summary: &serde_json::Value) -> Result<(), Failure> {
    let mut text = serde_json::to_vec_pretty(summary).unwrap_or_default();
    text.push(b'\n');
    results::write_atomic(&dir.join(results::SUMMARY), &text)
        .map_err(|err| Failure::failed(format!("cannot write {}: {err}", results::SUMMARY)))
}

/// `text` quoted for a POSIX shell: a Kubernetes pod's script, a Ray job's entrypoint.
pub(super) fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// Adds one line to `predictions.jsonl` as a task finishes (the whole file is rewritten, in
/// task order, at the end).
fn append_prediction(dir: &std::path::Path, line: &serde_json::Value) {
    use std::io::Write as _;
    let file = std::fs::OpenOptions::new().append(true).create(true).open(dir.join(results::PREDICTIONS));
    if let Ok(mut file) = file {
        let _ = writeln!(file, "{line}");
    }
}

/// The `tackle run` flags every task gets (without `--model`: a task's own wins).
pub(super) fn run_flags(args: &FleetRunFlags) -> Vec<String> {
    let mut flags = Vec::new();
    let mut pair = |flag: &str, value: &Option<String>| {
        if let Some(value) = value {
            flags.push(flag.to_owned());
            flags.push(value.clone());
        }
    };
    pair("--base-url", &args.base_url);
    pair("--permission-mode", &args.permission_mode);
    pair("--tools", &args.tools);
    pair("--max-cost", &args.max_cost);
    pair("--timeout", &args.timeout.map(|t| format!("{}ms", t.as_millis())));
    pair("--max-steps", &args.max_steps.map(|n| n.to_string()));
    for (flag, rules) in [("--allow", &args.rules.allow), ("--ask", &args.rules.ask), ("--deny", &args.rules.deny)] {
        for rule in rules {
            flags.push(flag.to_owned());
            flags.push(rule.clone());
        }
    }
    if args.yes {
        flags.push("--yes".to_owned());
    }
    flags
}

/// The fleet's progress: a bar on a terminal, a line per finished task otherwise.
struct Progress {
    bar: Option<indicatif::ProgressBar>,
    running: AtomicUsize,
    done: AtomicUsize,
    failed: AtomicUsize,
}

impl Progress {
    fn new(to_run: usize, kept: usize) -> Progress {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = indicatif::ProgressBar::new(to_run as u64);
            bar.set_style(
                indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg} · ETA {eta}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            bar
        });
        if kept > 0 {
            diagln!("tackle fleet: {kept} task(s) already have a final result and are skipped");
        }
        Progress { bar, running: AtomicUsize::new(0), done: AtomicUsize::new(0), failed: AtomicUsize::new(0) }
    }

    fn started(&self) {
        self.running.fetch_add(1, Ordering::SeqCst);
        self.redraw();
    }

    fn finished(&self, finished: &local::Finished) {
        self.running.fetch_sub(1, Ordering::SeqCst);
        let counter = if finished.result.outcome == results::Outcome::Done { &self.done } else { &self.failed };
        counter.fetch_add(1, Ordering::SeqCst);
        match &self.bar {
            Some(bar) => {
                bar.inc(1);
                self.redraw();
            }
            None => {
                let value = &finished.result.value;
                let retried =
                    if finished.attempts > 1 { format!(" · {} attempts", finished.attempts) } else { String::new() };
                diagln!(
                    "{} {} · exit {} · {} steps · {:.1} s{retried}",
                    finished.result.id,
                    finished.result.outcome.name(),
                    value["exit_code"],
                    value["steps"].as_u64().unwrap_or(0),
                    value["duration_ms"].as_u64().unwrap_or(0) as f64 / 1000.0
                );
            }
        }
    }

    fn redraw(&self) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!(
                "running {} · done {} · failed {}",
                self.running.load(Ordering::SeqCst),
                self.done.load(Ordering::SeqCst),
                self.failed.load(Ordering::SeqCst)
            ));
        }
    }

    fn clear(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
