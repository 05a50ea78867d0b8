//! The ways a tool call can fail. Every one of them becomes an `is_error` output whose text
//! tells the model what to do next; none of them ends the agent loop.

use serde::{Deserialize, Serialize};

/// A failure of one tool call, as the tool or the executor reports it.
///
/// The message is model-facing, except for [`ToolError::Internal`], whose detail goes to the
/// log while the model sees a generic sentence (so no internal state leaks into a transcript).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// The arguments are wrong in a way the model can fix.
    #[error("{0}")]
    InvalidInput(String),
    /// A permission rule, the path policy, a hook or the user refused the call. A tool
    /// returns it only before it changed anything: the executor then marks the output
    /// rejected, as a refusal at admission.
    #[error("{0}")]
    Denied(String),
    /// The tool, or something the call names (a file, a job), does not exist.
    #[error("{0}")]
    NotFound(String),
    /// The call ran out of time.
    #[error("{0}")]
    Timeout(String),
    /// The call was cancelled (Ctrl-C, an MCP `notifications/cancelled`).
    #[error("{0}")]
    Cancelled(String),
    /// The tool ran and failed.
    #[error("{0}")]
    Failed(String),
    /// A bug or an environment problem; the detail is logged, not shown.
    #[error("{0}")]
    Internal(String),
}

/// The kind of a [`ToolError`], as recorded in an output's meta.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// [`ToolError::InvalidInput`]: arguments the model can fix.
    InvalidInput,
    /// [`ToolError::Denied`]: a rule, the path policy, a hook or the user refused the call.
    Denied,
    /// [`ToolError::NotFound`]: the tool or something the call names does not exist.
    NotFound,
    /// [`ToolError::Timeout`]: the call ran out of time.
    Timeout,
    /// [`ToolError::Cancelled`]: the call was cancelled.
    Cancelled,
    /// [`ToolError::Failed`]: the tool ran and failed.
    Failed,
    /// [`ToolError::Internal`]: a bug or an environment problem.
    Internal,
}

impl ToolError {
    /// The kind of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ToolError::InvalidInput(_) => ErrorKind::InvalidInput,
            ToolError::Denied(_) => ErrorKind::Denied,
            ToolError::NotFound(_) => ErrorKind::NotFound,
            ToolError::Timeout(_) => ErrorKind::Timeout,
            ToolError::Cancelled(_) => ErrorKind::Cancelled,
            ToolError::Failed(_) => ErrorKind::Failed,
            ToolError::Internal(_) => ErrorKind::Internal,
        }
    }

    /// The message carried by this error (for `Internal`, the log-only detail).
    pub fn message(&self) -> &str {
        match self {
            ToolError::InvalidInput(m)
            | ToolError::Denied(m)
            | ToolError::NotFound(m)
            | ToolError::Timeout(m)
            | ToolError::Cancelled(m)
            | ToolError::Failed(m)
            | ToolError::Internal(m) => m,
        }
    }

    /// The text a model sees for this error raised by (or on behalf of) `tool`.
    pub fn model_text(&self, tool: &str) -> String {
        match self {
            ToolError::Internal(detail) => {
                tracing::error!(tool, detail = %detail, "internal tool error");
                internal_error_text(tool)
            }
            other => other.message().to_owned(),
        }
    }
}

/// The model-facing sentence for an internal failure (docs/reference/providers.md#rules-for-calls).
pub fn internal_error_text(tool: &str) -> String {
    format!("Tool '{tool}' failed with an internal error; details are in the log.")
}

impl From<std::io::Error> for ToolError {
    fn from(err: std::io::Error) -> Self {
        ToolError::Failed(err.to_string())
    }
}
