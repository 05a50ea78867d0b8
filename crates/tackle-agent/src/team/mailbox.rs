//! Team mailboxes (docs/teams.md#mailboxes): one append-only JSON Lines file per member,
//! `.tackle/teams/{session}/{name}.jsonl`, one message a line.
//!
//! The files are in the workspace, where any command can write them: what is read from them
//! is data (a message's content is handed to a teammate as a message, never as settings), every
//! read is bounded (a line, the file), a line that is not a message is skipped with a warning,
//! and the directory and files are opened refusing every symlink
//! (`tackle_tools::fs::own_dir`, the task board's helper).

use std::fs::File;
use std::io::{BufRead as _, BufReader, Read as _, Seek as _, SeekFrom, Write as _};
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::time::SystemTime;

use rustix::fs::OFlags;
use serde::{Deserialize, Serialize};
use tackle_tools::fs::own_dir::{self, OwnDirError};

/// The directory of the teams, relative to the workspace root.
pub const DIR: &str = tackle_core::fs::state::TEAMS.rel;
/// The main agent's name.
pub const MAIN: &str = "main";
/// The longest name.
pub const MAX_NAME_CHARS: usize = 64;
/// The longest content of one message, in bytes.
pub const MAX_CONTENT_BYTES: usize = 100_000;
/// The longest line read; a longer one is skipped (JSON escapes make a line longer than its
/// content).
pub const MAX_LINE_BYTES: usize = 1024 * 1024;
/// The most lines skipped that one read names; the rest are counted (a file of garbage lines
/// must not become a flood of notifications).
pub const MAX_WARNINGS: usize = 5;
/// A mailbox is not written or read past this size.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// What a message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Answered with a `response`.
    Request,
    /// The answer to a request (`in_reply_to` its id).
    Response,
    /// Sent to every teammate; answered like a request, without anyone waiting.
    Broadcast,
    /// Stops the teammate that reads it.
    Shutdown,
}

/// One line of a mailbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamMessage {
    /// Unique in the team: 16 hex digits.
    pub id: String,
    /// The sender's name.
    pub from: String,
    /// The receiver's name.
    pub to: String,
    /// The text.
    pub content: String,
    /// What it is.
    #[serde(rename = "type")]
    pub kind: Kind,
    /// RFC 3339, UTC, milliseconds.
    pub timestamp: String,
    /// The request a response answers.
    #[serde(default)]
    pub in_reply_to: Option<String>,
}

impl TeamMessage {
    /// A new message with a fresh id, stamped now.
    pub fn new(from: &str, to: &str, kind: Kind, content: String, in_reply_to: Option<String>) -> TeamMessage {
        TeamMessage {
            id: tackle_core::session::new_session_id(),
            from: from.to_owned(),
            to: to.to_owned(),
            content,
            kind,
            timestamp: tackle_core::time::rfc3339_millis(SystemTime::now()),
            in_reply_to,
        }
    }
}

/// `text`, cut to [`MAX_CONTENT_BYTES`] (at a character boundary, with a note) when longer.
pub fn bounded(text: String) -> String {
    if text.len() <= MAX_CONTENT_BYTES {
        return text;
    }
    let mut end = MAX_CONTENT_BYTES - 100;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n[cut: the message was {} bytes, more than {MAX_CONTENT_BYTES}]", &text[..end], text.len())
}

/// Why a name is refused, as the model reads it; `None` for a good name. A name is a file
/// name, so this is also what keeps a mailbox inside its directory.
pub fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("A teammate's name must not be empty; use letters, digits, '_' or '-'.".to_owned());
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Some(format!("A teammate's name has at most {MAX_NAME_CHARS} characters."));
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
        return Some(format!(
            "Invalid teammate name {name:?}: use only letters, digits, '_' and '-' (at most {MAX_NAME_CHARS})."
        ));
    }
    None
}

/// A mailbox operation failed; nothing was written.
#[derive(Debug, thiserror::Error)]
pub enum MailboxError {
    #[error(
        "{0} is a symlink or not a plain directory or file; team mailboxes refuse to follow it. Remove it \
         (mailboxes live in real files under {DIR}/)."
    )]
    /// A link or special file where a mailbox path should be.
    Escaped(String),
    #[error("The mailbox {0} is full ({max} MiB); start a new session to reset the team's mailboxes.", max = MAX_FILE_BYTES / 1024 / 1024)]
    /// The mailbox file reached its size limit.
    Full(String),
    /// Reading or writing the mailbox failed.
    #[error("cannot {what} the mailbox {path}: {source}")]
    Io {
        /// What was being done (`open`, `append to`, ...).
        what: &'static str,
        /// The mailbox, relative to the workspace.
        path: String,
        /// Why it failed.
        source: std::io::Error,
    },
}

/// What one read of a mailbox found.
#[derive(Debug, Default)]
pub struct Batch {
    /// The messages, each with the offset just after its line.
    pub messages: Vec<(TeamMessage, u64)>,
    /// One warning per line skipped (not JSON, not a message, too long, a bad name), at most
    /// [`MAX_WARNINGS`] of them and then one that counts the rest.
    pub skipped: Vec<String>,
    /// The offset after the last whole line read.
    pub end: u64,
}

/// The mailboxes of one session's team.
#[derive(Debug, Clone)]
pub struct Mailboxes {
    root: PathBuf,
    /// `.tackle/teams/{session}`.
    relative: PathBuf,
}

impl Mailboxes {
    /// The mailboxes of session `session_id` in the workspace at `root` (its canonical path).
    pub fn new(root: PathBuf, session_id: &str) -> Mailboxes {
        let relative = PathBuf::from(DIR).join(tackle_core::spill::safe_file_stem(session_id));
        Mailboxes { root, relative }
    }

    /// `.tackle/teams/{session}/{name}.jsonl`, for messages.
    pub fn path(&self, name: &str) -> String {
        self.relative.join(format!("{name}.jsonl")).display().to_string()
    }

    fn dir(&self, create: bool) -> Result<Option<OwnedFd>, MailboxError> {
        own_dir::open_dir(&self.root, &self.relative, create).map_err(|err| self.error(err, None, "open"))
    }

    fn error(&self, err: OwnDirError, name: Option<&str>, what: &'static str) -> MailboxError {
        let path = name.map_or_else(|| self.relative.display().to_string(), |name| self.path(name));
        match err {
            OwnDirError::Escaped => MailboxError::Escaped(path),
            OwnDirError::Io { source, .. } => MailboxError::Io { what, path, source },
        }
    }

    /// Appends `message` to the mailbox of `message.to` as one line (one `write` to a file
    /// opened `O_APPEND`, so lines of concurrent writers do not mix).
    pub fn append(&self, message: &TeamMessage) -> Result<(), MailboxError> {
        let name = message.to.as_str();
        let mut file = self.open_append(name)?;
        let mut line = serde_json::to_vec(message).map_err(|err| MailboxError::Io {
            what: "encode a message for",
            path: self.path(name),
            source: std::io::Error::other(err.to_string()),
        })?;
        line.push(b'\n');
        let size = file.metadata().map(|m| m.len()).unwrap_or(0);
        if size + line.len() as u64 > MAX_FILE_BYTES {
            return Err(MailboxError::Full(self.path(name)));
        }
        file.write_all(&line).map_err(|source| MailboxError::Io { what: "write", path: self.path(name), source })
    }

    fn open_append(&self, name: &str) -> Result<File, MailboxError> {
        let dir = self.dir(true)?.ok_or_else(|| MailboxError::Io {
            what: "create",
            path: self.path(name),
            source: std::io::ErrorKind::NotFound.into(),
        })?;
        let flags = OFlags::WRONLY | OFlags::APPEND | OFlags::CREATE;
        let fd = own_dir::open_file(&dir, &format!("{name}.jsonl"), flags, "open")
            .map_err(|err| self.error(err, Some(name), "open"))?;
        Ok(File::from(fd))
    }

    /// Creates `name`'s mailbox (and the team's directory) if it does not exist; its size,
    /// where a new reader starts.
    pub fn create(&self, name: &str) -> Result<u64, MailboxError> {
        self.open_append(name)?.metadata().map(|m| m.len()).map_err(|source| MailboxError::Io {
            what: "read",
            path: self.path(name),
            source,
        })
    }

    fn open_read(&self, name: &str) -> Result<Option<File>, MailboxError> {
        let Some(dir) = self.dir(false)? else { return Ok(None) };
        match own_dir::open_file(&dir, &format!("{name}.jsonl"), OFlags::RDONLY, "read") {
            Ok(fd) => Ok(Some(File::from(fd))),
            Err(err) if err.is_not_found() => Ok(None),
            Err(err) => Err(self.error(err, Some(name), "read")),
        }
    }

    /// Reads `name`'s mailbox from `offset`: at most `max` messages, whole lines only (a line
    /// still being written is left for the next read), never past [`MAX_FILE_BYTES`].
    pub fn read(&self, name: &str, offset: u64, max: usize) -> Result<Batch, MailboxError> {
        let mut batch = Batch { end: offset, ..Batch::default() };
        let Some(mut file) = self.open_read(name)? else { return Ok(batch) };
        let io = |source| MailboxError::Io { what: "read", path: self.path(name), source };
        file.seek(SeekFrom::Start(offset)).map_err(io)?;
        let mut reader = BufReader::new(file.take(MAX_FILE_BYTES.saturating_sub(offset)));
        let mut line = Vec::new();
        let mut more_skipped = 0usize;
        let mut skip = |batch: &mut Batch, warning: String| {
            if batch.skipped.len() < MAX_WARNINGS {
                batch.skipped.push(warning);
            } else {
                more_skipped += 1;
            }
        };
        while batch.messages.len() < max {
            line.clear();
            let read = (&mut reader).take(MAX_LINE_BYTES as u64 + 1).read_until(b'\n', &mut line).map_err(io)?;
            if read == 0 {
                break;
            }
            let number = batch.end;
            if line.last() != Some(&b'\n') {
                if line.len() <= MAX_LINE_BYTES {
                    break; // A line still being written.
                }
                // Too long: skip to its end (a line never ended is left unread).
                let Some(rest) = skip_line(&mut reader).map_err(io)? else { break };
                batch.end += (line.len() + rest) as u64;
                let warning = format!(
                    "{}: the line at byte {number} is longer than {MAX_LINE_BYTES} bytes; skipped",
                    self.path(name)
                );
                skip(&mut batch, warning);
                continue;
            }
            batch.end += line.len() as u64;
            match parse(&line) {
                Ok(message) => batch.messages.push((message, batch.end)),
                Err(problem) => {
                    skip(&mut batch, format!("{}: the line at byte {number} {problem}; skipped", self.path(name)));
                }
            }
        }
        if more_skipped > 0 {
            batch.skipped.push(format!("{}: {more_skipped} more lines skipped", self.path(name)));
        }
        Ok(batch)
    }
}

/// Reads past the end of the current line; the bytes skipped, or `None` at the end of input
/// before a newline.
fn skip_line(reader: &mut impl std::io::BufRead) -> std::io::Result<Option<usize>> {
    let mut skipped = 0;
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(None);
        }
        if let Some(at) = buffer.iter().position(|b| *b == b'\n') {
            reader.consume(at + 1);
            return Ok(Some(skipped + at + 1));
        }
        let len = buffer.len();
        reader.consume(len);
        skipped += len;
    }
}

/// What is wrong with a mailbox line; the text follows "the line at byte N".
#[derive(Debug, thiserror::Error)]
enum LineProblem {
    #[error("is not UTF-8")]
    NotUtf8,
    #[error("is empty")]
    Empty,
    #[error("is not a message ({})", tackle_core::text::json_error(.0))]
    NotAMessage(#[source] serde_json::Error),
    #[error("holds an id that is not 16 hex digits")]
    BadId,
    /// A sender or recipient that is not a member's name (what is wrong with it).
    #[error("names a bad member ({0})")]
    BadMember(String),
    #[error("holds more than {MAX_CONTENT_BYTES} bytes of content")]
    TooLong,
}

/// One line as a message, or what is wrong with it.
fn parse(line: &[u8]) -> Result<TeamMessage, LineProblem> {
    let text = std::str::from_utf8(line).map_err(|_| LineProblem::NotUtf8)?;
    if text.trim().is_empty() {
        return Err(LineProblem::Empty);
    }
    let message: TeamMessage = serde_json::from_str(text).map_err(LineProblem::NotAMessage)?;
    // Ids are Tackle's own (16 hex digits): a forged one could carry a megabyte of text into
    // a prompt or a notification.
    let plain_id = |id: &str| id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit());
    if !plain_id(&message.id) || message.in_reply_to.as_deref().is_some_and(|id| !plain_id(id)) {
        return Err(LineProblem::BadId);
    }
    for name in [&message.from, &message.to] {
        if name != MAIN
            && let Some(problem) = name_problem(name)
        {
            return Err(LineProblem::BadMember(problem));
        }
    }
    if message.content.len() > MAX_CONTENT_BYTES {
        return Err(LineProblem::TooLong);
    }
    Ok(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mailboxes() -> (tempfile::TempDir, Mailboxes) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        (dir, Mailboxes::new(root, "s1"))
    }

    #[test]
    fn names_are_file_names_of_one_component() {
        assert_eq!(name_problem("alice-2_b"), None);
        assert_eq!(name_problem(&"a".repeat(64)), None);
        for bad in ["", "../x", "a/b", ".", "a b", "é", &"a".repeat(65)] {
            assert!(name_problem(bad).is_some(), "{bad:?}");
        }
    }

    #[test]
    fn appended_lines_read_back_and_bad_lines_are_skipped_with_a_warning() {
        let (_dir, boxes) = mailboxes();
        let first = TeamMessage::new(MAIN, "alice", Kind::Request, "hi".into(), None);
        boxes.append(&first).unwrap();
        let path = boxes.root.join(boxes.path("alice"));
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"not json\n{\"id\":\"0123456789abcdef\",\"from\":\"../etc\",\"to\":\"alice\",\"content\":\"c\",\"type\":\"request\",\"timestamp\":\"t\"}\n").unwrap();
        let second = TeamMessage::new(MAIN, "alice", Kind::Broadcast, "all".into(), None);
        boxes.append(&second).unwrap();
        file.write_all(b"{\"partial").unwrap();
        let batch = boxes.read("alice", 0, 10).unwrap();
        let read: Vec<&TeamMessage> = batch.messages.iter().map(|(m, _)| m).collect();
        assert_eq!(read, [&first, &second]);
        assert_eq!(batch.skipped.len(), 2, "{:?}", batch.skipped);
        assert!(batch.skipped[0].contains("is not a message"), "{:?}", batch.skipped);
        assert!(batch.skipped[1].contains("names a bad member"), "{:?}", batch.skipped);
        // The partial line is left for later; the next read starts after the whole lines.
        assert_eq!(batch.end, std::fs::metadata(&path).unwrap().len() - 9);
        assert_eq!(batch.messages[1].1, batch.end);
        let again = boxes.read("alice", batch.messages[0].1, 1).unwrap();
        assert_eq!(again.messages.len(), 1);
        assert_eq!(again.messages[0].0, second);
    }

    #[test]
    fn each_bad_line_says_what_is_wrong_with_it() {
        let problem = |line: &[u8]| parse(line).unwrap_err().to_string();
        assert_eq!(problem(b"\xff\n"), "is not UTF-8");
        assert_eq!(problem(b"  \n"), "is empty");
        assert!(problem(b"[1]\n").starts_with("is not a message ("), "{}", problem(b"[1]\n"));
        let message = |id: &str, from: &str, content: usize| {
            let line = serde_json::json!({"id": id, "from": from, "to": "alice", "content": "c".repeat(content),
                "type": "request", "timestamp": "t"});
            line.to_string().into_bytes()
        };
        assert!(parse(&message("0123456789abcdef", MAIN, 1)).is_ok());
        assert_eq!(problem(&message("0123", MAIN, 1)), "holds an id that is not 16 hex digits");
        assert!(matches!(parse(&message("0123456789abcdef", "a/b", 1)), Err(LineProblem::BadMember(_))));
        assert_eq!(
            problem(&message("0123456789abcdef", MAIN, MAX_CONTENT_BYTES + 1)),
            format!("holds more than {MAX_CONTENT_BYTES} bytes of content")
        );
    }

    #[test]
    fn forged_ids_are_skipped_and_a_file_of_garbage_makes_few_warnings() {
        let (_dir, boxes) = mailboxes();
        boxes.append(&TeamMessage::new(MAIN, "carol", Kind::Request, "real".into(), None)).unwrap();
        let path = boxes.root.join(boxes.path("carol"));
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        let line = |id: &str, reply: &str| {
            format!(
                "{{\"id\":\"{id}\",\"from\":\"main\",\"to\":\"carol\",\"content\":\"c\",\"type\":\"request\",\"timestamp\":\"t\",\"in_reply_to\":{reply}}}\n"
            )
        };
        file.write_all(line(&"a".repeat(5000), "null").as_bytes()).unwrap();
        file.write_all(line("0123456789abcdef", "\"not an id\"").as_bytes()).unwrap();
        file.write_all("garbage\n".repeat(1000).as_bytes()).unwrap();
        boxes.append(&TeamMessage::new(MAIN, "carol", Kind::Request, "after".into(), None)).unwrap();
        let batch = boxes.read("carol", 0, 10).unwrap();
        let contents: Vec<&str> = batch.messages.iter().map(|(m, _)| m.content.as_str()).collect();
        assert_eq!(contents, ["real", "after"]);
        assert_eq!(batch.skipped.len(), MAX_WARNINGS + 1, "{:?}", batch.skipped);
        assert!(batch.skipped[0].contains("16 hex digits") && batch.skipped[1].contains("16 hex digits"));
        assert!(batch.skipped[MAX_WARNINGS].ends_with("997 more lines skipped"), "{:?}", batch.skipped);
    }

    #[test]
    fn an_overlong_line_is_skipped_and_a_full_mailbox_refuses_more() {
        let (_dir, boxes) = mailboxes();
        boxes.append(&TeamMessage::new(MAIN, "bob", Kind::Request, "x".into(), None)).unwrap();
        let path = boxes.root.join(boxes.path("bob"));
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(&vec![b'a'; MAX_LINE_BYTES + 10]).unwrap();
        file.write_all(b"\n").unwrap();
        boxes.append(&TeamMessage::new(MAIN, "bob", Kind::Request, "after".into(), None)).unwrap();
        let batch = boxes.read("bob", 0, 10).unwrap();
        assert_eq!(batch.messages.len(), 2);
        assert_eq!(batch.messages[1].0.content, "after");
        assert!(batch.skipped[0].contains("longer than"), "{:?}", batch.skipped);
        file.set_len(MAX_FILE_BYTES).unwrap();
        let full = boxes.append(&TeamMessage::new(MAIN, "bob", Kind::Request, "more".into(), None)).unwrap_err();
        assert!(full.to_string().starts_with("The mailbox .tackle/teams/s1/bob.jsonl is full"), "{full}");
    }

    #[test]
    fn a_symlinked_teams_directory_or_mailbox_is_refused() {
        let (dir, boxes) = mailboxes();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".tackle")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join(".tackle/teams")).unwrap();
        let message = TeamMessage::new(MAIN, "alice", Kind::Request, "hi".into(), None);
        let err = boxes.append(&message).unwrap_err();
        assert!(matches!(err, MailboxError::Escaped(_)), "{err}");
        assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none(), "nothing was written outside");
        assert!(matches!(boxes.read("alice", 0, 1), Err(MailboxError::Escaped(_))));

        std::fs::remove_file(dir.path().join(".tackle/teams")).unwrap();
        std::fs::create_dir_all(dir.path().join(".tackle/teams/s1")).unwrap();
        let target = outside.path().join("target.jsonl");
        std::fs::write(&target, "").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join(".tackle/teams/s1/alice.jsonl")).unwrap();
        assert!(matches!(boxes.append(&message), Err(MailboxError::Escaped(_))));
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "");
    }
}
