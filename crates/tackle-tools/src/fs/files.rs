//! A file tool's view of its session: the path policy, the read ledger, the edit history and
//! the `[tools]` write settings, behind one small API that every tool which writes files
//! uses (the file tools here, and gptme's `save` / `append` / `patch`).
//!
//! ```ignore
//! let files = Files::new(ctx);
//! let target = files.target("src/lib.rs", Access::Write)?;
//! let old = read_existing(&target.path)?;            // bytes + metadata, if it exists
//! // … check freshness, compute the new content …
//! files.write(&target, new_bytes, before)?;           // atomic write, history, ledger
//! ```

use std::fs::Metadata;
use std::path::PathBuf;
use std::sync::Arc;

use tackle_core::config::{Config, ConfigError};
use tackle_core::tools_config::ToolsConfig;
use tackle_core::{Access, ToolContext, ToolError};

use crate::fs::atomic::{WriteError, WriteOptions, remove_atomic, write_atomic};
use crate::fs::history::{Before, EditHistory};
use crate::fs::ledger::{FileStamp, Freshness, ReadLedger};

/// The largest file the edit tools load whole (the history cap, docs/reference/tools.md#session-state).
pub const MAX_EDIT_BYTES: u64 = 64 * 1024 * 1024;

/// The file tools' settings: `[tools] durable_writes`, and whether reads must come before
/// edits (off for a one-shot `tackle tools call`, where the person typing is the reader).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FsSettings {
    /// fsync each written file before its rename, and its directory after.
    pub durable_writes: bool,
    /// Edits of a file need a read of it first, and fail if it changed since (docs/reference/tools.md#session-state).
    pub enforce_read_before_edit: bool,
}

impl Default for FsSettings {
    fn default() -> Self {
        FsSettings { durable_writes: false, enforce_read_before_edit: true }
    }
}

impl FsSettings {
    /// The settings from the merged `[tools]` section (they do not widen access).
    pub fn from_config(config: &Config) -> Result<Self, ConfigError> {
        let tools = ToolsConfig::from_config(config)?;
        Ok(FsSettings { durable_writes: tools.durable_writes, ..FsSettings::default() })
    }
}

/// The session state shared by the file tools: the read ledger and the edit history.
#[derive(Debug, Default)]
pub struct FileState {
    pub ledger: ReadLedger,
    pub history: EditHistory,
}

/// A path as the model wrote it and as the policy resolved it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// As written (messages show this).
    pub raw: String,
    /// Resolved: absolute, symlinks resolved, inside a root.
    pub path: PathBuf,
}

/// A file read whole, with its metadata.
#[derive(Debug)]
pub struct Existing {
    pub meta: Metadata,
    pub bytes: Vec<u8>,
}

impl Existing {
    /// The file's permission bits.
    pub fn mode(&self) -> u32 {
        mode_of(&self.meta)
    }

    /// What to keep in the history before changing this file (a copy of its bytes).
    pub fn before(&self) -> Before {
        Before::content(self.bytes.clone(), self.mode())
    }

    /// What to keep in the history, without copying the bytes.
    pub fn into_before(self) -> Before {
        let mode = self.mode();
        Before::content(self.bytes, mode)
    }
}

/// The permission bits of a file.
pub fn mode_of(meta: &Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    meta.permissions().mode() & 0o7777
}

/// Why a file could not be loaded for editing.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("the file does not exist")]
    NotFound,
    #[error("the path is a directory")]
    Directory,
    #[error("the file is {size} bytes, over the {MAX_EDIT_BYTES}-byte limit")]
    TooLarge { size: u64 },
    #[error("{0}")]
    Io(std::io::Error),
}

/// Loads the file at a resolved path whole, for an edit (at most [`MAX_EDIT_BYTES`]).
pub fn read_existing(path: &std::path::Path) -> Result<Existing, LoadError> {
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Err(LoadError::NotFound),
        Err(err) => return Err(LoadError::Io(err)),
    };
    if meta.is_dir() {
        return Err(LoadError::Directory);
    }
    if meta.len() > MAX_EDIT_BYTES {
        return Err(LoadError::TooLarge { size: meta.len() });
    }
    let bytes = std::fs::read(path).map_err(LoadError::Io)?;
    Ok(Existing { meta, bytes })
}

/// The file tools' handle on one call's session.
pub struct Files<'a> {
    ctx: &'a ToolContext,
    state: Arc<FileState>,
    settings: FsSettings,
}

impl std::fmt::Debug for Files<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Files").field("settings", &self.settings).finish_non_exhaustive()
    }
}

impl<'a> Files<'a> {
    /// The handle for `ctx`'s session.
    pub fn new(ctx: &'a ToolContext) -> Self {
        let settings = ctx.state().existing::<FsSettings>().map(|s| *s).unwrap_or_default();
        Files { ctx, state: ctx.state().get::<FileState>(), settings }
    }

    /// The call's context.
    pub fn ctx(&self) -> &ToolContext {
        self.ctx
    }

    /// The ledger and history.
    pub fn state(&self) -> &FileState {
        &self.state
    }

    /// Whether read-before-edit and the stale check apply (not in a one-shot `tools call`).
    pub fn enforce_reads(&self) -> bool {
        self.settings.enforce_read_before_edit
    }

    /// Resolves a path argument through the policy.
    pub fn target(&self, raw: &str, access: Access) -> Result<Target, ToolError> {
        Ok(Target { raw: raw.to_owned(), path: self.ctx.resolve_path(raw, access)? })
    }

    /// Records that the session has seen `bytes` of `target` (a view or a read).
    pub fn record_read(&self, target: &Target, meta: &Metadata, bytes: &[u8]) {
        self.state.ledger.record(&target.path, FileStamp::new(meta, bytes));
    }

    /// Records a read whose hash was computed while streaming.
    pub fn record_stamp(&self, target: &Target, stamp: FileStamp) {
        self.state.ledger.record(&target.path, stamp);
    }

    /// How the file on disk (`meta`, `bytes`) compares with what the session last saw.
    /// Always [`Freshness::Fresh`] when reads are not enforced.
    pub fn freshness(&self, target: &Target, meta: &Metadata, bytes: &[u8]) -> Freshness {
        if !self.enforce_reads() {
            return Freshness::Fresh;
        }
        self.state.ledger.freshness(&target.path, meta, bytes)
    }

    /// Writes `contents` to `target` atomically and records the edit (history and ledger).
    pub fn write(&self, target: &Target, contents: &[u8], before: Before) -> Result<FileStamp, WriteError> {
        self.write_parts(target, &[contents], before)
    }

    /// [`Files::write`] of content given in pieces (a prefix, a replacement, a suffix), so
    /// an edit of a large file does not build the new file in memory.
    pub fn write_parts(&self, target: &Target, parts: &[&[u8]], before: Before) -> Result<FileStamp, WriteError> {
        let stamp = self.put_parts(target, parts)?;
        self.record_edit(target, before, Some(stamp));
        Ok(stamp)
    }

    /// Writes `contents` to `target` atomically, without recording it (for multi-file
    /// operations that record their edits only once all of them succeeded).
    pub fn put(&self, target: &Target, contents: &[u8]) -> Result<FileStamp, WriteError> {
        self.put_parts(target, &[contents])
    }

    fn put_parts(&self, target: &Target, parts: &[&[u8]]) -> Result<FileStamp, WriteError> {
        let recheck = || self.ctx.resolve_path(&target.raw, Access::Write);
        write_atomic(&target.path, parts, self.options(), &recheck)?;
        let meta = std::fs::metadata(&target.path)?;
        Ok(FileStamp::of_parts(&meta, parts))
    }

    /// Removes `target`, without recording it.
    pub fn delete(&self, target: &Target) -> Result<(), WriteError> {
        let recheck = || self.ctx.resolve_path(&target.raw, Access::Write);
        remove_atomic(&target.path, self.options(), &recheck)
    }

    /// Records an edit: pushes the history entry and updates the ledger (`after: None` for a
    /// deletion).
    pub fn record_edit(&self, target: &Target, before: Before, after: Option<FileStamp>) {
        self.state.history.push(&target.path, before, after);
        match after {
            Some(stamp) => self.state.ledger.record(&target.path, stamp),
            None => self.state.ledger.forget(&target.path),
        }
    }

    fn options(&self) -> WriteOptions {
        WriteOptions { durable: self.settings.durable_writes }
    }
}

/// The model-facing error for a failed write of `shown` (Trae's wording for I/O errors).
pub fn write_failure(shown: &str, err: WriteError) -> ToolError {
    match err {
        WriteError::Refused(err) => err,
        WriteError::Io(err) => ToolError::Failed(format!("Ran into {err} while trying to write to {shown}")),
    }
}

/// Runs blocking file work off the async threads (the executor runs safe calls together).
pub async fn blocking<T: Send + 'static>(
    ctx: &ToolContext,
    work: impl FnOnce(&ToolContext) -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    let ctx = ctx.clone();
    tokio::task::spawn_blocking(move || work(&ctx))
        .await
        .unwrap_or_else(|err| Err(ToolError::Internal(format!("file tool task failed: {err}"))))
}
