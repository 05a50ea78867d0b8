//! Reading, hashing and extracting many files at once: one worker per core, each with its
//! own parser, results streamed to the caller (which writes them into the transaction) over
//! a bounded channel, so memory stays bounded however large the tree.
//!
//! File contents are untrusted, so each file gets a time limit: a watchdog thread stops the
//! extraction of a file that takes longer (through the cancellation flag, which the parser
//! and the query cursor both check), and the file is skipped as `timeout`.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

use crate::extract::{ExtractError, Extraction, Tagger, extract};
use crate::language::Language;
use crate::walk::{self, Skip, Stamp};

/// How often the watchdog looks at the workers.
const WATCHDOG_TICK: Duration = Duration::from_millis(20);
/// How many results may wait for the writer.
const CHANNEL_DEPTH: usize = 64;

/// A file to (re)index.
#[derive(Debug, Clone)]
pub struct Job {
    /// Relative to the root, `/`-separated bytes.
    pub rel: Vec<u8>,
    pub language: Language,
    pub stamp: Stamp,
    /// The content hash the index holds, if the file is indexed with its content.
    pub old_hash: Option<Vec<u8>>,
}

/// What became of a job.
#[derive(Debug)]
pub enum Outcome {
    /// Extracted (`partial` inside when the file has syntax errors), as `language` (a C
    /// header that reads as C++ is C++).
    Extracted { hash: [u8; 32], extraction: Extraction, language: Language },
    /// The content is what the index holds; only the stamp changed.
    Unchanged,
    /// Not indexed: too large, binary, unreadable or over the time limit.
    Skipped { hash: Option<[u8; 32]>, status: &'static str },
}

/// Limits on one file.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub max_file_bytes: u64,
    pub file_time: Duration,
    pub threads: usize,
}

/// The watchdog's view of one worker: when its current file started, and that file's flag.
type Slot = Mutex<Option<(Instant, Arc<AtomicUsize>)>>;

/// Runs `jobs` on `limits.threads` workers, handing each result to `on_result` on the calling
/// thread, in completion order. Stops at the first error `on_result` returns, or when
/// `stop` says so (the rest of the jobs are then not run).
pub fn run<E>(
    root: &Path,
    jobs: Vec<Job>,
    limits: Limits,
    stop: &(dyn Fn() -> bool + Sync),
    mut on_result: impl FnMut(Job, Outcome) -> Result<(), E>,
) -> Result<(), E> {
    if jobs.is_empty() {
        return Ok(());
    }
    let threads = limits.threads.clamp(1, jobs.len());
    let queue = Mutex::new(jobs.into_iter());
    let slots: Vec<Slot> = (0..threads).map(|_| Mutex::new(None)).collect();
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::sync_channel::<(Job, Outcome)>(CHANNEL_DEPTH);
        for slot in &slots {
            let sender = sender.clone();
            let queue = &queue;
            scope.spawn(move || worker(root, queue, slot, limits, stop, &sender));
        }
        drop(sender);
        scope.spawn(|| watchdog(&slots, limits.file_time, &done));
        let mut result = Ok(());
        for (job, outcome) in receiver.iter() {
            if let Err(err) = on_result(job, outcome) {
                result = Err(err);
                break;
            }
        }
        // Dropping the receiver makes the workers' next send fail, so they stop.
        drop(receiver);
        done.store(true, Ordering::Relaxed);
        result
    })
}

fn worker(
    root: &Path,
    queue: &Mutex<std::vec::IntoIter<Job>>,
    slot: &Slot,
    limits: Limits,
    stop: &(dyn Fn() -> bool + Sync),
    sender: &mpsc::SyncSender<(Job, Outcome)>,
) {
    let mut tagger = Tagger::new();
    loop {
        if stop() {
            return;
        }
        let Some(job) = queue.lock().unwrap_or_else(PoisonError::into_inner).next() else { return };
        let flag = Arc::new(AtomicUsize::new(0));
        *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some((Instant::now(), Arc::clone(&flag)));
        let outcome = process(&mut tagger, root, &job, limits.max_file_bytes, &flag);
        *slot.lock().unwrap_or_else(PoisonError::into_inner) = None;
        if sender.send((job, outcome)).is_err() {
            return;
        }
    }
}

/// Stops any file that runs over `limit`, until `done`.
fn watchdog(slots: &[Slot], limit: Duration, done: &AtomicBool) {
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(WATCHDOG_TICK);
        for slot in slots {
            if let Some((started, flag)) = slot.lock().unwrap_or_else(PoisonError::into_inner).as_ref()
                && started.elapsed() > limit
            {
                flag.store(1, Ordering::Relaxed);
            }
        }
    }
}

/// Reads, hashes and (when the content changed) extracts one file.
pub fn process(tagger: &mut Tagger, root: &Path, job: &Job, max_bytes: u64, flag: &AtomicUsize) -> Outcome {
    let path = walk::absolute(root, &job.rel);
    let bytes = match walk::read(&path, job.stamp.inode, max_bytes) {
        Ok(bytes) => bytes,
        Err(skip) => return Outcome::Skipped { hash: None, status: skip_status(skip) },
    };
    let hash = *blake3::hash(&bytes).as_bytes();
    if job.old_hash.as_deref() == Some(&hash[..]) {
        return Outcome::Unchanged;
    }
    let rel = String::from_utf8_lossy(&job.rel);
    let language = job.language.of_source(&job.rel, &bytes);
    match extract(tagger, language, &rel, &bytes, Some(flag)) {
        Ok(extraction) => Outcome::Extracted { hash, extraction, language },
        Err(ExtractError::Cancelled) => Outcome::Skipped { hash: Some(hash), status: "timeout" },
        Err(err @ (ExtractError::Query(_) | ExtractError::Grammar(_))) => {
            tracing::error!("ckg: {err}");
            Outcome::Skipped { hash: Some(hash), status: "unreadable" }
        }
    }
}

/// The status stored for a skipped file.
fn skip_status(skip: Skip) -> &'static str {
    match skip {
        Skip::TooLarge => "too_large",
        Skip::Binary => "binary",
        Skip::Unreadable => "unreadable",
    }
}
