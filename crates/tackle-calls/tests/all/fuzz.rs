//! Fuzzing, one target per parser (the proptest equivalent of `cargo fuzz`, which needs a
//! nightly toolchain): arbitrary bytes and hostile text into the markdown, xml and `tool`
//! parsers, the code-block scanner and the UTF-8 stream, and deep nesting (of JSON values and
//! of each format's markup) into every format. Nothing may panic or overflow the stack, every
//! offset must lie inside the text and in order, JSON nested past the limit of
//! docs/architecture.md ("Bounded input") is a parse error that says so, and a byte stream
//! must decode as `std::str::from_utf8` says. `.ci/run` runs these longer with
//! `TACKLE_FUZZ_CASES`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use proptest::prelude::*;
use tackle_calls::{TextFormat, Utf8Stream, codeblocks, instructions, parse, render_results};

fn cases() -> u32 {
    std::env::var("TACKLE_FUZZ_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(256)
}

/// Text that is mostly markup of the formats, with arbitrary characters mixed in.
fn hostile() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        3 => prop::sample::select(vec![
            "```", "```bash\n", "```save a\n", "\n```\n", "``````py", "<think>", "</think>", "@bash(c1): {", "}",
            "\"", "\\", "'", "<function_calls>", "<invoke name=\"typed\">", "<parameter name=\"count\">",
            "</parameter>", "</invoke>", "<tool-use>", "<typed ", "items=\"[1\"", ">", "</typed>", "<![CDATA[", "]]>",
            "&#x110000;", "&#;", "&amp", "\r", "\n", "cat << EOF\n", "EOF\n", "\"\"\"", "$((", "))",
        ]).prop_map(str::to_owned),
        1 => any::<String>(),
    ];
    prop::collection::vec(piece, 0..60).prop_map(|p| p.concat())
}

fn check_calls(format: TextFormat, text: &str) -> Result<(), TestCaseError> {
    let tools = support::test_tools();
    let calls = parse(format, text, &tools);
    let chars = text.chars().count();
    let mut last_end = 0;
    for call in &calls {
        prop_assert!(call.start < call.end && call.end <= chars, "{:?} in {:?}", call, text);
        prop_assert!(call.start >= last_end, "calls overlap or are out of order: {:?}", calls);
        last_end = call.end;
    }
    // Whatever was parsed can be answered.
    let outputs: Vec<_> = calls
        .iter()
        .map(|c| tackle_calls::CallResult { tool: &c.name, id: &c.id, is_error: c.parse_error.is_some(), output: text })
        .collect();
    render_results(format, &outputs);
    Ok(())
}

/// A JSON object nested `depth` levels (objects and arrays alternating).
fn nested_json(depth: usize) -> String {
    let (mut open, mut close) = (String::new(), String::new());
    for level in 0..depth {
        let (o, c) = if level % 2 == 0 { ("{\"a\": ", "}") } else { ("[", "]") };
        open.push_str(o);
        close.insert_str(0, c);
    }
    format!("{open}1{close}")
}

/// A `typed` call in `format` whose object parameter `options` holds `value`, and how many
/// levels the JSON text the parser reads adds around it (the arguments object, in `markdown`
/// and `tool`).
fn call_with_options(format: TextFormat, value: &str) -> (String, usize) {
    match format {
        TextFormat::Markdown => (format!("```typed\n{{\"text\": \"t\", \"options\": {value}}}\n```\n"), 1),
        TextFormat::Xml => (
            format!(
                "<function_calls><invoke name=\"typed\"><parameter name=\"text\">t</parameter>\
                 <parameter name=\"options\">{value}</parameter></invoke></function_calls>"
            ),
            0,
        ),
        TextFormat::Tool => (format!("@typed(c1): {{\"text\": \"t\", \"options\": {value}}}\n"), 1),
    }
}

/// Each format's own markup nested `depth` times, never closed or closed late.
fn nested_markup(format: TextFormat, depth: usize) -> String {
    match format {
        TextFormat::Markdown => format!("```typed\n{}{}", "```bash\n".repeat(depth), "```\n".repeat(depth)),
        TextFormat::Xml => format!(
            "<function_calls>{}{}",
            "<invoke name=\"typed\"><parameter name=\"options\">".repeat(depth),
            "</parameter></invoke>".repeat(depth / 2)
        ),
        TextFormat::Tool => format!("@typed(c1): {}\n{}", "{\"a\": ".repeat(depth), "@bash(c2): {".repeat(depth)),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn fuzz_deep_json_in_calls(format in prop::sample::select(TextFormat::ALL.to_vec()), depth in 1usize..3000) {
        let (text, around) = call_with_options(format, &nested_json(depth));
        check_calls(format, &text)?;
        let calls = parse(format, &text, &support::test_tools());
        prop_assert_eq!(calls.len(), 1, "{}", text);
        match &calls[0].parse_error {
            None => prop_assert!(depth + around <= tackle_core::text::JSON_MAX_DEPTH, "{}", text),
            Some(error) => {
                prop_assert!(depth + around > tackle_core::text::JSON_MAX_DEPTH, "{}", error);
                prop_assert!(error.contains("nested deeper than 127 levels"), "{}", error);
            }
        }
    }

    #[test]
    fn fuzz_deep_markup(format in prop::sample::select(TextFormat::ALL.to_vec()), depth in 0usize..20_000) {
        let text = nested_markup(format, depth);
        let tools = support::test_tools();
        let mut parser = tackle_calls::Parser::new(format, &tools);
        let mut calls = parser.feed(&text);
        let examined = parser.bytes_examined();
        calls.extend(parser.finish());
        // Linear work however deep the nesting (bad_input.rs bounds the same count).
        prop_assert!(examined <= 32 * text.len() as u64 + 1024, "{} for {}", examined, text.len());
        let chars = text.chars().count();
        let mut last_end = 0;
        for call in &calls {
            prop_assert!(call.start < call.end && call.end <= chars && call.start >= last_end, "{:?}", call);
            last_end = call.end;
        }
    }

    #[test]
    fn fuzz_markdown(text in hostile()) {
        check_calls(TextFormat::Markdown, &text)?;
    }

    #[test]
    fn fuzz_xml(text in hostile()) {
        check_calls(TextFormat::Xml, &text)?;
    }

    #[test]
    fn fuzz_tool(text in hostile()) {
        check_calls(TextFormat::Tool, &text)?;
    }

    #[test]
    fn fuzz_codeblocks(text in hostile()) {
        let chars = text.chars().count();
        let mut last_end = 0;
        for block in codeblocks(&text) {
            prop_assert!(block.start < block.end && block.end <= chars && block.start >= last_end);
            prop_assert!(!block.content.contains('\r'));
            last_end = block.end;
        }
    }

    #[test]
    fn fuzz_utf8_stream(bytes in prop::collection::vec(any::<u8>(), 0..200), cut in 1usize..9) {
        let mut stream = Utf8Stream::new();
        let mut text = String::new();
        let mut failed = None;
        for chunk in bytes.chunks(cut) {
            match stream.decode(chunk) {
                Ok(part) => text.push_str(&part),
                Err(err) => {
                    failed = Some(err.offset);
                    break;
                }
            }
        }
        let finished = if failed.is_none() { stream.finish().err().map(|e| e.offset) } else { failed };
        match std::str::from_utf8(&bytes) {
            Ok(valid) => {
                prop_assert_eq!(finished, None);
                prop_assert_eq!(text.as_str(), valid);
            }
            Err(err) => prop_assert_eq!(finished, Some(err.valid_up_to())),
        }
    }

    #[test]
    fn fuzz_instructions(names in prop::collection::vec("[a-zA-Z_][a-zA-Z0-9_ ./-]{0,12}", 0..4)) {
        let specs: Vec<tackle_core::ToolSpec> = names
            .iter()
            .map(|n| tackle_core::ToolSpec::new(n, format!("Tool {n}")).input_schema(serde_json::json!({"type": "object", "properties": {}})))
            .collect();
        let tools = tackle_calls::ToolIndex::new(&specs);
        for format in TextFormat::ALL {
            instructions(format, &tools);
        }
    }
}
