//! OpenAI Chat Completions and every compatible server (docs/reference/providers.md#openai-chat-completions): the request body,
//! the non-streaming response, and the stream assembler that keys tool-call deltas by
//! `index` and tolerates the variants compatibles send.

use serde_json::{Map, Value, json};

use crate::conversation::{
    AssistantMessage, ChatRequest, Completion, FinishReason, LlmEvent, Message, NativeCall, Usage, UserPart,
};
use crate::error::{ErrorClass, LlmError, classify_stream_error, provider_message};

/// Options of the request body that come from configuration.
#[derive(Debug, Clone, Copy, Default)]
pub struct BodyOptions {
    /// `max_completion_tokens`, sent only when configured (compatibles differ on limits).
    pub max_tokens: Option<u32>,
    /// `parallel_tool_calls`, sent only when configured (some compatibles reject it).
    pub parallel_tool_calls: Option<bool>,
}

/// The JSON body of `POST {base}/chat/completions`.
pub fn request_body(model: &str, request: &ChatRequest<'_>, options: BodyOptions, stream: bool) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in request.messages {
        push_message(&mut messages, message);
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("stream".into(), json!(stream));
    if stream {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    body.insert("messages".into(), Value::Array(messages));
    if !request.tools.is_empty() {
        body.insert("tools".into(), Value::Array(request.tools.to_vec()));
        body.insert("tool_choice".into(), json!("auto"));
        if let Some(parallel) = options.parallel_tool_calls {
            body.insert("parallel_tool_calls".into(), json!(parallel));
        }
    }
    if let Some(max) = options.max_tokens {
        body.insert("max_completion_tokens".into(), json!(max));
    }
    Value::Object(body)
}

fn push_message(out: &mut Vec<Value>, message: &Message) {
    match message {
        Message::User { parts } => {
            let mut text = String::new();
            // Tool messages carry text only: the turn's images follow them in one user
            // message, each run of them named by the call it came from.
            let mut images = Vec::new();
            for part in parts {
                match part {
                    UserPart::ToolResult(result) => {
                        let content =
                            if result.is_error { format!("Error: {}", result.content) } else { result.content.clone() };
                        out.push(json!({"role": "tool", "tool_call_id": result.call_id, "content": content}));
                        if !result.images.is_empty() {
                            let count = result.images.len();
                            let named = if count == 1 {
                                format!("The image returned by tool call {}:", result.call_id)
                            } else {
                                format!("The {count} images returned by tool call {}:", result.call_id)
                            };
                            images.push(json!({"type": "text", "text": named}));
                            images.extend(result.images.iter().map(|image| {
                                json!({"type": "image_url", "image_url":
                                    {"url": format!("data:{};base64,{}", image.media_type, image.data)}})
                            }));
                        }
                    }
                    UserPart::Text { text: part } => {
                        if !text.is_empty() {
                            text.push_str("\n\n");
                        }
                        text.push_str(part);
                    }
                }
            }
            if !images.is_empty() {
                if !text.is_empty() {
                    images.push(json!({"type": "text", "text": text}));
                }
                out.push(json!({"role": "user", "content": images}));
            } else if !text.is_empty() {
                out.push(json!({"role": "user", "content": text}));
            }
        }
        Message::Assistant(assistant) => {
            let mut entry = Map::new();
            entry.insert("role".into(), json!("assistant"));
            let content = if assistant.text.is_empty() && !assistant.tool_calls.is_empty() {
                Value::Null
            } else {
                json!(assistant.text)
            };
            entry.insert("content".into(), content);
            if !assistant.tool_calls.is_empty() {
                let calls: Vec<Value> = assistant
                    .tool_calls
                    .iter()
                    .map(|call| {
                        json!({"id": call.id, "type": "function",
                               "function": {"name": call.name, "arguments": call.arguments}})
                    })
                    .collect();
                entry.insert("tool_calls".into(), Value::Array(calls));
            }
            out.push(Value::Object(entry));
        }
    }
}

/// Reads a non-streaming response (`choices[0].message`).
pub fn parse_response(body: &Value) -> Result<Completion, LlmError> {
    if let Some(error) = body.get("error").filter(|e| !e.is_null()) {
        return Err(stream_error(error));
    }
    let choice = body.pointer("/choices/0").ok_or_else(|| {
        LlmError::new(
            ErrorClass::Transport,
            "the response has no choices[0]; is the base URL an OpenAI-compatible endpoint?",
        )
    })?;
    let message = choice.get("message").cloned().unwrap_or(Value::Null);
    let mut assembler = StreamAssembler {
        text: content_text(message.get("content")),
        thinking: reasoning_text(&message).unwrap_or_default(),
        ..StreamAssembler::default()
    };
    if let Some(Value::Array(calls)) = message.get("tool_calls") {
        assembler.tool_call_deltas(calls);
    }
    assembler.finish = choice.get("finish_reason").and_then(Value::as_str).map(finish_reason);
    if let Some(usage) = body.get("usage") {
        assembler.usage(usage);
    }
    Ok(assembler.into_completion(true))
}

/// `content` as a string, or an array of `{type: text, text}` parts.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => {
            parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("")
        }
        _ => String::new(),
    }
}

fn reasoning_text(delta: &Value) -> Option<String> {
    delta
        .get("reasoning_content")
        .or_else(|| delta.get("reasoning"))
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(str::to_owned)
}

fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "stop" => FinishReason::Stop,
        "length" => FinishReason::Length,
        "content_filter" => FinishReason::Refused,
        other => FinishReason::Other(other.to_owned()),
    }
}

fn stream_error(error: &Value) -> LlmError {
    let class = classify_stream_error(error);
    let message = provider_message(&json!({"error": error}).to_string());
    LlmError::new(class, message)
}

/// A tool call being assembled from deltas.
#[derive(Debug, Default)]
struct PartialCall {
    index: Option<u64>,
    id: Option<String>,
    name: Option<String>,
    arguments: String,
}

/// Assembles a streamed response from its `data:` payloads.
#[derive(Debug, Default)]
pub struct StreamAssembler {
    text: String,
    thinking: String,
    calls: Vec<PartialCall>,
    finish: Option<FinishReason>,
    usage: Usage,
    done: bool,
}

impl StreamAssembler {
    /// Feeds one `data:` payload. Returns `Ok(true)` at `[DONE]`.
    pub fn feed(&mut self, data: &str, sink: &mut (dyn FnMut(LlmEvent) + Send)) -> Result<bool, LlmError> {
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|err| {
            let shown: String = data.chars().take(120).collect();
            LlmError::new(ErrorClass::Transport, format!("the provider sent a malformed stream event ({err}): {shown}"))
        })?;
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            return Err(stream_error(error));
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage(usage);
        }
        let Some(Value::Array(choices)) = chunk.get("choices") else { return Ok(false) };
        for choice in choices.iter().filter(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0) {
            if let Some(delta) = choice.get("delta").or_else(|| choice.get("message")) {
                if let Some(text) = delta.get("content").map(|c| content_text(Some(c))).filter(|t| !t.is_empty()) {
                    self.text.push_str(&text);
                    sink(LlmEvent::Text(text));
                }
                if let Some(thinking) = reasoning_text(delta) {
                    self.thinking.push_str(&thinking);
                    sink(LlmEvent::Thinking(thinking));
                }
                if let Some(Value::Array(calls)) = delta.get("tool_calls") {
                    self.tool_call_deltas(calls);
                }
            }
            if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
                self.finish = Some(finish_reason(reason));
            }
        }
        Ok(false)
    }

    fn usage(&mut self, usage: &Value) {
        let get = |key: &str| usage.get(key).and_then(Value::as_u64);
        if let Some(input) = get("prompt_tokens") {
            self.usage.input_tokens = input;
        }
        if let Some(output) = get("completion_tokens") {
            self.usage.output_tokens = output;
        }
        if let Some(cached) = usage.pointer("/prompt_tokens_details/cached_tokens").and_then(Value::as_u64) {
            self.usage.cache_read = Some(cached);
        }
        // OpenRouter's price of the request in US dollars (a number; anything else is ignored).
        if let Some(cost) = usage.get("cost").and_then(Value::as_f64).filter(|c| c.is_finite() && *c >= 0.0) {
            self.usage.cost = Some(cost);
        }
    }

    /// Applies the `tool_calls` array of one delta (docs/reference/providers.md#openai-chat-completions, assembly rules).
    fn tool_call_deltas(&mut self, deltas: &[Value]) {
        for delta in deltas {
            let index = delta.get("index").and_then(Value::as_u64);
            let id = delta.get("id").and_then(Value::as_str).filter(|id| !id.is_empty());
            let function = delta.get("function");
            let name = function.and_then(|f| f.get("name")).and_then(Value::as_str).filter(|n| !n.is_empty());
            let position = match (index, id) {
                (Some(index), _) => self.calls.iter().position(|c| c.index == Some(index)),
                (None, Some(id)) => self.calls.iter().position(|c| c.id.as_deref() == Some(id)),
                // Neither: a fragment of the latest call, unless it names a new one.
                (None, None) if name.is_none() => self.calls.len().checked_sub(1),
                (None, None) => None,
            };
            let position = position.unwrap_or_else(|| {
                self.calls.push(PartialCall { index, ..PartialCall::default() });
                self.calls.len() - 1
            });
            let call = &mut self.calls[position];
            if call.id.is_none() {
                call.id = id.map(str::to_owned);
            }
            if call.name.is_none() {
                call.name = name.map(str::to_owned);
            }
            match function.and_then(|f| f.get("arguments")) {
                Some(Value::String(fragment)) => call.arguments.push_str(fragment),
                Some(Value::Null) | None => {}
                Some(object) => call.arguments.push_str(&object.to_string()),
            }
        }
    }

    /// Whether the stream said it was finished (`[DONE]` or a finish reason).
    pub fn is_complete(&self) -> bool {
        self.done || self.finish.is_some()
    }

    /// The completion. When `complete` is false the stream ended early.
    pub fn into_completion(self, complete: bool) -> Completion {
        let finish = self.finish.unwrap_or(if complete { FinishReason::Stop } else { FinishReason::Length });
        let truncated = finish == FinishReason::Length;
        let mut incomplete_calls = 0;
        let mut tool_calls = Vec::with_capacity(self.calls.len());
        for call in self.calls {
            let arguments = if call.arguments.trim().is_empty() { "{}".to_owned() } else { call.arguments };
            // Under the output limit, a call whose arguments do not parse was cut off.
            if truncated && serde_json::from_str::<Value>(&arguments).is_err() {
                incomplete_calls += 1;
                continue;
            }
            tool_calls.push(NativeCall {
                id: call.id.unwrap_or_default(),
                name: call.name.unwrap_or_default(),
                arguments,
            });
        }
        Completion {
            message: AssistantMessage { text: self.text, thinking_blocks: Vec::new(), tool_calls },
            thinking: self.thinking,
            incomplete_calls,
            finish,
            usage: self.usage,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn assemble(lines: &[&str]) -> Completion {
        let mut assembler = StreamAssembler::default();
        let mut shown = String::new();
        for line in lines {
            assembler
                .feed(line, &mut |event| {
                    if let LlmEvent::Text(text) = event {
                        shown.push_str(&text);
                    }
                })
                .unwrap();
        }
        let completion = assembler.into_completion(true);
        assert_eq!(shown, completion.message.text);
        completion
    }

    fn call(id: &str, name: &str, arguments: &str) -> NativeCall {
        NativeCall { id: id.into(), name: name.into(), arguments: arguments.into() }
    }

    #[test]
    fn the_spec_stream_assembles() {
        let completion = assemble(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"Let me r"}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"ead it."}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"file_path\":"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"a.txt\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":9}}"#,
            "[DONE]",
        ]);
        assert_eq!(completion.message.text, "Let me read it.");
        assert_eq!(completion.message.tool_calls, vec![call("call_1", "read_file", r#"{"file_path":"a.txt"}"#)]);
        assert_eq!(completion.finish, FinishReason::ToolCalls);
        assert_eq!(completion.usage, Usage { input_tokens: 12, output_tokens: 9, ..Usage::default() });

        // OpenRouter adds the price in US dollars; a non-number is ignored.
        let stop = r#"{"choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}"#;
        let priced =
            assemble(&[stop, r#"{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"cost":0.0125}}"#]);
        assert_eq!(priced.usage.cost, Some(0.0125));
        let odd =
            assemble(&[stop, r#"{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2,"cost":"free"}}"#]);
        assert_eq!(odd.usage.cost, None);
    }

    #[test]
    fn interleaved_parallel_calls_are_keyed_by_index() {
        let completion = assemble(&[
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"x","arguments":"{\"n\""}},{"index":1,"id":"b","function":{"name":"y","arguments":"{\"m\""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":":2}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}}]}"#,
        ]);
        assert_eq!(completion.message.tool_calls, vec![call("a", "x", r#"{"n":1}"#), call("b", "y", r#"{"m":2}"#)]);
    }

    #[test]
    fn tolerated_variants_assemble() {
        // Whole call in one chunk, arguments as an object, no index, id repeated, names repeated.
        let completion = assemble(&[
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"x","arguments":{"k":1}}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"y","arguments":"{\"q\""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"y","arguments":":true}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"z","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"reasoning_content":"hmm","unknown":1},"finish_reason":"tool_calls"}],"extra":true}"#,
        ]);
        assert_eq!(
            completion.message.tool_calls,
            vec![call("a", "x", r#"{"k":1}"#), call("b", "y", r#"{"q":true}"#), call("", "z", "{}")]
        );
        assert_eq!(completion.thinking, "hmm");
    }

    #[test]
    fn truncated_calls_are_dropped_and_errors_surface() {
        let mut assembler = StreamAssembler::default();
        let sink = &mut |_| {};
        assembler.feed(r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"x","arguments":"{}"}},{"index":1,"id":"b","function":{"name":"x","arguments":"{\"big\": \"aaa"}}]}}]}"#, sink).unwrap();
        assembler.feed(r#"{"choices":[{"delta":{},"finish_reason":"length"}]}"#, sink).unwrap();
        let completion = assembler.into_completion(true);
        assert_eq!(completion.message.tool_calls, vec![call("a", "x", "{}")]);
        assert_eq!(completion.incomplete_calls, 1);

        let err = StreamAssembler::default().feed("{not json", sink).unwrap_err();
        assert_eq!(err.class, ErrorClass::Transport);
        let err = StreamAssembler::default()
            .feed(r#"{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}"#, sink)
            .unwrap_err();
        assert_eq!((err.class, err.message.as_str()), (ErrorClass::RateLimit, "Rate limit reached"));
    }

    #[test]
    fn history_renders_in_the_wire_format() {
        let messages = vec![
            Message::user_text("read a.txt"),
            Message::Assistant(AssistantMessage {
                text: "Let me read it.".into(),
                thinking_blocks: vec![],
                tool_calls: vec![call("call_1", "read_file", r#"{"file_path":"a.txt"}"#)],
            }),
            Message::User {
                parts: vec![
                    UserPart::ToolResult(crate::ToolResult {
                        call_id: "call_1".into(),
                        content: "boom".into(),
                        is_error: true,
                        images: Vec::new(),
                    }),
                    UserPart::Text { text: "<notifications>\nx\n</notifications>".into() },
                ],
            },
        ];
        let tools = [json!({"type": "function", "function": {"name": "read_file"}})];
        let request = ChatRequest { system: "sys", messages: &messages, tools: &tools };
        let body =
            request_body("gpt", &request, BodyOptions { max_tokens: Some(10), parallel_tool_calls: Some(true) }, true);
        assert_eq!(
            body,
            json!({"model": "gpt", "stream": true, "stream_options": {"include_usage": true},
                "messages": [
                    {"role": "system", "content": "sys"},
                    {"role": "user", "content": "read a.txt"},
                    {"role": "assistant", "content": "Let me read it.", "tool_calls": [{"id": "call_1", "type": "function",
                        "function": {"name": "read_file", "arguments": "{\"file_path\":\"a.txt\"}"}}]},
                    {"role": "tool", "tool_call_id": "call_1", "content": "Error: boom"},
                    {"role": "user", "content": "<notifications>\nx\n</notifications>"}
                ],
                "tools": tools, "tool_choice": "auto", "parallel_tool_calls": true, "max_completion_tokens": 10})
        );
    }

    #[test]
    fn non_streaming_responses_parse() {
        let body = json!({"choices": [{"message": {"content": null, "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "x", "arguments": ""}}]}, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 4}});
        let completion = parse_response(&body).unwrap();
        assert_eq!(completion.message.tool_calls, vec![call("c", "x", "{}")]);
        assert_eq!(completion.usage.total(), 7);
        assert_eq!(
            parse_response(&json!({"choices": [{"message": {"content": "hi"}, "finish_reason": "content_filter"}]}))
                .unwrap()
                .finish,
            FinishReason::Refused
        );
    }

    #[test]
    fn images_follow_the_tool_messages_in_one_user_message_naming_their_calls() {
        let png = crate::ImageData { media_type: "image/png".into(), data: "iVBORw0K".into() };
        let jpeg = crate::ImageData { media_type: "image/jpeg".into(), data: "/9j/".into() };
        let messages = vec![Message::User {
            parts: vec![
                UserPart::ToolResult(crate::ToolResult {
                    images: vec![png],
                    ..crate::ToolResult::text("c1", "a.png", false)
                }),
                UserPart::ToolResult(crate::ToolResult::text("c2", "text only", false)),
                UserPart::ToolResult(crate::ToolResult {
                    images: vec![jpeg.clone(), jpeg],
                    ..crate::ToolResult::text("c3", "b.jpg", false)
                }),
                UserPart::Text { text: "<notifications>\nx\n</notifications>".into() },
            ],
        }];
        let request = ChatRequest { system: "", messages: &messages, tools: &[] };
        let body = request_body("gpt", &request, BodyOptions::default(), false);
        let url = |mime: &str, data: &str| json!({"type": "image_url", "image_url": {"url": format!("data:{mime};base64,{data}")}});
        assert_eq!(
            body["messages"],
            json!([
                {"role": "tool", "tool_call_id": "c1", "content": "a.png"},
                {"role": "tool", "tool_call_id": "c2", "content": "text only"},
                {"role": "tool", "tool_call_id": "c3", "content": "b.jpg"},
                {"role": "user", "content": [
                    {"type": "text", "text": "The image returned by tool call c1:"},
                    url("image/png", "iVBORw0K"),
                    {"type": "text", "text": "The 2 images returned by tool call c3:"},
                    url("image/jpeg", "/9j/"),
                    url("image/jpeg", "/9j/"),
                    {"type": "text", "text": "<notifications>\nx\n</notifications>"},
                ]},
            ])
        );
        // Without vision, the results' text only.
        let stripped = crate::without_images(&messages).unwrap();
        let request = ChatRequest { system: "", messages: &stripped, tools: &[] };
        let body = request_body("gpt", &request, BodyOptions::default(), false);
        assert_eq!(body["messages"][3], json!({"role": "user", "content": "<notifications>\nx\n</notifications>"}));
        assert!(!body.to_string().contains("image_url"));
        assert!(crate::without_images(&stripped).is_none(), "nothing left to strip");
    }
}
