//! One imported tool as a core [`DynTool`]: its spec (the wire name, the server's
//! description, its input schema through the core sanitizer, annotations honoured only from a
//! trusted server) and calls that go to the server under the raw name.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::Tool;
use serde_json::{Map, Value, json};
use tackle_core::schema::sanitize;
use tackle_core::spec::Loading;
use tackle_core::{BoxFuture, DynTool, PreparedCall, ToolError, ToolSpec};

use super::connection::Connection;

/// Deepest foreign schema (in JSON levels) compiled as the server wrote it: jsonschema's
/// compiler overflowed a 2 MiB stack at 435 levels in a debug build (`bench/stack_depth.sh`),
/// and a message may carry 127. A deeper schema is checked only as the executor checks every
/// tool's, against the sanitized schema (cut at 64 schema levels).
const MAX_COMPILED_DEPTH: usize = 64;

/// Time the executor allows beyond the call's own longest timeout, so the connection's own
/// timeout message (or partial result) always comes first.
const EXECUTOR_MARGIN: Duration = Duration::from_secs(5);

/// An imported tool.
pub struct McpTool {
    spec: ToolSpec,
    raw_name: String,
    connection: Arc<Connection>,
    validator: Option<Arc<jsonschema::Validator>>,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.spec.name)
            .field("raw_name", &self.raw_name)
            .finish_non_exhaustive()
    }
}

impl McpTool {
    /// The tool `listed` by `connection`, under `wire_name`. What Tackle had to cut or could
    /// not compile of its schema goes to `notices`, for the person.
    pub fn new(
        wire_name: &str,
        listed: &Tool,
        connection: Arc<Connection>,
        loading: Loading,
        notices: &mut Vec<String>,
    ) -> McpTool {
        let server = connection.name().to_owned();
        let trusted = connection.config().trusted;
        let original = Value::Object((*listed.input_schema).clone());
        let depth = tackle_core::text::json_depth(&original);
        let about = format!("MCP server '{server}': the input schema of tool '{}'", one_line(&listed.name, 100));
        let validator = if depth > MAX_COMPILED_DEPTH {
            notices.push(format!(
                "{about} nests {depth} levels, more than the {MAX_COMPILED_DEPTH} Tackle compiles; its arguments are checked against the schema cut at that depth"
            ));
            None
        } else {
            match jsonschema::validator_for(&original) {
                Ok(validator) => Some(Arc::new(validator)),
                Err(err) => {
                    let err = one_line(&err.to_string(), 200);
                    notices.push(format!("{about} does not compile, so its arguments are not checked: {err}"));
                    None
                }
            }
        };
        let hints = listed.annotations.clone().unwrap_or_default();
        let description = listed
            .description
            .as_deref()
            .filter(|d| !d.trim().is_empty())
            .map_or_else(|| format!("Tool {} of the MCP server {server}.", listed.name), str::to_owned);
        let mut spec = ToolSpec::new(wire_name, description)
            .input_schema(provider_schema(&original, &about, notices))
            .loading(loading);
        spec.title = listed.title.clone().or(hints.title.clone());
        spec.search_hint = Some(spec.summary().to_owned());
        // Hints from a server that is not trusted are ignored for permissions (docs/reference/safety.md#permission-modes).
        let read_only = trusted && hints.read_only_hint == Some(true);
        spec.annotations.read_only = read_only;
        spec.annotations.destructive = !read_only && hints.destructive_hint.unwrap_or(true);
        spec.annotations.idempotent = hints.idempotent_hint.unwrap_or(false);
        spec.annotations.open_world = hints.open_world_hint.unwrap_or(true);
        spec.concurrency_safe = read_only;
        McpTool { spec, raw_name: listed.name.to_string(), connection, validator }
    }

    /// The name the server knows the tool by.
    pub fn raw_name(&self) -> &str {
        &self.raw_name
    }

    /// The server's name.
    pub fn server(&self) -> &str {
        self.connection.name()
    }
}

/// A server's `text` for a notice: at most `max_chars` characters, on one line, its control
/// characters escaped (a tool name or pattern cannot draw on the person's terminal).
fn one_line(text: &str, max_chars: usize) -> String {
    let mut shown: String = text
        .chars()
        .take(max_chars)
        .flat_map(|c| if c.is_control() { c.escape_default().collect::<Vec<_>>() } else { vec![c] })
        .collect();
    if text.chars().count() > max_chars {
        shown.push('…');
    }
    shown
}

/// A foreign schema as Tackle shows it to providers: local references inlined and the other
/// cleanups of the core sanitizer, an object at the root, no `$schema`. Unlike built-in
/// schemas, extra properties stay allowed unless the server said otherwise. What was cut
/// goes to `notices` once per kind, after `about` (the server and tool).
pub fn provider_schema(original: &Value, about: &str, notices: &mut Vec<String>) -> Value {
    let (schema, warnings) = sanitize(original.clone());
    for warning in warnings {
        let notice = format!("{about}: {warning}");
        if !notices.contains(&notice) {
            notices.push(notice);
        }
    }
    let mut root = match schema {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    root.remove("$schema");
    root.remove("$id");
    if root.get("type").and_then(Value::as_str) != Some("object") {
        root.insert("type".into(), json!("object"));
    }
    if !root.get("properties").is_some_and(Value::is_object) {
        root.insert("properties".into(), json!({}));
    }
    Value::Object(root)
}

impl DynTool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare(&self, args: &Value) -> Result<PreparedCall, ToolError> {
        if let Some(validator) = &self.validator
            && let Err(error) = validator.validate(args)
        {
            let at = error.instance_path().to_string();
            let place = if at.is_empty() { String::new() } else { format!(" at {at}") };
            return Err(ToolError::InvalidInput(format!(
                "Invalid parameters for tool '{}'{place}: {error}",
                self.spec.name
            )));
        }
        let connection = Arc::clone(&self.connection);
        let raw_name = self.raw_name.clone();
        let args = args.clone();
        let read_only = self.spec.annotations.read_only;
        let deadline = self.connection.max_call_time() + EXECUTOR_MARGIN;
        Ok(PreparedCall::new(read_only, self.spec.concurrency_safe, Some(deadline), move |ctx| {
            Box::pin(async move { connection.call(&raw_name, args, &ctx).await })
        }))
    }

    /// Connections belong to the hub, which shuts them down at the end of the session.
    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn ref_and_any_of_schemas_become_plain_objects() {
        let original = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "point": {"$ref": "#/$defs/Point"},
                "mode": {"anyOf": [{"const": "fast"}]}
            },
            "required": ["point"],
            "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}}
        });
        assert_eq!(
            provider_schema(&original, "test", &mut Vec::new()),
            json!({
                "type": "object",
                "properties": {
                    "point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]},
                    "mode": {"enum": ["fast"], "type": "string"}
                },
                "required": ["point"]
            })
        );
        assert_eq!(provider_schema(&json!({}), "test", &mut Vec::new()), json!({"type": "object", "properties": {}}));
        assert_eq!(
            provider_schema(&json!({"type": "string"}), "test", &mut Vec::new()),
            json!({"type": "object", "properties": {}})
        );
    }
}
