//! Renders a tool's spec as the tool definition each consumer expects: OpenAI function tools
//! (plain and strict), Anthropic `input_schema` tools, Gemini function declarations (an
//! OpenAPI 3.0 subset) and MCP `tools/list` entries.

use std::str::FromStr;

use serde_json::{Map, Value, json};

use super::sanitize::sanitize;
use super::strict::strict_schema;
use crate::spec::ToolSpec;

/// A schema dialect (docs/architecture.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// OpenAI chat-completions function tools, `strict: false`.
    OpenAi,
    /// OpenAI function tools in strict (structured outputs) mode.
    OpenAiStrict,
    /// Anthropic messages tools with `input_schema`.
    Anthropic,
    /// Gemini function declarations.
    Gemini,
    /// MCP `tools/list` entries.
    Mcp,
}

/// The dialect name was not one of the known ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown dialect '{0}'; use one of: openai, openai-strict, anthropic, gemini, mcp")]
pub struct UnknownDialect(pub String);

impl Dialect {
    /// Every dialect, in documentation order.
    pub const ALL: [Dialect; 5] =
        [Dialect::OpenAi, Dialect::OpenAiStrict, Dialect::Anthropic, Dialect::Gemini, Dialect::Mcp];

    /// The dialect's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Dialect::OpenAi => "openai",
            Dialect::OpenAiStrict => "openai-strict",
            Dialect::Anthropic => "anthropic",
            Dialect::Gemini => "gemini",
            Dialect::Mcp => "mcp",
        }
    }
}

impl FromStr for Dialect {
    type Err = UnknownDialect;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Dialect::ALL.into_iter().find(|d| d.name() == s).ok_or_else(|| UnknownDialect(s.to_owned()))
    }
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Renders one tool definition in `dialect`.
pub fn render_tool(spec: &ToolSpec, dialect: Dialect) -> Value {
    let (schema, _) = sanitize(spec.input_schema.clone());
    match dialect {
        Dialect::OpenAi => json!({
            "type": "function",
            "function": {"name": spec.name, "description": spec.description, "parameters": schema, "strict": false}
        }),
        Dialect::OpenAiStrict => json!({
            "type": "function",
            "function": {
                "name": spec.name,
                "description": spec.description,
                "parameters": strict_schema(&schema).schema,
                "strict": true
            }
        }),
        Dialect::Anthropic => {
            json!({"name": spec.name, "description": spec.description, "input_schema": schema})
        }
        Dialect::Gemini => {
            let mut declaration = json!({"name": spec.name, "description": spec.description});
            let has_params = schema.get("properties").and_then(Value::as_object).is_some_and(|p| !p.is_empty());
            if has_params {
                declaration["parameters"] = gemini_schema(&schema);
            }
            declaration
        }
        Dialect::Mcp => {
            let mut input_schema = schema;
            let no_params = input_schema.get("properties").and_then(Value::as_object).is_some_and(Map::is_empty);
            if no_params {
                input_schema = json!({"type": "object", "additionalProperties": false});
            }
            let title = spec.title.clone().unwrap_or_else(|| spec.name.clone());
            let mut tool = json!({
                "name": spec.name,
                "title": title,
                "description": spec.description,
                "inputSchema": input_schema,
                "annotations": {
                    "title": title,
                    "readOnlyHint": spec.annotations.read_only,
                    "destructiveHint": spec.annotations.destructive,
                    "idempotentHint": spec.annotations.idempotent,
                    "openWorldHint": spec.annotations.open_world
                }
            });
            if let Some(output_schema) = &spec.output_schema {
                tool["outputSchema"] = output_schema.clone();
            }
            tool
        }
    }
}

/// Renders every tool in `dialect`, as one JSON array.
pub fn render_tools<'a>(specs: impl IntoIterator<Item = &'a ToolSpec>, dialect: Dialect) -> Value {
    Value::Array(specs.into_iter().map(|spec| render_tool(spec, dialect)).collect())
}

/// Keywords of Gemini's OpenAPI subset.
const GEMINI_KEPT: &[&str] = &[
    "type",
    "format",
    "description",
    "nullable",
    "enum",
    "properties",
    "required",
    "items",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "anyOf",
    "title",
];

/// The OpenAPI 3.0 subset Gemini accepts: `nullable` instead of `null` types, no
/// `additionalProperties`, no `const`/`oneOf`/`allOf`, string-only enums.
fn gemini_schema(node: &Value) -> Value {
    let Value::Object(map) = node else {
        return json!({});
    };
    let mut out = Map::new();
    for (key, value) in map {
        let key = if key == "oneOf" { "anyOf" } else { key.as_str() };
        if !GEMINI_KEPT.contains(&key) {
            continue;
        }
        let converted = match key {
            "properties" => match value {
                Value::Object(props) => {
                    Value::Object(props.iter().map(|(name, prop)| (name.clone(), gemini_schema(prop))).collect())
                }
                other => other.clone(),
            },
            "items" => gemini_schema(value),
            "anyOf" => match value {
                Value::Array(variants) => Value::Array(
                    variants
                        .iter()
                        .filter(|v| v.get("type").and_then(Value::as_str) != Some("null"))
                        .map(gemini_schema)
                        .collect(),
                ),
                other => other.clone(),
            },
            "type" => match value {
                Value::Array(types) => {
                    let non_null: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
                    if non_null.len() < types.len() {
                        out.insert("nullable".into(), Value::Bool(true));
                    }
                    match non_null.as_slice() {
                        [single] => (*single).clone(),
                        _ => continue,
                    }
                }
                other => other.clone(),
            },
            _ => value.clone(),
        };
        out.insert(key.to_owned(), converted);
    }
    if let Some(Value::Array(values)) = out.get("enum")
        && !values.iter().all(Value::is_string)
    {
        out.remove("enum");
    }
    Value::Object(out)
}
