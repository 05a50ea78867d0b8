//! The edit history (docs/reference/tools.md#session-state): per path, a stack of what the file was before each
//! write by a file tool in this session, so `undo_edit` can put it back.
//!
//! Each path keeps at most [`MAX_ENTRIES_PER_PATH`] entries and the whole history at most
//! [`MAX_TOTAL_BYTES`]; the oldest entries go first. An entry also records the file as the
//! edit left it, so an undo can refuse when something else changed the file since. An edit
//! whose old content alone exceeds the total cap cannot be undone; rather than let an undo
//! skip it and restore an older state, that path's history is cleared.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::fs::ledger::FileStamp;

/// Entries kept per path.
pub const MAX_ENTRIES_PER_PATH: usize = 20;
/// Bytes of old content kept over all paths.
pub const MAX_TOTAL_BYTES: usize = 64 * 1024 * 1024;

/// A file before an edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Before {
    /// The edit created the file.
    Absent,
    /// The file's bytes and permission bits.
    Content { bytes: Arc<Vec<u8>>, mode: u32 },
    /// The file as the edit left it with one span put back: the `inserted` bytes at `at`
    /// replaced by `removed`. An edit of one span (`str_replace`, `insert`, `json_edit_tool`'s
    /// in-place `set`) keeps only that span, not the whole file: the history of a large file
    /// costs the size of its edits, and the buffer the file was read into is freed with the
    /// call (a buffer kept per edit was fresh memory for every read, which cost more than the
    /// edit's own reading and writing). Undoing it needs the file exactly as the edit left it,
    /// which undo checks by content hash.
    Splice { at: usize, removed: Vec<u8>, inserted: usize, mode: u32 },
}

impl Before {
    /// The content of a file before an edit (the bytes are moved, not copied).
    pub fn content(bytes: Vec<u8>, mode: u32) -> Before {
        Before::Content { bytes: Arc::new(bytes), mode }
    }
}

impl Before {
    fn size(&self) -> usize {
        match self {
            Before::Absent => 0,
            Before::Content { bytes, .. } => bytes.len(),
            Before::Splice { removed, .. } => removed.len(),
        }
    }
}

/// One recorded edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryEntry {
    /// What the file was before the edit.
    pub before: Before,
    /// What the edit left: `None` when it deleted the file.
    pub after: Option<FileStamp>,
    seq: u64,
}

#[derive(Debug, Default)]
struct Stacks {
    by_path: HashMap<PathBuf, VecDeque<HistoryEntry>>,
    total_bytes: usize,
    next_seq: u64,
}

/// The edit history of one session.
#[derive(Debug, Default)]
pub struct EditHistory {
    stacks: Mutex<Stacks>,
}

impl EditHistory {
    /// Records an edit of `path`.
    pub fn push(&self, path: &Path, before: Before, after: Option<FileStamp>) {
        let mut stacks = self.lock();
        let size = before.size();
        if size > MAX_TOTAL_BYTES {
            if let Some(dropped) = stacks.by_path.remove(path) {
                stacks.total_bytes -= dropped.iter().map(|e| e.before.size()).sum::<usize>();
            }
            return;
        }
        let seq = stacks.next_seq;
        stacks.next_seq += 1;
        stacks.total_bytes += size;
        let stack = stacks.by_path.entry(path.to_owned()).or_default();
        stack.push_back(HistoryEntry { before, after, seq });
        let mut freed = 0;
        while stack.len() > MAX_ENTRIES_PER_PATH {
            freed += stack.pop_front().map_or(0, |e| e.before.size());
        }
        stacks.total_bytes -= freed;
        while stacks.total_bytes > MAX_TOTAL_BYTES {
            let Some(oldest) = stacks
                .by_path
                .iter()
                .filter_map(|(path, stack)| stack.front().map(|e| (e.seq, path.clone())))
                .min()
                .map(|(_, path)| path)
            else {
                break;
            };
            let stack = stacks.by_path.get_mut(&oldest);
            let freed = stack.and_then(VecDeque::pop_front).map_or(0, |e| e.before.size());
            stacks.total_bytes -= freed;
            if stacks.by_path.get(&oldest).is_some_and(VecDeque::is_empty) {
                stacks.by_path.remove(&oldest);
            }
        }
    }

    /// The last edit of `path`, without removing it.
    pub fn last(&self, path: &Path) -> Option<HistoryEntry> {
        self.lock().by_path.get(path).and_then(|stack| stack.back().cloned())
    }

    /// Removes and returns the last edit of `path`.
    pub fn pop(&self, path: &Path) -> Option<HistoryEntry> {
        let mut stacks = self.lock();
        let stack = stacks.by_path.get_mut(path)?;
        let entry = stack.pop_back()?;
        if stack.is_empty() {
            stacks.by_path.remove(path);
        }
        stacks.total_bytes -= entry.before.size();
        Some(entry)
    }

    /// How many edits of `path` can be undone.
    pub fn depth(&self, path: &Path) -> usize {
        self.lock().by_path.get(path).map_or(0, VecDeque::len)
    }

    /// The bytes of old content held.
    pub fn total_bytes(&self) -> usize {
        self.lock().total_bytes
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Stacks> {
        self.stacks.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn content(text: &str) -> Before {
        Before::content(text.as_bytes().to_vec(), 0o644)
    }

    #[test]
    fn a_path_keeps_its_last_twenty_edits_in_order() {
        let history = EditHistory::default();
        let path = Path::new("/w/a.txt");
        history.push(path, Before::Absent, None);
        for i in 0..25 {
            history.push(path, content(&format!("v{i}")), None);
        }
        assert_eq!(history.depth(path), MAX_ENTRIES_PER_PATH);
        assert_eq!(history.pop(path).unwrap().before, content("v24"));
        assert_eq!(history.pop(path).unwrap().before, content("v23"));
        while history.pop(path).is_some() {}
        assert_eq!(history.total_bytes(), 0);
        assert_eq!(history.last(path), None);
    }

    #[test]
    fn the_total_cap_drops_the_oldest_entries_of_any_path() {
        let history = EditHistory::default();
        let big = |fill: u8| Before::content(vec![fill; 30 * 1024 * 1024], 0o600);
        history.push(Path::new("/w/a"), big(1), None);
        history.push(Path::new("/w/b"), big(2), None);
        history.push(Path::new("/w/a"), big(3), None);
        assert!(history.total_bytes() <= MAX_TOTAL_BYTES);
        assert_eq!(history.depth(Path::new("/w/a")), 1);
        assert_eq!(history.depth(Path::new("/w/b")), 1);
        assert_eq!(history.last(Path::new("/w/a")).unwrap().before, big(3));
    }

    #[test]
    fn an_edit_too_big_to_keep_clears_the_path_so_undo_never_skips_it() {
        let history = EditHistory::default();
        let path = Path::new("/w/huge");
        history.push(path, content("small"), None);
        history.push(path, Before::content(vec![0u8; MAX_TOTAL_BYTES + 1], 0o644), None);
        assert_eq!(history.depth(path), 0);
        assert_eq!(history.total_bytes(), 0);
    }
}
