//! Writing a refresh's results: the rows of one file at a time, inside the one transaction
//! of the whole refresh (docs/ckg.md: a build or refresh is one transaction; Trae's commit
//! per row made indexing `_pytest` take 42 s).

use rusqlite::{Transaction, params};

use crate::extract::Extraction;
use crate::walk::Stamp;

/// A file's row, as a refresh leaves it.
#[derive(Debug, Clone)]
pub struct FileRow<'a> {
    pub path: &'a [u8],
    pub hash: Option<&'a [u8]>,
    pub stamp: Stamp,
    /// When the stamp was taken (ns since the epoch), for the racy-change check.
    pub checked_ns: i64,
    pub language: &'a str,
    /// `indexed`, `partial`, `too_large`, `binary`, `timeout` or `unreadable`.
    pub status: &'a str,
}

/// Writes rows within a transaction.
pub struct Writer<'t> {
    tx: &'t Transaction<'t>,
}

impl<'t> Writer<'t> {
    /// A writer in `tx`.
    pub fn new(tx: &'t Transaction<'t>) -> Self {
        Writer { tx }
    }

    /// The id of the file at `path`, if indexed.
    pub fn file_id(&self, path: &[u8]) -> rusqlite::Result<Option<i64>> {
        let mut statement = self.tx.prepare_cached("SELECT id FROM files WHERE path = ?1")?;
        let mut rows = statement.query(params![path])?;
        rows.next()?.map(|row| row.get(0)).transpose()
    }

    /// Removes a file and everything extracted from it.
    pub fn remove_file(&self, id: i64) -> rusqlite::Result<()> {
        self.clear_file(id)?;
        self.tx.prepare_cached("DELETE FROM files WHERE id = ?1")?.execute(params![id])?;
        Ok(())
    }

    /// Removes what was extracted from a file, keeping its row.
    fn clear_file(&self, id: i64) -> rusqlite::Result<()> {
        self.tx
            .prepare_cached("DELETE FROM symbols_fts WHERE rowid IN (SELECT id FROM symbols WHERE file = ?1)")?
            .execute(params![id])?;
        self.tx.prepare_cached("DELETE FROM symbols WHERE file = ?1")?.execute(params![id])?;
        self.tx.prepare_cached("DELETE FROM refs WHERE file = ?1")?.execute(params![id])?;
        Ok(())
    }

    /// Updates only the stamp of a file whose content did not change.
    pub fn restamp(&self, row: &FileRow<'_>) -> rusqlite::Result<()> {
        self.tx
            .prepare_cached(
                "UPDATE files SET size = ?2, mtime_ns = ?3, ctime_ns = ?4, inode = ?5, checked_ns = ?6 WHERE path = ?1",
            )?
            .execute(params![
                row.path,
                to_i64(row.stamp.size),
                row.stamp.mtime_ns,
                row.stamp.ctime_ns,
                to_i64(row.stamp.inode),
                row.checked_ns
            ])?;
        Ok(())
    }

    /// Replaces a file's row and everything extracted from it.
    pub fn put_file(&self, row: &FileRow<'_>, extraction: Option<&Extraction>) -> rusqlite::Result<()> {
        let id = match self.file_id(row.path)? {
            Some(id) => {
                self.clear_file(id)?;
                self.tx
                    .prepare_cached(
                        "UPDATE files SET hash = ?2, size = ?3, mtime_ns = ?4, ctime_ns = ?5, inode = ?6, \
                         checked_ns = ?7, language = ?8, status = ?9 WHERE id = ?1",
                    )?
                    .execute(params![
                        id,
                        row.hash,
                        to_i64(row.stamp.size),
                        row.stamp.mtime_ns,
                        row.stamp.ctime_ns,
                        to_i64(row.stamp.inode),
                        row.checked_ns,
                        row.language,
                        row.status
                    ])?;
                id
            }
            None => {
                self.tx
                    .prepare_cached(
                        "INSERT INTO files(path, hash, size, mtime_ns, ctime_ns, inode, checked_ns, language, status) \
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    )?
                    .execute(params![
                        row.path,
                        row.hash,
                        to_i64(row.stamp.size),
                        row.stamp.mtime_ns,
                        row.stamp.ctime_ns,
                        to_i64(row.stamp.inode),
                        row.checked_ns,
                        row.language,
                        row.status
                    ])?;
                self.tx.last_insert_rowid()
            }
        };
        if let Some(extraction) = extraction {
            self.put_extraction(id, extraction)?;
        }
        Ok(())
    }

    fn put_extraction(&self, file: i64, extraction: &Extraction) -> rusqlite::Result<()> {
        let mut symbol = self.tx.prepare_cached(
            "INSERT INTO symbols(file, name, qualified, kind, parent, start_line, end_line, name_line, start_byte, \
             end_byte, signature, doc) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
        )?;
        let mut fts = self.tx.prepare_cached("INSERT INTO symbols_fts(rowid, name, qualified) VALUES (?1, ?2, ?3)")?;
        let mut ids = Vec::with_capacity(extraction.symbols.len());
        for s in &extraction.symbols {
            symbol.execute(params![
                file,
                s.name,
                s.qualified,
                s.kind.name(),
                s.parent,
                s.start_line,
                s.end_line,
                s.name_line,
                s.start_byte,
                s.end_byte,
                s.signature,
                s.doc
            ])?;
            let id = self.tx.last_insert_rowid();
            fts.execute(params![id, s.name, s.qualified])?;
            ids.push(id);
        }
        let mut reference = self
            .tx
            .prepare_cached("INSERT INTO refs(file, from_symbol, name, kind, line) VALUES (?1, ?2, ?3, ?4, ?5)")?;
        for r in &extraction.references {
            let from = r.from.and_then(|index| ids.get(index).copied());
            reference.execute(params![file, from, r.name, r.kind.name(), r.line])?;
        }
        Ok(())
    }

    /// Sets a `meta` value.
    pub fn set_meta(&self, key: &str, value: &str) -> rusqlite::Result<()> {
        self.tx
            .prepare_cached("INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = ?2")?
            .execute(params![key, value])?;
        Ok(())
    }
}

/// SQLite integers are signed; sizes and inodes fit (or saturate harmlessly).
fn to_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}
