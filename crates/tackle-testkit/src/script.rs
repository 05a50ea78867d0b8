//! The script a fake server follows (docs/reference/providers.md#fake-llm-server-for-tests): turns served in order, each with an
//! optional expectation about the request, a reply, and faults. Scripts are JSON or built in
//! Rust with the small builders here.

use serde::Deserialize;
use serde_json::{Map, Value};

/// A whole script.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    pub turns: Vec<Turn>,
    /// Serve the last turn again for every request past the end (a model that never stops).
    #[serde(default)]
    pub repeat_last: bool,
}

impl Script {
    /// A script of these turns.
    pub fn new(turns: impl IntoIterator<Item = Turn>) -> Self {
        Script { turns: turns.into_iter().collect(), repeat_last: false }
    }

    /// Repeats the last turn forever.
    pub fn repeat_last(mut self) -> Self {
        self.repeat_last = true;
        self
    }

    /// Parses a JSON script.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }
}

/// One turn: what the request must look like, and what the server answers.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Turn {
    #[serde(default)]
    pub expect: Option<Expect>,
    #[serde(default)]
    pub reply: Option<Reply>,
    #[serde(default)]
    pub fault: Option<Fault>,
}

impl Turn {
    /// A turn that answers with `reply`.
    pub fn reply(reply: Reply) -> Self {
        Turn { reply: Some(reply), ..Turn::default() }
    }

    /// A turn that fails with `fault`.
    pub fn fault(fault: Fault) -> Self {
        Turn { fault: Some(fault), ..Turn::default() }
    }

    /// Adds an expectation.
    pub fn expect(mut self, expect: Expect) -> Self {
        self.expect = Some(expect);
        self
    }

    /// Adds a fault to a reply (delays, a cut or malformed stream).
    pub fn with_fault(mut self, fault: Fault) -> Self {
        self.fault = Some(fault);
        self
    }
}

/// What a request must satisfy; a request that does not gets HTTP 400 with the difference.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The text of the last user message contains this.
    pub last_user_contains: Option<String>,
    /// The last user message answers this call id.
    pub tool_result_for: Option<String>,
    /// A tool result in the last user message contains this.
    pub tool_result_contains: Option<String>,
    /// The system prompt contains this.
    pub system_contains: Option<String>,
    /// These tools are offered.
    #[serde(default)]
    pub tools_include: Vec<String>,
    /// No tools are offered (text call formats).
    #[serde(default)]
    pub no_tools: bool,
    /// The request asks for a stream (`true`) or a whole response (`false`).
    pub stream: Option<bool>,
}

impl Expect {
    /// The last user message contains `text`.
    pub fn last_user_contains(text: impl Into<String>) -> Self {
        Expect { last_user_contains: Some(text.into()), ..Expect::default() }
    }

    /// The last user message answers `id`, with a result containing `text`.
    pub fn result(id: impl Into<String>, text: impl Into<String>) -> Self {
        Expect { tool_result_for: Some(id.into()), tool_result_contains: Some(text.into()), ..Expect::default() }
    }
}

/// A tool call the fake model makes.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptCall {
    /// The id; `None` sends the call without one.
    pub id: Option<String>,
    pub name: String,
    #[serde(default = "empty_object")]
    pub args: Value,
    /// Arguments sent verbatim instead of `args` (invalid JSON, for instance).
    pub raw_args: Option<String>,
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

impl ScriptCall {
    /// The arguments as the wire carries them.
    pub fn arguments_text(&self) -> String {
        self.raw_args.clone().unwrap_or_else(|| self.args.to_string())
    }
}

/// Token counts reported for a reply.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptUsage {
    pub input: u64,
    pub output: u64,
    /// OpenRouter's `usage.cost` in US dollars (OpenAI wire only).
    #[serde(default)]
    pub cost: Option<f64>,
}

/// What the fake model says.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    #[serde(default, alias = "text_format")]
    pub text: String,
    /// Reasoning (`reasoning_content` / a thinking block).
    #[serde(default)]
    pub thinking: Option<String>,
    #[serde(default)]
    pub tool_calls: Vec<ScriptCall>,
    /// Streamed text and arguments are split into pieces of this many characters.
    #[serde(default)]
    pub chunk_chars: Option<usize>,
    /// `tool_calls`, `stop`, `length`, `content_filter` (mapped for Anthropic); default from
    /// whether there are calls.
    #[serde(default)]
    pub finish: Option<String>,
    #[serde(default)]
    pub usage: Option<ScriptUsage>,
}

impl Reply {
    /// A reply of plain text.
    pub fn text(text: impl Into<String>) -> Self {
        Reply { text: text.into(), ..Reply::default() }
    }

    /// Adds a call.
    pub fn call(mut self, id: impl Into<String>, name: impl Into<String>, args: Value) -> Self {
        self.tool_calls.push(ScriptCall { id: Some(id.into()), name: name.into(), args, raw_args: None });
        self
    }

    /// Adds a call with verbatim argument text.
    pub fn raw_call(mut self, id: impl Into<String>, name: impl Into<String>, raw: impl Into<String>) -> Self {
        self.tool_calls.push(ScriptCall {
            id: Some(id.into()),
            name: name.into(),
            args: empty_object(),
            raw_args: Some(raw.into()),
        });
        self
    }

    /// Sets the finish reason.
    pub fn finish(mut self, finish: impl Into<String>) -> Self {
        self.finish = Some(finish.into());
        self
    }

    /// Sets the chunk size.
    pub fn chunk_chars(mut self, n: usize) -> Self {
        self.chunk_chars = Some(n);
        self
    }

    /// Sets the usage.
    pub fn usage(mut self, input: u64, output: u64) -> Self {
        self.usage = Some(ScriptUsage { input, output, cost: self.usage.and_then(|u| u.cost) });
        self
    }

    /// Sets the price the OpenAI wire reports in `usage.cost` (OpenRouter style).
    pub fn cost(mut self, dollars: f64) -> Self {
        self.usage = Some(ScriptUsage { cost: Some(dollars), ..self.usage.unwrap_or_default() });
        self
    }

    /// Sets reasoning text.
    pub fn thinking(mut self, thinking: impl Into<String>) -> Self {
        self.thinking = Some(thinking.into());
        self
    }

    /// The finish reason in OpenAI's words.
    pub fn finish_reason(&self) -> &str {
        match &self.finish {
            Some(finish) => finish,
            None if self.tool_calls.is_empty() => "stop",
            None => "tool_calls",
        }
    }
}

/// A failure the server injects.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Fault {
    /// Answer with this HTTP status (and `headers`, `body`) instead of a reply.
    pub status: Option<u16>,
    #[serde(default)]
    pub headers: Map<String, Value>,
    pub body: Option<String>,
    /// Cut the connection after this many events of the reply's stream.
    pub disconnect_after_events: Option<usize>,
    /// Send a malformed `data:` line after this many events.
    pub malformed_after_events: Option<usize>,
    /// Send an error event (`event: error` / `data: {"error"}`) after this many events.
    pub error_after_events: Option<usize>,
    /// The error type of that event (default `overloaded_error`).
    pub error_type: Option<String>,
    /// Wait before the first byte.
    pub delay_first_byte_ms: Option<u64>,
    /// Wait between streamed events.
    pub delay_between_chunks_ms: Option<u64>,
}

impl Fault {
    /// An HTTP error status.
    pub fn status(status: u16) -> Self {
        Fault { status: Some(status), ..Fault::default() }
    }

    /// Adds a response header.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.insert(name.to_owned(), Value::String(value.to_owned()));
        self
    }

    /// Sets the response body.
    pub fn body(mut self, body: impl Into<String>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// Cuts the stream after `n` events.
    pub fn disconnect_after(n: usize) -> Self {
        Fault { disconnect_after_events: Some(n), ..Fault::default() }
    }

    /// A malformed line after `n` events.
    pub fn malformed_after(n: usize) -> Self {
        Fault { malformed_after_events: Some(n), ..Fault::default() }
    }

    /// An error event after `n` events.
    pub fn error_after(n: usize, error_type: &str) -> Self {
        Fault { error_after_events: Some(n), error_type: Some(error_type.to_owned()), ..Fault::default() }
    }
}
