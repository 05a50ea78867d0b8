//! The `openai-strict` transform: OpenAI's structured-outputs subset of JSON Schema.
//!
//! Rules (docs/reference/providers.md#schemas-sent-to-providers): every property is listed in `required`; properties that were
//! optional become nullable (so absent and `null` mean the same, docs/reference/tools.md#names-and-aliases);
//! `additionalProperties: false` on every object at every depth; only the keywords strict
//! mode accepts remain (`type`, `properties`, `required`, `additionalProperties`, `items`,
//! `enum`, `anyOf`, `description`); removed constraints are kept as words in the description,
//! and the executor still validates against the full schema.
//!
//! Strict mode cannot say "any JSON value" or "an object with free-form keys". Such a
//! parameter is advertised as a string holding JSON text; its path is reported in
//! [`StrictSchema::json_text_params`] so that the session that showed this dialect parses the
//! string back before validation (docs/reference/tools.md#json_edit_tool, `json_edit_tool.value`).

use serde_json::{Map, Value, json};

use super::sanitize::{merge_into, sanitize};

/// Keywords that survive the transform.
const KEPT: &[&str] =
    &["type", "properties", "required", "additionalProperties", "items", "enum", "anyOf", "description"];

/// Constraints turned into words rather than dropped silently.
const DESCRIBED: &[(&str, &str)] = &[
    ("minimum", "minimum"),
    ("maximum", "maximum"),
    ("exclusiveMinimum", "greater than"),
    ("exclusiveMaximum", "less than"),
    ("minLength", "min length"),
    ("maxLength", "max length"),
    ("pattern", "pattern"),
    ("minItems", "min items"),
    ("maxItems", "max items"),
    ("default", "default"),
    ("format", "format"),
];

/// A schema in the strict dialect, with the parameters that became JSON text.
#[derive(Debug, Clone, PartialEq)]
pub struct StrictSchema {
    /// The transformed schema, to send to the provider.
    pub schema: Value,
    /// Paths (property names; `[]` for array items) of values advertised as JSON text.
    pub json_text_params: Vec<Vec<String>>,
}

/// Transforms a schema into the strict dialect.
pub fn strict_schema(schema: &Value) -> StrictSchema {
    let (clean, _) = sanitize(schema.clone());
    let mut json_text_params = Vec::new();
    let mut out = convert(&clean, &mut Vec::new(), &mut json_text_params);
    // The root must be an object, never a union or JSON text.
    let root_ok = out.get("type").and_then(Value::as_str) == Some("object") && out.get("properties").is_some();
    if !root_ok {
        json_text_params.clear();
        out = json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false});
    }
    StrictSchema { schema: out, json_text_params }
}

fn convert(node: &Value, path: &mut Vec<String>, json_text: &mut Vec<Vec<String>>) -> Value {
    let Value::Object(map) = node else {
        json_text.push(path.clone());
        return json_text_schema(None);
    };
    let map = merge_all_of(map);

    if let Some(Value::Array(variants)) = map.get("anyOf").or_else(|| map.get("oneOf")) {
        let converted: Vec<Value> = variants.iter().map(|v| convert(v, path, json_text)).collect();
        let mut out = Map::new();
        out.insert("anyOf".into(), Value::Array(converted));
        add_description(&map, &mut out);
        return Value::Object(out);
    }

    let types = super::declared_types(&Value::Object(map.clone())).into_iter().map(str::to_owned).collect::<Vec<_>>();
    let is_object = types.iter().any(|t| t == "object");
    let is_array = types.iter().any(|t| t == "array");
    let free_form_object =
        is_object && map.get("properties").is_none_or(|p| p.as_object().is_none_or(serde_json::Map::is_empty));
    let untyped = types.is_empty() && !map.contains_key("enum");
    if untyped || (free_form_object && !path.is_empty()) {
        json_text.push(path.clone());
        return json_text_schema(map.get("description").and_then(Value::as_str));
    }

    let mut out = Map::new();
    for (key, value) in &map {
        if !KEPT.contains(&key.as_str())
            || matches!(key.as_str(), "properties" | "required" | "items" | "additionalProperties")
        {
            continue;
        }
        out.insert(key.clone(), value.clone());
    }
    if let Some(Value::Array(values)) = out.get_mut("enum")
        && values.is_empty()
    {
        out.remove("enum");
    }

    if is_object {
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut properties = Map::new();
        if let Some(Value::Object(props)) = map.get("properties") {
            for (name, prop) in props {
                path.push(name.clone());
                let mut converted = convert(prop, path, json_text);
                path.pop();
                if !required.contains(&name.as_str()) {
                    make_nullable(&mut converted);
                }
                properties.insert(name.clone(), converted);
            }
        }
        let all: Vec<Value> = properties.keys().map(|k| Value::String(k.clone())).collect();
        out.insert("properties".into(), Value::Object(properties));
        out.insert("required".into(), Value::Array(all));
        out.insert("additionalProperties".into(), Value::Bool(false));
    }
    if is_array {
        path.push("[]".into());
        let items = match map.get("items") {
            Some(items @ Value::Object(_)) => convert(items, path, json_text),
            _ => {
                json_text.push(path.clone());
                json_text_schema(None)
            }
        };
        path.pop();
        out.insert("items".into(), items);
    }
    add_description(&map, &mut out);
    Value::Object(out)
}

/// The ways `schema` breaks the strict dialect's rules (empty when it obeys them): the root is
/// an object; every object lists all its properties in `required` and has
/// `additionalProperties: false`; no keyword outside the strict subset appears.
pub fn strict_violations(schema: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        problems.push("the root is not an object schema".to_owned());
    }
    check_strict_node(schema, "$", &mut problems);
    problems
}

fn check_strict_node(node: &Value, at: &str, problems: &mut Vec<String>) {
    let Value::Object(map) = node else {
        problems.push(format!("{at}: a schema must be an object, not {node}"));
        return;
    };
    for key in map.keys() {
        if !KEPT.contains(&key.as_str()) {
            problems.push(format!("{at}: keyword {key} is not allowed in strict mode"));
        }
    }
    let types = super::declared_types(node);
    if map.get("anyOf").is_none() && types.is_empty() && !map.contains_key("enum") {
        problems.push(format!("{at}: no type"));
    }
    if types.contains(&"object") {
        let props = map.get("properties").and_then(Value::as_object);
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        match props {
            None => problems.push(format!("{at}: an object without properties")),
            Some(props) => {
                for name in props.keys() {
                    if !required.contains(&name.as_str()) {
                        problems.push(format!("{at}: property {name} is not required"));
                    }
                }
                if required.len() != props.len() {
                    problems.push(format!("{at}: required lists names that are not properties"));
                }
                for (name, prop) in props {
                    check_strict_node(prop, &format!("{at}.{name}"), problems);
                }
            }
        }
        if map.get("additionalProperties") != Some(&Value::Bool(false)) {
            problems.push(format!("{at}: additionalProperties is not false"));
        }
    }
    if types.contains(&"array") {
        match map.get("items") {
            Some(items) => check_strict_node(items, &format!("{at}[]"), problems),
            None => problems.push(format!("{at}: an array without items")),
        }
    }
    if let Some(Value::Array(variants)) = map.get("anyOf") {
        for (i, variant) in variants.iter().enumerate() {
            check_strict_node(variant, &format!("{at}.anyOf[{i}]"), problems);
        }
    }
}

/// Merges the members of `allOf` into their parent (the parent wins on conflicts); strict mode
/// has no `allOf`.
fn merge_all_of(map: &Map<String, Value>) -> Map<String, Value> {
    let mut merged = map.clone();
    let Some(Value::Array(members)) = merged.remove("allOf") else {
        return merged;
    };
    for member in members {
        if let Value::Object(member) = member {
            merge_into(&mut merged, member);
        }
    }
    merged
}

/// The description with removed constraints appended as words.
fn add_description(source: &Map<String, Value>, out: &mut Map<String, Value>) {
    let mut notes: Vec<String> = DESCRIBED
        .iter()
        .filter_map(|(key, words)| source.get(*key).map(|v| format!("{words} {}", compact(v))))
        .collect();
    if let Some(Value::String(format)) = source.get("format") {
        notes.retain(|n| !n.starts_with("format"));
        notes.push(format!("format {format}"));
    }
    let base = source.get("description").and_then(Value::as_str).unwrap_or_default().to_owned();
    let text = match (base.is_empty(), notes.is_empty()) {
        (_, true) => base,
        (true, false) => format!("({})", notes.join(", ")),
        (false, false) => format!("{base} ({})", notes.join(", ")),
    };
    if text.is_empty() {
        out.remove("description");
    } else {
        out.insert("description".into(), Value::String(text));
    }
}

fn compact(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn json_text_schema(description: Option<&str>) -> Value {
    let note =
        "JSON text: any JSON value written as a string, e.g. \"null\", \"42\", \"\\\"text\\\"\" or \"{\\\"a\\\": 1}\"";
    let description = match description {
        Some(d) if !d.is_empty() => format!("{d} ({note})"),
        _ => format!("({note})"),
    };
    json!({"type": "string", "description": description})
}

/// Lets a converted node accept `null` as well.
fn make_nullable(node: &mut Value) {
    let Value::Object(map) = node else { return };
    if let Some(Value::Array(variants)) = map.get_mut("anyOf") {
        // A variant typed `null` whose `enum` leaves null out accepts nothing: look at what
        // each variant accepts, not at its type name.
        if !variants.iter().any(super::accepts_null) {
            variants.push(json!({"type": "null"}));
        }
        return;
    }
    match map.get_mut("type") {
        Some(Value::String(t)) if t != "null" => {
            let single = t.clone();
            map.insert("type".into(), json!([single, "null"]));
        }
        Some(Value::Array(types)) if !types.iter().any(|t| t == "null") => types.push(json!("null")),
        _ => {}
    }
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && !values.iter().any(Value::is_null)
    {
        values.push(Value::Null);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn optional_properties_become_required_and_nullable() {
        let schema = json!({
            "type": "object",
            "properties": {
                "command": {"type": "string", "enum": ["view", "create"]},
                "timeout": {"type": "integer", "minimum": 1, "maximum": 600000, "description": "ms"},
                "range": {"type": "array", "items": {"type": "integer"}}
            },
            "required": ["command"],
            "additionalProperties": false
        });
        let strict = strict_schema(&schema);
        assert_eq!(
            strict.schema,
            json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "enum": ["view", "create"]},
                    "timeout": {"type": ["integer", "null"], "description": "ms (minimum 1, maximum 600000)"},
                    "range": {"type": ["array", "null"], "items": {"type": "integer"}}
                },
                "required": ["command", "timeout", "range"],
                "additionalProperties": false
            })
        );
        assert!(strict.json_text_params.is_empty());
    }

    #[test]
    fn any_value_becomes_json_text() {
        let schema = json!({
            "type": "object",
            "properties": {"value": {"description": "new value"}, "map": {"type": "object"}},
            "required": []
        });
        let strict = strict_schema(&schema);
        assert_eq!(strict.json_text_params, vec![vec!["value".to_string()], vec!["map".to_string()]]);
        assert_eq!(strict.schema["properties"]["value"]["type"], json!(["string", "null"]));
        assert!(
            strict.schema["properties"]["value"]["description"].as_str().unwrap().starts_with("new value (JSON text")
        );
    }

    #[test]
    fn nested_objects_get_the_same_rules() {
        let schema = json!({
            "type": "object",
            "properties": {"todos": {"type": "array", "items": {
                "type": "object",
                "properties": {"content": {"type": "string"}, "id": {"type": "string"}},
                "required": ["content"]
            }}},
            "required": ["todos"]
        });
        let strict = strict_schema(&schema);
        assert_eq!(
            strict.schema["properties"]["todos"]["items"],
            json!({
                "type": "object",
                "properties": {"content": {"type": "string"}, "id": {"type": ["string", "null"]}},
                "required": ["content", "id"],
                "additionalProperties": false
            })
        );
    }

    #[test]
    fn an_optional_union_whose_null_variant_excludes_null_gets_a_real_null() {
        // Found by the property test: `allOf` of `null` and `const` merges into a variant
        // typed null that accepts nothing.
        let schema = json!({
            "type": "object",
            "properties": {"a": {"anyOf": [{"allOf": [{"type": "null"}, {"const": "fixed"}]}, {}]}},
            "required": []
        });
        let strict = strict_schema(&schema);
        assert!(super::super::accepts_null(&strict.schema["properties"]["a"]), "{}", strict.schema);
        assert_eq!(
            strict.schema["properties"]["a"]["anyOf"].as_array().unwrap().last(),
            Some(&json!({"type": "null"}))
        );
    }

    #[test]
    fn one_of_and_all_of_are_rewritten() {
        let schema = json!({
            "type": "object",
            "properties": {"v": {"oneOf": [{"type": "string"}, {"type": "integer"}]}},
            "allOf": [{"properties": {"w": {"type": "boolean"}}, "required": ["w"]}],
            "required": ["v"]
        });
        let strict = strict_schema(&schema);
        assert_eq!(
            strict.schema,
            json!({
                "type": "object",
                "properties": {"v": {"anyOf": [{"type": "string"}, {"type": "integer"}]}, "w": {"type": "boolean"}},
                "required": ["v", "w"],
                "additionalProperties": false
            })
        );
    }
}
