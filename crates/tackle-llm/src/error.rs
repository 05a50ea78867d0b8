//! Provider errors, classified as docs/reference/providers.md#errors-retries-and-timeouts says, with messages that tell the person
//! what to do next.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The class of a provider error (docs/reference/providers.md#errors-retries-and-timeouts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// 401, 403.
    Auth,
    /// 429.
    RateLimit,
    /// 529, `overloaded_error`.
    Overloaded,
    /// 500, 502, 503, 504.
    Server,
    /// 408, or no event within the stream idle timeout.
    Timeout,
    /// Connect errors, resets, a stream cut off or malformed.
    Transport,
    /// The prompt is too long for the model.
    ContextLength,
    /// Any other 4xx.
    BadRequest,
}

impl ErrorClass {
    /// Whether an attempt that failed this way is tried again.
    pub fn is_retryable(self) -> bool {
        matches!(
            self,
            ErrorClass::RateLimit
                | ErrorClass::Overloaded
                | ErrorClass::Server
                | ErrorClass::Timeout
                | ErrorClass::Transport
        )
    }

    /// The snake_case name (trajectories, `--json`).
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::Auth => "auth",
            ErrorClass::RateLimit => "rate_limit",
            ErrorClass::Overloaded => "overloaded",
            ErrorClass::Server => "server",
            ErrorClass::Timeout => "timeout",
            ErrorClass::Transport => "transport",
            ErrorClass::ContextLength => "context_length",
            ErrorClass::BadRequest => "bad_request",
        }
    }
}

impl std::fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed request, after retries where they apply.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct LlmError {
    pub class: ErrorClass,
    /// The HTTP status, when there was a response.
    pub status: Option<u16>,
    /// The full message for the person.
    pub message: String,
    /// The delay the server asked for (`retry-after-ms`, `Retry-After`).
    pub retry_after: Option<Duration>,
    /// `x-should-retry` as the server sent it.
    pub should_retry: Option<bool>,
    /// Nothing answered at the address (connection refused, no route): a wrong `--base-url`
    /// or a server that is not running, retried at most [`crate::retry::MAX_CONNECT_RETRIES`] times.
    pub unreachable: bool,
}

impl LlmError {
    /// An error of `class` with a message.
    pub fn new(class: ErrorClass, message: impl Into<String>) -> Self {
        LlmError {
            class,
            status: None,
            message: message.into(),
            retry_after: None,
            should_retry: None,
            unreachable: false,
        }
    }

    /// Whether another attempt may be made.
    pub fn is_retryable(&self) -> bool {
        self.class.is_retryable() && self.should_retry != Some(false)
    }
}

/// The phrases of a context-length error (docs/reference/providers.md#errors-retries-and-timeouts).
const CONTEXT_PHRASES: &[&str] = &["maximum context length", "prompt is too long", "too many tokens"];

/// The provider's own words from an error body (`{"error": {"message"}}`, Anthropic's
/// `{"type":"error","error":{...}}`, or the raw text).
pub fn provider_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let from_json = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .and_then(Value::as_str)
            .or_else(|| v.get("message").and_then(Value::as_str))
            .or_else(|| v.get("error").and_then(Value::as_str))
            .map(str::to_owned)
    });
    let text = from_json.unwrap_or_else(|| body.trim().to_owned());
    let mut short: String = text.chars().take(500).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    if short.is_empty() { "(empty response body)".to_owned() } else { short }
}

/// The error type/code fields of an error body, for classification.
fn error_codes(body: &str) -> Vec<String> {
    let Ok(value) = serde_json::from_str::<Value>(body) else { return Vec::new() };
    ["/error/type", "/error/code", "/type", "/code"]
        .iter()
        .filter_map(|p| value.pointer(p).and_then(Value::as_str).map(str::to_owned))
        .collect()
}

/// Classifies an HTTP error response.
pub fn classify_status(status: u16, body: &str) -> ErrorClass {
    let codes = error_codes(body);
    let lower = body.to_lowercase();
    let context = codes.iter().any(|c| c == "context_length_exceeded")
        || CONTEXT_PHRASES.iter().any(|phrase| lower.contains(phrase));
    match status {
        401 | 403 => ErrorClass::Auth,
        429 => ErrorClass::RateLimit,
        529 => ErrorClass::Overloaded,
        408 => ErrorClass::Timeout,
        500 | 502 | 503 | 504 => ErrorClass::Server,
        _ if codes.iter().any(|c| c == "overloaded_error") => ErrorClass::Overloaded,
        400..=499 if context => ErrorClass::ContextLength,
        400..=499 => ErrorClass::BadRequest,
        _ => ErrorClass::Server,
    }
}

/// Classifies an error object sent inside a stream (`data: {"error": …}`, `event: error`).
pub fn classify_stream_error(error: &Value) -> ErrorClass {
    let kind = error.get("type").or_else(|| error.get("code")).and_then(Value::as_str).unwrap_or_default();
    let message = error.get("message").and_then(Value::as_str).unwrap_or_default().to_lowercase();
    match kind {
        "overloaded_error" => ErrorClass::Overloaded,
        "rate_limit_error" | "rate_limit_exceeded" => ErrorClass::RateLimit,
        "authentication_error" | "permission_error" => ErrorClass::Auth,
        "context_length_exceeded" => ErrorClass::ContextLength,
        "api_error" | "server_error" => ErrorClass::Server,
        _ if CONTEXT_PHRASES.iter().any(|p| message.contains(p)) => ErrorClass::ContextLength,
        "invalid_request_error" | "not_found_error" => ErrorClass::BadRequest,
        _ => ErrorClass::Server,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_bodies_classify() {
        assert_eq!(classify_status(401, ""), ErrorClass::Auth);
        assert_eq!(classify_status(403, ""), ErrorClass::Auth);
        assert_eq!(classify_status(429, ""), ErrorClass::RateLimit);
        assert_eq!(classify_status(529, ""), ErrorClass::Overloaded);
        assert_eq!(classify_status(503, ""), ErrorClass::Server);
        assert_eq!(classify_status(408, ""), ErrorClass::Timeout);
        assert_eq!(
            classify_status(400, r#"{"error":{"message":"x","code":"context_length_exceeded"}}"#),
            ErrorClass::ContextLength
        );
        assert_eq!(
            classify_status(
                400,
                r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 300000 tokens"}}"#
            ),
            ErrorClass::ContextLength
        );
        assert_eq!(classify_status(404, r#"{"error":{"message":"no such model"}}"#), ErrorClass::BadRequest);
        assert_eq!(
            classify_status(400, r#"{"type":"error","error":{"type":"overloaded_error","message":"busy"}}"#),
            ErrorClass::Overloaded
        );
    }

    #[test]
    fn provider_messages_are_extracted_and_bounded() {
        assert_eq!(provider_message(r#"{"error":{"message":"bad model"}}"#), "bad model");
        assert_eq!(provider_message("  plain text\n"), "plain text");
        assert_eq!(provider_message(""), "(empty response body)");
        assert_eq!(provider_message(&"x".repeat(600)).chars().count(), 501);
    }
}
