//! The call formats a run can use (`--call-format`, formats.md): native provider tool calls,
//! or one of the text formats that work with any model.

use std::str::FromStr;

/// How tool calls travel between the model and Tackle.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum CallFormat {
    /// Provider `tool_calls` / `tool_use` blocks.
    #[default]
    Native,
    /// Fenced blocks whose langtag names the tool.
    Markdown,
    /// `<tool-use>` / `<function_calls>` blocks.
    Xml,
    /// `@NAME(CALL_ID): {json}` lines.
    Tool,
}

/// The format name was not one of the known ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown call format '{0}'; use one of: native, markdown, xml, tool")]
pub struct UnknownFormat(pub String);

impl CallFormat {
    /// Every format.
    pub const ALL: [CallFormat; 4] = [CallFormat::Native, CallFormat::Markdown, CallFormat::Xml, CallFormat::Tool];

    /// The text format of `tackle-calls`, or `None` for native calls.
    pub fn text(self) -> Option<tackle_calls::CallFormat> {
        match self {
            CallFormat::Native => None,
            CallFormat::Markdown => Some(tackle_calls::CallFormat::Markdown),
            CallFormat::Xml => Some(tackle_calls::CallFormat::Xml),
            CallFormat::Tool => Some(tackle_calls::CallFormat::Tool),
        }
    }

    /// The name on the command line and in trajectories.
    pub fn name(self) -> &'static str {
        match self {
            CallFormat::Native => "native",
            CallFormat::Markdown => "markdown",
            CallFormat::Xml => "xml",
            CallFormat::Tool => "tool",
        }
    }
}

impl FromStr for CallFormat {
    type Err = UnknownFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CallFormat::ALL.into_iter().find(|f| f.name() == s).ok_or_else(|| UnknownFormat(s.to_owned()))
    }
}

impl std::fmt::Display for CallFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
