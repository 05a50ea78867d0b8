//! JSON Schemas: the canonical form Tackle keeps for every tool, and the dialects it is shown
//! to models and clients in.
//!
//! The canonical form is a draft 2020-12 object schema with no `$schema`, no root `title`, no
//! `$ref` (local references are inlined), optional properties not nullable (absent and `null`
//! mean the same, docs/reference/tools.md#names-and-aliases), `additionalProperties: false` at the root (an unexpected
//! parameter is an error the model can fix) and no schemars-only integer `format`s. Each
//! [`Dialect`] is a pure function of it.

mod dialect;
mod sanitize;
mod strict;
pub(crate) mod validate;

pub use dialect::{Dialect, UnknownDialect, render_tool, render_tools};
pub use sanitize::{SanitizeWarning, sanitize};
pub use strict::{StrictSchema, strict_schema, strict_violations};
pub use validate::ValidationError;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

/// The canonical input schema of a typed tool input.
pub fn schema_for<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Value::Object(root) = &mut schema {
        // The input type's own doc comment repeats the tool description; drop it.
        root.remove("description");
    }
    unwrap_doc_lines(&mut schema);
    canonicalize(schema)
}

/// Doc comments arrive with their source line breaks; a description reads as flowing text,
/// so single line breaks become spaces (blank-line paragraph breaks stay).
fn unwrap_doc_lines(node: &mut Value) {
    match node {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match value {
                    Value::String(text) if key == "description" && text.contains('\n') => {
                        *text = text
                            .split("\n\n")
                            .map(|para| para.split('\n').map(str::trim).collect::<Vec<_>>().join(" "))
                            .collect::<Vec<_>>()
                            .join("\n\n");
                    }
                    Value::Object(_) | Value::Array(_) if key != "enum" && key != "default" && key != "examples" => {
                        unwrap_doc_lines(value);
                    }
                    _ => {}
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(unwrap_doc_lines),
        _ => {}
    }
}

/// Brings a generated or foreign object schema into the canonical form.
pub fn canonicalize(schema: Value) -> Value {
    let (mut schema, _warnings) = sanitize(schema);
    if let Value::Object(root) = &mut schema {
        root.remove("title");
        root.remove("$schema");
        root.entry("type").or_insert_with(|| json!("object"));
        root.entry("properties").or_insert_with(|| Value::Object(Map::new()));
        root.entry("additionalProperties").or_insert(Value::Bool(false));
    }
    strip_generated_noise(&mut schema);
    schema
}

/// Removes what schemars adds that no provider wants: numeric `format`s and the `null`
/// alternative of optional properties.
fn strip_generated_noise(node: &mut Value) {
    let Value::Object(map) = node else { return };
    if let Some(Value::String(format)) = map.get("format")
        && is_numeric_format(format)
    {
        map.remove("format");
    }
    let required: Vec<String> = map
        .get("required")
        .and_then(Value::as_array)
        .map(|req| req.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    if let Some(Value::Object(props)) = map.get_mut("properties") {
        for (name, prop) in props.iter_mut() {
            if !required.contains(name) {
                drop_null_alternative(prop);
            }
        }
    }
    for (key, child) in map.iter_mut() {
        match key.as_str() {
            "properties" | "$defs" | "definitions" | "patternProperties" => {
                if let Value::Object(children) = child {
                    children.values_mut().for_each(strip_generated_noise);
                }
            }
            "items" | "additionalProperties" | "not" | "contains" => strip_generated_noise(child),
            "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                if let Value::Array(children) = child {
                    children.iter_mut().for_each(strip_generated_noise);
                }
            }
            _ => {}
        }
    }
}

fn is_numeric_format(format: &str) -> bool {
    matches!(
        format,
        "int"
            | "int8"
            | "int16"
            | "int32"
            | "int64"
            | "uint"
            | "uint8"
            | "uint16"
            | "uint32"
            | "uint64"
            | "float"
            | "double"
    )
}

/// `{"type": ["string", "null"]}` → `{"type": "string"}`; `anyOf: [X, {"type": "null"}]` → X.
/// A schema whose only purpose is null, or that accepts anything, is left alone.
fn drop_null_alternative(prop: &mut Value) {
    let Value::Object(map) = prop else { return };
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            map.insert("type".into(), only);
        }
        if let Some(Value::Array(values)) = map.get_mut("enum") {
            values.retain(|v| !v.is_null());
        }
        return;
    }
    if let Some(Value::Array(variants)) = map.get("anyOf") {
        let non_null: Vec<Value> = variants.iter().filter(|v| !is_null_schema(v)).cloned().collect();
        if non_null.len() == 1 && non_null.len() < variants.len() {
            map.remove("anyOf");
            if let Value::Object(inner) = &non_null[0] {
                for (key, value) in inner {
                    map.entry(key.clone()).or_insert_with(|| value.clone());
                }
            }
        } else if non_null.len() < variants.len() {
            map.insert("anyOf".into(), Value::Array(non_null));
        }
    }
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
}

/// The JSON type names a schema node allows (`type` as a string or an array); empty when the
/// node does not say.
pub fn declared_types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Whether a schema node accepts `null` (explicitly, or because it accepts anything).
pub fn accepts_null(schema: &Value) -> bool {
    match schema {
        Value::Bool(b) => *b,
        Value::Object(map) => {
            if map.is_empty() {
                return true;
            }
            if let Some(Value::Array(variants)) = map.get("anyOf").or_else(|| map.get("oneOf")) {
                return variants.iter().any(accepts_null);
            }
            if let Some(Value::Array(values)) = map.get("enum") {
                return values.iter().any(Value::is_null);
            }
            let types = declared_types(schema);
            if types.is_empty() {
                return !map.contains_key("properties") && !map.contains_key("items") && !map.contains_key("const");
            }
            types.contains(&"null")
        }
        _ => false,
    }
}
