//! Reads a recorded request in either protocol as one neutral conversation, then checks the
//! turn's expectation and the invariants every request must hold: each assistant tool call
//! answered by exactly one result, no orphaned result, and (Anthropic) `tool_result` blocks
//! before any other block of their message.

use serde_json::Value;

use crate::script::Expect;
use crate::wire::Protocol;

/// One message of the neutral view.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ViewMessage {
    pub role: String,
    pub text: String,
    /// `(id, name)` of the calls an assistant message makes.
    pub calls: Vec<(String, String)>,
    /// `(call id, content)` of the results a user message carries.
    pub results: Vec<(String, String)>,
}

/// The neutral view of a request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct View {
    pub system: String,
    pub messages: Vec<ViewMessage>,
    pub tools: Vec<String>,
    pub stream: bool,
    /// Invariant violations found while reading.
    pub problems: Vec<String>,
}

fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn str_at<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value.pointer(pointer).and_then(Value::as_str).unwrap_or_default()
}

/// Reads a request body.
pub fn view(protocol: Protocol, body: &Value) -> View {
    let mut view = View { stream: body.get("stream").and_then(Value::as_bool).unwrap_or(false), ..View::default() };
    let tools = body.get("tools").and_then(Value::as_array).cloned().unwrap_or_default();
    view.tools = tools
        .iter()
        .map(|t| {
            t.pointer("/function/name").or_else(|| t.get("name")).and_then(Value::as_str).unwrap_or("?").to_owned()
        })
        .collect();
    let messages = body.get("messages").and_then(Value::as_array).cloned().unwrap_or_default();
    match protocol {
        Protocol::OpenAi => {
            for message in &messages {
                let role = str_at(message, "/role");
                match role {
                    "system" | "developer" => view.system.push_str(&text_of(&message["content"])),
                    "tool" => {
                        let result = (str_at(message, "/tool_call_id").to_owned(), text_of(&message["content"]));
                        match view.messages.last_mut() {
                            Some(last) if last.role == "user" && last.text.is_empty() => last.results.push(result),
                            _ => view.messages.push(ViewMessage {
                                role: "user".into(),
                                results: vec![result],
                                ..ViewMessage::default()
                            }),
                        }
                    }
                    "user" => {
                        let text = text_of(&message["content"]);
                        match view.messages.last_mut() {
                            Some(last) if last.role == "user" => {
                                if !last.text.is_empty() {
                                    last.text.push('\n');
                                }
                                last.text.push_str(&text);
                            }
                            _ => {
                                view.messages.push(ViewMessage { role: "user".into(), text, ..ViewMessage::default() });
                            }
                        }
                    }
                    "assistant" => {
                        let calls = message
                            .get("tool_calls")
                            .and_then(Value::as_array)
                            .map(|calls| {
                                calls
                                    .iter()
                                    .map(|c| (str_at(c, "/id").to_owned(), str_at(c, "/function/name").to_owned()))
                                    .collect()
                            })
                            .unwrap_or_default();
                        for call in message.get("tool_calls").and_then(Value::as_array).into_iter().flatten() {
                            if !call.pointer("/function/arguments").is_some_and(Value::is_string) {
                                view.problems.push(format!("call {} has non-string arguments", str_at(call, "/id")));
                            }
                        }
                        view.messages.push(ViewMessage {
                            role: "assistant".into(),
                            text: text_of(&message["content"]),
                            calls,
                            ..ViewMessage::default()
                        });
                    }
                    other => view.problems.push(format!("unknown role {other:?}")),
                }
            }
        }
        Protocol::Anthropic => {
            view.system = match body.get("system") {
                Some(system) => text_of(system),
                None => String::new(),
            };
            for (n, message) in messages.iter().enumerate() {
                let role = str_at(message, "/role").to_owned();
                let content = &message["content"];
                let blocks = content.as_array().cloned().unwrap_or_default();
                let mut entry = ViewMessage { role: role.clone(), text: text_of(content), ..ViewMessage::default() };
                let mut seen_other = false;
                for block in &blocks {
                    match str_at(block, "/type") {
                        "tool_use" => {
                            entry.calls.push((str_at(block, "/id").to_owned(), str_at(block, "/name").to_owned()));
                        }
                        "tool_result" => {
                            if seen_other {
                                view.problems.push(format!("message {n}: a tool_result block follows another block"));
                            }
                            entry.results.push((str_at(block, "/tool_use_id").to_owned(), text_of(&block["content"])));
                        }
                        "text" if str_at(block, "/text").is_empty() => {
                            view.problems.push(format!("message {n}: an empty text block"));
                        }
                        _ => seen_other = true,
                    }
                }
                if let Some(previous) = view.messages.last()
                    && previous.role == role
                {
                    view.problems.push(format!("message {n}: two {role} messages in a row"));
                }
                view.messages.push(entry);
            }
        }
    }
    check_answers(&mut view);
    view
}

/// Every call answered exactly once in the next user message, and no orphaned result.
fn check_answers(view: &mut View) {
    let mut problems = Vec::new();
    for (n, message) in view.messages.iter().enumerate() {
        if message.role == "assistant" && !message.calls.is_empty() {
            let Some(next) = view.messages.get(n + 1) else {
                problems.push(format!("message {n}: the last message has unanswered tool calls"));
                continue;
            };
            for (id, name) in &message.calls {
                let answers = next.results.iter().filter(|(rid, _)| rid == id).count();
                if answers != 1 {
                    problems.push(format!("message {n}: call {id} ({name}) has {answers} results, expected 1"));
                }
            }
        }
        if message.role == "user" {
            let previous_calls: Vec<&String> = match n.checked_sub(1).and_then(|p| view.messages.get(p)) {
                Some(previous) if previous.role == "assistant" => previous.calls.iter().map(|(id, _)| id).collect(),
                _ => Vec::new(),
            };
            for (id, _) in &message.results {
                if !previous_calls.contains(&id) {
                    problems.push(format!("message {n}: result for {id} answers no call of the previous message"));
                }
            }
        }
    }
    view.problems.extend(problems);
}

/// Differences between a request and what the turn expected.
pub fn unmet(expect: &Expect, view: &View) -> Vec<String> {
    let mut diffs = Vec::new();
    let last_user = view.messages.iter().rev().find(|m| m.role == "user").cloned().unwrap_or_default();
    if let Some(want) = &expect.last_user_contains
        && !last_user.text.contains(want.as_str())
    {
        diffs.push(format!("last user message should contain {want:?}, got {:?}", last_user.text));
    }
    if let Some(id) = &expect.tool_result_for
        && !last_user.results.iter().any(|(rid, _)| rid == id)
    {
        let got: Vec<&String> = last_user.results.iter().map(|(rid, _)| rid).collect();
        diffs.push(format!("last user message should answer call {id:?}, it answers {got:?}"));
    }
    if let Some(want) = &expect.tool_result_contains
        && !last_user.results.iter().any(|(_, content)| content.contains(want.as_str()))
        && !last_user.text.contains(want.as_str())
    {
        let got: Vec<&String> = last_user.results.iter().map(|(_, c)| c).collect();
        diffs.push(format!("a tool result should contain {want:?}, got {got:?} and text {:?}", last_user.text));
    }
    if let Some(want) = &expect.system_contains
        && !view.system.contains(want.as_str())
    {
        diffs.push(format!("system prompt should contain {want:?}"));
    }
    for tool in &expect.tools_include {
        if !view.tools.contains(tool) {
            diffs.push(format!("tools should include {tool:?}, got {:?}", view.tools));
        }
    }
    if expect.no_tools && !view.tools.is_empty() {
        diffs.push(format!("no tools should be offered, got {:?}", view.tools));
    }
    if let Some(stream) = expect.stream
        && stream != view.stream
    {
        diffs.push(format!("stream should be {stream}, got {}", view.stream));
    }
    diffs
}
