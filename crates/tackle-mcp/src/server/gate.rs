//! The gate every incoming JSON-RPC message passes before rmcp sees it, on both transports.
//!
//! It exists so that the answers to bad or foreign input are exactly those of docs/mcp.md#versions,
//! whatever rmcp would do on its own: text that is not JSON gets `-32700`, JSON that is not a
//! JSON-RPC message gets `-32600`, a method Tackle does not serve gets `-32601` (including the
//! 2026-07-28 era's `server/discover` probe and any request that names that era in its
//! `_meta`, so newer SDK clients fall back to `initialize`), and a supported method whose
//! params do not fit gets `-32602`. Only what passes is handed to rmcp, already parsed.

use rmcp::model::ClientJsonRpcMessage;
use serde_json::{Value, json};

/// The request methods Tackle's server answers (docs/mcp.md#versions).
pub const SUPPORTED_METHODS: &[&str] = &["initialize", "ping", "tools/list", "tools/call", "logging/setLevel"];

/// The first protocol version Tackle does not implement (the stateless era).
const FIRST_UNSUPPORTED_ERA: &str = "2026-07-28";

/// The `_meta` key through which the 2026-07-28 era names its version per request.
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// JSON-RPC error codes used by the gate.
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    /// Implementation-defined (JSON-RPC's server-error range): every HTTP session is busy.
    pub const SERVER_BUSY: i64 = -32000;
}

/// What to do with one incoming message.
#[derive(Debug)]
pub enum Screened {
    /// A well-formed message for rmcp.
    Pass(Box<ClientJsonRpcMessage>),
    /// Answer with this JSON-RPC error response and drop the message.
    Reply(Value),
    /// Drop silently (a notification or response that cannot be used).
    Drop(String),
}

/// Screens one message (one stdio line, or one HTTP POST body).
pub fn screen(bytes: &[u8]) -> Screened {
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(value) => value,
        Err(err) => {
            let err = tackle_core::text::json_error(&err);
            return Screened::Reply(error_response(&Value::Null, code::PARSE_ERROR, &format!("Parse error: {err}")));
        }
    };
    let Value::Object(map) = &value else {
        let what = if value.is_array() {
            "batches are not supported; send one message at a time"
        } else {
            "a message must be a JSON object"
        };
        return Screened::Reply(error_response(
            &Value::Null,
            code::INVALID_REQUEST,
            &format!("Invalid Request: {what}"),
        ));
    };
    let id = map.get("id").filter(|id| is_valid_id(id)).cloned();
    if map.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid_request(id.as_ref(), "\"jsonrpc\" must be \"2.0\"");
    }
    if map.contains_key("id") && id.is_none() {
        return invalid_request(None, "\"id\" must be a string or an integer");
    }
    let Some(method) = map.get("method") else {
        // A response or error from the client (to an elicitation request).
        return match serde_json::from_value::<ClientJsonRpcMessage>(value) {
            Ok(message) => Screened::Pass(Box::new(message)),
            Err(err) => Screened::Drop(format!("unusable response from the client: {err}")),
        };
    };
    let Some(method) = method.as_str().map(str::to_owned) else {
        return invalid_request(id.as_ref(), "\"method\" must be a string");
    };
    let method = method.as_str();
    let names_unsupported_era = names_unsupported_era(map.get("params"));
    let Some(id) = id else {
        // A notification: never answered; rmcp ignores the ones it does not know.
        return match serde_json::from_value::<ClientJsonRpcMessage>(value) {
            Ok(message) => Screened::Pass(Box::new(message)),
            Err(err) => Screened::Drop(format!("unusable notification {method}: {err}")),
        };
    };
    if !SUPPORTED_METHODS.contains(&method) {
        return Screened::Reply(error_response(&id, code::METHOD_NOT_FOUND, &format!("Method not found: {method}")));
    }
    if names_unsupported_era && method != "initialize" {
        return Screened::Reply(error_response(
            &id,
            code::METHOD_NOT_FOUND,
            &format!(
                "Method not found: {method} (protocol version {FIRST_UNSUPPORTED_ERA} and later are not supported; use initialize)"
            ),
        ));
    }
    match serde_json::from_value::<ClientJsonRpcMessage>(value) {
        Ok(message) if is_custom(&message) => {
            // rmcp falls back to a custom request when known params do not fit.
            Screened::Reply(error_response(&id, code::INVALID_PARAMS, &format!("Invalid params for {method}")))
        }
        Ok(message) => Screened::Pass(Box::new(message)),
        Err(err) => {
            Screened::Reply(error_response(&id, code::INVALID_PARAMS, &format!("Invalid params for {method}: {err}")))
        }
    }
}

/// Whether a message may be sent before a session exists (over HTTP, without
/// `Mcp-Session-Id`): `initialize`, the era probe `server/discover`, or a request naming the
/// 2026-07-28 era. Anything unreadable may not.
pub fn may_precede_session(bytes: &[u8]) -> bool {
    let Ok(value) = serde_json::from_slice::<Value>(bytes) else {
        return false;
    };
    matches!(value.get("method").and_then(Value::as_str), Some("initialize" | "server/discover"))
        || names_unsupported_era(value.get("params"))
}

fn is_custom(message: &ClientJsonRpcMessage) -> bool {
    matches!(message, ClientJsonRpcMessage::Request(request) if matches!(request.request, rmcp::model::ClientRequest::CustomRequest(_)))
}

fn invalid_request(id: Option<&Value>, problem: &str) -> Screened {
    Screened::Reply(error_response(
        id.unwrap_or(&Value::Null),
        code::INVALID_REQUEST,
        &format!("Invalid Request: {problem}"),
    ))
}

/// A JSON-RPC id is a string or an integer (JSON-RPC allows numbers; MCP forbids `null`).
fn is_valid_id(id: &Value) -> bool {
    id.is_string() || id.is_i64() || id.is_u64()
}

/// Whether the request's `_meta` names the 2026-07-28 era or a later one.
fn names_unsupported_era(params: Option<&Value>) -> bool {
    params
        .and_then(|p| p.get("_meta"))
        .and_then(|meta| meta.get(META_PROTOCOL_VERSION))
        .and_then(Value::as_str)
        .is_some_and(|version| version >= FIRST_UNSUPPORTED_ERA)
}

/// A JSON-RPC error response.
pub fn error_response(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn reply(bytes: &str) -> Value {
        match screen(bytes.as_bytes()) {
            Screened::Reply(value) => value,
            other => panic!("expected a reply, got {other:?}"),
        }
    }

    fn code_of(bytes: &str) -> (Value, i64) {
        let value = reply(bytes);
        (value["id"].clone(), value["error"]["code"].as_i64().unwrap())
    }

    #[test]
    fn bad_input_gets_the_standard_codes() {
        assert_eq!(code_of("{not json"), (Value::Null, -32700));
        assert_eq!(code_of("[]"), (Value::Null, -32600));
        assert_eq!(code_of("42"), (Value::Null, -32600));
        assert_eq!(code_of(r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#), (json!(1), -32600));
        assert_eq!(code_of(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#), (Value::Null, -32600));
        assert_eq!(code_of(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#), (Value::Null, -32600));
        assert_eq!(code_of(r#"{"jsonrpc":"2.0","id":"x","method":7}"#), (json!("x"), -32600));
        assert_eq!(code_of(r#"{"jsonrpc":"2.0","id":2,"method":"resources/list"}"#), (json!(2), -32601));
        assert_eq!(
            code_of(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":5}}"#),
            (json!(3), -32602)
        );
        assert_eq!(code_of(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call"}"#), (json!(4), -32602));
    }

    #[test]
    fn the_stateless_era_is_refused_with_method_not_found() {
        let discover = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        assert_eq!(code_of(discover), (json!(1), -32601));
        let modern = r#"{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        assert_eq!(code_of(modern), (json!("a"), -32601));
        let legacy = r#"{"jsonrpc":"2.0","id":"b","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}"#;
        assert!(matches!(screen(legacy.as_bytes()), Screened::Pass(_)));
    }

    #[test]
    fn only_opening_messages_may_precede_a_session() {
        assert!(may_precede_session(br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":5}"#));
        assert!(may_precede_session(br#"{"jsonrpc":"2.0","id":1,"method":"server/discover"}"#));
        let era = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        assert!(may_precede_session(era.as_bytes()));
        for other in [
            r#"{"jsonrpc":"2.0","id":1,"method":"foo/bar"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            "{bad",
            "[]",
        ] {
            assert!(!may_precede_session(other.as_bytes()), "{other}");
        }
    }

    #[test]
    fn good_messages_pass() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{"a":1}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}"#,
        ] {
            assert!(matches!(screen(line.as_bytes()), Screened::Pass(_)), "{line}");
        }
        assert!(matches!(
            screen(br#"{"jsonrpc":"2.0","method":"notifications/whatever","params":5}"#),
            Screened::Drop(_) | Screened::Pass(_)
        ));
    }
}
