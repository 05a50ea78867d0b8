//! Every built-in tool's definition in every dialect: one insta snapshot each, and a check of
//! each provider's rules (docs/reference/providers.md#schemas-sent-to-providers), so a schema change is always seen and a schema a
//! provider would reject (Trae's recurring HTTP 400) never ships.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use tackle_core::schema::{Dialect, render_tool, strict_violations};

/// Keywords outside Gemini's OpenAPI subset.
const GEMINI_FORBIDDEN: &[&str] =
    &["additionalProperties", "$ref", "$defs", "const", "oneOf", "allOf", "$schema", "default"];

fn walk(node: &Value, visit: &mut dyn FnMut(&serde_json::Map<String, Value>)) {
    match node {
        Value::Object(map) => {
            visit(map);
            map.values().for_each(|child| walk(child, visit));
        }
        Value::Array(items) => items.iter().for_each(|child| walk(child, visit)),
        _ => {}
    }
}

fn check_provider_rules(dialect: Dialect, rendered: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    match dialect {
        Dialect::OpenAi => {
            let params = &rendered["function"]["parameters"];
            if params["type"] != "object" {
                problems.push("parameters is not an object schema".into());
            }
        }
        Dialect::OpenAiStrict => {
            if rendered["function"]["strict"] != true {
                problems.push("strict is not true".into());
            }
            problems.extend(strict_violations(&rendered["function"]["parameters"]));
        }
        Dialect::Anthropic => {
            if rendered["input_schema"]["type"] != "object" {
                problems.push("input_schema is not an object schema".into());
            }
        }
        Dialect::Gemini => {
            if let Some(params) = rendered.get("parameters") {
                walk(params, &mut |map| {
                    for key in GEMINI_FORBIDDEN {
                        if map.contains_key(*key) {
                            problems.push(format!("gemini schema has {key}"));
                        }
                    }
                    if map.get("type").is_some_and(Value::is_array) {
                        problems.push("gemini schema has a type array".into());
                    }
                });
            }
        }
        Dialect::Mcp => {
            if rendered["inputSchema"]["type"] != "object" || rendered["inputSchema"].get("$schema").is_some() {
                problems.push("inputSchema is not a plain object schema".into());
            }
            for hint in ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] {
                if !rendered["annotations"][hint].is_boolean() {
                    problems.push(format!("annotation {hint} missing"));
                }
            }
        }
    }
    let name =
        rendered.get("name").or_else(|| rendered["function"].get("name")).and_then(Value::as_str).unwrap_or_default();
    let valid_name =
        !name.is_empty() && name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid_name {
        problems.push(format!("tool name {name:?} does not match ^[a-zA-Z0-9_-]{{1,64}}$"));
    }
    problems
}

#[test]
fn every_tool_in_every_dialect_matches_its_snapshot_and_the_provider_rules() {
    let registry = tackle_tools::builtin_registry();
    assert!(!registry.entries().is_empty());
    for entry in registry.entries() {
        for dialect in Dialect::ALL {
            let rendered = render_tool(&entry.spec, dialect);
            let problems = check_provider_rules(dialect, &rendered);
            assert!(problems.is_empty(), "{} in {dialect}: {problems:?}\n{rendered:#}", entry.spec.name);
            insta::assert_json_snapshot!(format!("{}__{}", entry.spec.name, dialect), rendered);
        }
    }
}
