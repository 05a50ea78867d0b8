//! Validation of decoded arguments against a tool's JSON Schema, with the normative messages
//! of docs/reference/tools.md#names-and-aliases, each naming the parameter's path.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use serde_json::Value;

use crate::spec::{HintOn, ToolSpec};

/// Arguments that do not match a tool's schema. The message is composed from every problem
/// the validator found, ordered and worded for the model, and is shown to it as is.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ValidationError {
    message: String,
}

impl ValidationError {
    /// The model-facing message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The model-facing message, owned.
    pub fn into_message(self) -> String {
        self.message
    }
}

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
                // Logged only: the tool that brought the schema tells the person (an MCP
                // server's tool, as a notice), so the warning is not printed twice.
                tracing::debug!(error = %err, "a tool's input schema does not compile; its arguments are not validated");
                CompiledSchema { validator: None }
            }
        }
    }

    /// Checks `args`.
    pub fn check(&self, spec: &ToolSpec, args: &Value) -> Result<(), ValidationError> {
        let Some(validator) = &self.validator else {
            return Ok(());
        };
        if validator.is_valid(args) {
            return Ok(());
        }
        let mut problems: Vec<Problem> = Vec::new();
        for error in validator.iter_errors(args) {
            let pointer = error.instance_path().as_str().to_owned();
            let path = display_path(args, &pointer);
            if let ValidationErrorKind::Required { property } = error.kind() {
                let name = property.as_str().map(str::to_owned).unwrap_or_else(|| property.to_string());
                if pointer.is_empty() {
                    return Err(ValidationError { message: format!("No {name} provided for the {} tool", spec.name) });
                }
                problems.push(Problem::new(root_param(&pointer), format!("{path}.{name} is required")));
                continue;
            }
            if let ValidationErrorKind::AdditionalProperties { unexpected } = error.kind() {
                for name in unexpected {
                    let full = if path.is_empty() { name.clone() } else { format!("{path}.{name}") };
                    let root = if pointer.is_empty() { name.clone() } else { root_param(&pointer) };
                    problems.push(Problem::new(root, format!("unexpected parameter {full}")));
                }
                continue;
            }
            let subject = if path.is_empty() { "arguments".to_owned() } else { path };
            let mut problem = Problem::new(root_param(&pointer), describe(&subject, error.kind(), &error.to_string()));
            problem.above_maximum = matches!(
                error.kind(),
                ValidationErrorKind::Maximum { .. } | ValidationErrorKind::ExclusiveMaximum { .. }
            );
            problems.push(problem);
        }
        problems.dedup();
        // Report problems in the order the schema lists the parameters, unexpected ones last.
        let order: Vec<&str> = spec
            .input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|props| props.keys().map(String::as_str).collect())
            .unwrap_or_default();
        problems.sort_by_key(|problem| order.iter().position(|name| *name == problem.root).unwrap_or(usize::MAX));
        let mut text: Vec<String> = problems.iter().map(|problem| problem.text.clone()).collect();
        // A parameter's hint follows its last problem the hint is about, once.
        for hint in &spec.param_hints {
            let about = |problem: &Problem| {
                problem.root == hint.param && (hint.on == HintOn::AnyProblem || problem.above_maximum)
            };
            if let Some(last) = problems.iter().rposition(about) {
                let wording = if last + 1 < problems.len() { hint.hint.trim_end_matches('.') } else { &hint.hint };
                text[last] = format!("{}; {wording}", text[last]);
            }
        }
        Err(ValidationError { message: format!("Invalid parameters for tool '{}': {}", spec.name, text.join("; ")) })
    }
}

/// One validation problem, with the top-level parameter it is about.
#[derive(Debug, PartialEq)]
struct Problem {
    root: String,
    text: String,
    above_maximum: bool,
}

impl Problem {
    fn new(root: String, text: String) -> Self {
        Problem { root, text, above_maximum: false }
    }
}

fn describe(path: &str, kind: &ValidationErrorKind, fallback: &str) -> String {
    match kind {
        ValidationErrorKind::Type { kind } => {
            let names: Vec<&str> = match kind {
                TypeKind::Single(t) => vec![t.as_str()],
                TypeKind::Multiple(set) => set.iter().map(jsonschema::JsonType::as_str).collect(),
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

/// A serde error on arguments the schema accepted, worded as docs/reference/tools.md#arguments words validation problems:
/// `invalid value: integer `N`, expected u32` becomes `{path} must be <= 4294967295`, and
/// `invalid type: …, expected u64` becomes `{path} should be integer`. `path` is serde's
/// (`.` for the whole input).
pub(crate) fn describe_deserialize_error(path: &str, message: &str) -> String {
    let subject = if path == "." || path.is_empty() { "arguments" } else { path };
    let expected = message.rsplit_once(", expected ").map(|(_, expected)| expected.trim());
    if let Some(rest) = message.strip_prefix("invalid value: integer `")
        && let Some((number, _)) = rest.split_once('`')
        && let Some(bounds) = expected.and_then(integer_bounds)
    {
        let (min, max) = bounds;
        return match number.parse::<i128>() {
            Ok(n) if n < min => format!("{subject} must be >= {min}"),
            _ => format!("{subject} must be <= {max}"),
        };
    }
    if message.starts_with("invalid type: ")
        && let Some(json_type) = expected.and_then(json_type_of)
    {
        return format!("{subject} should be {json_type}");
    }
    format!("{subject}: {message}")
}

/// The range of a Rust integer type as serde names it.
fn integer_bounds(rust_type: &str) -> Option<(i128, i128)> {
    Some(match rust_type {
        "u8" => (0, u8::MAX.into()),
        "u16" => (0, u16::MAX.into()),
        "u32" => (0, u32::MAX.into()),
        "u64" => (0, u64::MAX.into()),
        "usize" => (0, usize::MAX as i128),
        "i8" => (i8::MIN.into(), i8::MAX.into()),
        "i16" => (i16::MIN.into(), i16::MAX.into()),
        "i32" => (i32::MIN.into(), i32::MAX.into()),
        "i64" => (i64::MIN.into(), i64::MAX.into()),
        "isize" => (isize::MIN as i128, isize::MAX as i128),
        _ => return None,
    })
}

/// The JSON type of what serde expected.
fn json_type_of(expected: &str) -> Option<&'static str> {
    if integer_bounds(expected).is_some() {
        return Some("integer");
    }
    Some(match expected {
        "f32" | "f64" => "number",
        "a boolean" => "boolean",
        "a string" | "a borrowed string" | "a character" => "string",
        "a sequence" => "array",
        "a map" => "object",
        _ => return None,
    })
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

    #[test]
    fn a_hint_follows_its_parameters_last_problem_once_and_only_the_problems_it_is_about() {
        let spec = ToolSpec::new("t", "test")
            .input_schema(json!({
                "type": "object",
                "properties": {
                    "range": {"type": "array", "items": {"type": "integer"}},
                    "timeout": {"type": "integer", "minimum": 1, "maximum": 10}
                },
                "additionalProperties": false
            }))
            .param_hint("range", "Parameter `range` should be a list of integers.")
            .param_hint_above_maximum("timeout", "use run_in_background for longer commands");
        let schema = CompiledSchema::compile(&spec.input_schema);
        let check = |args: Value| schema.check(&spec, &args).unwrap_err().into_message();
        assert_eq!(
            check(json!({"range": ["a", "b"]})),
            "Invalid parameters for tool 't': range[0] should be integer; range[1] should be integer; \
             Parameter `range` should be a list of integers."
        );
        assert_eq!(
            check(json!({"range": ["a"], "timeout": 11})),
            "Invalid parameters for tool 't': range[0] should be integer; Parameter `range` should be a list of \
             integers; timeout must be <= 10; use run_in_background for longer commands"
        );
        assert_eq!(check(json!({"timeout": 0})), "Invalid parameters for tool 't': timeout must be >= 1");
    }

    #[test]
    fn serde_range_and_type_errors_read_like_validation_problems() {
        let cases = [
            ("n", "invalid value: integer `99999999999`, expected u32", "n must be <= 4294967295"),
            ("n", "invalid value: integer `-3`, expected u64", "n must be >= 0"),
            ("a[2].b", "invalid type: floating point `1.5`, expected u64", "a[2].b should be integer"),
            ("s", "invalid type: integer `3`, expected a string", "s should be string"),
            (
                ".",
                "invalid type: sequence, expected struct Input",
                "arguments: invalid type: sequence, expected struct Input",
            ),
            ("x", "something custom", "x: something custom"),
        ];
        for (path, message, expected) in cases {
            assert_eq!(describe_deserialize_error(path, message), expected, "{message}");
        }
    }
}
