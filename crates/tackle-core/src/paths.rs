//! The seam through which file tools resolve path arguments. The workspace path policy
//! (roots, symlinks, protected directories; docs/reference/safety.md#path-policy) lives in `tackle-sandbox`; core only
//! defines the question.

use std::path::{Path, PathBuf};

use crate::error::ToolError;

/// What a path will be used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// The tool only reads the path.
    Read,
    /// The tool creates, changes or removes what is at the path.
    Write,
}

/// Resolves a path as a model wrote it into an absolute path the tool may use, or refuses it
/// with a model-facing `Denied` error.
pub trait PathPolicy: Send + Sync {
    /// Resolves `raw` (relative to the workspace, or absolute) for `access`.
    fn resolve(&self, raw: &str, access: Access) -> Result<PathBuf, ToolError>;

    /// The primary workspace root.
    fn workspace(&self) -> &Path;

    /// The root holding `resolved` (a path this policy resolved), which opens of it must not
    /// leave. The default knows only the workspace.
    fn root_of(&self, resolved: &Path) -> Option<&Path> {
        resolved.starts_with(self.workspace()).then(|| self.workspace())
    }
}

/// The policy of a session built without one: it refuses every path, so a tool that needs
/// paths cannot silently run unconfined.
#[derive(Debug, Clone)]
pub struct NoPaths {
    workspace: PathBuf,
}

impl NoPaths {
    /// A policy that refuses all paths.
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        NoPaths { workspace: workspace.into() }
    }
}

impl PathPolicy for NoPaths {
    fn resolve(&self, raw: &str, _access: Access) -> Result<PathBuf, ToolError> {
        Err(ToolError::Internal(format!("no path policy is configured for this session (path {raw})")))
    }

    fn workspace(&self) -> &Path {
        &self.workspace
    }
}
