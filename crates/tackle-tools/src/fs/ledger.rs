//! The read ledger (docs/reference/tools.md#session-state): for each file, the `(size, mtime_ns, content hash)` this
//! session last saw, so that an edit can tell whether the file changed on disk since the
//! model viewed it, and `write_file` / `edit_file` can insist on a read first.
//!
//! A file is *changed on disk* only when its size or mtime differs **and** its content hash
//! differs too, so a bare `touch` (or a formatter that rewrites identical bytes) does not
//! force a re-read. The hash is only computed when the cheap stat comparison fails.

use std::collections::HashMap;
use std::fs::Metadata;
use std::hash::{BuildHasher as _, Hasher as _};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Bytes hashed per block; streaming and whole-buffer hashing feed the same blocks, so a
/// file hashed while streamed and one hashed from memory agree.
const HASH_BLOCK: usize = 64 * 1024;

/// The fixed-seed hasher (the hash only has to detect changes, not resist attackers: the
/// attacker would be the one editing the file anyway).
fn hasher() -> ahash::AHasher {
    ahash::RandomState::with_seeds(0x7461_636b, 0x6c65_5f6c, 0x6564_6765, 0x725f_6861).build_hasher()
}

/// The content hash of `bytes`.
pub fn content_hash(bytes: &[u8]) -> u64 {
    let mut hasher = StreamHasher::default();
    hasher.update(bytes);
    hasher.finish()
}

/// Hashes content that arrives in pieces, with the same result as [`content_hash`].
pub struct StreamHasher {
    hasher: ahash::AHasher,
    pending: Vec<u8>,
}

impl Default for StreamHasher {
    fn default() -> Self {
        StreamHasher { hasher: hasher(), pending: Vec::new() }
    }
}

impl std::fmt::Debug for StreamHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamHasher").finish_non_exhaustive()
    }
}

impl StreamHasher {
    /// Feeds more content.
    pub fn update(&mut self, mut bytes: &[u8]) {
        if !self.pending.is_empty() {
            let take = (HASH_BLOCK - self.pending.len()).min(bytes.len());
            self.pending.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.pending.len() < HASH_BLOCK {
                return;
            }
            self.hasher.write(&self.pending);
            self.pending.clear();
        }
        let whole = bytes.len() / HASH_BLOCK * HASH_BLOCK;
        for block in bytes[..whole].chunks_exact(HASH_BLOCK) {
            self.hasher.write(block);
        }
        self.pending.extend_from_slice(&bytes[whole..]);
    }

    /// The hash of everything fed.
    pub fn finish(mut self) -> u64 {
        if !self.pending.is_empty() {
            self.hasher.write(&self.pending);
        }
        self.hasher.finish()
    }
}

/// What a session saw of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    pub size: u64,
    pub mtime_ns: i128,
    pub hash: u64,
}

impl FileStamp {
    /// The stamp of `bytes` with the file's metadata.
    pub fn new(meta: &Metadata, bytes: &[u8]) -> Self {
        FileStamp { size: meta.len(), mtime_ns: mtime_ns(meta), hash: content_hash(bytes) }
    }

    /// The stamp of content given in pieces.
    pub fn of_parts(meta: &Metadata, parts: &[&[u8]]) -> Self {
        let mut hasher = StreamHasher::default();
        parts.iter().for_each(|part| hasher.update(part));
        FileStamp { size: meta.len(), mtime_ns: mtime_ns(meta), hash: hasher.finish() }
    }

    /// Whether the file, now with `meta` and `current` content, changed since this stamp.
    /// `current` is only read (hashed) when size or mtime differ.
    pub fn changed(&self, meta: &Metadata, current: impl FnOnce() -> Option<u64>) -> bool {
        if meta.len() == self.size && mtime_ns(meta) == self.mtime_ns {
            return false;
        }
        current() != Some(self.hash)
    }
}

/// A file's modification time in nanoseconds since the epoch.
pub fn mtime_ns(meta: &Metadata) -> i128 {
    use std::os::unix::fs::MetadataExt as _;
    i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec())
}

/// Whether an edit may go ahead, as far as the ledger knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// The session never read the file.
    NotRead,
    /// The file is as the session last saw it.
    Fresh,
    /// The file changed on disk since the session last saw it.
    Changed,
}

/// The read ledger of one session.
#[derive(Debug, Default)]
pub struct ReadLedger {
    seen: Mutex<HashMap<PathBuf, FileStamp>>,
}

impl ReadLedger {
    /// Records what the session saw of `path` (a view, a read, or its own write).
    pub fn record(&self, path: &Path, stamp: FileStamp) {
        self.lock().insert(path.to_owned(), stamp);
    }

    /// Forgets `path` (after the session deleted it).
    pub fn forget(&self, path: &Path) {
        self.lock().remove(path);
    }

    /// The stamp last recorded for `path`.
    pub fn get(&self, path: &Path) -> Option<FileStamp> {
        self.lock().get(path).copied()
    }

    /// Compares the file on disk (`meta`, and `bytes` if the stat differs) with the ledger.
    pub fn freshness(&self, path: &Path, meta: &Metadata, bytes: &[u8]) -> Freshness {
        match self.get(path) {
            None => Freshness::NotRead,
            Some(stamp) if stamp.changed(meta, || Some(content_hash(bytes))) => Freshness::Changed,
            Some(_) => Freshness::Fresh,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, FileStamp>> {
        self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streamed_and_whole_hashes_agree_and_differ_by_content() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let mut streamed = StreamHasher::default();
        for piece in data.chunks(7_777) {
            streamed.update(piece);
        }
        assert_eq!(streamed.finish(), content_hash(&data));
        assert_ne!(content_hash(b"a"), content_hash(b"b"));
        assert_ne!(content_hash(b""), content_hash(b"\0"));
    }

    #[test]
    fn touch_alone_is_not_a_change_but_new_content_is() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        std::fs::write(&path, "one").unwrap();
        let meta = std::fs::metadata(&path).unwrap();
        let ledger = ReadLedger::default();
        assert_eq!(ledger.freshness(&path, &meta, b"one"), Freshness::NotRead);
        ledger.record(&path, FileStamp::new(&meta, b"one"));
        assert_eq!(ledger.freshness(&path, &meta, b"one"), Freshness::Fresh);

        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(5)).unwrap();
        let touched = std::fs::metadata(&path).unwrap();
        assert_eq!(ledger.freshness(&path, &touched, b"one"), Freshness::Fresh);

        std::fs::write(&path, "two").unwrap();
        let changed = std::fs::metadata(&path).unwrap();
        assert_eq!(ledger.freshness(&path, &changed, b"two"), Freshness::Changed);
        ledger.forget(&path);
        assert_eq!(ledger.get(&path), None);
    }
}
