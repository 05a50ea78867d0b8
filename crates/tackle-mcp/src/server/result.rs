//! A tool's [`ToolOutput`] as an MCP `tools/call` result (docs/mcp.md#calls): the model-facing
//! text as content, `isError` always present, `structuredContent` for a successful call with
//! an object payload, and the run's facts under `_meta`.

use rmcp::model::CallToolResult;
use serde_json::{Map, Value, json};
use tackle_core::{ContentPart, ToolOutput};

/// The MCP result for one output.
pub fn call_result(output: &ToolOutput) -> Result<CallToolResult, serde_json::Error> {
    serde_json::from_value(call_result_json(output))
}

/// The wire JSON of the result (kept separate so it can be asserted whole).
pub fn call_result_json(output: &ToolOutput) -> Value {
    let mut content: Vec<Value> = output
        .content
        .iter()
        .map(|part| match part {
            ContentPart::Text { text } => json!({"type": "text", "text": text}),
            ContentPart::Image { mime_type, data } => json!({"type": "image", "data": data, "mimeType": mime_type}),
        })
        .collect();
    if content.is_empty() {
        content.push(json!({"type": "text", "text": ""}));
    }
    let mut result = json!({"content": content, "isError": output.is_error});
    if !output.is_error
        && let Some(structured @ Value::Object(_)) = &output.structured
    {
        result["structuredContent"] = structured.clone();
    }
    let meta = &output.meta;
    let mut facts = Map::new();
    if let Some(ms) = meta.duration_ms {
        facts.insert("tackle/duration_ms".into(), json!(ms));
    }
    if let Some(code) = meta.exit_code {
        facts.insert("tackle/exit_code".into(), json!(code));
    }
    facts.insert("tackle/truncated".into(), json!(meta.truncated));
    if let Some(path) = &meta.spill_path {
        facts.insert("tackle/spill_path".into(), json!(path));
    }
    result["_meta"] = Value::Object(facts);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn success_carries_structured_content_and_meta() {
        let mut output = ToolOutput::text("done").with_structured(json!({"n": 1})).with_exit_code(0);
        output.meta.duration_ms = Some(12);
        output.meta.spill_path = Some(".tackle/outputs/s/c.txt".into());
        output.meta.truncated = true;
        assert_eq!(
            call_result_json(&output),
            json!({
                "content": [{"type": "text", "text": "done"}],
                "isError": false,
                "structuredContent": {"n": 1},
                "_meta": {"tackle/duration_ms": 12, "tackle/exit_code": 0, "tackle/truncated": true,
                          "tackle/spill_path": ".tackle/outputs/s/c.txt"}
            })
        );
        assert!(call_result(&output).is_ok());
    }

    #[test]
    fn errors_and_non_objects_have_no_structured_content() {
        let output = ToolOutput::error("boom").with_structured(json!({"n": 1}));
        assert_eq!(
            call_result_json(&output),
            json!({"content": [{"type": "text", "text": "boom"}], "isError": true, "_meta": {"tackle/truncated": false}})
        );
        let list = ToolOutput::text("x").with_structured(json!([1, 2]));
        assert!(call_result_json(&list).get("structuredContent").is_none());
    }
}
