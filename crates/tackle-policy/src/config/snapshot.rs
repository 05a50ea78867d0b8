//! The workspace's settings files, read once per Tackle session, and the hash consent is
//! bound to.
//!
//! Every setting Tackle takes from the workspace comes from this snapshot, never from a
//! second read of the file: what the hash covers is exactly what is used, and a file a
//! command changes during the session is not picked up until a later session, where its new
//! hash needs consent again (docs/configuration.md).
//!
//! A settings file is untrusted input: it is opened beneath the workspace without following
//! a link (each is one of Tackle's state paths, `tackle_core::fs::state`: a link is refused with a
//! notice), without blocking (a FIFO put in its place must not hang Tackle), must be a
//! regular file, and may hold at most [`MAX_SETTINGS_BYTES`].

use std::io::Read as _;
use std::path::Path;

use sha2::{Digest as _, Sha256};

use tackle_core::fs::state::{
    CLAUDE_LOCAL_SETTINGS, CLAUDE_SETTINGS, MCP_JSON, StateError, TABLE, TACKLE_TOML, TACKLE_TOOLS,
};

/// The workspace files that hold settings, in hashing order.
pub const SETTINGS_FILES: &[&str] = &[TACKLE_TOML.rel, MCP_JSON.rel, CLAUDE_SETTINGS.rel, CLAUDE_LOCAL_SETTINGS.rel];

/// The suffix of a tool definition file in `.tackle/tools/`.
pub const TOOL_FILE_SUFFIX: &str = ".toml";

/// The largest settings file read, in bytes.
pub const MAX_SETTINGS_BYTES: u64 = 1024 * 1024;

/// One settings file as it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SettingsFile {
    /// There is no such file.
    Absent,
    /// The file's bytes.
    Present(Vec<u8>),
    /// The file exists but cannot be used; the text says why, in one line.
    Unusable(String),
}

/// The settings files of one workspace, as read at one moment: the fixed files and the tool
/// definitions of `.tackle/tools/` (which consent covers like any setting: a changed one
/// needs consent again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingsSnapshot {
    files: Vec<(&'static str, SettingsFile)>,
    /// `.tackle/tools/*.toml` by workspace-relative path, sorted; a linked `.tackle/tools`
    /// itself is one unusable entry under its own path.
    tools: Vec<(String, SettingsFile)>,
}

impl Default for SettingsSnapshot {
    fn default() -> Self {
        SettingsSnapshot {
            files: SETTINGS_FILES.iter().map(|name| (*name, SettingsFile::Absent)).collect(),
            tools: Vec::new(),
        }
    }
}

impl SettingsSnapshot {
    /// Reads every settings file of `workspace`.
    pub fn read(workspace: &Path) -> SettingsSnapshot {
        SettingsSnapshot {
            files: SETTINGS_FILES.iter().map(|name| (*name, read_workspace_file(workspace, name))).collect(),
            tools: read_tool_files(workspace),
        }
    }

    /// This snapshot with `tools` as the tool definition files (tests, embedding).
    pub fn with_tool_files(mut self, tools: Vec<(String, SettingsFile)>) -> SettingsSnapshot {
        self.tools = tools;
        self
    }

    /// The tool definition files of `.tackle/tools/` as read (workspace-relative path, file).
    pub fn tool_files(&self) -> &[(String, SettingsFile)] {
        &self.tools
    }

    /// A snapshot of the given files (the rest absent), for tests and embedding.
    pub fn from_files(files: &[(&str, &[u8])]) -> SettingsSnapshot {
        let mut snapshot = SettingsSnapshot::default();
        for (name, bytes) in files {
            if let Some(slot) = snapshot.files.iter_mut().find(|(known, _)| known == name) {
                slot.1 = SettingsFile::Present(bytes.to_vec());
            }
        }
        snapshot
    }

    /// The file `name` (one of [`SETTINGS_FILES`]) as read.
    pub fn file(&self, name: &str) -> &SettingsFile {
        self.files.iter().find(|(known, _)| *known == name).map_or(&SettingsFile::Absent, |(_, file)| file)
    }

    /// Whether no settings file (and no tool definition) exists.
    pub fn is_empty(&self) -> bool {
        self.files.iter().all(|(_, file)| *file == SettingsFile::Absent) && self.tools.is_empty()
    }

    /// The SHA-256 of every file's name, state and bytes, in hex: what consent is bound to.
    /// Tool files count only when there are some, so a workspace without any keeps the hash
    /// it had before they were read.
    pub fn hash(&self) -> String {
        let mut hasher = Sha256::new();
        let files = self.files.iter().map(|(name, file)| (*name, file));
        for (name, file) in files.chain(self.tools.iter().map(|(name, file)| (name.as_str(), file))) {
            hasher.update(name.as_bytes());
            hasher.update([0]);
            let (state, bytes): (u8, &[u8]) = match file {
                SettingsFile::Absent => (0, &[]),
                SettingsFile::Present(bytes) => (1, bytes),
                SettingsFile::Unusable(why) => (2, why.as_bytes()),
            };
            hasher.update([state]);
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        }
        hex(&hasher.finalize())
    }

    /// The hash of each file (`name`, hex), to tell which ones changed.
    pub fn file_hashes(&self) -> Vec<(String, String)> {
        let files = self.files.iter().map(|(name, file)| (*name, file));
        files
            .chain(self.tools.iter().map(|(name, file)| (name.as_str(), file)))
            .map(|(name, file)| {
                let digest = match file {
                    SettingsFile::Absent => "absent".to_owned(),
                    SettingsFile::Present(bytes) => hex(&Sha256::digest(bytes)),
                    SettingsFile::Unusable(why) => format!("unusable: {why}"),
                };
                (name.to_owned(), digest)
            })
            .collect()
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads the settings file `name` of `workspace` beneath it, never through a link.
fn read_workspace_file(workspace: &Path, name: &str) -> SettingsFile {
    let Some(entry) = TABLE.iter().find(|entry| entry.rel == name) else {
        return SettingsFile::Unusable("not a settings file".to_owned());
    };
    match entry.open_read(workspace) {
        Ok(fd) => read_opened(std::fs::File::from(fd)),
        Err(err) if err.is_not_found() => SettingsFile::Absent,
        Err(StateError::NotPlain { .. }) => SettingsFile::Unusable("it is not a regular file".to_owned()),
        // A link is refused with a notice and the file not used, as every state path.
        Err(err) if err.is_link() => {
            err.notice();
            SettingsFile::Absent
        }
        Err(err) => SettingsFile::Unusable(format!("cannot read it: {err}")),
    }
}

/// Reads `.tackle/tools/*.toml` beneath the workspace, never through a link: a linked
/// directory or file is unusable (with a notice), and so is one too large.
fn read_tool_files(workspace: &Path) -> Vec<(String, SettingsFile)> {
    let unusable = |err: &StateError| {
        if err.is_link() || matches!(err, StateError::NotPlain { .. }) {
            err.notice();
        }
        SettingsFile::Unusable(err.to_string())
    };
    match TACKLE_TOOLS.read_files(workspace, TOOL_FILE_SUFFIX, MAX_SETTINGS_BYTES) {
        Ok(None) => Vec::new(),
        Err(err) => vec![(TACKLE_TOOLS.rel.to_owned(), unusable(&err))],
        Ok(Some(files)) => files
            .into_iter()
            .map(|(rel, read)| {
                let file = match read {
                    Ok(bytes) => SettingsFile::Present(bytes),
                    Err(err) => unusable(&err),
                };
                (rel, file)
            })
            .collect(),
    }
}

/// Reads an opened settings file within the size limit.
fn read_opened(mut file: std::fs::File) -> SettingsFile {
    let metadata = match file.metadata() {
        Ok(metadata) => metadata,
        Err(err) => return SettingsFile::Unusable(format!("cannot read it: {err}")),
    };
    if !metadata.is_file() {
        return SettingsFile::Unusable("it is not a regular file".to_owned());
    }
    if metadata.len() > MAX_SETTINGS_BYTES {
        return SettingsFile::Unusable(format!(
            "it is too large ({} bytes; the limit is {MAX_SETTINGS_BYTES})",
            metadata.len()
        ));
    }
    let mut bytes = Vec::new();
    // The file may grow after the stat: read one byte past the limit to notice.
    match (&mut file).take(MAX_SETTINGS_BYTES + 1).read_to_end(&mut bytes) {
        Ok(_) if bytes.len() as u64 > MAX_SETTINGS_BYTES => {
            SettingsFile::Unusable(format!("it is too large (over {MAX_SETTINGS_BYTES} bytes)"))
        }
        Ok(_) => SettingsFile::Present(bytes),
        Err(err) => SettingsFile::Unusable(format!("cannot read it: {err}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_read_once_and_any_change_changes_the_hash() {
        let dir = tempfile::tempdir().unwrap();
        let empty = SettingsSnapshot::read(dir.path());
        assert!(empty.is_empty());
        assert_eq!(empty, SettingsSnapshot::default());
        std::fs::write(dir.path().join("tackle.toml"), "[tools]\n").unwrap();
        let first = SettingsSnapshot::read(dir.path());
        assert_eq!(first.file("tackle.toml"), &SettingsFile::Present(b"[tools]\n".to_vec()));
        assert_ne!(first.hash(), empty.hash());
        std::fs::create_dir(dir.path().join(".claude")).unwrap();
        std::fs::write(dir.path().join(".claude/settings.local.json"), "{}").unwrap();
        let second = SettingsSnapshot::read(dir.path());
        assert_ne!(second.hash(), first.hash(), "a file that is only hashed counts too");
        assert_eq!(second.hash(), SettingsSnapshot::read(dir.path()).hash());
        let changed: Vec<String> = second
            .file_hashes()
            .iter()
            .zip(first.file_hashes())
            .filter(|(a, b)| **a != *b)
            .map(|(a, _)| a.0.clone())
            .collect();
        assert_eq!(changed, [".claude/settings.local.json"]);
        // Moving bytes between files is a change as well.
        let a = SettingsSnapshot::from_files(&[("tackle.toml", b"ab"), (".mcp.json", b"")]);
        let b = SettingsSnapshot::from_files(&[("tackle.toml", b"a"), (".mcp.json", b"b")]);
        assert_ne!(a.hash(), b.hash());
    }

    #[test]
    fn tool_files_are_hashed_when_present_and_a_linked_one_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let before = SettingsSnapshot::read(dir.path());
        std::fs::create_dir_all(dir.path().join(".tackle/tools")).unwrap();
        assert_eq!(SettingsSnapshot::read(dir.path()).hash(), before.hash(), "an empty directory changes nothing");
        std::fs::write(dir.path().join(".tackle/tools/a.toml"), "name = 'a'").unwrap();
        std::fs::write(dir.path().join(".tackle/tools/notes.txt"), "not a tool").unwrap();
        std::fs::write(outside.path().join("evil.toml"), "secret").unwrap();
        std::os::unix::fs::symlink(outside.path().join("evil.toml"), dir.path().join(".tackle/tools/b.toml")).unwrap();
        let first = SettingsSnapshot::read(dir.path());
        assert_ne!(first.hash(), before.hash());
        assert!(!first.is_empty());
        let files = first.tool_files();
        assert_eq!(files.len(), 2, "{files:?}");
        assert_eq!(files[0], (".tackle/tools/a.toml".to_owned(), SettingsFile::Present(b"name = 'a'".to_vec())));
        assert_eq!(files[1].0, ".tackle/tools/b.toml");
        assert!(matches!(&files[1].1, SettingsFile::Unusable(why) if why.contains("is a symlink")), "{files:?}");
        std::fs::write(dir.path().join(".tackle/tools/a.toml"), "name = 'b'").unwrap();
        let changed = SettingsSnapshot::read(dir.path());
        assert_ne!(changed.hash(), first.hash(), "a changed tool file needs consent again");
        let parts: Vec<String> = changed
            .file_hashes()
            .into_iter()
            .zip(first.file_hashes())
            .filter(|(a, b)| a != b)
            .map(|(a, _)| a.0)
            .collect();
        assert_eq!(parts, [".tackle/tools/a.toml"]);

        std::fs::remove_dir_all(dir.path().join(".tackle/tools")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join(".tackle/tools")).unwrap();
        let linked = SettingsSnapshot::read(dir.path());
        assert_eq!(linked.tool_files().len(), 1);
        assert!(matches!(&linked.tool_files()[0], (path, SettingsFile::Unusable(_)) if path == ".tackle/tools"));
    }

    #[test]
    fn fifos_directories_and_huge_files_are_unusable_not_fatal() {
        let dir = tempfile::tempdir().unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            dir.path().join("tackle.toml"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        std::fs::create_dir(dir.path().join(".mcp.json")).unwrap();
        std::fs::create_dir(dir.path().join(".claude")).unwrap();
        let huge = std::fs::File::create(dir.path().join(".claude/settings.json")).unwrap();
        huge.set_len(MAX_SETTINGS_BYTES + 1).unwrap();
        let snapshot = SettingsSnapshot::read(dir.path());
        assert_eq!(snapshot.file("tackle.toml"), &SettingsFile::Unusable("it is not a regular file".into()));
        assert_eq!(snapshot.file(".mcp.json"), &SettingsFile::Unusable("it is not a regular file".into()));
        assert_eq!(
            snapshot.file(".claude/settings.json"),
            &SettingsFile::Unusable("it is too large (1048577 bytes; the limit is 1048576)".into())
        );
        assert_eq!(snapshot.file(".claude/settings.local.json"), &SettingsFile::Absent);
    }

    #[test]
    fn a_linked_settings_file_is_not_read_through() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("evil.toml"), "[tools]\n").unwrap();
        std::os::unix::fs::symlink(outside.path().join("evil.toml"), dir.path().join("tackle.toml")).unwrap();
        std::os::unix::fs::symlink(outside.path(), dir.path().join(".claude")).unwrap();
        std::fs::write(outside.path().join("settings.json"), "{}").unwrap();
        let snapshot = SettingsSnapshot::read(dir.path());
        assert!(snapshot.is_empty(), "{snapshot:?}");
        std::fs::remove_file(dir.path().join("tackle.toml")).unwrap();
        std::fs::write(dir.path().join("tackle.toml"), "[tools]\n").unwrap();
        assert_eq!(
            SettingsSnapshot::read(dir.path()).file("tackle.toml"),
            &SettingsFile::Present(b"[tools]\n".to_vec())
        );
    }
}
