//! A file tool's view of its session: the path policy, the read ledger, the edit history and
//! the `[tools]` write settings, behind one small API that every tool which writes files
//! uses (the file tools here, and gptme's `save` / `append` / `patch`).
//!
//! ```ignore
//! let files = Files::new(ctx);
//! let target = files.target("src/lib.rs", Access::Write)?;
//! let old = read_existing(&target)?;                 // opened beneath its root: bytes + metadata
//! // … check freshness, compute the new content …
//! files.write(&target, new_bytes, before)?;           // atomic write, history, ledger
//! ```

use std::ffi::OsStr;
use std::fs::{File, Metadata};
use std::ops::Range;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use rustix::fs::OFlags;

use tackle_core::changes;
use tackle_core::{Access, ToolContext, ToolError};
use tackle_policy::config::{Config, ConfigError};
use tackle_policy::permission::rules::{ReadRules, denial};
use tackle_policy::tools_config::ToolsConfig;
use tackle_sandbox::PathError;

use crate::fs::atomic::{Staged, WriteError, WriteOptions, open_parent, opened, remove_atomic, stage, temp_name_for};
use crate::fs::beneath::{self, Beneath, Links, OpenError, Parent};
use crate::fs::history::{Before, EditHistory};
use crate::fs::journal;
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

/// A path as the model wrote it and as the policy resolved it, resolved once per call: its
/// directory is opened beneath the root on first use and kept ([`Target::parent_dir`]), so
/// the call's reads, writes and rename go through that descriptor, not the path again.
#[derive(Clone)]
pub struct Target {
    /// As written (messages show this).
    pub raw: String,
    /// Resolved: absolute, symlinks resolved, inside a root.
    pub path: PathBuf,
    /// The root `path` lies in: every open of `path` stays beneath it ([`crate::fs::beneath`]).
    pub root: PathBuf,
    /// The directory of `path`, once opened (shared by the clones of this target).
    parent: Arc<Mutex<Option<Arc<Parent>>>>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target").field("raw", &self.raw).field("path", &self.path).field("root", &self.root).finish()
    }
}

impl PartialEq for Target {
    fn eq(&self, other: &Self) -> bool {
        (&self.raw, &self.path, &self.root) == (&other.raw, &other.path, &other.root)
    }
}

impl Eq for Target {}

impl Target {
    /// A resolved path in `root`.
    pub fn new(raw: String, path: PathBuf, root: PathBuf) -> Target {
        Target { raw, path, root, parent: Arc::default() }
    }

    /// Opens this path's root, to open the path beneath it.
    pub fn beneath(&self) -> std::io::Result<Beneath> {
        Beneath::open(&self.root)
    }

    /// The refusal of an open that would have left the root: the path policy's own message.
    pub fn escaped(&self) -> ToolError {
        PathError::Outside { shown: self.raw.clone(), root: self.root.display().to_string() }.into()
    }

    /// The directory of this path, opened beneath the root on first use and kept for the
    /// call; `None` when it does not exist, or when the path is the root itself.
    pub fn parent_dir(&self) -> Result<Option<Arc<Parent>>, OpenError> {
        self.cached_parent(|| {
            if self.path == self.root {
                return Ok(None);
            }
            match Parent::open(self.beneath()?, &self.path) {
                Ok(parent) => Ok(Some(parent)),
                Err(OpenError::Io(err)) if err.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(err) => Err(err),
            }
        })
    }

    /// [`Target::parent_dir`] for a write: missing directories are created (beneath the root).
    fn parent_for_write(&self) -> Result<Arc<Parent>, WriteError> {
        let opened = self.cached_parent(|| open_parent(&self.root, &self.path).map(Some))?;
        opened.ok_or_else(|| std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file path").into())
    }

    fn cached_parent<E>(&self, open: impl FnOnce() -> Result<Option<Parent>, E>) -> Result<Option<Arc<Parent>>, E> {
        let mut cached = self.parent.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(parent) = &*cached {
            return Ok(Some(Arc::clone(parent)));
        }
        let opened = open()?.map(Arc::new);
        if opened.is_some() {
            cached.clone_from(&opened);
        }
        Ok(opened)
    }
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

/// Why a file could not be opened or loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("the file does not exist")]
    NotFound,
    #[error("the path is a directory")]
    Directory,
    #[error("the file is {size} bytes, over the {MAX_EDIT_BYTES}-byte limit")]
    TooLarge { size: u64 },
    /// Refused with the path policy's message: the open would have left the root (a symlink
    /// swapped in after the check), or the path is a FIFO, socket or device
    /// (`{path} is not a regular file`, `Reading {path} is blocked (device path).`).
    #[error("{0}")]
    Refused(ToolError),
    #[error("{0}")]
    Io(std::io::Error),
}

impl LoadError {
    fn of_open(target: &Target, err: OpenError) -> LoadError {
        match err {
            OpenError::Escaped => LoadError::Refused(target.escaped()),
            OpenError::Io(err) if err.kind() == std::io::ErrorKind::NotFound => LoadError::NotFound,
            OpenError::Io(err) => LoadError::Io(err),
        }
    }
}

/// Opens `target` for reading, beneath its root (through its directory, [`Target::parent_dir`]),
/// and checks what was opened: a regular file is returned with its metadata; a directory,
/// FIFO, socket or device is refused before anything is read (the open does not block:
/// [`beneath::READ`]).
pub fn open_read(target: &Target) -> Result<(File, Metadata), LoadError> {
    use std::os::unix::fs::FileTypeExt as _;
    let file = File::from(open_target(target, beneath::READ)?);
    let meta = file.metadata().map_err(LoadError::Io)?;
    let kind = meta.file_type();
    if kind.is_file() {
        return Ok((file, meta));
    }
    let shown = target.raw.clone();
    Err(match () {
        () if kind.is_dir() => LoadError::Directory,
        () if kind.is_char_device() || kind.is_block_device() => {
            LoadError::Refused(PathError::DeviceRead { shown }.into())
        }
        () => LoadError::Refused(PathError::NotRegular { shown }.into()),
    })
}

/// Opens `target` with `flags`, never through a symlink: relative to its opened directory,
/// or beneath the root when the target is the root itself.
fn open_target(target: &Target, flags: OFlags) -> Result<OwnedFd, LoadError> {
    let opened = match target.parent_dir().map_err(|err| LoadError::of_open(target, err))? {
        Some(parent) => parent.open_file(flags),
        None if target.path == target.root => {
            target.beneath().map_err(LoadError::Io)?.open_at(&target.path, flags, Links::None)
        }
        None => return Err(LoadError::NotFound),
    };
    opened.map_err(|err| LoadError::of_open(target, err))
}

/// What is at `target` (its own metadata, beneath its root), or `None` when nothing is.
pub fn stat(target: &Target) -> Result<Option<Metadata>, LoadError> {
    match open_target(target, OFlags::PATH) {
        Ok(fd) => File::from(fd).metadata().map(Some).map_err(LoadError::Io),
        Err(LoadError::NotFound) => Ok(None),
        Err(other) => Err(other),
    }
}

/// Loads the file at `target` whole, for an edit (at most [`MAX_EDIT_BYTES`]), opened as
/// [`open_read`] opens it.
pub fn read_existing(target: &Target) -> Result<Existing, LoadError> {
    let (file, meta) = open_read(target)?;
    if meta.len() > MAX_EDIT_BYTES {
        return Err(LoadError::TooLarge { size: meta.len() });
    }
    let bytes = read_whole(&file, meta.len()).map_err(LoadError::Io)?;
    if bytes.len() as u64 > MAX_EDIT_BYTES {
        return Err(LoadError::TooLarge { size: bytes.len() as u64 });
    }
    Ok(Existing { meta, bytes })
}

/// Reads `file` to its end, at most one byte past [`MAX_EDIT_BYTES`] (the file may grow
/// after the `fstat` that said it is `size` bytes): in one read of the expected size and one
/// that finds the end, where a growing buffer would take several.
fn read_whole(file: &File, size: u64) -> std::io::Result<Vec<u8>> {
    let limit = usize::try_from(MAX_EDIT_BYTES + 1).unwrap_or(usize::MAX);
    let expected = usize::try_from(size).unwrap_or(limit).min(limit);
    let mut bytes = Vec::with_capacity(expected.saturating_add(1).min(limit));
    loop {
        if bytes.len() == bytes.capacity() {
            if bytes.len() >= limit {
                return Ok(bytes);
            }
            // Exact: `reserve` may double the buffer, past the limit a read then fills.
            bytes.reserve_exact((bytes.len() / 2).max(8192).min(limit - bytes.len()));
        }
        match rustix::io::read(file, rustix::buffer::spare_capacity(&mut bytes)) {
            Ok(0) => return Ok(bytes),
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => {}
            Err(errno) => return Err(errno.into()),
        }
    }
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
        Files { ctx, state: file_state(ctx), settings }
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
        target(self.ctx, raw, access)
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
        let stamp = self.put_parts(target, parts, None)?;
        self.record_edit(target, before, Some(stamp));
        Ok(stamp)
    }

    /// Writes `contents` to `target` atomically, without recording it (for multi-file
    /// operations that record their edits only once all of them succeeded). With `mode`, the
    /// file gets those permission bits (else it keeps its own).
    pub fn put(&self, target: &Target, contents: &[u8], mode: Option<u32>) -> Result<FileStamp, WriteError> {
        self.put_parts(target, &[contents], mode)
    }

    /// Writes the file `old` with its bytes in `range` replaced by `piece`, as three pieces
    /// (the new file is never built in memory), and records the edit with only the replaced
    /// span as its history ([`Before::Splice`]).
    pub fn write_splice(
        &self,
        target: &Target,
        old: &[u8],
        range: Range<usize>,
        piece: &[u8],
        mode: u32,
    ) -> Result<FileStamp, WriteError> {
        let parts = [&old[..range.start], piece, &old[range.end..]];
        let before = Before::Splice { at: range.start, removed: old[range].to_vec(), inserted: piece.len(), mode };
        self.write_parts(target, &parts, before)
    }

    /// [`Files::put`] of content given in pieces.
    pub fn put_parts(&self, target: &Target, parts: &[&[u8]], mode: Option<u32>) -> Result<FileStamp, WriteError> {
        let staged = self.stage(target, &temp_name_for(&target.path), parts, mode)?;
        self.commit(target, staged, parts)
    }

    /// Writes `parts` to the temporary file `temp` (a [`temp_name_for`] name) next to
    /// `target`, without putting it in place yet (see [`Files::commit`]).
    pub fn stage(
        &self,
        target: &Target,
        temp: &OsStr,
        parts: &[&[u8]],
        mode: Option<u32>,
    ) -> Result<Staged, WriteError> {
        stage(target.parent_for_write()?, temp, parts, self.options(), mode)
    }

    /// Puts a staged content (`parts`, for the ledger stamp) in place of `target`, after
    /// checking that its directory is still in place ([`Staged::commit`]); does not record
    /// the edit. Every write of every file tool passes here (and every removal through
    /// [`Files::delete`]), so the announcement to the session's change listeners (the code
    /// index) is never forgotten.
    pub fn commit(&self, target: &Target, staged: Staged, parts: &[&[u8]]) -> Result<FileStamp, WriteError> {
        let meta = staged.commit(self.options())?;
        changes::announce(self.ctx.state(), &target.path);
        Ok(FileStamp::of_parts(&meta, parts))
    }

    /// Removes `target`, without recording it.
    pub fn delete(&self, target: &Target) -> Result<(), WriteError> {
        let missing = || WriteError::Io(std::io::ErrorKind::NotFound.into());
        let parent = target.parent_dir().map_err(|err| opened(err, &target.path))?.ok_or_else(missing)?;
        remove_atomic(&parent, self.options())?;
        changes::announce(self.ctx.state(), &target.path);
        Ok(())
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

/// The session's file state. Creating it (the first file tool call of a session) completes
/// what a killed multi-file write left behind ([`journal::recover`]); what was done is
/// logged as a warning for the person.
///
/// The recovery runs before the state is created, not while the session state is locked to
/// create it: it resolves paths, which reads the session state (the deny rules). Two first
/// calls at once may both look for journals; each journal is claimed by one (`flock`).
pub fn file_state(ctx: &ToolContext) -> Arc<FileState> {
    if let Some(state) = ctx.state().existing::<FileState>() {
        return state;
    }
    for note in journal::recover(ctx) {
        tracing::warn!("{note}");
    }
    ctx.state().get_or_insert_with(FileState::default)
}

/// Resolves a path argument through `ctx`'s policy, with the root it lies in.
///
/// The session's `Read(...)` (for reading) or `Edit(...)` (for writing) deny rules are asked
/// again about the resolved path: the call was admitted with the path as it resolved then,
/// and a symlink swapped in since would otherwise lead the tool to a path they deny.
pub fn target(ctx: &ToolContext, raw: &str, access: Access) -> Result<Target, ToolError> {
    let path = ctx.resolve_path(raw, access)?;
    let root = ctx.paths().root_of(&path).map(std::path::Path::to_owned);
    let Some(root) = root else {
        let workspace = ctx.workspace().display().to_string();
        return Err(PathError::Outside { shown: raw.to_owned(), root: workspace }.into());
    };
    if let Some(book) = &ctx.state().get::<ReadRules>().0 {
        let rule = match access {
            Access::Read => book.read_denial(&path),
            Access::Write => book.edit_denial(&path),
        };
        if let Some(rule) = rule {
            return Err(ToolError::Denied(denial(ctx.tool_name(), Some(&path.display().to_string()), &rule)));
        }
    }
    Ok(Target::new(raw.to_owned(), path, root))
}

/// The model-facing error for a failed write of `shown` (Trae's wording for I/O errors).
pub fn write_failure(shown: &str, err: WriteError) -> ToolError {
    match err {
        WriteError::Refused(err) => err,
        WriteError::Io(err) => ToolError::Failed(format!("Ran into {err} while trying to write to {shown}")),
    }
}

/// Runs the blocking file work of a call the executor runs alone (one that is not
/// concurrency-safe: every write) in place where the runtime allows it, else as [`blocking`].
///
/// On a multi-thread runtime, in place is `block_in_place`: on the thread that entered the
/// runtime (`tools call|batch`, `tackle run`) the work simply runs there, and on a worker the
/// worker's other tasks move to another thread first. That saves the hand-off to a pool
/// thread and back, two thread wake-ups that were a sixth of a `str_replace` on a 5,000-line
/// file (docs/file-tools.md, "Speed"). No other call runs beside such a call; what else its
/// task awaits (a Ctrl-C, a timeout) is seen once the write is done, which these tools'
/// `InterruptBehavior::Block` asks for anyway, and the call never answers while its write
/// still goes on in the background.
pub async fn blocking_alone<T: Send + 'static>(
    ctx: &ToolContext,
    work: impl FnOnce(&ToolContext) -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    let multi_thread = tokio::runtime::Handle::try_current()
        .is_ok_and(|runtime| runtime.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
    if multi_thread {
        return tokio::task::block_in_place(|| work(ctx));
    }
    blocking(ctx, work).await
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
