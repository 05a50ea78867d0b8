//! The errors of the code index, worded for whoever reads them (a model or a person): each
//! says what to do next.

/// Why an index operation or query failed.
#[derive(Debug, thiserror::Error)]
pub enum CkgError {
    /// Another process held the indexer lock for the whole wait.
    #[error("The code index is busy (another tackle is indexing); try again.")]
    Busy,
    /// The refresh was stopped (the call was cancelled); nothing was written.
    #[error("The code index refresh was cancelled; nothing was changed.")]
    Cancelled,
    /// The codebase path names nothing.
    #[error("Codebase path {0} does not exist")]
    NoSuchPath(String),
    /// The codebase path is a file.
    #[error("Codebase path {0} is not a directory")]
    NotADirectory(String),
    /// `outline` of a file no grammar reads.
    #[error("{0} is not in a supported language")]
    Unsupported(String),
    /// The index directory cannot be used (a planted symlink, say).
    #[error("{0}")]
    Unusable(String),
    /// SQLite failed.
    #[error("The code index database failed: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The file system failed.
    #[error("The code index could not be written: {0}")]
    Io(#[from] std::io::Error),
}
