//! An MCP `tools/call` result as a [`ToolOutput`] (docs/mcp.md#schemas-and-results): text blocks joined, other
//! blocks described in text, `structuredContent` kept, `isError` honoured (a missing one is
//! success), and a JSON-RPC error turned into a tool error the model can read.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use tackle_core::{ContentPart, ToolOutput};

/// The output for a result, given as its wire JSON.
pub fn to_output(result: &Value) -> ToolOutput {
    let is_error = result.get("isError").and_then(Value::as_bool).unwrap_or(false);
    let structured = result.get("structuredContent").filter(|s| !s.is_null()).cloned();
    let blocks = result.get("content").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let mut texts: Vec<String> = Vec::new();
    let mut images: Vec<ContentPart> = Vec::new();
    let mut had_text = false;
    for block in blocks {
        let field = |key: &str| block.get(key).and_then(Value::as_str).unwrap_or_default();
        match field("type") {
            "text" => {
                had_text = true;
                texts.push(field("text").to_owned());
            }
            kind @ ("image" | "audio") => {
                let data = field("data");
                texts.push(format!("[{kind}: {}, {} bytes]", field("mimeType"), decoded_len(data)));
                if kind == "image" {
                    images.push(ContentPart::Image { mime_type: field("mimeType").to_owned(), data: data.to_owned() });
                }
            }
            "resource_link" => texts.push(format!("[resource: {} {}]", field("name"), field("uri"))),
            "resource" => {
                let resource = block.get("resource").cloned().unwrap_or_default();
                let uri = resource.get("uri").and_then(Value::as_str).unwrap_or_default();
                match (resource.get("text").and_then(Value::as_str), resource.get("blob").and_then(Value::as_str)) {
                    (Some(text), _) => texts.push(format!("--- {uri} ---\n{text}")),
                    (None, Some(blob)) => texts.push(format!("[binary resource {uri}, {} bytes]", decoded_len(blob))),
                    (None, None) => texts.push(format!("[resource {uri}]")),
                }
            }
            other => texts.push(format!("[{} content]", if other.is_empty() { "unknown" } else { other })),
        }
    }
    let mut text = texts.join("\n");
    if !had_text && let Some(structured) = &structured {
        let json = structured.to_string();
        text = if text.is_empty() { json } else { format!("{json}\n{text}") };
    }
    let mut parts = vec![ContentPart::Text { text }];
    parts.extend(images);
    let mut output = if is_error { ToolOutput::error("") } else { ToolOutput::text("") };
    output.content = parts;
    output.structured = structured;
    output
}

/// The output for a JSON-RPC error answering the call.
pub fn error_output(code: i32, message: &str) -> ToolOutput {
    ToolOutput::error(format!("MCP error {code}: {message}"))
}

/// The number of bytes base64 `data` decodes to (its length over 4/3 when it is malformed).
fn decoded_len(data: &str) -> usize {
    STANDARD.decode(data.trim()).map_or(data.len() * 3 / 4, |bytes| bytes.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn text(output: &ToolOutput) -> String {
        output.text_content()
    }

    #[test]
    fn every_block_kind_becomes_text() {
        let result = json!({"content": [
            {"type": "text", "text": "first"},
            {"type": "text", "text": "second"},
            {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
            {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"},
            {"type": "resource_link", "name": "readme", "uri": "file:///r.md"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "body"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "blob": "AAECAw=="}}
        ]});
        let output = to_output(&result);
        assert!(!output.is_error, "a missing isError is success");
        assert_eq!(
            text(&output),
            "first\nsecond\n[image: image/png, 5 bytes]\n[audio: audio/wav, 3 bytes]\n[resource: readme file:///r.md]\n\
             --- file:///a.txt ---\nbody\n[binary resource file:///b.bin, 4 bytes]"
        );
        assert_eq!(output.content[1], ContentPart::Image { mime_type: "image/png".into(), data: "aGVsbG8=".into() });
    }

    #[test]
    fn structured_content_is_kept_and_stands_in_for_missing_text() {
        let both =
            to_output(&json!({"content": [{"type": "text", "text": "{\"a\":1}"}], "structuredContent": {"a": 1}}));
        assert_eq!((text(&both), both.structured), ("{\"a\":1}".to_owned(), Some(json!({"a": 1}))));
        let only = to_output(&json!({"content": [], "structuredContent": {"b": [1, 2]}}));
        assert_eq!(text(&only), "{\"b\":[1,2]}");
    }

    #[test]
    fn errors_are_errors() {
        let output = to_output(
            &json!({"content": [{"type": "text", "text": "MCP error -32602: Tool nope not found"}], "isError": true}),
        );
        assert!(output.is_error);
        assert_eq!(text(&output), "MCP error -32602: Tool nope not found");
        let rpc = error_output(-32603, "boom");
        assert!(rpc.is_error);
        assert_eq!(text(&rpc), "MCP error -32603: boom");
    }
}
