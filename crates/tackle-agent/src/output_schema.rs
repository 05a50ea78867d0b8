//! Structured final answers (`tackle run --output-schema`, the library's
//! `AgentBuilder::output_schema`; docs/reference/cli.md#structured-final-answers): the JSON
//! Schema a run's final answer must match, the system prompt section that tells the model, and
//! the check of the answer, whose problems are sent back to the model once. The loop
//! (`agent.rs`) decides when an answer is checked; this module only says whether it matches.

use std::fmt::Write as _;

use serde_json::Value;
use tackle_core::text::{json_depth, json_error};

/// The deepest schema compiled (as for MCP servers' schemas): deeper ones are refused.
pub const MAX_SCHEMA_DEPTH: usize = 64;

/// The largest schema (serialized) put in the system prompt.
pub const MAX_SCHEMA_BYTES: usize = 256 * 1024;

/// The validation problems sent back to the model at most; the rest are counted.
const MAX_PROBLEMS: usize = 10;

/// The characters of one problem kept (the validator quotes the offending value, which the
/// model controls and may be huge).
const MAX_PROBLEM_CHARS: usize = 300;

/// A schema that cannot be used for final answers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutputSchemaError {
    /// Nested deeper than [`MAX_SCHEMA_DEPTH`].
    #[error("nests {0} levels, more than the {MAX_SCHEMA_DEPTH} Tackle compiles")]
    TooDeep(usize),
    /// Larger than [`MAX_SCHEMA_BYTES`] once serialized.
    #[error("is {0} bytes, more than the {MAX_SCHEMA_BYTES} Tackle puts in the system prompt")]
    TooLarge(usize),
    /// Not a JSON Schema the validator accepts (including `$ref`s to other documents: they are
    /// never fetched).
    #[error("is not a valid JSON Schema: {0}")]
    Invalid(String),
}

/// A compiled schema for a run's final answer.
pub struct OutputSchema {
    schema: Value,
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for OutputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutputSchema").field("schema", &self.schema).finish_non_exhaustive()
    }
}

/// A final answer that does not match: its problems, each one line and bounded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    problems: Vec<String>,
    /// Problems found beyond those kept.
    more: usize,
}

impl Mismatch {
    fn one(problem: String) -> Mismatch {
        Mismatch { problems: vec![bounded(&problem)], more: 0 }
    }

    /// The problems, one `- ` line each.
    pub fn problems(&self) -> String {
        let mut text = self.problems.iter().map(|p| format!("- {p}")).collect::<Vec<_>>().join("\n");
        if self.more > 0 {
            let _ = write!(text, "\n- ... and {} more", self.more);
        }
        text
    }

    /// What the model is told before its one chance to correct the answer.
    pub fn feedback(&self) -> String {
        format!(
            "Your final answer does not match the required output schema:\n{}\nReply again with the corrected final \
             answer: one JSON value that matches the schema, and nothing else.",
            self.problems()
        )
    }

    /// The run's final result when the corrected answer does not match either.
    pub fn summary(&self) -> String {
        format!("The final answer does not match the output schema (after one correction):\n{}", self.problems())
    }
}

impl OutputSchema {
    /// Compiles `schema`. It is checked against its meta-schema; a `$ref` to another
    /// document is not fetched, so it makes the schema invalid.
    pub fn new(schema: Value) -> Result<OutputSchema, OutputSchemaError> {
        let depth = json_depth(&schema);
        if depth > MAX_SCHEMA_DEPTH {
            return Err(OutputSchemaError::TooDeep(depth));
        }
        let size = schema.to_string().len();
        if size > MAX_SCHEMA_BYTES {
            return Err(OutputSchemaError::TooLarge(size));
        }
        let validator =
            jsonschema::validator_for(&schema).map_err(|err| OutputSchemaError::Invalid(bounded(&err.to_string())))?;
        Ok(OutputSchema { schema, validator })
    }

    /// The system prompt section that asks for the answer's shape.
    pub fn prompt_section(&self) -> String {
        let schema = serde_json::to_string_pretty(&self.schema).unwrap_or_else(|_| self.schema.to_string());
        format!(
            "# Final answer format\nYour final answer (the text of the reply that ends the run) must be one JSON value \
             that matches the JSON Schema below, and nothing else: no words before or after it (a single ```json \
             fence around it is accepted).\n```json\n{schema}\n```\n"
        )
    }

    /// The value of `answer` when it is one JSON value (alone, or alone in one ```json or
    /// plain ``` fence) that matches the schema.
    pub fn check(&self, answer: &str) -> Result<Value, Mismatch> {
        let value: Value = serde_json::from_str(unfenced(answer))
            .map_err(|err| Mismatch::one(format!("the answer is not one JSON value: {}", json_error(&err))))?;
        let mut problems = Vec::new();
        let mut more = 0usize;
        for error in self.validator.iter_errors(&value) {
            if problems.len() == MAX_PROBLEMS {
                more += 1;
                continue;
            }
            let at = error.instance_path().as_str().to_owned();
            let at = if at.is_empty() { "the answer".to_owned() } else { format!("at {at}") };
            problems.push(bounded(&format!("{at}: {error}")));
        }
        if problems.is_empty() { Ok(value) } else { Err(Mismatch { problems, more }) }
    }
}

/// `answer` without surrounding white space and, when it is exactly one fenced block whose
/// info string is empty or `json`, without the fence.
fn unfenced(answer: &str) -> &str {
    let trimmed = answer.trim();
    let Some(rest) = trimmed.strip_prefix("```") else { return trimmed };
    let Some((info, body)) = rest.split_once('\n') else { return trimmed };
    let info = info.trim();
    if !(info.is_empty() || info.eq_ignore_ascii_case("json")) {
        return trimmed;
    }
    body.trim_end().strip_suffix("```").unwrap_or(trimmed)
}

/// `text` on one line, cut to [`MAX_PROBLEM_CHARS`] characters.
fn bounded(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= MAX_PROBLEM_CHARS {
        return line;
    }
    let mut cut: String = line.chars().take(MAX_PROBLEM_CHARS).collect();
    cut.push_str(" [...]");
    cut
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn schema() -> OutputSchema {
        OutputSchema::new(json!({
            "type": "object",
            "properties": {"files": {"type": "array", "items": {"type": "string"}}, "count": {"type": "integer"}},
            "required": ["files", "count"],
            "additionalProperties": false
        }))
        .unwrap()
    }

    #[test]
    fn a_matching_answer_gives_its_value_bare_or_in_one_json_fence() {
        let schema = schema();
        let value = json!({"files": ["a.rs"], "count": 1});
        assert_eq!(schema.check(r#" {"files": ["a.rs"], "count": 1} "#), Ok(value.clone()));
        assert_eq!(schema.check("```json\n{\"files\": [\"a.rs\"], \"count\": 1}\n```\n"), Ok(value.clone()));
        assert_eq!(schema.check("```\n{\"files\": [\"a.rs\"], \"count\": 1}\n```"), Ok(value.clone()));
        assert_eq!(schema.check("```JSON\n{\"files\": [\"a.rs\"], \"count\": 1}```"), Ok(value));
    }

    #[test]
    fn prose_other_fences_and_two_values_are_not_answers() {
        let schema = schema();
        for answer in [
            "Here it is: {\"files\": [], \"count\": 0}",
            "```python\n{\"files\": [], \"count\": 0}\n```",
            "```json\n{\"files\": [], \"count\": 0}\n```\nDone.",
            "{\"files\": [], \"count\": 0} {\"files\": [], \"count\": 0}",
            "```json\n{\"files\": [], \"count\": 0}\n```\n```json\n{}\n```",
            "",
        ] {
            let problems = schema.check(answer).unwrap_err().problems();
            assert!(problems.starts_with("- the answer is not one JSON value: "), "{answer:?}: {problems}");
        }
    }

    #[test]
    fn problems_name_where_and_what() {
        let problems = schema().check(r#"{"files": [1], "extra": true}"#).unwrap_err().problems();
        assert!(problems.contains("at /files/0: 1 is not of type \"string\""), "{problems}");
        assert!(problems.contains("\"count\" is a required property"), "{problems}");
        assert!(problems.contains("extra"), "{problems}");
    }

    #[test]
    fn hostile_answers_give_bounded_problems() {
        let schema = schema();
        // A huge string where a number belongs: the quoted value is cut.
        let huge = format!(r#"{{"files": [], "count": "{}"}}"#, "x".repeat(1_000_000));
        let problems = schema.check(&huge).unwrap_err().problems();
        assert!(problems.len() < 1000, "{} chars", problems.len());
        assert!(problems.contains("[...]"), "{problems}");
        // Ten thousand wrong items: ten problems, the rest counted.
        let items: Vec<Value> = (0..10_000).map(Value::from).collect();
        let many = json!({"files": items, "count": 1}).to_string();
        let mismatch = schema.check(&many).unwrap_err();
        assert_eq!(mismatch.problems().lines().count(), MAX_PROBLEMS + 1, "{}", mismatch.problems());
        assert!(mismatch.problems().ends_with("- ... and 9990 more"), "{}", mismatch.problems());
        // Nesting past serde_json's limit is refused, not a stack overflow.
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let problems = schema.check(&deep).unwrap_err().problems();
        assert!(problems.contains("nested deeper than"), "{problems}");
        // Control characters and new lines stay on one line per problem.
        let problems = schema.check("{\"files\": [\"\\n- fake problem\"], \"count\": \"\\u001b[31m\"}").unwrap_err();
        assert_eq!(problems.problems().lines().filter(|l| l.starts_with("- ")).count(), 1);
    }

    #[test]
    fn invalid_deep_large_and_remote_schemas_are_refused() {
        assert!(matches!(OutputSchema::new(json!({"type": "nonsense"})), Err(OutputSchemaError::Invalid(_))));
        assert!(matches!(OutputSchema::new(json!(42)), Err(OutputSchemaError::Invalid(_))));
        let mut deep = json!({"type": "string"});
        for _ in 0..100 {
            deep = json!({"items": deep});
        }
        assert!(matches!(OutputSchema::new(deep), Err(OutputSchemaError::TooDeep(_))));
        let large = json!({"description": "x".repeat(MAX_SCHEMA_BYTES)});
        assert!(matches!(OutputSchema::new(large), Err(OutputSchemaError::TooLarge(_))));
        // Never fetched: with remote resolution compiled out, the reference does not resolve.
        let remote = OutputSchema::new(json!({"$ref": "http://127.0.0.1:9/schema.json"}));
        assert!(matches!(remote, Err(OutputSchemaError::Invalid(_))), "{remote:?}");
        let file = OutputSchema::new(json!({"$ref": "file:///etc/passwd"}));
        assert!(matches!(file, Err(OutputSchemaError::Invalid(_))), "{file:?}");
        // Boolean schemas are schemas.
        assert_eq!(OutputSchema::new(json!(true)).unwrap().check("[1]"), Ok(json!([1])));
    }

    #[test]
    fn the_prompt_section_carries_the_schema() {
        let section = schema().prompt_section();
        assert!(section.starts_with("# Final answer format\n"), "{section}");
        assert!(section.contains("\"additionalProperties\": false"), "{section}");
    }
}
