//! Hostile nesting into the executor and the schema pipeline, as a model, an MCP client or an
//! MCP server could send it (docs/architecture.md, "Bounded input"): arguments nested past the
//! JSON limit get a clear refusal, values composed from JSON-text parameters run, and foreign
//! schemas of every shape JSON can carry go through sanitize, the strict and other dialects,
//! compilation and validation without overflowing the stack or multiplying memory. A stack
//! overflow would abort the test binary. `TACKLE_FUZZ_CASES` runs the property longer. Nested
//! configuration files are tackle-policy's (its `tests/all/deep_config.rs`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{Value, json};
use tackle_core::registry::ToolSource;
use tackle_core::schema::{Dialect, render_tool, sanitize, strict_schema};
use tackle_core::text::{JSON_MAX_DEPTH, json_depth as depth};
use tackle_core::{
    BoxFuture, DynTool, Executor, ExecutorConfig, PreparedCall, Registry, ToolCall, ToolError, ToolOutput, ToolSession,
    ToolSessionConfig, ToolSpec,
};
use tokio_util::sync::CancellationToken;

fn cases() -> u32 {
    std::env::var("TACKLE_FUZZ_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(64)
}

/// A tool with a schema from outside (as an MCP import has); it answers with the depth of the
/// arguments it received.
struct Foreign {
    spec: ToolSpec,
}

impl DynTool for Foreign {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn prepare(&self, args: &Value) -> Result<PreparedCall, ToolError> {
        let depth = depth(args);
        Ok(PreparedCall::new(true, true, None, move |_| {
            Box::pin(async move { Ok(ToolOutput::text(format!("depth {depth}"))) })
        }))
    }

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

struct Fixture {
    session: ToolSession,
    executor: Executor,
    _dir: tempfile::TempDir,
}

/// A session with the tool `foreign`, whose input schema is `schema` sanitized as an import's.
fn fixture(schema: &Value) -> Fixture {
    let (mut clean, _) = sanitize(schema.clone());
    if let Value::Object(root) = &mut clean {
        root.insert("type".into(), json!("object"));
    }
    let spec = ToolSpec::new("foreign", "A tool with a foreign schema.").input_schema(clean);
    let mut registry = Registry::new();
    registry.register_dyn(
        &["default"],
        ToolSource::Mcp("s".into()),
        Arc::new(move || Arc::new(Foreign { spec: spec.clone() }) as Arc<dyn DynTool>),
    );
    let selection = registry.select("default", "default").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let session = ToolSession::new(ToolSessionConfig::new(dir.path()), registry.instantiate(&selection));
    Fixture { session, executor: Executor::new(ExecutorConfig::default()), _dir: dir }
}

async fn run_text(fx: &Fixture, args: &str) -> ToolOutput {
    fx.executor.run(&fx.session, ToolCall::from_text("c1", "foreign", args), &CancellationToken::new()).await
}

/// `{"a": [[…1…]]}`: the arguments object around arrays, `depth` levels in all.
fn nested_args(depth: usize) -> String {
    format!("{{\"a\": {}1{}}}", "[".repeat(depth - 1), "]".repeat(depth - 1))
}

#[tokio::test]
async fn arguments_past_the_json_limit_are_refused_and_at_it_they_run() {
    let fx = fixture(&json!({"type": "object"}));
    let output = run_text(&fx, &nested_args(JSON_MAX_DEPTH)).await;
    assert_eq!(output.text_content(), format!("depth {JSON_MAX_DEPTH}"));
    for too_deep in [JSON_MAX_DEPTH + 1, 100_000] {
        let output = run_text(&fx, &nested_args(too_deep)).await;
        assert!(output.is_error && output.meta.rejected, "{}", output.text_content());
        assert!(
            output.text_content().starts_with(
                "Invalid JSON in arguments for tool 'foreign': arrays and objects nested deeper than 127 levels (the \
                 most Tackle reads) at line 1 column"
            ),
            "{}",
            output.text_content()
        );
    }
    // A double-encoded object nested too deep stays a string, which is not an object.
    let output = run_text(&fx, &serde_json::to_string(&nested_args(JSON_MAX_DEPTH + 1)).unwrap()).await;
    assert!(output.is_error, "{}", output.text_content());
}

#[tokio::test]
async fn json_text_parameters_compose_values_deeper_than_one_text_and_run() {
    // The strict dialect's JSON-text parameters (and coercions of strings holding JSON) put a
    // parsed value inside the parsed arguments: deeper than any one text, and still safe.
    let mut fx = fixture(&json!({"type": "object", "properties": {"value": {}, "list": {"type": "array"}}}));
    fx.session.set_json_text_params("foreign", vec![vec!["value".into()]]);
    let inner = format!("{}1{}", "[".repeat(JSON_MAX_DEPTH), "]".repeat(JSON_MAX_DEPTH));
    let args = json!({"value": inner, "list": inner}).to_string();
    let output = run_text(&fx, &args).await;
    assert_eq!(output.text_content(), format!("depth {}", JSON_MAX_DEPTH + 1));
}

#[tokio::test]
async fn reference_loops_and_recursive_schemas_answer() {
    let loops = [
        json!({"$ref": "#/$defs/d", "$defs": {"d": {"$ref": "#/$defs/d"}}}),
        json!({"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"anyOf": [{"$ref": "#/$defs/a"}]}}}),
        json!({"type": "object", "properties": {"a": {"$ref": "#"}}, "additionalProperties": {"$ref": "#"}}),
        json!({"type": ["object", "array"], "items": {"$ref": "#"}, "properties": {"a": {"$ref": "#"}}}),
    ];
    for schema in loops {
        let fx = fixture(&schema);
        let args = nested_args(JSON_MAX_DEPTH);
        let value: Value = serde_json::from_str(&args).unwrap();
        if let Ok(validator) = jsonschema::validator_for(&schema) {
            let _ = validator.iter_errors(&value).count();
        }
        let output = run_text(&fx, &args).await;
        assert!(!output.text_content().is_empty(), "{schema}");
    }
}

#[test]
fn allowlist_globs_nested_past_globsets_bound_are_refused() {
    let mut registry = Registry::new();
    let spec = ToolSpec::new("foreign", "d").input_schema(json!({"type": "object"}));
    registry.register_dyn(
        &["default"],
        ToolSource::Builtin,
        Arc::new(move || Arc::new(Foreign { spec: spec.clone() }) as Arc<dyn DynTool>),
    );
    let braces = |depth: usize| format!("{}foreign{}", "{".repeat(depth), "}".repeat(depth));
    let err = registry.select(&braces(100_000), "default").unwrap_err().to_string();
    assert!(err.contains("invalid glob") && err.contains("nested too deeply"), "{err}");
    assert_eq!(registry.select(&braces(99), "default").unwrap().names, ["foreign"]);
}

/// One level of a schema around `inner`, as JSON text (keywords the sanitizer, the dialects,
/// the decoder and jsonschema each walk).
fn wrap(level: u8, inner: &str) -> String {
    match level % 8 {
        0 => format!(r#"{{"type": "object", "properties": {{"a": {inner}}}, "required": ["a"]}}"#),
        1 => format!(r#"{{"type": "array", "items": {inner}}}"#),
        2 => format!(r#"{{"anyOf": [{inner}, {{"type": "null"}}]}}"#),
        3 => format!(r#"{{"allOf": [{inner}]}}"#),
        4 => format!(r#"{{"not": {{"not": {inner}}}}}"#),
        5 => format!(r#"{{"type": "object", "additionalProperties": {inner}}}"#),
        6 => format!(r#"{{"oneOf": [{inner}]}}"#),
        _ => format!(r##"{{"$ref": "#/$defs/d", "$defs": {{"d": {inner}}}}}"##),
    }
}

/// An instance that follows the shape of `levels` (objects under `a`, arrays), `extra` levels
/// deeper at the bottom.
fn instance(levels: &[u8], extra: usize) -> String {
    let mut value = format!("{}\"x\"{}", "[".repeat(extra), "]".repeat(extra));
    for &level in levels {
        value = match level % 8 {
            1 => format!("[{value}]"),
            0 | 5 => format!("{{\"a\": {value}}}"),
            _ => value,
        };
    }
    value
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// Foreign schemas of random shape up to the deepest JSON can carry (and past it, where
    /// parsing refuses them): every step of the pipeline answers.
    #[test]
    fn foreign_schemas_of_any_depth_go_through_every_step(
        levels in prop::collection::vec(any::<u8>(), 0..150),
        extra in 0usize..140,
    ) {
        let mut text = r#"{"type": "string"}"#.to_owned();
        for &level in &levels {
            text = wrap(level, &text);
        }
        let schema: Value = match serde_json::from_str(&text) {
            Ok(schema) => schema,
            Err(err) => {
                // What JSON cannot carry never arrives.
                prop_assert!(tackle_core::text::json_too_deep(&err), "{}", err);
                return Ok(());
            }
        };
        let (clean, _) = sanitize(schema.clone());
        prop_assert!(clean.to_string().len() < 20 * text.len() + 100_000);
        let strict = strict_schema(&schema);
        prop_assert_eq!(strict.schema["type"].clone(), json!("object"));
        let spec = ToolSpec::new("foreign", "d").input_schema(clean);
        for dialect in [Dialect::OpenAi, Dialect::OpenAiStrict, Dialect::Anthropic, Dialect::Gemini, Dialect::Mcp] {
            render_tool(&spec, dialect);
        }
        let instance = instance(&levels, extra);
        if let Ok(validator) = jsonschema::validator_for(&schema)
            && let Ok(value) = serde_json::from_str::<Value>(&instance)
        {
            let _ = validator.iter_errors(&value).count();
        }
        let fx = fixture(&schema);
        let args = format!("{{\"a\": {instance}}}");
        let output = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(run_text(&fx, &args));
        match serde_json::from_str::<Value>(&args) {
            Ok(value) if !output.is_error => prop_assert_eq!(output.text_content(), format!("depth {}", depth(&value))),
            Ok(_) => prop_assert!(!output.text_content().is_empty()),
            Err(_) => prop_assert!(output.text_content().contains("nested deeper than 127 levels")),
        }
    }
}
