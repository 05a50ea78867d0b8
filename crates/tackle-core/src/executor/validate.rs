//! Validation of decoded arguments against a tool's JSON Schema, with the normative messages
//! of tools.md §0.1, each naming the parameter's path.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value;

use crate::spec::ToolSpec;

/// A tool's compiled input schema.
pub struct CompiledSchema {
    validator: Option<jsonschema::Validator>,
}

impl CompiledSchema {
    /// Compiles a schema. One that does not compile (a broken foreign schema) validates
    /// nothing, with a warning in the log.
    pub fn compile(schema: &Value) -> Self {
        match jsonschema::validator_for(schema) {
            Ok(validator) => CompiledSchema { validator: Some(validator) },
            Err(err) => {
                tracing::warn!(error = %err, "a tool's input schema does not compile; its arguments are not validated");
                CompiledSchema { validator: None }
            }
        }
    }

    /// Checks `args`; the error is the model-facing message.
    pub fn check(&self, spec: &ToolSpec, args: &Value) -> Result<(), String> {
        let Some(validator) = &self.validator else {
            return Ok(());
        };
        if validator.is_valid(args) {
            return Ok(());
        }
        let mut problems: Vec<(String, String)> = Vec::new();
        for error in validator.iter_errors(args) {
            let pointer = error.instance_path().as_str().to_owned();
            let path = display_path(args, &pointer);
            if let ValidationErrorKind::Required { property } = error.kind() {
                let name = property.as_str().map(str::to_owned).unwrap_or_else(|| property.to_string());
                if pointer.is_empty() {
                    return Err(format!("No {name} provided for the {} tool", spec.name));
                }
                problems.push((root_param(&pointer), format!("{path}.{name} is required")));
                continue;
            }
            if let ValidationErrorKind::AdditionalProperties { unexpected } = error.kind() {
                for name in unexpected {
                    let full = if path.is_empty() { name.clone() } else { format!("{path}.{name}") };
                    let root = if pointer.is_empty() { name.clone() } else { root_param(&pointer) };
                    problems.push((root, format!("unexpected parameter {full}")));
                }
                continue;
            }
            let subject = if path.is_empty() { "arguments".to_owned() } else { path };
            problems.push((root_param(&pointer), describe(&subject, error.kind(), &error.to_string())));
        }
        problems.dedup();
        // Report problems in the order the schema lists the parameters, unexpected ones last.
        let order: Vec<&str> = spec
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|props| props.keys().map(String::as_str).collect())
            .unwrap_or_default();
        problems.sort_by_key(|(root, _)| order.iter().position(|name| name == root).unwrap_or(usize::MAX));
        let text: Vec<String> = problems
            .into_iter()
            .map(|(root, problem)| match spec.param_hints.iter().find(|(param, _)| *param == root) {
                Some((_, hint)) => format!("{problem}; {hint}"),
                None => problem,
            })
            .collect();
        Err(format!("Invalid parameters for tool '{}': {}", spec.name, text.join("; ")))
    }
}

fn describe(path: &str, kind: &ValidationErrorKind, fallback: &str) -> String {
    match kind {
        ValidationErrorKind::Type { kind } => {
            let names: Vec<&str> = match kind {
                TypeKind::Single(t) => vec![t.as_str()],
                TypeKind::Multiple(set) => set.iter().map(|t| t.as_str()).collect(),
            };
            format!("{path} should be {}", names.join(" or "))
        }
        ValidationErrorKind::Enum { options } => {
            let listed: Vec<String> = match options.as_ref() {
                Value::Array(values) => values.iter().map(plain).collect(),
                other => vec![plain(other)],
            };
            format!("{path} must be one of: {}", listed.join(", "))
        }
        ValidationErrorKind::Constant { expected_value } => {
            format!("{path} must be {}", plain(expected_value))
        }
        ValidationErrorKind::Minimum { limit } => format!("{path} must be >= {limit}"),
        ValidationErrorKind::Maximum { limit } => format!("{path} must be <= {limit}"),
        ValidationErrorKind::ExclusiveMinimum { limit } => format!("{path} must be > {limit}"),
        ValidationErrorKind::ExclusiveMaximum { limit } => format!("{path} must be < {limit}"),
        ValidationErrorKind::MinLength { limit } => {
            format!("{path} must be at least {limit} characters long")
        }
        ValidationErrorKind::MaxLength { limit } => {
            format!("{path} must be at most {limit} characters long")
        }
        ValidationErrorKind::MinItems { limit } => {
            format!("{path} must have at least {limit} items")
        }
        ValidationErrorKind::MaxItems { limit } => {
            format!("{path} must have at most {limit} items")
        }
        ValidationErrorKind::Pattern { pattern } => {
            format!("{path} must match the pattern {pattern}")
        }
        ValidationErrorKind::AnyOf { .. } | ValidationErrorKind::OneOfNotValid { .. } => {
            format!("{path} does not match any of the allowed forms")
        }
        _ => format!("{path}: {fallback}"),
    }
}

/// A value as it appears in a message: strings bare, everything else as JSON.
fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The top-level parameter a JSON pointer starts with.
fn root_param(pointer: &str) -> String {
    pointer.trim_start_matches('/').split('/').next().map(unescape).unwrap_or_default()
}

fn unescape(segment: &str) -> String {
    segment.replace("~1", "/").replace("~0", "~")
}

/// `/todos/1/status` → `todos[1].status`, using the instance to tell indices from keys.
pub(crate) fn display_path(instance: &Value, pointer: &str) -> String {
    let mut out = String::new();
    let mut current = Some(instance);
    for raw in pointer.split('/').skip(1) {
        let segment = unescape(raw);
        match current {
            Some(Value::Array(items)) => {
                out.push_str(&format!("[{segment}]"));
                current = segment.parse::<usize>().ok().and_then(|i| items.get(i));
            }
            other => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(&segment);
                current = other.and_then(|v| v.get(&segment));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_show_indices_and_keys() {
        let instance = json!({"todos": [{"status": 1}, {"status": "x"}]});
        assert_eq!(display_path(&instance, "/todos/1/status"), "todos[1].status");
        assert_eq!(display_path(&instance, ""), "");
        assert_eq!(display_path(&json!({"a/b": 1}), "/a~1b"), "a/b");
    }
}
