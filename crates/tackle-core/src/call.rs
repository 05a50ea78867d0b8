//! A tool call as it arrives from any front end (a provider's native `tool_calls`, a text
//! format parsed by `tackle-calls`, MCP `tools/call`, or the command line), before the
//! executor has looked at it.

use serde_json::Value;

/// One requested tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// The id the answer must carry (provider-given or synthetic).
    pub id: String,
    /// The tool name exactly as the caller wrote it; resolution happens in the executor.
    pub name: String,
    /// The arguments, in whatever state the front end could produce them.
    pub args: CallArgs,
}

/// The arguments of a call before decoding.
#[derive(Debug, Clone, PartialEq)]
pub enum CallArgs {
    /// Already-parsed JSON (Anthropic's `input`, MCP `arguments`, a parsed text call).
    Json(Value),
    /// JSON text still to parse (OpenAI's `arguments` string, the command line).
    Text(String),
    /// The front end recognised a call but could not read its arguments; the message is
    /// returned to the model as the call's error output.
    Malformed(String),
}

impl ToolCall {
    /// A call whose arguments are already JSON.
    pub fn new(id: impl Into<String>, name: impl Into<String>, args: Value) -> Self {
        ToolCall { id: id.into(), name: name.into(), args: CallArgs::Json(args) }
    }

    /// A call whose arguments are JSON text (decoded by the executor).
    pub fn from_text(id: impl Into<String>, name: impl Into<String>, args: impl Into<String>) -> Self {
        ToolCall { id: id.into(), name: name.into(), args: CallArgs::Text(args.into()) }
    }

    /// A call whose arguments could not be parsed; `error` is what the model will read.
    pub fn malformed(id: impl Into<String>, name: impl Into<String>, error: impl Into<String>) -> Self {
        ToolCall { id: id.into(), name: name.into(), args: CallArgs::Malformed(error.into()) }
    }
}
