//! Reading a trajectory file back into its events: for `tackle replay` (`crate::replay`) and
//! for carrying a conversation on ([`super::conversation`]) and the ATIF export
//! ([`super::atif`]), so none needs another.

use std::io::BufRead;
use std::path::{Path, PathBuf};

use super::event::{Line, LineError};

/// A trajectory file that cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The file cannot be opened or read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The trajectory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line is no event of the format.
    #[error("{path} line {line}: {source}")]
    Line {
        /// The trajectory.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// What is wrong with it.
        source: LineError,
    },
}

/// Reads every line of a trajectory file (blank lines are skipped). Events of a type this
/// version does not know are kept as [`super::TrajectoryEvent::Unknown`].
pub fn read_events(path: &Path) -> Result<Vec<Line>, ReadError> {
    Ok(read_numbered(path)?.into_iter().map(|(_, line)| line).collect())
}

/// [`read_events`], each event with its 1-based line number in the file, for readers that
/// name the line of a problem they find later (the ATIF export, [`super::atif`]).
pub fn read_numbered(path: &Path) -> Result<Vec<(usize, Line)>, ReadError> {
    let file = std::fs::File::open(path).map_err(|source| ReadError::Io { path: path.to_owned(), source })?;
    let mut events = Vec::new();
    for (index, text) in std::io::BufReader::new(file).lines().enumerate() {
        let text = text.map_err(|source| ReadError::Io { path: path.to_owned(), source })?;
        if text.trim().is_empty() {
            continue;
        }
        let line =
            Line::parse(&text).map_err(|source| ReadError::Line { path: path.to_owned(), line: index + 1, source })?;
        events.push((index + 1, line));
    }
    Ok(events)
}
