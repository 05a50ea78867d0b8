//! Rendering (docs/reference/formats.md#rendering, docs/reference/formats.md#xml, docs/reference/formats.md#tool, docs/reference/formats.md#results-back-to-the-model): calls round-trip through every format for every
//! tool, results come back in the exact shapes of docs/reference/formats.md#results-back-to-the-model, and instructions teach each format.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use pretty_assertions::assert_eq;
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tackle_calls::{CallResult, TextFormat, ToolIndex, instructions, parse, render_call, render_results};
use tackle_core::ToolSpec;

/// Every tool the round trip covers: the rule-test tools and every built-in.
fn all_specs() -> Vec<ToolSpec> {
    let mut specs = support::test_specs();
    for entry in tackle_tools::builtin_registry().entries() {
        if !specs.iter().any(|s| s.name == entry.spec.name) {
            specs.push(entry.spec.clone());
        }
    }
    specs
}

/// Text that tries to break every format: fences, tags, entities, CDATA, quotes, newlines.
fn nasty_string() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "a",
        " ",
        "\n",
        "\t",
        "```",
        "``",
        "`",
        "```python\n",
        "\n```\n",
        "</parameter>",
        "<parameter name=\"x\">",
        "<![CDATA[",
        "]]>",
        "&lt;",
        "&amp;",
        "&#65;",
        "&",
        "<",
        ">",
        "\"",
        "'",
        "\\",
        "{",
        "}",
        "@x(y): {}",
        "$ ",
        "<think>",
        "</invoke>",
        "é",
        "😀",
        "\u{a0}",
        "<<EOF",
        "EOF",
        "#",
    ]);
    prop::collection::vec(pieces, 0..12).prop_map(|p| p.concat())
}

/// A value valid for `schema` (the subset the tools use).
fn value_for(schema: &Value) -> BoxedStrategy<Value> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return prop::sample::select(values.clone()).boxed();
    }
    let types: Vec<String> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.clone()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).map(str::to_owned).collect(),
        _ => vec!["string".into(), "integer".into(), "boolean".into(), "array".into()],
    };
    let min = schema.get("minimum").and_then(Value::as_i64).unwrap_or(i64::MIN / 2);
    let options: Vec<BoxedStrategy<Value>> = types
        .iter()
        .map(|t| match t.as_str() {
            "string" => nasty_string().prop_map(Value::String).boxed(),
            "integer" => (min..i64::MAX / 2).prop_map(|n| json!(n)).boxed(),
            "number" => (-1e9f64..1e9).prop_map(|n| json!(n)).boxed(),
            "boolean" => any::<bool>().prop_map(Value::Bool).boxed(),
            "array" => {
                let item = schema.get("items").cloned().unwrap_or(json!({"type": "string"}));
                prop::collection::vec(value_for(&item), 0..3).prop_map(Value::Array).boxed()
            }
            "object" => prop::collection::btree_map("[a-z]{1,4}", nasty_string(), 0..3)
                .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k, Value::String(v))).collect()))
                .boxed(),
            _ => Just(Value::Null).boxed(),
        })
        .collect();
    prop::strategy::Union::new(options).boxed()
}

/// A valid argument set for `spec`: every required parameter, some optional ones.
fn args_for(spec: &ToolSpec) -> BoxedStrategy<Map<String, Value>> {
    let props = spec.input_schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
    let required = spec.required_params().into_iter().map(str::to_owned).collect::<Vec<_>>();
    let mut strategy: BoxedStrategy<Map<String, Value>> = Just(Map::new()).boxed();
    for (name, schema) in props {
        let is_required = required.contains(&name);
        strategy = (strategy, value_for(&schema), any::<bool>())
            .prop_map(move |(mut args, value, include)| {
                if is_required || include {
                    args.insert(name.clone(), value);
                }
                args
            })
            .boxed();
    }
    strategy
}

fn tool_and_args() -> impl Strategy<Value = (ToolSpec, Map<String, Value>)> {
    prop::sample::select(all_specs()).prop_flat_map(|spec| {
        let args = args_for(&spec);
        (Just(spec), args)
    })
}

fn round_trip(
    format: TextFormat,
    tools: &ToolIndex,
    name: &str,
    args: &Map<String, Value>,
    id: &str,
) -> Option<String> {
    let text = render_call(format, tools, name, args, id).ok()?;
    let [call] = parse(format, &text, tools).try_into().unwrap();
    assert_eq!((call.name.as_str(), &call.args, call.parse_error.as_deref()), (name, args, None), "{text}");
    // An xml call spans its own element; the others span the whole text.
    let (start, end) = match format {
        TextFormat::Xml => ("<function_calls>\n".len(), text.chars().count() - "\n</function_calls>".len()),
        _ => (0, text.chars().count()),
    };
    assert_eq!((call.start, call.end), (start, end));
    if format != TextFormat::Markdown {
        assert_eq!(call.id, id);
    }
    Some(text)
}

/// Cases per property: 300 in CI; `TACKLE_FUZZ_CASES` runs longer.
fn cases() -> u32 {
    std::env::var("TACKLE_FUZZ_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(300)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// xml and tool carry every valid argument set of every tool.
    #[test]
    fn every_call_round_trips_through_xml_and_tool((spec, args) in tool_and_args(), id in "[A-Za-z0-9_:.-]{1,12}") {
        let tools = ToolIndex::new(&all_specs());
        for format in [TextFormat::Xml, TextFormat::Tool] {
            prop_assert!(round_trip(format, &tools, &spec.name, &args, &id).is_some(), "{} refused {:?}", format, args);
        }
    }

    /// Markdown carries every argument set of a JSON-body tool; a block-mapped tool's call
    /// round-trips whenever it renders.
    #[test]
    fn every_call_round_trips_through_markdown((spec, args) in tool_and_args()) {
        let tools = ToolIndex::new(&all_specs());
        let rendered = round_trip(TextFormat::Markdown, &tools, &spec.name, &args, "call_1_1");
        if spec.block.is_none() {
            prop_assert!(rendered.is_some(), "markdown refused {:?}", args);
        }
    }

    /// A mapped tool's body renders whatever it holds, short of what the fence rules cannot
    /// carry (a shell quote left open, a heredoc, an unbalanced nested opener, a bare `\r`).
    #[test]
    fn block_bodies_render_in_markdown(
        body in "([a-z0-9 =.;:()\\[\\]{}<>|&$@/_-]|\n|`{1,5}[ ]*\n|\n```\n)*",
        path in "[a-z0-9_][a-z0-9_ ./-]{0,20}[a-z0-9_]",
    ) {
        let tools = ToolIndex::new(&all_specs());
        let clean = !body.contains("<<");
        if clean {
            prop_assert!(round_trip(TextFormat::Markdown, &tools, "bash", &Map::from_iter([("command".into(), json!(body))]), "x").is_some());
        }
        let args = Map::from_iter([("path".into(), json!(path)), ("content".into(), json!(body))]);
        prop_assert!(round_trip(TextFormat::Markdown, &tools, "save", &args, "x").is_some());
    }
}

#[test]
fn markdown_fences_grow_past_the_longest_backtick_run_in_the_body() {
    let tools = support::test_tools();
    let args =
        Map::from_iter([("path".into(), json!("a.md")), ("content".into(), json!("````\nx\n```python\ny\n```"))]);
    let text = render_call(TextFormat::Markdown, &tools, "save", &args, "x").unwrap();
    assert_eq!(text, "`````save a.md\n````\nx\n```python\ny\n```\n`````");
    let args = Map::from_iter([("command".into(), json!("$ ls"))]);
    assert_eq!(render_call(TextFormat::Markdown, &tools, "bash", &args, "x").unwrap(), "```bash\n$ $ ls\n```");
}

#[test]
fn markdown_refuses_what_a_block_cannot_carry() {
    let tools = support::test_tools();
    let args = Map::from_iter([("command".into(), json!("sleep 1")), ("timeout".into(), json!(5))]);
    let err = render_call(TextFormat::Markdown, &tools, "bash", &args, "x").unwrap_err();
    assert_eq!(
        err.to_string(),
        "a call to 'bash' with these arguments cannot be written in the markdown format: a ```bash block carries only `command`, not `timeout`; use the xml or tool format"
    );
    let args = Map::from_iter([("command".into(), json!("echo it's"))]);
    let err = render_call(TextFormat::Markdown, &tools, "bash", &args, "x").unwrap_err();
    assert!(err.reason.contains("would not parse back"), "{err}");
    let reason = |name: &str, args: Value| {
        let Value::Object(args) = args else { unreachable!() };
        render_call(TextFormat::Markdown, &tools, name, &args, "x").unwrap_err().reason
    };
    assert_eq!(
        reason("save", json!({"path": "a", "content": "x", "mode": "w"})),
        "a ```save block carries only `content` and `path`, not `mode`; use the xml or tool format"
    );
    assert_eq!(reason("save", json!({"path": "a", "content": 5})), "`content` must be a string");
    assert_eq!(reason("save", json!({"path": "", "content": "x"})), "the langtag words must be a non-empty string");
    assert_eq!(reason("nope", json!({})), "the tool is not loaded");
}

#[test]
fn xml_renders_form_one_with_cdata_where_needed() {
    let tools = support::test_tools();
    let args = Map::from_iter([
        ("text".into(), json!("a < b && c")),
        ("count".into(), json!(3)),
        ("items".into(), json!(["x"])),
        ("either".into(), json!("5")),
        ("choice".into(), json!("a")),
        ("anything".into(), json!("</parameter>")),
    ]);
    let text = render_call(TextFormat::Xml, &tools, "typed", &args, "t1").unwrap();
    assert_eq!(
        text,
        "<function_calls>\n<invoke name=\"typed\" id=\"t1\">\n<parameter name=\"text\">a < b && c</parameter>\n<parameter name=\"count\">3</parameter>\n<parameter name=\"items\">[\"x\"]</parameter>\n<parameter name=\"either\">\"5\"</parameter>\n<parameter name=\"choice\">a</parameter>\n<parameter name=\"anything\"><![CDATA[\"</parameter>\"]]></parameter>\n</invoke>\n</function_calls>"
    );
    let args = Map::from_iter([("path".into(), json!("a")), ("content".into(), json!("line\n"))]);
    let text = render_call(TextFormat::Xml, &tools, "save", &args, "s").unwrap();
    assert!(text.contains("<parameter name=\"content\"><![CDATA[line\n]]></parameter>"), "{text}");
    let args = Map::from_iter([("path".into(), json!("a")), ("content".into(), json!("two\nlines\n"))]);
    let text = render_call(TextFormat::Xml, &tools, "save", &args, "s").unwrap();
    assert!(text.contains("<parameter name=\"content\">\ntwo\nlines\n</parameter>"), "{text}");
    // Tags that would end a value early (docs/formats-differences.md #25) go in CDATA.
    for content in ["a </invoke> b", "<invoke name=\"x\">", "end </function_calls>"] {
        let args = Map::from_iter([("path".into(), json!("a")), ("content".into(), json!(content))]);
        let text = render_call(TextFormat::Xml, &tools, "save", &args, "s").unwrap();
        assert!(text.contains(&format!("<![CDATA[{content}]]>")), "{text}");
    }
}

#[test]
fn tool_format_renders_one_line() {
    let tools = support::test_tools();
    let args = Map::from_iter([("path".into(), json!("a\nb.txt"))]);
    assert_eq!(
        render_call(TextFormat::Tool, &tools, "read_file", &args, "r1").unwrap(),
        "@read_file(r1): {\"path\":\"a\\nb.txt\"}"
    );
    assert!(render_call(TextFormat::Tool, &tools, "read_file", &args, "bad id").is_err());
}

#[test]
fn results_come_back_in_one_message_in_each_formats_shape() {
    let results = [
        CallResult { tool: "bash", id: "call_2_1", is_error: false, output: "a\n```\nb" },
        CallResult { tool: "read_file", id: "r9", is_error: true, output: "No such file </tool-result>" },
    ];
    assert_eq!(
        render_results(TextFormat::Markdown, &results),
        "Result of bash (call 1):\n````output\na\n```\nb\n````\n\nResult of read_file (call 2) — error:\n```output\nNo such file </tool-result>\n```"
    );
    assert_eq!(
        render_results(TextFormat::Xml, &results),
        "<tool-result name=\"bash\" id=\"call_2_1\" status=\"ok\">a\n```\nb</tool-result>\n<tool-result name=\"read_file\" id=\"r9\" status=\"error\"><![CDATA[No such file </tool-result>]]></tool-result>"
    );
    assert_eq!(
        render_results(TextFormat::Tool, &results),
        "@result(call_2_1): {\"tool\":\"bash\",\"is_error\":false,\"output\":\"a\\n```\\nb\"}\n@result(r9): {\"tool\":\"read_file\",\"is_error\":true,\"output\":\"No such file </tool-result>\"}"
    );
}

#[test]
fn instructions_teach_each_format_with_examples_that_parse() {
    let specs = all_specs();
    let tools = ToolIndex::new(&specs);
    for format in TextFormat::ALL {
        let text = instructions(format, &tools);
        for spec in &specs {
            assert!(text.contains(&format!("\n### {}\n", spec.name)), "{format}: {}", spec.name);
        }
        assert!(text.contains("fence"), "{format} must say how to show an example without running it");
        // Every example in the instructions is a real call of its tool, and nothing else is.
        let calls = parse(format, &text, &tools);
        let named: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        let expected: Vec<&str> = tools.specs().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(named, expected, "{format}");
        assert!(calls.iter().all(|c| c.parse_error.is_none()), "{format}: {calls:?}");
    }
    let markdown = instructions(TextFormat::Markdown, &tools);
    assert!(markdown.contains("```bash, ```shell, ```sh blocks are executed"), "{markdown}");
    assert!(instructions(TextFormat::Xml, &tools).contains("- offset (integer): "));
    assert!(instructions(TextFormat::Tool, &tools).contains("Parameters (JSON Schema): {\"type\":\"object\""));
}

#[test]
fn long_descriptions_are_cut_for_provider_limits() {
    let long = ToolSpec::new("wordy", "word ".repeat(1000))
        .input_schema(json!({"type": "object", "properties": {}, "additionalProperties": false}));
    let tools = ToolIndex::new([&long]);
    let text = instructions(TextFormat::Tool, &tools);
    let description = text.split("### wordy\n").nth(1).unwrap().lines().next().unwrap();
    assert!(description.chars().count() <= tackle_calls::MAX_DESCRIPTION_CHARS, "{}", description.len());
    assert!(description.ends_with("word…"));
}
