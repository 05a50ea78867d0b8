//! Turning raw call arguments into the JSON object the validator sees: parse text, accept an
//! object given as a string, rename parameter aliases, read JSON-text parameters of the
//! strict dialect, drop `null` for optional parameters, and apply the safe coercions of
//! docs/reference/tools.md#names-and-aliases (`"10"` → `10`, `"true"` → `true`, a string holding a JSON object or array).

use serde_json::{Map, Value};

use crate::call::CallArgs;
use crate::schema::{accepts_null, declared_types};
use crate::spec::ToolSpec;

/// Decoded arguments and the paths that were coerced.
#[derive(Debug)]
pub(crate) struct Decoded {
    pub args: Value,
    pub coerced: Vec<String>,
}

/// Why arguments could not be decoded; the text is what the model is told.
#[derive(Debug, thiserror::Error)]
pub(crate) enum DecodeError {
    /// The call format already found the arguments malformed (its own message).
    #[error("{0}")]
    Malformed(String),
    /// The arguments' text is not JSON.
    #[error("Invalid JSON in arguments for tool '{tool}': {message}. Send the arguments as one JSON object.")]
    InvalidJson { tool: String, message: String },
    /// The arguments are JSON, but not an object.
    #[error("Arguments for tool '{tool}' must be a JSON object, got {kind}")]
    NotAnObject { tool: String, kind: &'static str },
    /// A parameter and its alias were both given, with different values.
    #[error(
        "Parameters '{name}' and '{alias}' of tool '{tool}' were both given, with different values; give only '{name}'."
    )]
    AliasConflict { tool: String, name: String, alias: String },
}

/// Decodes `raw` for the tool `spec`.
pub(crate) fn decode(spec: &ToolSpec, raw: CallArgs, json_text_params: &[Vec<String>]) -> Result<Decoded, DecodeError> {
    let mut args = match raw {
        CallArgs::Malformed(message) => return Err(DecodeError::Malformed(message)),
        CallArgs::Json(value) => value,
        CallArgs::Text(text) => parse_text(&spec.name, &text)?,
    };
    // A JSON object sent as a string (double-encoded arguments) is accepted.
    if let Value::String(text) = &args
        && let Ok(inner @ Value::Object(_)) = serde_json::from_str::<Value>(text.trim())
    {
        args = inner;
    }
    if args.is_null() {
        args = Value::Object(Map::new());
    }
    let Value::Object(map) = &mut args else {
        return Err(DecodeError::NotAnObject { tool: spec.name.clone(), kind: crate::text::json_kind(&args) });
    };
    rename_aliases(spec, map)?;
    for path in json_text_params {
        // The strict dialect shows an optional JSON-text parameter as a nullable string, so
        // there `null` means "absent" while the text `"null"` is the JSON value null.
        if let [name] = path.as_slice()
            && map.get(name).is_some_and(Value::is_null)
            && !is_required(&spec.input_schema, name)
        {
            map.remove(name);
            continue;
        }
        parse_json_text(map, path);
    }
    let mut coerced = Vec::new();
    let mut path = String::new();
    coerce(&spec.input_schema, &mut args, &mut path, &mut coerced);
    Ok(Decoded { args, coerced })
}

fn parse_text(tool: &str, text: &str) -> Result<Value, DecodeError> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    serde_json::from_str(text)
        .map_err(|err| DecodeError::InvalidJson { tool: tool.to_owned(), message: crate::text::json_error(&err) })
}

fn rename_aliases(spec: &ToolSpec, map: &mut Map<String, Value>) -> Result<(), DecodeError> {
    for alias in &spec.param_aliases {
        let Some(value) = map.remove(&alias.alias) else {
            continue;
        };
        match map.get(&alias.name) {
            Some(existing) if *existing != value => {
                return Err(DecodeError::AliasConflict {
                    tool: spec.name.clone(),
                    name: alias.name.clone(),
                    alias: alias.alias.clone(),
                });
            }
            Some(_) => {}
            None => {
                map.insert(alias.name.clone(), value);
            }
        }
    }
    Ok(())
}

/// Replaces a JSON-text string at `path` by the value it holds; text that is not JSON stays a
/// string (the model meant the text itself).
fn parse_json_text(map: &mut Map<String, Value>, path: &[String]) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    let Some(slot) = map.get_mut(first) else {
        return;
    };
    parse_json_text_in(slot, rest);
}

fn parse_json_text_in(slot: &mut Value, rest: &[String]) {
    match rest.split_first() {
        None => {
            if let Value::String(text) = slot
                && let Ok(value) = serde_json::from_str::<Value>(text)
            {
                *slot = value;
            }
        }
        Some((segment, tail)) if segment == "[]" => {
            if let Value::Array(items) = slot {
                items.iter_mut().for_each(|item| parse_json_text_in(item, tail));
            }
        }
        Some((segment, tail)) => {
            if let Some(child) = slot.get_mut(segment.as_str()) {
                parse_json_text_in(child, tail);
            }
        }
    }
}

/// The types a schema node allows, looking through `anyOf` / `oneOf`.
fn allowed_types(schema: &Value) -> Vec<&str> {
    let mut types = declared_types(schema);
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(variants)) = schema.get(key) {
            for variant in variants {
                types.extend(declared_types(variant));
            }
        }
    }
    types
}

/// The sub-schema for object property `name`, looking through `anyOf` / `oneOf`.
fn property_schema<'a>(schema: &'a Value, name: &str) -> Option<&'a Value> {
    if let Some(prop) = schema.get("properties").and_then(|p| p.get(name)) {
        return Some(prop);
    }
    ["anyOf", "oneOf"]
        .iter()
        .filter_map(|k| schema.get(*k).and_then(Value::as_array))
        .flatten()
        .find_map(|variant| variant.get("properties").and_then(|p| p.get(name)))
}

fn is_required(schema: &Value, name: &str) -> bool {
    schema.get("required").and_then(Value::as_array).is_some_and(|r| r.iter().any(|v| v == name))
}

fn coerce(schema: &Value, value: &mut Value, path: &mut String, coerced: &mut Vec<String>) {
    match value {
        Value::String(text) => {
            let types = allowed_types(schema);
            if types.is_empty() || types.contains(&"string") {
                return;
            }
            if let Some(converted) = coerce_string(text, &types) {
                *value = converted;
                coerced.push(if path.is_empty() { "arguments".into() } else { path.clone() });
                // A parsed object or array may need coercions inside it too.
                coerce(schema, value, path, coerced);
            }
        }
        Value::Object(map) => {
            let names: Vec<String> = map.keys().cloned().collect();
            for name in names {
                let Some(prop_schema) = property_schema(schema, &name) else {
                    continue;
                };
                if map.get(&name).is_some_and(Value::is_null)
                    && !is_required(schema, &name)
                    && !accepts_null(prop_schema)
                {
                    map.remove(&name);
                    continue;
                }
                let Some(child) = map.get_mut(&name) else {
                    continue;
                };
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&name);
                coerce(prop_schema, child, path, coerced);
                path.truncate(len);
            }
        }
        Value::Number(number) if number.is_f64() => {
            // `5000.0` for an integer parameter: the model meant 5000.
            let types = allowed_types(schema);
            if types.contains(&"integer")
                && !types.contains(&"number")
                && let Some(whole) = number.as_f64().and_then(whole_number)
            {
                *value = whole;
                coerced.push(if path.is_empty() { "arguments".into() } else { path.clone() });
            }
        }
        Value::Array(items) => {
            let Some(item_schema) = schema.get("items").filter(|s| s.is_object()) else {
                return;
            };
            for (index, item) in items.iter_mut().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{index}]"));
                coerce(item_schema, item, path, coerced);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// An integer value for a float with no fractional part that fits in 64 bits.
fn whole_number(n: f64) -> Option<Value> {
    if n.fract() != 0.0 {
        return None;
    }
    if n >= 0.0 && n < u64::MAX as f64 {
        Some(Value::from(n as u64))
    } else if n < 0.0 && n >= i64::MIN as f64 {
        Some(Value::from(n as i64))
    } else {
        None
    }
}

fn coerce_string(text: &str, types: &[&str]) -> Option<Value> {
    let trimmed = text.trim();
    if (types.contains(&"integer") || types.contains(&"number"))
        && let Ok(n) = trimmed.parse::<i64>()
    {
        return Some(Value::from(n));
    }
    if types.contains(&"number")
        && let Some(n) = trimmed.parse::<f64>().ok().filter(|n| n.is_finite()).and_then(serde_json::Number::from_f64)
    {
        return Some(Value::Number(n));
    }
    if types.contains(&"boolean") {
        match trimmed.to_ascii_lowercase().as_str() {
            "true" => return Some(Value::Bool(true)),
            "false" => return Some(Value::Bool(false)),
            _ => {}
        }
    }
    let wants_object = types.contains(&"object");
    let wants_array = types.contains(&"array");
    if ((wants_object && trimmed.starts_with('{')) || (wants_array && trimmed.starts_with('[')))
        && let Ok(parsed) = serde_json::from_str::<Value>(trimmed)
        && ((parsed.is_object() && wants_object) || (parsed.is_array() && wants_array))
    {
        return Some(parsed);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn spec() -> ToolSpec {
        ToolSpec::new("t", "test")
            .input_schema(json!({
                "type": "object",
                "properties": {
                    "n": {"type": "integer"},
                    "f": {"type": "number"},
                    "b": {"type": "boolean"},
                    "s": {"type": "string"},
                    "range": {"type": "array", "items": {"type": "integer"}},
                    "opt": {"type": "integer"},
                    "any": {}
                },
                "required": ["s"],
                "additionalProperties": false
            }))
            .param_alias("num", "n")
    }

    #[test]
    fn coerces_safe_strings_and_notes_them() {
        let decoded = decode(
            &spec(),
            CallArgs::Json(json!({"n": "10", "f": "2.5", "b": "true", "s": "10", "range": "[1, \"2\"]"})),
            &[],
        )
        .unwrap();
        assert_eq!(decoded.args, json!({"n": 10, "f": 2.5, "b": true, "s": "10", "range": [1, 2]}));
        assert_eq!(decoded.coerced, vec!["n", "f", "b", "range", "range[1]"]);
    }

    #[test]
    fn whole_floats_become_integers_and_numbers_keep_integer_form() {
        let decoded =
            decode(&spec(), CallArgs::Json(json!({"s": "x", "n": 5000.0, "opt": 1.5, "f": "5"})), &[]).unwrap();
        assert_eq!(decoded.args, json!({"s": "x", "n": 5000, "opt": 1.5, "f": 5}));
        assert!(decoded.args["n"].is_u64() && decoded.args["f"].is_i64());
        assert_eq!(decoded.coerced, vec!["n", "f"]);
        let decoded = decode(&spec(), CallArgs::Json(json!({"s": "x", "n": 1e30})), &[]).unwrap();
        assert_eq!(decoded.args["n"], json!(1e30), "out of 64-bit range: left for validation to refuse");
    }

    #[test]
    fn null_for_optional_means_absent_unless_null_is_a_value() {
        let decoded = decode(&spec(), CallArgs::Json(json!({"s": "x", "opt": null, "any": null})), &[]).unwrap();
        assert_eq!(decoded.args, json!({"s": "x", "any": null}));
    }

    #[test]
    fn text_arguments_and_double_encoding() {
        let decoded = decode(&spec(), CallArgs::Text("\"{\\\"s\\\": \\\"x\\\"}\"".into()), &[]).unwrap();
        assert_eq!(decoded.args, json!({"s": "x"}));
        let empty = decode(&spec(), CallArgs::Text("  ".into()), &[]).unwrap();
        assert_eq!(empty.args, json!({}));
    }

    #[test]
    fn malformed_text_and_non_objects_are_errors() {
        let err = decode(&spec(), CallArgs::Text("{\"s\": ".into()), &[]).unwrap_err().to_string();
        assert!(err.starts_with("Invalid JSON in arguments for tool 't': EOF while parsing"), "{err}");
        assert!(err.ends_with("Send the arguments as one JSON object."));
        let err = decode(&spec(), CallArgs::Json(json!([1])), &[]).unwrap_err().to_string();
        assert_eq!(err, "Arguments for tool 't' must be a JSON object, got an array");
    }

    #[test]
    fn aliases_are_renamed_and_conflicts_refused() {
        let decoded = decode(&spec(), CallArgs::Json(json!({"s": "x", "num": 3})), &[]).unwrap();
        assert_eq!(decoded.args, json!({"s": "x", "n": 3}));
        let same = decode(&spec(), CallArgs::Json(json!({"s": "x", "num": 3, "n": 3})), &[]).unwrap();
        assert_eq!(same.args, json!({"s": "x", "n": 3}));
        let err = decode(&spec(), CallArgs::Json(json!({"s": "x", "num": 3, "n": 4})), &[]).unwrap_err().to_string();
        assert!(err.contains("'n' and 'num'"), "{err}");
    }

    #[test]
    fn json_text_params_are_parsed_only_when_listed() {
        let args = json!({"s": "x", "any": "{\"a\": 1}"});
        let listed = decode(&spec(), CallArgs::Json(args.clone()), &[vec!["any".into()]]).unwrap();
        assert_eq!(listed.args["any"], json!({"a": 1}));
        let unlisted = decode(&spec(), CallArgs::Json(args), &[]).unwrap();
        assert_eq!(unlisted.args["any"], json!("{\"a\": 1}"));
        let not_json = decode(&spec(), CallArgs::Json(json!({"s": "x", "any": "zz"})), &[vec!["any".into()]]).unwrap();
        assert_eq!(not_json.args["any"], json!("zz"));
    }

    #[test]
    fn strict_json_text_null_is_absent_and_the_text_null_is_a_value() {
        let strict = [vec!["any".to_string()]];
        let absent = decode(&spec(), CallArgs::Json(json!({"s": "x", "any": null})), &strict).unwrap();
        assert_eq!(absent.args, json!({"s": "x"}));
        let null_value = decode(&spec(), CallArgs::Json(json!({"s": "x", "any": "null"})), &strict).unwrap();
        assert_eq!(null_value.args, json!({"s": "x", "any": null}));
        // Outside the strict dialect an explicit null stays a value.
        let plain = decode(&spec(), CallArgs::Json(json!({"s": "x", "any": null})), &[]).unwrap();
        assert_eq!(plain.args, json!({"s": "x", "any": null}));
    }
}
