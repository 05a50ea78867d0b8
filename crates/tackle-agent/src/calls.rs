//! From a reply's calls to `ToolCall`s (docs/reference/providers.md#openai-chat-completions, docs/reference/formats.md#native): call ids
//! made unique (`_2`, `_3`) or generated (`call_{step}_{n}`); arguments passed on as text for
//! the executor to decode, so a malformed call is still answered with a message the model can
//! act on.

use std::collections::HashSet;

use serde_json::Value;
use tackle_core::ToolCall;
use tackle_llm::NativeCall;

/// Gives every call an id unique in the session: missing ids become `call_{step}_{n}` (n
/// counts from 1), repeated ones get `_2`, `_3`. `seen` holds the ids of earlier replies, since
/// some servers (llama.cpp) number calls from `call_0` in every reply.
pub fn normalize_ids<'a>(ids: impl IntoIterator<Item = &'a mut String>, step: u32, seen: &mut HashSet<String>) {
    for (n, id) in ids.into_iter().enumerate() {
        if id.is_empty() {
            *id = format!("call_{step}_{}", n + 1);
        }
        if seen.contains(id.as_str()) {
            let base = id.clone();
            let mut k = 2;
            while seen.contains(&format!("{base}_{k}")) {
                k += 1;
            }
            *id = format!("{base}_{k}");
        }
        seen.insert(id.clone());
    }
}

/// The executor's view of a native call: the arguments stay JSON text, and the executor's
/// decoder answers text that is not one JSON object with `Invalid JSON in arguments for tool
/// '{tool}': {error}. Send the arguments as one JSON object.` (docs/reference/formats.md#native).
pub fn to_tool_call(call: &NativeCall) -> ToolCall {
    ToolCall::from_text(call.id.clone(), call.name.clone(), call.arguments.clone())
}

/// The arguments as JSON for records: the parsed value, or the raw text when it is not JSON.
pub fn args_value(call: &NativeCall) -> Value {
    serde_json::from_str(&call.arguments).unwrap_or_else(|_| Value::String(call.arguments.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn native(id: &str) -> NativeCall {
        NativeCall { id: id.into(), name: "x".into(), arguments: "{}".into() }
    }

    #[test]
    fn ids_are_unique_and_generated() {
        let mut calls = vec![native("a"), native(""), native("a"), native("a"), native("")];
        let mut seen = HashSet::from(["b".to_owned()]);
        calls.push(native("b"));
        normalize_ids(calls.iter_mut().map(|c| &mut c.id), 7, &mut seen);
        let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["a", "call_7_2", "a_2", "a_3", "call_7_5", "b_2"]);
    }
}
