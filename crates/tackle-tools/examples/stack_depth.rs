//! Measures how deeply the input of each recursive parser (and of our own recursive walks over
//! a JSON value) may nest before the stack overflows, so the bounds Tackle enforces can be
//! set well below (docs/architecture.md, "Bounded input"). One probe per run, because an
//! overflow aborts the process: `bench/stack_depth.sh` bisects the depth for every case on a
//! 2 MiB thread (tokio's worker and blocking-pool size) and on the main thread.
//!
//! Usage: `stack_depth CASE DEPTH [main]`. Prints what the parser answered; a stack overflow
//! shows as SIGABRT. The library's own limits are lifted where it has a switch for them (the
//! regex nest limit), so what is measured is the stack, not the limit.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};

/// Tokio's default stack for worker and blocking threads.
const TOKIO_STACK: usize = 2 << 20;

fn nested(open: &str, inner: &str, close: &str, depth: usize) -> String {
    format!("{}{inner}{}", open.repeat(depth), close.repeat(depth))
}

/// A JSON value `depth` arrays deep, built without the parser's limit.
fn deep_value(depth: usize) -> Value {
    let mut value = json!(1);
    for _ in 0..depth {
        value = Value::Array(vec![value]);
    }
    value
}

/// `{key: inner}`, built without `json!`, whose interpolation copies `inner` recursively.
fn object(key: &str, inner: Value) -> Value {
    Value::Object(serde_json::Map::from_iter([(key.to_owned(), inner)]))
}

/// An object schema whose properties nest `depth` levels.
fn deep_schema(depth: usize) -> Value {
    let mut schema = json!({"type": "string"});
    for _ in 0..depth {
        let mut level = object("properties", object("a", schema));
        level["type"] = json!("object");
        schema = level;
    }
    schema
}

fn jsonpath(path: &str) -> String {
    match serde_json_path::JsonPath::parse(path) {
        Ok(parsed) => format!("parsed, {} match(es)", parsed.query(&json!([{"a": 1}])).all().len()),
        Err(err) => format!("error: {}", err.to_string().chars().take(120).collect::<String>()),
    }
}

fn probe(case: &str, depth: usize) -> String {
    match case {
        "jsonpath-parens" => jsonpath(&format!("$[?{}]", nested("(", "@.a", ")", depth))),
        "jsonpath-filters" => jsonpath(&format!("${}", nested("[?@", ".a", "]", depth))),
        "jsonpath-length" => jsonpath(&format!("$[?{} == 1]", nested("length(", "@.a", ")", depth))),
        "jsonpath-not" => jsonpath(&format!("$[?{}]", nested("!(", "@.a", ")", depth))),
        "json-parse" => match serde_json::from_str::<Value>(&nested("[", "", "]", depth)) {
            Ok(value) => format!("parsed {} bytes", value.to_string().len()),
            Err(err) => format!("error: {err}"),
        },
        "json-value" => {
            // What our code does with a value: clone, compare, write, drop.
            let value = deep_value(depth);
            let copy = value.clone();
            let same = copy == value;
            let text = serde_json::to_string(&value).unwrap();
            drop(copy);
            format!("equal: {same}, {} bytes", text.len())
        }
        "schema-compile" => match jsonschema::validator_for(&deep_schema(depth)) {
            Ok(validator) => format!("compiled, valid: {}", validator.is_valid(&json!({}))),
            Err(err) => format!("error: {err}"),
        },
        "schema-items" => {
            // One JSON level per schema level: the deepest schema a 128-level JSON text holds.
            let mut schema = json!({"type": "string"});
            for _ in 0..depth {
                schema = object("items", schema);
            }
            match jsonschema::validator_for(&schema) {
                Ok(validator) => format!("compiled, valid: {}", validator.is_valid(&deep_value(depth))),
                Err(err) => format!("error: {err}"),
            }
        }
        "schema-validate" => {
            let validator = jsonschema::validator_for(&json!({"type": "array", "items": {"$ref": "#"}})).unwrap();
            let value = deep_value(depth);
            format!("valid: {}, errors: {}", validator.is_valid(&value), validator.iter_errors(&value).count())
        }
        "schema-pattern" => match jsonschema::validator_for(&json!({"pattern": nested("(", "a", ")", depth)})) {
            Ok(validator) => format!("compiled, valid: {}", validator.is_valid(&json!("a"))),
            Err(err) => format!("error: {err}"),
        },
        "sanitize" => {
            let (out, warnings) = tackle_core::schema::sanitize(deep_schema(depth));
            format!("{} bytes, {} warning(s)", out.to_string().len(), warnings.len())
        }
        "strict" => {
            let strict = tackle_core::schema::strict_schema(&deep_schema(depth));
            format!("{} bytes", strict.schema.to_string().len())
        }
        "gemini" => {
            let spec = tackle_core::ToolSpec::new("t", "d").input_schema(deep_schema(depth));
            let rendered = tackle_core::schema::render_tool(&spec, tackle_core::Dialect::Gemini);
            format!("{} bytes", rendered.to_string().len())
        }
        "toml-arrays" => toml_parse(&format!("a = {}", nested("[", "", "]", depth))),
        "toml-tables" => toml_parse(&format!("a = {}", nested("{ b = ", "1", " }", depth))),
        "glob" => match globset::GlobBuilder::new(&nested("{", "a", "}", depth)).build() {
            Ok(glob) => format!("compiled, matches: {}", glob.compile_matcher().is_match("a")),
            Err(err) => format!("error: {err}"),
        },
        "regex" => {
            let mut builder = grep_regex::RegexMatcherBuilder::new();
            builder.nest_limit(u32::MAX);
            match builder.build(&nested("(", "a", ")", depth)) {
                Ok(_) => "compiled".to_owned(),
                Err(err) => format!("error: {}", err.to_string().lines().last().unwrap_or_default()),
            }
        }
        other => panic!("unknown case {other}"),
    }
}

fn toml_parse(text: &str) -> String {
    match toml::from_str::<toml::Table>(text) {
        Ok(table) => format!("parsed {} key(s)", table.len()),
        Err(err) => format!("error: {}", err.message()),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (case, depth) = (args[1].clone(), args[2].parse::<usize>().unwrap());
    let answer = if args.get(3).map(String::as_str) == Some("main") {
        probe(&case, depth)
    } else {
        std::thread::Builder::new().stack_size(TOKIO_STACK).spawn(move || probe(&case, depth)).unwrap().join().unwrap()
    };
    println!("{answer}");
}
