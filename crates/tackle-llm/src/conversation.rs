//! The provider-neutral conversation: what the agent loop keeps as history and what a
//! provider answers. Each provider module translates these types to and from its wire format,
//! so the loop never sees a provider's JSON and every call is answered in both formats alike.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One message of the history (the system prompt is kept apart, as Anthropic requires).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// A user-role message: the task, tool results, notifications.
    User { parts: Vec<UserPart> },
    /// What the model said.
    Assistant(AssistantMessage),
}

impl Message {
    /// A user message with one text part.
    pub fn user_text(text: impl Into<String>) -> Self {
        Message::User { parts: vec![UserPart::Text { text: text.into() }] }
    }
}

/// One part of a user-role message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum UserPart {
    /// Text (the task, a notification, a text-format result block).
    Text { text: String },
    /// The answer to one native tool call.
    ToolResult(ToolResult),
}

/// The answer to one native tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    pub call_id: String,
    pub content: String,
    pub is_error: bool,
    /// Images the tool returned (`read_file` of a PNG): an `image` block in the Anthropic
    /// `tool_result`; on the OpenAI wire, whose tool messages carry text only, `image_url`
    /// parts of a user message after the turn's tool messages (docs/reference/providers.md#images).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageData>,
}

impl ToolResult {
    /// A result without images.
    pub fn text(call_id: impl Into<String>, content: impl Into<String>, is_error: bool) -> Self {
        ToolResult { call_id: call_id.into(), content: content.into(), is_error, images: Vec::new() }
    }
}

/// An image sent to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageData {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    /// The image's bytes, base64-encoded.
    pub data: String,
}

/// The history as a model that takes no images sees it (`vision = false`): every tool
/// result's images dropped (their text, which names them, stays). `None` when no result
/// has an image, so the history is sent as it is.
pub fn without_images(messages: &[Message]) -> Option<Vec<Message>> {
    let has_images = messages.iter().any(|message| match message {
        Message::User { parts } => {
            parts.iter().any(|part| matches!(part, UserPart::ToolResult(result) if !result.images.is_empty()))
        }
        Message::Assistant(_) => false,
    });
    has_images.then(|| {
        messages
            .iter()
            .map(|message| {
                let mut message = message.clone();
                if let Message::User { parts } = &mut message {
                    for part in parts {
                        if let UserPart::ToolResult(result) = part {
                            result.images.clear();
                        }
                    }
                }
                message
            })
            .collect()
    })
}

/// A native tool call as the model made it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NativeCall {
    /// The call id (provider-given; duplicates suffixed, missing ones generated).
    pub id: String,
    /// The tool name exactly as the model wrote it.
    pub name: String,
    /// The arguments as JSON text, exactly as assembled (may be invalid JSON; the loop answers
    /// such a call with an error and still sends the text back as the model wrote it).
    pub arguments: String,
}

impl NativeCall {
    /// The arguments as a JSON object, for providers that need one (Anthropic's `input`):
    /// `{}` when empty or unreadable.
    pub fn input_object(&self) -> Value {
        match serde_json::from_str::<Value>(&self.arguments) {
            Ok(value @ Value::Object(_)) => value,
            _ => Value::Object(serde_json::Map::new()),
        }
    }
}

/// What the model said in one turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    /// The visible text.
    pub text: String,
    /// Anthropic `thinking` / `redacted_thinking` blocks, kept verbatim (with signatures) so
    /// they can be sent back unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thinking_blocks: Vec<Value>,
    /// Native tool calls, in the order the model made them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<NativeCall>,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// It wants its tool calls answered (`tool_calls`, `tool_use`).
    ToolCalls,
    /// It finished (`stop`, `end_turn`, `stop_sequence`).
    Stop,
    /// Output cut at the token limit (`length`, `max_tokens`).
    Length,
    /// The provider refused (`content_filter`, `refusal`).
    Refused,
    /// Anthropic `pause_turn`: send the same request again with the partial message.
    PauseTurn,
    /// Anything else, as the provider spelled it.
    Other(String),
}

impl FinishReason {
    /// The provider's spelling (for trajectories).
    pub fn name(&self) -> &str {
        match self {
            FinishReason::ToolCalls => "tool_calls",
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::Refused => "refused",
            FinishReason::PauseTurn => "pause_turn",
            FinishReason::Other(other) => other,
        }
    }
}

/// Token counts of one response (or a run, summed), and the price when the provider says it.
/// `input_tokens` counts every input token, the cached ones (`cache_read`, `cache_write`)
/// included, on both wires (OpenAI's `prompt_tokens` does; Anthropic's figures are added up).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_read: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_write: Option<u64>,
    /// US dollars, as OpenRouter reports in `usage.cost`; `None` when no response said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
}

/// The sum of two optional figures: absent only when neither response reported it.
fn sum_reported<T: std::ops::Add<Output = T> + Default>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or_default() + b.unwrap_or_default()),
    }
}

impl Usage {
    /// Adds another response's usage.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read = sum_reported(self.cache_read, other.cache_read);
        self.cache_write = sum_reported(self.cache_write, other.cache_write);
        self.cost = sum_reported(self.cost, other.cost);
    }

    /// Input (cached input included) plus output tokens: what `--max-tokens` counts.
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
}

/// A complete answer of the model to one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Completion {
    /// The assistant message (text, thinking blocks, complete calls).
    pub message: AssistantMessage,
    /// Reasoning text shown to the person but never sent back (OpenAI-compatible
    /// `reasoning_content`, Anthropic thinking text).
    pub thinking: String,
    /// Calls that were cut off by the output limit before they were complete (dropped,
    /// docs/reference/providers.md#truncated-replies).
    pub incomplete_calls: usize,
    pub finish: FinishReason,
    pub usage: Usage,
}

/// One request: the system prompt, the history and the pre-rendered tool definitions (see
/// [`crate::LlmClient::render_tools`]).
#[derive(Debug, Clone, Copy)]
pub struct ChatRequest<'a> {
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [Value],
}

/// What a client reports while a request runs.
#[derive(Debug, Clone, PartialEq)]
pub enum LlmEvent {
    /// Visible text, as it streams.
    Text(String),
    /// Reasoning text, as it streams.
    Thinking(String),
    /// An attempt failed and another follows after `delay_ms`.
    Retry { attempt: u32, error_class: crate::ErrorClass, status: Option<u16>, delay_ms: u64, message: String },
    /// A stream failed after it had started: what was shown so far is discarded and the
    /// response starts again.
    Restart,
}
