//! An index of one root: opening it, and the incremental refresh that runs before every
//! query (docs/ckg.md, "Refresh").
//!
//! A refresh walks the tree and compares each file's stat (size, mtime, ctime, inode) with
//! the index; only files whose stat changed are read and hashed (BLAKE3), and only files
//! whose content changed are extracted again. Rows of files no longer found are removed. A
//! refresh with nothing to do writes nothing and takes no lock; one with work takes the
//! indexer lock, looks again (another process may have done the work meanwhile), and writes
//! everything in one transaction.
//!
//! A file changed within [`RACY_NS`] of the moment its stat was taken is re-hashed on the
//! next refresh even if its stat looks the same: file-system timestamps are coarse, so a
//! second same-size write in the same tick would otherwise go unseen (git's "racy clean").

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, TransactionBehavior, params};
use serde::Serialize;

use crate::build::{self, Job, Limits, Outcome};
use crate::error::CkgError;
use crate::language::Language;
use crate::store::write::{FileRow, Writer};
use crate::store::{INDEX_DIR, OpenOptions, Store, is_corruption};
use crate::walk::{self, Entry, MAX_FILE_BYTES, Stamp};

/// How close to its stat time a change must be to count as racy.
pub const RACY_NS: i64 = 2_000_000_000;
/// How long a refresh of named files waits for another indexer.
const FILE_REFRESH_LOCK_WAIT: Duration = Duration::from_secs(1);

/// How an index is opened and refreshed.
#[derive(Debug, Clone, Copy)]
pub struct IndexOptions {
    /// Files larger than this are skipped.
    pub max_file_bytes: u64,
    /// The longest one file's extraction may take.
    pub file_time: Duration,
    /// How long to wait for another indexer (then [`CkgError::Busy`]).
    pub lock_wait: Duration,
    /// Extraction threads (default: every core).
    pub threads: usize,
    /// Run SQLite's `quick_check` when opening.
    pub quick_check: bool,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            max_file_bytes: MAX_FILE_BYTES,
            file_time: Duration::from_secs(5),
            lock_wait: Duration::from_secs(30),
            threads: std::thread::available_parallelism().map_or(2, usize::from),
            quick_check: false,
        }
    }
}

/// What a refresh did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RefreshReport {
    /// Files extracted (new or changed).
    pub extracted: usize,
    /// Files read whose content had not changed.
    pub unchanged: usize,
    /// Files newly skipped (too large, binary, unreadable, over the time limit).
    pub skipped: usize,
    /// Files removed from the index.
    pub removed: usize,
    /// Milliseconds taken.
    pub millis: u64,
}

/// What the index holds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Stats {
    /// Files indexed (with partial ones).
    pub files: u64,
    /// Files that did not parse cleanly; what their partial trees held is indexed.
    pub partial: u64,
    pub symbols: u64,
    pub references: u64,
    /// Files skipped, by reason (`too_large`, `binary`, `unreadable`, `timeout`).
    pub skipped: HashMap<String, u64>,
    /// Symlinks the walk skipped (never followed).
    pub symlinks: u64,
    /// Indexed files per language.
    pub languages: HashMap<String, u64>,
    /// The database file.
    pub database: String,
}

/// A progress report: `done` of `total` files.
pub type ProgressFn<'a> = &'a mut dyn FnMut(usize, usize);

/// The index of one root.
#[derive(Debug)]
pub struct Index {
    root: PathBuf,
    store: Store,
    options: IndexOptions,
    warnings: Vec<String>,
}

/// What a refresh looks at.
enum Scope<'a> {
    /// The whole tree.
    All,
    /// These files only (absolute paths).
    Files(&'a [PathBuf]),
}

/// A file as the index has it.
struct Known {
    id: i64,
    stamp: Stamp,
    checked_ns: i64,
    hash: Option<Vec<u8>>,
}

/// The work of one refresh.
#[derive(Default)]
struct Plan {
    jobs: Vec<Job>,
    removed: Vec<i64>,
    symlinks: Option<u64>,
}

impl Plan {
    fn is_empty(&self) -> bool {
        self.jobs.is_empty() && self.removed.is_empty() && self.symlinks.is_none()
    }
}

impl Index {
    /// Opens the index of `root` (a canonical directory), kept in `{root}/.tackle/ckg`.
    pub fn open(root: &Path, options: IndexOptions) -> Result<Index, CkgError> {
        Self::open_at(root, root, &INDEX_DIR, options)
    }

    /// Opens the index of `root` kept in `base/parts…` (the ckg tool keeps the index of a
    /// root other than the workspace inside the workspace's `.tackle/`). Each directory is
    /// created as needed; a symlink among them is refused.
    pub fn open_at(root: &Path, base: &Path, parts: &[&str], options: IndexOptions) -> Result<Index, CkgError> {
        let open = OpenOptions { lock_wait: options.lock_wait, quick_check: options.quick_check };
        let (store, warnings) = Store::open(base, parts, open)?;
        Ok(Index { root: root.to_path_buf(), store, options, warnings })
    }

    /// The root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The database file.
    pub fn database(&self) -> PathBuf {
        self.store.path()
    }

    /// Warnings gathered since the last call (a corrupt index rebuilt, planted files removed).
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    pub(crate) fn conn(&self) -> &Connection {
        &self.store.conn
    }

    /// Brings the index up to date with the whole tree. `progress` hears about extraction;
    /// `stop` ends the refresh early (nothing is then written).
    pub fn refresh(
        &mut self,
        progress: ProgressFn<'_>,
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Result<RefreshReport, CkgError> {
        self.with_recovery(|index| index.refresh_scope(&Scope::All, progress, stop))
    }

    /// Brings the index up to date for these files only (absolute paths; others are
    /// ignored): what a file tool announces after writing.
    pub fn refresh_files(&mut self, paths: &[PathBuf]) -> Result<RefreshReport, CkgError> {
        self.with_recovery(|index| index.refresh_scope(&Scope::Files(paths), &mut |_, _| {}, &|| false))
    }

    /// Runs `operation`; when SQLite reports corruption, rebuilds the index (with a
    /// warning) and runs it once more.
    pub(crate) fn with_recovery<T>(
        &mut self,
        mut operation: impl FnMut(&mut Index) -> Result<T, CkgError>,
    ) -> Result<T, CkgError> {
        match operation(self) {
            Err(CkgError::Sqlite(err)) if is_corruption(&err) => {
                let warnings = self.store.rebuild_corrupt(&err.to_string())?;
                self.warnings.extend(warnings);
                operation(self)
            }
            other => other,
        }
    }

    fn refresh_scope(
        &mut self,
        scope: &Scope<'_>,
        progress: ProgressFn<'_>,
        stop: &(dyn Fn() -> bool + Sync),
    ) -> Result<RefreshReport, CkgError> {
        let started = Instant::now();
        let checked_ns = now_ns();
        let (entries, gone, symlinks) = match scope {
            Scope::All => {
                let walked = walk::walk(&self.root);
                (walked.entries, Vec::new(), Some(walked.symlinks))
            }
            Scope::Files(paths) => {
                let (entries, gone) = stat_files(&self.root, paths);
                (entries, gone, None)
            }
        };
        let plan = self.plan(&entries, &gone, symlinks, matches!(scope, Scope::All))?;
        let mut report = RefreshReport::default();
        if plan.is_empty() {
            report.millis = elapsed_ms(started);
            return Ok(report);
        }
        // A refresh after a file tool's write must not hold up the write for long: if another
        // indexer is busy, the refresh before the next query catches up.
        let _lock = match scope {
            Scope::All => self.store.lock()?,
            Scope::Files(_) => self.store.lock_for(FILE_REFRESH_LOCK_WAIT)?,
        };
        // Another indexer may have done some of the work while we waited.
        let plan = self.plan(&entries, &gone, symlinks, matches!(scope, Scope::All))?;
        let limits = self.limits();
        let total = plan.jobs.len();
        let root = self.root.clone();
        let tx = self.store.conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        {
            let writer = Writer::new(&tx);
            for id in &plan.removed {
                writer.remove_file(*id)?;
            }
            report.removed = plan.removed.len();
            let mut done = 0;
            build::run(&root, plan.jobs, limits, stop, |job, outcome| {
                write_outcome(&writer, &job, outcome, checked_ns, &mut report)?;
                done += 1;
                progress(done, total);
                Ok::<(), CkgError>(())
            })?;
            if let Some(symlinks) = plan.symlinks {
                writer.set_meta("symlinks", &symlinks.to_string())?;
            }
        }
        if stop() {
            // Dropping the transaction rolls it back: a refresh is all or nothing.
            return Err(CkgError::Cancelled);
        }
        tx.commit()?;
        report.millis = elapsed_ms(started);
        Ok(report)
    }

    /// Compares what the walk saw with what the index holds.
    fn plan(
        &self,
        entries: &[Entry],
        gone: &[Vec<u8>],
        symlinks: Option<u64>,
        whole_tree: bool,
    ) -> Result<Plan, CkgError> {
        let mut known = self.known()?;
        let mut plan = Plan::default();
        for entry in entries {
            let old = known.remove(&entry.rel);
            let fresh = old.as_ref().is_some_and(|old| {
                old.stamp == entry.stamp && old.stamp.mtime_ns.saturating_add(RACY_NS) < old.checked_ns
            });
            if !fresh {
                plan.jobs.push(Job {
                    rel: entry.rel.clone(),
                    language: entry.language,
                    stamp: entry.stamp,
                    old_hash: old.and_then(|old| old.hash),
                });
            }
        }
        if whole_tree {
            plan.removed = known.into_values().map(|old| old.id).collect();
        } else {
            plan.removed = gone.iter().filter_map(|rel| known.get(rel).map(|old| old.id)).collect();
        }
        if let Some(count) = symlinks {
            let stored: Option<String> =
                self.conn().query_row("SELECT value FROM meta WHERE key = 'symlinks'", [], |row| row.get(0)).ok();
            if stored.as_deref() != Some(count.to_string().as_str()) {
                plan.symlinks = Some(count);
            }
        }
        Ok(plan)
    }

    /// Every file the index has, by path.
    fn known(&self) -> Result<HashMap<Vec<u8>, Known>, CkgError> {
        let mut statement = self
            .conn()
            .prepare_cached("SELECT path, id, size, mtime_ns, ctime_ns, inode, checked_ns, hash, status FROM files")?;
        let rows = statement.query_map([], |row| {
            let status: String = row.get(8)?;
            let hash: Option<Vec<u8>> = row.get(7)?;
            Ok((
                row.get::<_, Vec<u8>>(0)?,
                Known {
                    id: row.get(1)?,
                    stamp: Stamp {
                        size: u64::try_from(row.get::<_, i64>(2)?).unwrap_or(0),
                        mtime_ns: row.get(3)?,
                        ctime_ns: row.get(4)?,
                        inode: u64::try_from(row.get::<_, i64>(5)?).unwrap_or(0),
                    },
                    checked_ns: row.get(6)?,
                    // Only a hash of content that was looked at lets a re-read be skipped.
                    hash: hash.filter(|_| matches!(status.as_str(), "indexed" | "partial" | "timeout")),
                },
            ))
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The limits extraction runs under.
    pub(crate) fn limits(&self) -> Limits {
        Limits {
            max_file_bytes: self.options.max_file_bytes,
            file_time: self.options.file_time,
            threads: self.options.threads,
        }
    }

    /// What the index holds.
    pub fn stats(&self) -> Result<Stats, CkgError> {
        let conn = self.conn();
        let count =
            |sql: &str| conn.query_row(sql, [], |row| row.get::<_, i64>(0)).map(|n| u64::try_from(n).unwrap_or(0));
        let mut stats = Stats {
            files: count("SELECT COUNT(*) FROM files WHERE status IN ('indexed', 'partial')")?,
            partial: count("SELECT COUNT(*) FROM files WHERE status = 'partial'")?,
            symbols: count("SELECT COUNT(*) FROM symbols")?,
            references: count("SELECT COUNT(*) FROM refs")?,
            database: self.database().display().to_string(),
            ..Stats::default()
        };
        let mut statement = conn.prepare("SELECT status, language, COUNT(*) FROM files GROUP BY status, language")?;
        let rows = statement
            .query_map([], |row| Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?, row.get::<_, i64>(2)?)))?;
        for row in rows {
            let (status, language, n) = row?;
            let n = u64::try_from(n).unwrap_or(0);
            if matches!(status.as_str(), "indexed" | "partial") {
                *stats.languages.entry(language).or_default() += n;
            } else {
                *stats.skipped.entry(status).or_default() += n;
            }
        }
        stats.symlinks = conn
            .query_row("SELECT value FROM meta WHERE key = 'symlinks'", [], |row| row.get::<_, String>(0))
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        Ok(stats)
    }

    /// The content of an indexed file, if it is still the file the index saw.
    pub(crate) fn read_source(&self, rel: &[u8]) -> Option<Vec<u8>> {
        let inode: i64 =
            self.conn().query_row("SELECT inode FROM files WHERE path = ?1", params![rel], |row| row.get(0)).ok()?;
        walk::read(&walk::absolute(&self.root, rel), u64::try_from(inode).ok()?, self.options.max_file_bytes).ok()
    }
}

/// Writes one job's outcome.
fn write_outcome(
    writer: &Writer<'_>,
    job: &Job,
    outcome: Outcome,
    checked_ns: i64,
    report: &mut RefreshReport,
) -> Result<(), CkgError> {
    let mut row = FileRow {
        path: &job.rel,
        hash: None,
        stamp: job.stamp,
        checked_ns,
        language: job.language.name(),
        status: "indexed",
    };
    match outcome {
        Outcome::Extracted { hash, extraction, language } => {
            row.hash = Some(&hash);
            row.language = language.name();
            row.status = if extraction.partial { "partial" } else { "indexed" };
            writer.put_file(&row, Some(&extraction))?;
            report.extracted += 1;
        }
        Outcome::Unchanged => {
            writer.restamp(&row)?;
            report.unchanged += 1;
        }
        Outcome::Skipped { hash, status } => {
            row.hash = hash.as_ref().map(|h| &h[..]);
            row.status = status;
            writer.put_file(&row, None)?;
            report.skipped += 1;
        }
    }
    Ok(())
}

/// Stats each of `paths` (absolute): files of a supported language below the root become
/// entries; those that are gone (or no longer regular files) are returned as such.
fn stat_files(root: &Path, paths: &[PathBuf]) -> (Vec<Entry>, Vec<Vec<u8>>) {
    let mut entries = Vec::new();
    let mut gone = Vec::new();
    for path in paths {
        let (Some(rel), Some(language)) = (walk::relative(root, path), Language::of_path(path)) else { continue };
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_file() => entries.push(Entry { rel, language, stamp: Stamp::of(&meta) }),
            _ => gone.push(rel),
        }
    }
    (entries, gone)
}

fn now_ns() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

fn elapsed_ms(since: Instant) -> u64 {
    u64::try_from(since.elapsed().as_millis()).unwrap_or(u64::MAX)
}
