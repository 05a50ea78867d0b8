//! Anthropic Messages (docs/reference/providers.md#anthropic-messages): the request body (tool results first in one user
//! message, thinking blocks sent back unchanged), the non-streaming response, and the stream
//! assembler over `message_start` … `message_stop`, keyed by block `index`.

use serde_json::{Map, Value, json};

use crate::conversation::{
    AssistantMessage, ChatRequest, Completion, FinishReason, LlmEvent, Message, NativeCall, ToolResult, Usage, UserPart,
};
use crate::error::{ErrorClass, LlmError, classify_stream_error, provider_message};

/// The `anthropic-version` header value.
pub const API_VERSION: &str = "2023-06-01";

/// `max_tokens` when the configuration sets none.
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// The JSON body of `POST {base}/v1/messages`.
pub fn request_body(model: &str, request: &ChatRequest<'_>, max_tokens: u32, stream: bool) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("max_tokens".into(), json!(max_tokens));
    body.insert("stream".into(), json!(stream));
    if !request.system.is_empty() {
        body.insert("system".into(), json!(request.system));
    }
    if !request.tools.is_empty() {
        body.insert("tools".into(), Value::Array(request.tools.to_vec()));
        body.insert("tool_choice".into(), json!({"type": "auto"}));
    }
    let messages: Vec<Value> = request.messages.iter().map(wire_message).collect();
    body.insert("messages".into(), Value::Array(messages));
    Value::Object(body)
}

fn wire_message(message: &Message) -> Value {
    match message {
        Message::User { parts } => {
            if let [UserPart::Text { text }] = parts.as_slice() {
                return json!({"role": "user", "content": text});
            }
            // Tool results first, in call order; text after them.
            let results = parts.iter().filter_map(|part| match part {
                UserPart::ToolResult(result) => Some(tool_result_block(result)),
                UserPart::Text { .. } => None,
            });
            let texts = parts.iter().filter_map(|part| match part {
                UserPart::Text { text } if !text.is_empty() => Some(json!({"type": "text", "text": text})),
                _ => None,
            });
            json!({"role": "user", "content": results.chain(texts).collect::<Vec<_>>()})
        }
        Message::Assistant(assistant) => {
            let mut blocks: Vec<Value> = assistant.thinking_blocks.clone();
            if !assistant.text.is_empty() {
                blocks.push(json!({"type": "text", "text": assistant.text}));
            }
            for call in &assistant.tool_calls {
                blocks
                    .push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": call.input_object()}));
            }
            if blocks.is_empty() {
                // The API refuses an empty assistant turn.
                blocks.push(json!({"type": "text", "text": "(no reply)"}));
            }
            json!({"role": "assistant", "content": blocks})
        }
    }
}

/// A `tool_result` block: its text, and its images as `image` blocks after the text.
fn tool_result_block(result: &ToolResult) -> Value {
    let content = if result.images.is_empty() {
        json!(result.content)
    } else {
        let text = (!result.content.is_empty()).then(|| json!({"type": "text", "text": result.content}));
        let images = result.images.iter().map(|image| {
            json!({"type": "image", "source": {"type": "base64", "media_type": image.media_type, "data": image.data}})
        });
        Value::Array(text.into_iter().chain(images).collect())
    };
    json!({"type": "tool_result", "tool_use_id": result.call_id, "content": content, "is_error": result.is_error})
}

fn stop_reason(reason: &str) -> FinishReason {
    match reason {
        "tool_use" => FinishReason::ToolCalls,
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "max_tokens" | "model_context_window_exceeded" => FinishReason::Length,
        "refusal" => FinishReason::Refused,
        "pause_turn" => FinishReason::PauseTurn,
        other => FinishReason::Other(other.to_owned()),
    }
}

/// One content block being assembled.
#[derive(Debug)]
enum Block {
    Text(String),
    Tool {
        id: String,
        name: String,
        json: String,
        stopped: bool,
    },
    Thinking {
        thinking: String,
        signature: String,
    },
    /// `redacted_thinking` and any other block, kept verbatim.
    Verbatim(Value),
}

/// Assembles a streamed (or whole) Messages response.
#[derive(Debug, Default)]
pub struct StreamAssembler {
    blocks: Vec<(u64, Block)>,
    finish: Option<FinishReason>,
    usage: Usage,
    stopped: bool,
}

impl StreamAssembler {
    /// Feeds one event's `data:` payload (its `type` field names the event). Returns
    /// `Ok(true)` at `message_stop`.
    pub fn feed(&mut self, data: &str, sink: &mut (dyn FnMut(LlmEvent) + Send)) -> Result<bool, LlmError> {
        let event: Value = serde_json::from_str(data).map_err(|err| {
            let shown: String = data.chars().take(120).collect();
            LlmError::new(ErrorClass::Transport, format!("the provider sent a malformed stream event ({err}): {shown}"))
        })?;
        match event.get("type").and_then(Value::as_str).unwrap_or_default() {
            "message_start" => {
                if let Some(usage) = event.pointer("/message/usage") {
                    self.usage(usage);
                }
            }
            "content_block_start" => {
                let index = event.get("index").and_then(Value::as_u64).unwrap_or(self.blocks.len() as u64);
                let block = event.get("content_block").cloned().unwrap_or(Value::Null);
                let text = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
                let new = match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        let initial = text("text");
                        if !initial.is_empty() {
                            sink(LlmEvent::Text(initial.clone()));
                        }
                        Block::Text(initial)
                    }
                    Some("tool_use") => {
                        // `input` is `{}` when streamed; a whole input here (some gateways) counts.
                        let json = match block.get("input") {
                            Some(Value::Object(map)) if !map.is_empty() => block["input"].to_string(),
                            _ => String::new(),
                        };
                        Block::Tool { id: text("id"), name: text("name"), json, stopped: false }
                    }
                    Some("thinking") => Block::Thinking { thinking: text("thinking"), signature: text("signature") },
                    _ => Block::Verbatim(block),
                };
                self.blocks.push((index, new));
            }
            "content_block_delta" => {
                let index = event.get("index").and_then(Value::as_u64).unwrap_or(0);
                let delta = event.get("delta").cloned().unwrap_or(Value::Null);
                let field = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or_default();
                let Some(block) = self.block_mut(index) else { return Ok(false) };
                match (delta.get("type").and_then(Value::as_str).unwrap_or_default(), block) {
                    ("text_delta", Block::Text(text)) => {
                        text.push_str(field("text"));
                        sink(LlmEvent::Text(field("text").to_owned()));
                    }
                    ("input_json_delta", Block::Tool { json, .. }) => json.push_str(field("partial_json")),
                    ("thinking_delta", Block::Thinking { thinking, .. }) => {
                        thinking.push_str(field("thinking"));
                        sink(LlmEvent::Thinking(field("thinking").to_owned()));
                    }
                    ("signature_delta", Block::Thinking { signature, .. }) => signature.push_str(field("signature")),
                    _ => {}
                }
            }
            "content_block_stop" => {
                let index = event.get("index").and_then(Value::as_u64).unwrap_or(0);
                if let Some(Block::Tool { stopped, .. }) = self.block_mut(index) {
                    *stopped = true;
                }
            }
            "message_delta" => {
                if let Some(reason) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.finish = Some(stop_reason(reason));
                }
                if let Some(usage) = event.get("usage") {
                    self.usage(usage);
                }
            }
            "message_stop" => {
                self.stopped = true;
                return Ok(true);
            }
            "error" => {
                let error = event.get("error").cloned().unwrap_or(Value::Null);
                let message = provider_message(&event.to_string());
                return Err(LlmError::new(classify_stream_error(&error), message));
            }
            _ => {}
        }
        Ok(false)
    }

    fn block_mut(&mut self, index: u64) -> Option<&mut Block> {
        self.blocks.iter_mut().rev().find(|(i, _)| *i == index).map(|(_, block)| block)
    }

    /// Input tokens: the larger of `message_start` and `message_delta`; output tokens: the
    /// last (cumulative) value.
    fn usage(&mut self, usage: &Value) {
        let get = |key: &str| usage.get(key).and_then(Value::as_u64);
        if let Some(input) = get("input_tokens") {
            self.usage.input_tokens = self.usage.input_tokens.max(input);
        }
        if let Some(output) = get("output_tokens") {
            self.usage.output_tokens = output;
        }
        if let Some(read) = get("cache_read_input_tokens") {
            self.usage.cache_read = Some(read);
        }
        if let Some(write) = get("cache_creation_input_tokens") {
            self.usage.cache_write = Some(write);
        }
    }

    /// Whether the stream said it was finished (`message_stop`, or a stop reason).
    pub fn is_complete(&self) -> bool {
        self.stopped || self.finish.is_some()
    }

    /// The completion; a tool block that never stopped was cut off and is dropped.
    pub fn into_completion(self, complete: bool) -> Completion {
        let finish = self.finish.unwrap_or(if complete { FinishReason::Stop } else { FinishReason::Length });
        let mut message = AssistantMessage::default();
        let mut thinking_text = String::new();
        let mut incomplete_calls = 0;
        for (_, block) in self.blocks {
            match block {
                Block::Text(text) => message.text.push_str(&text),
                Block::Tool { id, name, json, stopped } => {
                    if !stopped && finish == FinishReason::Length {
                        incomplete_calls += 1;
                        continue;
                    }
                    let arguments = if json.trim().is_empty() { "{}".to_owned() } else { json };
                    message.tool_calls.push(NativeCall { id, name, arguments });
                }
                Block::Thinking { thinking, signature } => {
                    thinking_text.push_str(&thinking);
                    message
                        .thinking_blocks
                        .push(json!({"type": "thinking", "thinking": thinking, "signature": signature}));
                }
                Block::Verbatim(value) => {
                    if value.get("type").and_then(Value::as_str) == Some("redacted_thinking") {
                        message.thinking_blocks.push(value);
                    }
                }
            }
        }
        // Anthropic counts cache reads and writes apart from `input_tokens`; Usage's input
        // counts every input token, as OpenAI's `prompt_tokens` does (conversation.rs).
        let mut usage = self.usage;
        usage.input_tokens += usage.cache_read.unwrap_or(0) + usage.cache_write.unwrap_or(0);
        Completion { message, thinking: thinking_text, incomplete_calls, finish, usage }
    }
}

/// Reads a non-streaming response.
pub fn parse_response(body: &Value) -> Result<Completion, LlmError> {
    if body.get("type").and_then(Value::as_str) == Some("error") {
        let error = body.get("error").cloned().unwrap_or(Value::Null);
        return Err(LlmError::new(classify_stream_error(&error), provider_message(&body.to_string())));
    }
    let Some(Value::Array(content)) = body.get("content") else {
        return Err(LlmError::new(
            ErrorClass::Transport,
            "the response has no content array; is the base URL an Anthropic Messages endpoint?",
        ));
    };
    let mut assembler = StreamAssembler::default();
    let sink = &mut |_| {};
    for (index, block) in content.iter().enumerate() {
        let mut start = block.clone();
        let whole_text = start.get("text").and_then(Value::as_str).map(str::to_owned);
        if let (Some(_), Some(map)) = (&whole_text, start.as_object_mut()) {
            map.insert("text".into(), json!(""));
        }
        let start = json!({"type": "content_block_start", "index": index, "content_block": start});
        assembler.feed(&start.to_string(), sink)?;
        if let Some(text) = whole_text {
            let delta =
                json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}});
            assembler.feed(&delta.to_string(), sink)?;
        }
        assembler.feed(&json!({"type": "content_block_stop", "index": index}).to_string(), sink)?;
    }
    if let Some(reason) = body.get("stop_reason").and_then(Value::as_str) {
        assembler.finish = Some(stop_reason(reason));
    }
    if let Some(usage) = body.get("usage") {
        assembler.usage(usage);
    }
    Ok(assembler.into_completion(true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn assemble(events: &[Value]) -> Completion {
        let mut assembler = StreamAssembler::default();
        for event in events {
            assembler.feed(&event.to_string(), &mut |_| {}).unwrap();
        }
        assembler.into_completion(true)
    }

    #[test]
    fn the_event_sequence_assembles() {
        let completion = assemble(&[
            json!({"type": "message_start", "message": {"content": [], "usage": {"input_tokens": 20, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": "plan"}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "sig"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "ping"}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "Let me read it."}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}}),
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"file_path\":"}}),
            json!({"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "\"a.txt\"}"}}),
            json!({"type": "content_block_stop", "index": 2}),
            json!({"type": "content_block_start", "index": 3, "content_block": {"type": "tool_use", "id": "toolu_2", "name": "task_done", "input": {}}}),
            json!({"type": "content_block_stop", "index": 3}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 30}}),
            json!({"type": "message_stop"}),
        ]);
        assert_eq!(completion.message.text, "Let me read it.");
        assert_eq!(completion.thinking, "plan");
        assert_eq!(
            completion.message.thinking_blocks,
            vec![json!({"type": "thinking", "thinking": "plan", "signature": "sig"})]
        );
        assert_eq!(
            completion.message.tool_calls,
            vec![
                NativeCall {
                    id: "toolu_1".into(),
                    name: "read_file".into(),
                    arguments: r#"{"file_path":"a.txt"}"#.into()
                },
                NativeCall { id: "toolu_2".into(), name: "task_done".into(), arguments: "{}".into() },
            ]
        );
        assert_eq!(completion.finish, FinishReason::ToolCalls);
        assert_eq!(completion.usage, Usage { input_tokens: 20, output_tokens: 30, ..Usage::default() });
    }

    #[test]
    fn max_tokens_drops_unfinished_tool_blocks_and_gateway_usage_counts() {
        let completion = assemble(&[
            json!({"type": "message_start", "message": {"content": [], "usage": {"input_tokens": 0}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "tool_use", "id": "t", "name": "x", "input": {}}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "input_json_delta", "partial_json": "{\"a\": \"b"}}),
            json!({"type": "message_delta", "delta": {"stop_reason": "max_tokens"}, "usage": {"input_tokens": 50, "output_tokens": 8}}),
            json!({"type": "message_stop"}),
        ]);
        assert_eq!(completion.incomplete_calls, 1);
        assert!(completion.message.tool_calls.is_empty());
        assert_eq!(completion.finish, FinishReason::Length);
        assert_eq!(completion.usage.input_tokens, 50);
    }

    #[test]
    fn error_events_are_classified() {
        let err = StreamAssembler::default()
            .feed(r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#, &mut |_| {})
            .unwrap_err();
        assert_eq!((err.class, err.message.as_str()), (ErrorClass::Overloaded, "Overloaded"));
    }

    #[test]
    fn history_renders_results_first_and_thinking_unchanged() {
        let thinking = json!({"type": "thinking", "thinking": "t", "signature": "s"});
        let messages = vec![
            Message::user_text("read a.txt"),
            Message::Assistant(AssistantMessage {
                text: "Let me read it.".into(),
                thinking_blocks: vec![thinking.clone()],
                tool_calls: vec![NativeCall {
                    id: "toolu_1".into(),
                    name: "read_file".into(),
                    arguments: "not json".into(),
                }],
            }),
            Message::User {
                parts: vec![
                    UserPart::Text { text: "<notifications>n</notifications>".into() },
                    UserPart::ToolResult(ToolResult {
                        call_id: "toolu_1".into(),
                        content: "     1\thello".into(),
                        is_error: false,
                        images: Vec::new(),
                    }),
                ],
            },
        ];
        let request = ChatRequest { system: "sys", messages: &messages, tools: &[] };
        assert_eq!(
            request_body("claude", &request, 8192, false),
            json!({"model": "claude", "max_tokens": 8192, "stream": false, "system": "sys", "messages": [
                {"role": "user", "content": "read a.txt"},
                {"role": "assistant", "content": [thinking, {"type": "text", "text": "Let me read it."},
                    {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "     1\thello", "is_error": false},
                    {"type": "text", "text": "<notifications>n</notifications>"}]}
            ]})
        );
    }

    #[test]
    fn non_streaming_responses_parse() {
        let body = json!({"content": [{"type": "text", "text": "hi"}, {"type": "tool_use", "id": "t1", "name": "x", "input": {"a": 1}}],
            "stop_reason": "tool_use", "usage": {"input_tokens": 5, "output_tokens": 6}});
        let completion = parse_response(&body).unwrap();
        assert_eq!(completion.message.text, "hi");
        assert_eq!(
            completion.message.tool_calls,
            vec![NativeCall { id: "t1".into(), name: "x".into(), arguments: r#"{"a":1}"#.into() }]
        );
        assert_eq!(completion.usage.total(), 11);
    }

    #[test]
    fn images_go_as_image_blocks_inside_the_tool_result() {
        let image = crate::ImageData { media_type: "image/png".into(), data: "iVBORw0K".into() };
        let messages = vec![Message::User {
            parts: vec![
                UserPart::ToolResult(ToolResult {
                    images: vec![image],
                    ..ToolResult::text("toolu_1", "shot.png: image/png 2×2, shown at 2×2", false)
                }),
                UserPart::ToolResult(ToolResult::text("toolu_2", "plain", false)),
            ],
        }];
        let request = ChatRequest { system: "", messages: &messages, tools: &[] };
        let body = request_body("claude", &request, 100, false);
        assert_eq!(
            body["messages"][0]["content"],
            json!([
                {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": false, "content": [
                    {"type": "text", "text": "shot.png: image/png 2×2, shown at 2×2"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0K"}}]},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "plain", "is_error": false},
            ])
        );
    }
}
