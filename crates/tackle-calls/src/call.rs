//! What the parsers produce: code blocks (docs/reference/formats.md#fence-scanner) and calls (`{name, args, id, start, end,
//! parse_error?}`), with offsets in Unicode code points into the message, `end` exclusive.

use serde::Serialize;
use serde_json::{Map, Value};
use tackle_core::ToolCall;

/// A text tool-call format (docs/reference/formats.md; `native` is the providers' business).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TextFormat {
    /// A fenced block whose langtag names the tool.
    Markdown,
    /// `<function_calls><invoke …>` or `<tool-use><TOOL …>`.
    Xml,
    /// `@NAME(CALL_ID): {json}`.
    Tool,
}

impl TextFormat {
    /// Every text format.
    pub const ALL: [TextFormat; 3] = [TextFormat::Markdown, TextFormat::Xml, TextFormat::Tool];

    /// The name used on the command line and in configuration.
    pub fn name(self) -> &'static str {
        match self {
            TextFormat::Markdown => "markdown",
            TextFormat::Xml => "xml",
            TextFormat::Tool => "tool",
        }
    }
}

impl std::fmt::Display for TextFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A format name that is not one of the text formats.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown call format '{0}'; use markdown, xml or tool")]
pub struct UnknownTextFormat(pub String);

impl std::str::FromStr for TextFormat {
    type Err = UnknownTextFormat;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "markdown" | "md" => Ok(TextFormat::Markdown),
            "xml" => Ok(TextFormat::Xml),
            "tool" => Ok(TextFormat::Tool),
            other => Err(UnknownTextFormat(other.to_owned())),
        }
    }
}

/// A fenced code block found by the docs/reference/formats.md#fence-scanner scanner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Codeblock {
    /// The langtag: the rest of the opener line, stripped.
    pub lang: String,
    /// The lines between the fences, joined with `\n` (line endings normalised).
    pub content: String,
    /// Code-point offset of the opening fence.
    pub start: usize,
    /// Code-point offset just past the closing fence (its line terminator excluded).
    pub end: usize,
}

/// A call found in a message.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ParsedCall {
    /// The tool's wire name when the tool is loaded, else the name as written (the executor
    /// then answers "not found").
    pub name: String,
    /// The arguments as far as they could be read.
    pub args: Map<String, Value>,
    /// The call id: from the text (`@tool`, an xml `id` attribute), else `call_{step}_{n}`.
    pub id: String,
    /// Code-point offset where the call starts.
    pub start: usize,
    /// Code-point offset just past the call.
    pub end: usize,
    /// Why the call is malformed, if it is. A malformed call is still a call: the executor
    /// answers it with this message as an error, so the model learns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parse_error: Option<String>,
}

impl ParsedCall {
    /// The call for the executor: malformed when it has a parse error.
    pub fn to_tool_call(&self) -> ToolCall {
        match &self.parse_error {
            Some(error) => ToolCall::malformed(&self.id, &self.name, error),
            None => ToolCall::new(&self.id, &self.name, Value::Object(self.args.clone())),
        }
    }
}

/// The parts of a call the parsers work out before ids and offsets are given.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CallDraft {
    pub name: String,
    pub args: Map<String, Value>,
    pub id: Option<String>,
    pub errors: Vec<String>,
}

impl CallDraft {
    /// A draft with no arguments yet.
    pub fn new(name: impl Into<String>) -> Self {
        CallDraft { name: name.into(), args: Map::new(), id: None, errors: Vec::new() }
    }

    /// The joined parse error, if any.
    pub fn parse_error(&self) -> Option<String> {
        (!self.errors.is_empty()).then(|| self.errors.join("; "))
    }
}
