//! Fuzzing, one target per parser (the proptest equivalent of `cargo fuzz`, which needs a
//! nightly toolchain): arbitrary bytes and hostile text into the markdown, xml and `tool`
//! parsers, the code-block scanner and the UTF-8 stream. Nothing may panic, every offset must
//! lie inside the text and in order, and a byte stream must decode as `std::str::from_utf8`
//! says. `.ci/run` runs these longer with `TACKLE_FUZZ_CASES`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use proptest::prelude::*;
use tackle_calls::{CallFormat, Utf8Stream, codeblocks, instructions, parse, render_results};

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

fn check_calls(format: CallFormat, text: &str) -> Result<(), TestCaseError> {
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn fuzz_markdown(text in hostile()) {
        check_calls(CallFormat::Markdown, &text)?;
    }

    #[test]
    fn fuzz_xml(text in hostile()) {
        check_calls(CallFormat::Xml, &text)?;
    }

    #[test]
    fn fuzz_tool(text in hostile()) {
        check_calls(CallFormat::Tool, &text)?;
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
        for format in CallFormat::ALL {
            instructions(format, &tools);
        }
    }
}
