//! One output stream of a command, captured as it arrives with bounded memory: the first bytes
//! (head), a ring buffer of the last bytes (tail), running counts, and the full stream written
//! to a spill file once the middle would otherwise be lost (capped at 64 MiB, then dropped with
//! a note). However much a command prints, memory holds at most `head + tail` bytes per stream.
//!
//! The spill file holds the raw bytes; decoding (lossy UTF-8) and cutting happen once, at the
//! end, in [`super::render`].

use std::collections::VecDeque;
use std::io::Write as _;
use std::path::PathBuf;

use tackle_core::spill::SpillDir;

/// The largest spill file; output beyond it is dropped with a note.
pub const SPILL_CAP: u64 = 64 * 1024 * 1024;

/// The note that ends a spill file that reached [`SPILL_CAP`].
const SPILL_CAP_NOTE: &[u8] = b"\n[tackle: output beyond 64 MiB was not saved]\n";

/// Where a capture's full stream goes when it is too long to keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpillTarget {
    /// The spill directory (made beneath the workspace, never through a link).
    pub dir: SpillDir,
    /// The file's name in it.
    pub name: String,
}

impl SpillTarget {
    /// The file `name` in `dir`.
    pub fn new(dir: &SpillDir, name: impl Into<String>) -> SpillTarget {
        SpillTarget { dir: dir.clone(), name: name.into() }
    }

    /// The absolute path of the file.
    pub fn path(&self) -> PathBuf {
        self.dir.path.join(&self.name)
    }

    /// The same path relative to the workspace (named in the model's text).
    pub fn rel(&self) -> String {
        self.dir.rel_of(&self.name)
    }

    /// Creates the file, under another free name when this one is taken (then `name` is the
    /// file created).
    pub fn create(&mut self) -> std::io::Result<std::fs::File> {
        let (file, name) = tackle_core::spill::create_spill_file(&self.dir, &self.name)?;
        self.name = name;
        Ok(file)
    }
}

/// The state of a capture's spill file.
#[derive(Debug)]
enum Spill {
    /// Not needed yet (nothing has been dropped).
    NotStarted,
    /// Writing; `written` bytes so far.
    Writing { file: std::fs::File, written: u64 },
    /// Reached the cap; the rest is dropped.
    Capped,
    /// Could not be written (the reason was logged); the middle is lost.
    Failed,
}

/// One stream being captured.
#[derive(Debug)]
pub struct Capture {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    head_limit: usize,
    tail_limit: usize,
    total: u64,
    chars: u64,
    newlines: u64,
    target: Option<SpillTarget>,
    spill: Spill,
}

impl Capture {
    /// A capture that keeps `head_limit` bytes from the start and `tail_limit` from the end
    /// in memory, spilling to `target` (when given) once more arrives.
    pub fn new(head_limit: usize, tail_limit: usize, target: Option<SpillTarget>) -> Capture {
        Capture {
            head: Vec::new(),
            tail: VecDeque::new(),
            head_limit,
            tail_limit,
            total: 0,
            chars: 0,
            newlines: 0,
            target,
            spill: Spill::NotStarted,
        }
    }

    /// Sets where the stream spills, unless spilling has already begun.
    pub fn set_target(&mut self, target: SpillTarget) {
        if matches!(self.spill, Spill::NotStarted) {
            self.target = Some(target);
        }
    }

    /// Adds bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.total += bytes.len() as u64;
        self.newlines += memchr::memchr_iter(b'\n', bytes).count() as u64;
        // Characters are counted as UTF-8 lead bytes (every byte that is not a continuation);
        // the common all-ASCII chunk takes std's fast check.
        self.chars += if bytes.is_ascii() {
            bytes.len() as u64
        } else {
            bytes.iter().filter(|&&b| (b as i8) >= -0x40).count() as u64
        };
        let room = self.head_limit.saturating_sub(self.head.len()).min(bytes.len());
        self.head.extend_from_slice(&bytes[..room]);
        let rest = &bytes[room..];
        if rest.is_empty() {
            return;
        }
        if matches!(self.spill, Spill::NotStarted) && self.tail.len() + rest.len() > self.tail_limit {
            self.start_spill();
        }
        self.write_spill(rest);
        if rest.len() >= self.tail_limit {
            self.tail.clear();
            self.tail.extend(&rest[rest.len() - self.tail_limit..]);
        } else {
            let overflow = (self.tail.len() + rest.len()).saturating_sub(self.tail_limit);
            self.tail.drain(..overflow);
            self.tail.extend(rest);
        }
    }

    /// The last non-empty line captured so far (at most 200 characters of it), for a live
    /// tail of a running command.
    pub fn last_line(&self) -> Option<String> {
        const LOOK_BACK: usize = 1024;
        let recent: Vec<u8> = if self.tail.is_empty() {
            self.head[self.head.len().saturating_sub(LOOK_BACK)..].to_vec()
        } else {
            self.tail.iter().skip(self.tail.len().saturating_sub(LOOK_BACK)).copied().collect()
        };
        let text = String::from_utf8_lossy(&recent);
        let line = text.lines().map(str::trim_end).rfind(|line| !line.trim().is_empty())?;
        Some(line.chars().rev().take(200).collect::<Vec<_>>().into_iter().rev().collect())
    }

    /// Begins the spill file with what memory still holds whole (head and tail).
    fn start_spill(&mut self) {
        let Some(target) = &mut self.target else {
            self.spill = Spill::Failed;
            return;
        };
        let opened = target.create().and_then(|mut file| {
            file.write_all(&self.head)?;
            let (a, b) = self.tail.as_slices();
            file.write_all(a)?;
            file.write_all(b)?;
            Ok(file)
        });
        self.spill = match opened {
            Ok(file) => Spill::Writing { file, written: self.head.len() as u64 + self.tail.len() as u64 },
            Err(err) => {
                tracing::warn!(path = %target.path().display(), error = %err, "cannot write a spill file");
                Spill::Failed
            }
        };
    }

    fn write_spill(&mut self, bytes: &[u8]) {
        let Spill::Writing { file, written } = &mut self.spill else { return };
        let room = SPILL_CAP.saturating_sub(*written);
        let take = bytes.len().min(usize::try_from(room).unwrap_or(usize::MAX));
        let result = file.write_all(&bytes[..take]);
        *written += take as u64;
        if let Err(err) = result {
            tracing::warn!(error = %err, "cannot write a spill file");
            self.spill = Spill::Failed;
        } else if take < bytes.len() {
            let _ = file.write_all(SPILL_CAP_NOTE);
            self.spill = Spill::Capped;
        }
    }

    /// Ends the capture.
    pub fn finish(self) -> Captured {
        let whole = matches!(self.spill, Spill::NotStarted);
        let spill = match self.spill {
            Spill::Writing { .. } => self.target.map(|t| SpillState::Saved { rel: t.rel(), capped: false }),
            Spill::Capped => self.target.map(|t| SpillState::Saved { rel: t.rel(), capped: true }),
            Spill::Failed => None,
            Spill::NotStarted => self.target.map(SpillState::NotWritten),
        };
        let mut head = self.head;
        let tail: Vec<u8> = self.tail.into();
        if whole {
            head.extend_from_slice(&tail);
        }
        Captured {
            total: self.total,
            chars: self.chars,
            newlines: self.newlines,
            head,
            tail: if whole { None } else { Some(tail) },
            spill,
        }
    }
}

/// The spill file of a finished capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SpillState {
    /// The full stream (up to the cap) is in the file.
    Saved { rel: String, capped: bool },
    /// Nothing was dropped, so nothing was written; the text is written here if it is cut.
    NotWritten(SpillTarget),
}

/// A finished capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// Bytes in the stream.
    pub total: u64,
    /// Characters (UTF-8 lead bytes) in the stream.
    pub chars: u64,
    /// Newlines in the stream.
    pub newlines: u64,
    /// The whole stream when `tail` is `None`; otherwise its first bytes.
    pub head: Vec<u8>,
    /// The last bytes, when the middle was not kept in memory.
    pub tail: Option<Vec<u8>>,
    /// The spill file, if any.
    pub spill: Option<SpillState>,
}

impl Captured {
    /// The whole stream, when memory kept it.
    pub fn whole(&self) -> Option<&[u8]> {
        self.tail.is_none().then_some(self.head.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_last_line_is_the_live_tail() {
        let mut capture = Capture::new(16, 16, None);
        assert_eq!(capture.last_line(), None);
        capture.push(b"one\ntwo\n\n");
        assert_eq!(capture.last_line().as_deref(), Some("two"));
        capture.push(b"three is longer than the head\nfour");
        assert_eq!(capture.last_line().as_deref(), Some("four"));
    }

    fn target(dir: &tempfile::TempDir) -> SpillTarget {
        SpillTarget::new(&SpillDir::of(&dir.path().canonicalize().unwrap(), "s"), "c1.stdout.txt")
    }

    #[test]
    fn small_streams_stay_whole_and_write_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut capture = Capture::new(8, 8, Some(target(&dir)));
        capture.push(b"hello\n");
        capture.push("wé\n".as_bytes());
        let done = capture.finish();
        assert_eq!(done.whole(), Some("hello\nwé\n".as_bytes()));
        assert_eq!((done.total, done.chars, done.newlines), (10, 9, 2));
        assert_eq!(done.spill, Some(SpillState::NotWritten(target(&dir))));
        assert!(!target(&dir).path().exists());
    }

    #[test]
    fn long_streams_keep_head_and_tail_and_spill_everything() {
        let dir = tempfile::tempdir().unwrap();
        let mut capture = Capture::new(10, 10, Some(target(&dir)));
        let text: String = (0..100).map(|i| format!("{i:03}\n")).collect();
        for chunk in text.as_bytes().chunks(7) {
            capture.push(chunk);
        }
        let done = capture.finish();
        assert_eq!(done.head, b"000\n001\n00");
        assert_eq!(done.tail.as_deref(), Some(&b"7\n098\n099\n"[..]));
        assert_eq!(done.newlines, 100);
        assert_eq!(std::fs::read_to_string(target(&dir).path()).unwrap(), text);
        assert_eq!(done.spill, Some(SpillState::Saved { rel: target(&dir).rel(), capped: false }));
    }

    #[test]
    fn one_huge_chunk_is_handled_like_many_small_ones() {
        let dir = tempfile::tempdir().unwrap();
        let mut capture = Capture::new(4, 4, Some(target(&dir)));
        capture.push(b"0123456789abcdef");
        let done = capture.finish();
        assert_eq!((done.head.as_slice(), done.tail.as_deref()), (&b"0123"[..], Some(&b"cdef"[..])));
        assert_eq!(std::fs::read(target(&dir).path()).unwrap(), b"0123456789abcdef");
    }

    #[test]
    fn a_taken_spill_name_gets_a_numbered_twin_instead_of_overwriting_it() {
        let dir = tempfile::tempdir().unwrap();
        for text in [&b"first call's output"[..], b"second call's output"] {
            let mut capture = Capture::new(2, 2, Some(target(&dir)));
            capture.push(text);
            capture.finish();
        }
        assert_eq!(std::fs::read(target(&dir).path()).unwrap(), b"first call's output");
        let twin = dir.path().join(".tackle/outputs/s/c1-2.stdout.txt");
        assert_eq!(std::fs::read(twin).unwrap(), b"second call's output");
        let mut capture = Capture::new(2, 2, Some(target(&dir)));
        capture.push(b"third");
        let done = capture.finish();
        let rel = ".tackle/outputs/s/c1-3.stdout.txt".to_owned();
        assert_eq!(done.spill, Some(SpillState::Saved { rel, capped: false }));
    }

    #[test]
    fn without_a_target_the_middle_is_dropped() {
        let mut capture = Capture::new(2, 2, None);
        capture.push(b"abcdefgh");
        let done = capture.finish();
        assert_eq!(done.spill, None);
        assert_eq!(done.total, 8);
    }

    #[test]
    fn a_linked_spill_directory_is_refused_and_nothing_is_written_through_it() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".tackle")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join(".tackle/outputs")).unwrap();
        let mut capture = Capture::new(2, 2, Some(target(&dir)));
        capture.push(b"0123456789");
        let done = capture.finish();
        assert_eq!(done.spill, None);
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }
}
