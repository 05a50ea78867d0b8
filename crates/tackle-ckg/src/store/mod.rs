//! The SQLite index at `{root}/.tackle/ckg/index.db` (docs/ckg.md, "The index"): opening it,
//! checking that it is ours and sound, and rebuilding it when it is not.
//!
//! An index is rebuilt (emptied, then refilled by the next refresh) when its schema is not
//! exactly the one this version creates (an older Tackle's, or a planted one: the whole
//! `sqlite_schema` is compared, so no foreign trigger or view survives), and, with a warning,
//! when it is corrupt (SQLite says so on open or in use, or `PRAGMA quick_check` fails).
//!
//! `.tackle/` lives in the workspace, so a cloned repository could plant things there: the
//! directories must be real directories (a symlink is refused), and a database, journal or
//! lock file that is a symlink, not a regular file, or hard-linked elsewhere is removed
//! before SQLite opens anything, so no write can land outside the index directory. SQLite
//! runs in defensive mode with untrusted schema.

mod lock;
pub mod write;

use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use rusqlite::config::DbConfig;
use rusqlite::{Connection, ErrorCode, OpenFlags};

pub use lock::{IndexLock, LockError};

use crate::error::CkgError;

/// The version of the schema below and of the extraction rules in code (bump it when either
/// changes); an index of another version is rebuilt.
pub const SCHEMA_VERSION: i64 = 2;

/// The index's directory below its root.
pub const INDEX_DIR: [&str; 2] = [".tackle", "ckg"];
/// The database's file name.
pub const DB_FILE: &str = "index.db";
/// The lock file's name.
const LOCK_FILE: &str = "index.lock";

/// The schema (docs/ckg.md describes each table).
const SCHEMA: &str = "
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE files(
    id INTEGER PRIMARY KEY,
    path BLOB NOT NULL UNIQUE,
    hash BLOB,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    checked_ns INTEGER NOT NULL,
    language TEXT NOT NULL,
    status TEXT NOT NULL
);
CREATE TABLE symbols(
    id INTEGER PRIMARY KEY,
    file INTEGER NOT NULL,
    name TEXT NOT NULL,
    qualified TEXT NOT NULL,
    kind TEXT NOT NULL,
    parent TEXT,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    name_line INTEGER NOT NULL,
    start_byte INTEGER NOT NULL,
    end_byte INTEGER NOT NULL,
    signature TEXT NOT NULL,
    doc TEXT
);
CREATE INDEX symbols_name ON symbols(name);
CREATE INDEX symbols_file ON symbols(file);
CREATE TABLE refs(
    file INTEGER NOT NULL,
    from_symbol INTEGER,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    line INTEGER NOT NULL
);
CREATE INDEX refs_name ON refs(name);
CREATE INDEX refs_file ON refs(file);
CREATE VIRTUAL TABLE symbols_fts USING fts5(name, qualified, tokenize = 'trigram');
";

/// How to open an index.
#[derive(Debug, Clone, Copy)]
pub struct OpenOptions {
    /// How long to wait for another indexer.
    pub lock_wait: Duration,
    /// Run `PRAGMA quick_check` (reads the whole database; worth it once per session, not
    /// before every one-shot query, where SQLite's own corruption errors trigger a rebuild).
    pub quick_check: bool,
}

/// An open index database.
#[derive(Debug)]
pub struct Store {
    pub(crate) conn: Connection,
    dir: PathBuf,
    lock_wait: Duration,
}

/// What is wrong with an existing database.
enum Unfit {
    /// Another schema (an older Tackle, or not ours): rebuilt quietly.
    Stale,
    /// Corrupt: rebuilt with a warning.
    Corrupt(String),
}

impl Store {
    /// Opens (creating, or rebuilding, as needed) the index kept in `base/parts…`. Warnings
    /// (a corrupt index rebuilt, planted files removed) are returned for the caller to show.
    pub fn open(base: &Path, parts: &[&str], options: OpenOptions) -> Result<(Store, Vec<String>), CkgError> {
        let dir = prepare_dir(base, parts)?;
        let mut warnings = sanitize(&dir)?;
        let db = dir.join(DB_FILE);
        let mut store = Store { conn: connect(&db)?, dir, lock_wait: options.lock_wait };
        match store.check(options.quick_check) {
            Ok(true) => {}
            Ok(false) => store.create_or_rebuild(&mut warnings, None)?,
            Err(Unfit::Stale) => store.create_or_rebuild(&mut warnings, None)?,
            Err(Unfit::Corrupt(reason)) => store.create_or_rebuild(&mut warnings, Some(reason))?,
        }
        Ok((store, warnings))
    }

    /// Takes the indexer lock.
    pub fn lock(&self) -> Result<IndexLock, CkgError> {
        self.lock_for(self.lock_wait)
    }

    /// Takes the indexer lock, waiting at most `wait`.
    pub fn lock_for(&self, wait: Duration) -> Result<IndexLock, CkgError> {
        IndexLock::acquire(&self.dir.join(LOCK_FILE), wait).map_err(|err| match err {
            LockError::Busy => CkgError::Busy,
            LockError::Io(err) => CkgError::Io(err),
        })
    }

    /// The database file.
    pub fn path(&self) -> PathBuf {
        self.dir.join(DB_FILE)
    }

    /// Empties the database after SQLite reported corruption in use; returns the warning.
    pub fn rebuild_corrupt(&mut self, reason: &str) -> Result<Vec<String>, CkgError> {
        let mut warnings = Vec::new();
        self.create_or_rebuild(&mut warnings, Some(reason.to_owned()))?;
        Ok(warnings)
    }

    /// `Ok(true)`: ours and sound; `Ok(false)`: empty (new); `Err`: unfit.
    fn check(&self, quick_check: bool) -> Result<bool, Unfit> {
        let schema = read_schema(&self.conn).map_err(unfit)?;
        if schema.is_empty() {
            return Ok(false);
        }
        if schema != *expected_schema() {
            return Err(Unfit::Stale);
        }
        let version: String = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'schema_version'", [], |row| row.get(0))
            .map_err(unfit)?;
        if version != version_stamp() {
            return Err(Unfit::Stale);
        }
        if quick_check {
            let result: String = self.conn.query_row("PRAGMA quick_check(1)", [], |row| row.get(0)).map_err(unfit)?;
            if result != "ok" {
                return Err(Unfit::Corrupt(result));
            }
        }
        Ok(true)
    }

    /// Under the lock: checks again (another process may have just done it), then creates
    /// the schema in an empty database, or deletes an unfit one and starts over.
    fn create_or_rebuild(&mut self, warnings: &mut Vec<String>, corrupt: Option<String>) -> Result<(), CkgError> {
        let _lock = self.lock()?;
        let db = self.path();
        match self.check(false) {
            Ok(true) if corrupt.is_none() => return Ok(()),
            Ok(false) => return create(&self.conn),
            _ => {}
        }
        if let Some(reason) = corrupt {
            warnings.push(format!(
                "The code index {} was corrupt ({reason}); it was rebuilt from the source files.",
                db.display()
            ));
        }
        // Close before deleting, so SQLite does not write into a deleted file.
        let placeholder = Connection::open_in_memory()?;
        drop(std::mem::replace(&mut self.conn, placeholder));
        for name in [DB_FILE.to_owned(), format!("{DB_FILE}-wal"), format!("{DB_FILE}-shm")] {
            match std::fs::remove_file(self.dir.join(name)) {
                Err(err) if err.kind() != std::io::ErrorKind::NotFound => return Err(err.into()),
                _ => {}
            }
        }
        self.conn = connect(&db)?;
        create(&self.conn)
    }
}

/// Whether an SQLite error means the database is damaged (so a rebuild is the answer).
pub fn is_corruption(err: &rusqlite::Error) -> bool {
    matches!(err.sqlite_error_code(), Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase))
}

fn unfit(err: rusqlite::Error) -> Unfit {
    if is_corruption(&err) { Unfit::Corrupt(err.to_string()) } else { Unfit::Stale }
}

/// Opens the database file with Tackle's settings.
fn connect(db: &Path) -> Result<Connection, CkgError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_NO_MUTEX
        | OpenFlags::SQLITE_OPEN_NOFOLLOW;
    let conn = Connection::open_with_flags(db, flags)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_TRUSTED_SCHEMA, false)?;
    // The busy wait covers SQLite's own short locks (a checkpoint); indexers coordinate
    // through the indexer lock.
    conn.busy_timeout(Duration::from_secs(5))?;
    let pragmas = "PRAGMA synchronous = OFF; PRAGMA temp_store = MEMORY; PRAGMA cache_size = -16000;";
    // WAL is switched on by `create`, under the indexer lock: two connections switching a new
    // database at once can get SQLITE_BUSY without the busy wait (SQLite's deadlock rule).
    match conn.execute_batch(pragmas) {
        Ok(()) => Ok(conn),
        // A file that is not a database at all: hand back the connection, the check finds it.
        Err(err) if is_corruption(&err) => Ok(conn),
        Err(err) => Err(err.into()),
    }
}

/// Creates the schema in an empty database (the caller holds the indexer lock). WAL mode is
/// kept in the file, so it is set once, here.
fn create(conn: &Connection) -> Result<(), CkgError> {
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.execute_batch(&format!(
        "BEGIN IMMEDIATE; {SCHEMA} INSERT INTO meta(key, value) VALUES ('schema_version', '{}'); COMMIT;",
        version_stamp()
    ))?;
    Ok(())
}

/// The version an index is stamped with: the schema's, and the extractor's (the crate
/// version and the tags queries), so an index made by another extractor is rebuilt rather
/// than mixed with new extractions.
fn version_stamp() -> String {
    format!("{SCHEMA_VERSION}/{}", crate::language::fingerprint())
}

type SchemaRow = (String, String, String, Option<String>);

fn read_schema(conn: &Connection) -> rusqlite::Result<Vec<SchemaRow>> {
    let mut statement = conn.prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY type, name")?;
    let rows = statement.query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?)))?;
    rows.collect()
}

/// The `sqlite_schema` rows [`SCHEMA`] creates (FTS5's shadow tables included), made once in
/// memory.
fn expected_schema() -> &'static Vec<SchemaRow> {
    static EXPECTED: OnceLock<Vec<SchemaRow>> = OnceLock::new();
    EXPECTED.get_or_init(|| {
        Connection::open_in_memory()
            .and_then(|conn| conn.execute_batch(SCHEMA).and_then(|()| read_schema(&conn)))
            .unwrap_or_default()
    })
}

/// Creates `base/parts…` one level at a time, refusing a symlink at any level.
fn prepare_dir(base: &Path, parts: &[&str]) -> Result<PathBuf, CkgError> {
    let mut dir = base.to_path_buf();
    for part in parts {
        dir.push(part);
        match std::fs::symlink_metadata(&dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(CkgError::Unusable(format!(
                    "{} is not a directory (a symlink or a file); Tackle keeps its code index there and will not \
                     follow it. Remove it and try again.",
                    dir.display()
                )));
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                match std::fs::DirBuilder::new().mode(0o755).create(&dir) {
                    Err(err) if err.kind() != std::io::ErrorKind::AlreadyExists => return Err(err.into()),
                    _ => {}
                }
            }
            Err(err) => return Err(err.into()),
        }
    }
    Ok(dir)
}

/// Removes an index file that is a symlink, not a regular file, or hard-linked elsewhere,
/// so SQLite never writes through it.
fn sanitize(dir: &Path) -> Result<Vec<String>, CkgError> {
    let mut warnings = Vec::new();
    for name in [DB_FILE.to_owned(), format!("{DB_FILE}-wal"), format!("{DB_FILE}-shm"), LOCK_FILE.to_owned()] {
        let path = dir.join(&name);
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        if meta.is_file() && meta.nlink() == 1 {
            continue;
        }
        if meta.is_dir() {
            std::fs::remove_dir_all(&path)?;
        } else {
            std::fs::remove_file(&path)?;
        }
        warnings.push(format!(
            "{} was not a plain file of the code index (a symlink, hard link or directory); it was removed.",
            path.display()
        ));
    }
    Ok(warnings)
}
