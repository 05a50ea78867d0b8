//! Renders a scripted reply in each wire protocol: OpenAI index-keyed deltas (the id and name
//! only on a call's first chunk, arguments split at `chunk_chars`), the full Anthropic event
//! sequence with `ping`s, and both non-streaming shapes.

use serde_json::{Value, json};

use crate::script::{Reply, ScriptCall, ScriptUsage};

/// The wire protocol of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    OpenAi,
    Anthropic,
}

/// The default chunk size.
const DEFAULT_CHUNK: usize = 8;

fn pieces(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(size.max(1)).map(|c| c.iter().collect()).collect()
}

/// The ids a reply's calls go out with: the scripted one, or `toolu_gen_N` / none.
fn call_id(call: &ScriptCall) -> Option<&str> {
    call.id.as_deref()
}

/// One SSE event as text (with its blank line).
fn sse(event: Option<&str>, data: &Value) -> String {
    match event {
        Some(name) => format!("event: {name}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

/// The SSE events of a streamed reply.
pub fn stream_events(protocol: Protocol, reply: &Reply) -> Vec<String> {
    match protocol {
        Protocol::OpenAi => openai_events(reply),
        Protocol::Anthropic => anthropic_events(reply),
    }
}

fn openai_chunk(delta: Value, finish: Option<&str>) -> String {
    sse(
        None,
        &json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": "fake",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}),
    )
}

fn openai_events(reply: &Reply) -> Vec<String> {
    let size = reply.chunk_chars.unwrap_or(DEFAULT_CHUNK);
    let mut events = vec![openai_chunk(json!({"role": "assistant", "content": ""}), None)];
    if let Some(thinking) = &reply.thinking {
        for piece in pieces(thinking, size) {
            events.push(openai_chunk(json!({"reasoning_content": piece}), None));
        }
    }
    for piece in pieces(&reply.text, size) {
        events.push(openai_chunk(json!({"content": piece}), None));
    }
    for (index, call) in reply.tool_calls.iter().enumerate() {
        let mut first = json!({"index": index, "type": "function", "function": {"name": call.name, "arguments": ""}});
        if let Some(id) = call_id(call) {
            first["id"] = json!(id);
        }
        events.push(openai_chunk(json!({"tool_calls": [first]}), None));
        for piece in pieces(&call.arguments_text(), size) {
            events
                .push(openai_chunk(json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}), None));
        }
    }
    events.push(openai_chunk(json!({}), Some(reply.finish_reason())));
    let usage = reply.usage.unwrap_or_default();
    events.push(sse(
        None,
        &json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "choices": [],
                "usage": openai_usage(&usage)}),
    ));
    events.push("data: [DONE]\n\n".to_owned());
    events
}

fn anthropic_stop_reason(reply: &Reply) -> &str {
    match reply.finish_reason() {
        "tool_calls" => "tool_use",
        "stop" => "end_turn",
        "length" => "max_tokens",
        "content_filter" => "refusal",
        other => other,
    }
}

fn anthropic_events(reply: &Reply) -> Vec<String> {
    let size = reply.chunk_chars.unwrap_or(DEFAULT_CHUNK);
    let usage = reply.usage.unwrap_or_default();
    let ev = |name: &str, data: Value| sse(Some(name), &data);
    let mut events = vec![ev(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_fake", "type": "message", "role": "assistant",
            "model": "fake", "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": usage.input, "output_tokens": 1}}}),
    )];
    let mut index = 0;
    if let Some(thinking) = &reply.thinking {
        events.push(ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": {"type": "thinking", "thinking": ""}}),
        ));
        for piece in pieces(thinking, size) {
            events.push(ev(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": {"type": "thinking_delta", "thinking": piece}}),
            ));
        }
        events.push(ev(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index, "delta": {"type": "signature_delta", "signature": "fake-signature"}}),
        ));
        events.push(ev("content_block_stop", json!({"type": "content_block_stop", "index": index})));
        index += 1;
    }
    events.push(ev("ping", json!({"type": "ping"})));
    if !reply.text.is_empty() {
        events.push(ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}}),
        ));
        for piece in pieces(&reply.text, size) {
            events.push(ev(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": piece}}),
            ));
        }
        events.push(ev("content_block_stop", json!({"type": "content_block_stop", "index": index})));
        index += 1;
    }
    for (n, call) in reply.tool_calls.iter().enumerate() {
        let id = call_id(call).map_or_else(|| format!("toolu_fake_{n}"), str::to_owned);
        events.push(ev(
            "content_block_start",
            json!({"type": "content_block_start", "index": index,
                   "content_block": {"type": "tool_use", "id": id, "name": call.name, "input": {}}}),
        ));
        for piece in pieces(&call.arguments_text(), size) {
            events.push(ev(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}}),
            ));
        }
        events.push(ev("content_block_stop", json!({"type": "content_block_stop", "index": index})));
        events.push(ev("ping", json!({"type": "ping"})));
        index += 1;
    }
    events.push(ev(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": anthropic_stop_reason(reply), "stop_sequence": null},
               "usage": {"output_tokens": usage.output}}),
    ));
    events.push(ev("message_stop", json!({"type": "message_stop"})));
    events
}

/// The error event of a stream fault.
pub fn error_event(protocol: Protocol, error_type: &str) -> String {
    let error = json!({"type": error_type, "message": format!("injected {error_type}")});
    match protocol {
        Protocol::OpenAi => sse(None, &json!({"error": error})),
        Protocol::Anthropic => sse(Some("error"), &json!({"type": "error", "error": error})),
    }
}

/// The OpenAI `usage` object, with OpenRouter's `cost` when the script sets one.
fn openai_usage(usage: &ScriptUsage) -> Value {
    let mut wire = json!({"prompt_tokens": usage.input, "completion_tokens": usage.output,
                          "total_tokens": usage.input + usage.output});
    if let Some(cost) = usage.cost {
        wire["cost"] = json!(cost);
    }
    wire
}

/// A whole (non-streaming) response body.
pub fn whole_response(protocol: Protocol, reply: &Reply) -> Value {
    let usage = reply.usage.unwrap_or_default();
    match protocol {
        Protocol::OpenAi => {
            let mut message = json!({"role": "assistant", "content": if reply.text.is_empty() { Value::Null } else { json!(reply.text) }});
            if let Some(thinking) = &reply.thinking {
                message["reasoning_content"] = json!(thinking);
            }
            if !reply.tool_calls.is_empty() {
                let calls: Vec<Value> = reply
                    .tool_calls
                    .iter()
                    .map(|call| {
                        let mut wire = json!({"type": "function", "function": {"name": call.name, "arguments": call.arguments_text()}});
                        if let Some(id) = call_id(call) {
                            wire["id"] = json!(id);
                        }
                        wire
                    })
                    .collect();
                message["tool_calls"] = Value::Array(calls);
            }
            json!({"id": "chatcmpl-fake", "object": "chat.completion", "model": "fake",
                   "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason()}],
                   "usage": openai_usage(&usage)})
        }
        Protocol::Anthropic => {
            let mut content = Vec::new();
            if let Some(thinking) = &reply.thinking {
                content.push(json!({"type": "thinking", "thinking": thinking, "signature": "fake-signature"}));
            }
            if !reply.text.is_empty() {
                content.push(json!({"type": "text", "text": reply.text}));
            }
            for (n, call) in reply.tool_calls.iter().enumerate() {
                let id = call_id(call).map_or_else(|| format!("toolu_fake_{n}"), str::to_owned);
                let input: Value = serde_json::from_str(&call.arguments_text()).unwrap_or_else(|_| json!({}));
                content.push(json!({"type": "tool_use", "id": id, "name": call.name, "input": input}));
            }
            json!({"id": "msg_fake", "type": "message", "role": "assistant", "model": "fake", "content": content,
                   "stop_reason": anthropic_stop_reason(reply), "stop_sequence": null,
                   "usage": {"input_tokens": usage.input, "output_tokens": usage.output}})
        }
    }
}
