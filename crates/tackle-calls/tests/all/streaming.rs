//! The incremental contract (docs/reference/formats.md#incremental-parser), as properties: for any text and any chunking
//! (splits inside `\r\n`, fence runs, tags, JSON and multi-byte characters included), the
//! results of all `feed`s plus `finish` equal the whole-text parse. This is also the fuzzing of
//! every parser: random and hostile texts must never panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use proptest::prelude::*;
use tackle_calls::{TextFormat, codeblocks, parse};

/// Pieces that exercise every rule when strung together at random.
const PIECES: &[&str] = &[
    "```",
    "````",
    "``````",
    "`",
    "\n",
    "\r\n",
    "\r",
    " ",
    "\t",
    "x",
    "é",
    "😀",
    "bash",
    "sh",
    "python",
    "ipython",
    "markdown",
    "save a.txt",
    "read_file",
    "<think>",
    "</think>",
    "<thinking>",
    "</thinking>",
    "<<EOF",
    "EOF",
    "<<<",
    "$((1 << 2))",
    "'",
    "\"",
    "\"\"\"",
    "\\",
    "#",
    "$ ",
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "@bash(c1): ",
    "@read_file(r2):",
    "{\"command\": \"ls\"}",
    "<function_calls>",
    "</function_calls>",
    "<invoke name=\"bash\">",
    "</invoke>",
    "<parameter name=\"command\">",
    "</parameter>",
    "<tool-use>",
    "</tool-use>",
    "<bash>",
    "</bash>",
    "<save path=\"p\">",
    "</save>",
    "<![CDATA[",
    "]]>",
    "&lt;",
    "&amp;",
    "&#65;",
    "/>",
    ">",
    "<",
    "=",
    "True",
];

fn pieces() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(PIECES), 0..120).prop_map(|p| p.concat())
}

/// Chunk sizes: mostly a few bytes, as providers stream, and some that span several of the
/// 16-byte blocks the wake-up tests look at.
fn sizes() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(prop_oneof![3 => 1usize..24, 1 => 24usize..100], 1..6)
}

fn check_all(text: &str, sizes: &[usize]) -> Result<(), TestCaseError> {
    let tools = support::test_tools();
    prop_assert_eq!(support::codeblocks_chunked(text, sizes), codeblocks(text), "codeblocks of {:?}", text);
    for format in TextFormat::ALL {
        let whole = parse(format, text, &tools);
        prop_assert_eq!(support::parse_chunked(format, text, &tools, sizes), whole, "{} of {:?}", format, text);
    }
    Ok(())
}

/// Cases per property: 400 in CI; `TACKLE_FUZZ_CASES` runs a longer fuzzing session.
fn cases() -> u32 {
    std::env::var("TACKLE_FUZZ_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(400)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn chunked_feeding_equals_whole_parsing_on_rule_pieces(text in pieces(), sizes in sizes()) {
        check_all(&text, &sizes)?;
    }

    #[test]
    fn chunked_feeding_equals_whole_parsing_on_transcripts(seed in 0u64..1_000_000, sizes in sizes()) {
        check_all(&support::transcript(seed).text, &sizes)?;
    }

    #[test]
    fn chunked_feeding_equals_whole_parsing_on_arbitrary_text(text in any::<String>(), sizes in sizes()) {
        check_all(&text, &sizes)?;
    }

    #[test]
    fn one_byte_chunks_equal_whole_parsing(text in pieces()) {
        check_all(&text, &[1])?;
    }
}

/// A call is yielded once final: a prefix of the text never yields a call that the whole text
/// does not have, and what `feed` yields comes before what `finish` yields.
#[test]
fn feed_yields_only_final_calls() {
    let tools = support::test_tools();
    let text = "```bash\nls\n```\n@bash(c1): {\"command\": \"x\"}\n<function_calls><invoke name=\"bash\"><parameter name=\"command\">y</parameter></invoke>\n```python\nprint()\n```\nprose\n";
    for format in TextFormat::ALL {
        let whole = parse(format, text, &tools);
        for cut in 0..=text.len() {
            if !text.is_char_boundary(cut) {
                continue;
            }
            let mut parser = tackle_calls::Parser::new(format, &tools);
            let early = parser.feed(&text[..cut]);
            assert_eq!(early.as_slice(), &whole[..early.len()], "{format} cut at {cut}");
        }
    }
}

/// A call is yielded as soon as it is decided (docs/reference/formats.md#incremental-parser): at the newline of an exec block's closing
/// fence, at the line that settles a non-exec closer, at an `@` call's balancing brace, at an
/// xml call's closing tag. Fed one character at a time; the offset is how much had been fed.
#[test]
fn calls_are_yielded_as_soon_as_they_are_decided() {
    let tools = support::test_tools();
    let cases: &[(TextFormat, &str, Option<&str>)] = &[
        (TextFormat::Markdown, "Plain prose first\nand more\n```bash\nls\nmore ls\n```\nafter", Some("```\n")),
        (TextFormat::Markdown, "```save a.txt\nx\n```\n\nafter", Some("```\n\n")),
        (TextFormat::Markdown, "```save a.txt\nx\n```\n```bash\nls\n```\n", Some("```bash\n")),
        (TextFormat::Markdown, "```bash\nls\n```", None),
        (TextFormat::Tool, "prose\n@bash(c1): {\"command\": \"echo }\"} and then", Some("\"}")),
        (TextFormat::Tool, "<think>x</think>\n@bash(c1): {}\n", Some("{}")),
        (TextFormat::Tool, "<think>x</think>@bash(c1): {}", Some("{}")),
        (TextFormat::Markdown, "<think>x</think>```bash\nls\n```\n", Some("```\n")),
        (TextFormat::Markdown, "a `b` c\n```save x\nx `y`\n```\n\n", Some("```\n\n")),
        (
            TextFormat::Xml,
            "<function_calls><invoke name=\"bash\"><parameter name=\"command\">ls</parameter></invoke>\n</function_calls>",
            Some("</invoke>"),
        ),
        (TextFormat::Xml, "x <tool-use><bash>ls</bash> y", Some("</bash>")),
    ];
    // One byte at a time, and in chunks that span the 16-byte blocks the wake-up tests use:
    // the call comes out of the chunk that holds the deciding byte.
    for size in [1, 5, 16, 33] {
        for (format, text, decided_after) in cases {
            let decided = decided_after.map(|marker| text.find(marker).unwrap() + marker.len());
            let expected = decided.map(|at| at.div_ceil(size).saturating_mul(size).min(text.len()));
            let mut parser = tackle_calls::Parser::new(*format, &tools);
            let mut yielded_at = None;
            for start in (0..text.len()).step_by(size) {
                let end = (start + size).min(text.len());
                let calls = parser.feed(&text[start..end]);
                if !calls.is_empty() && yielded_at.is_none() {
                    yielded_at = Some(end);
                }
            }
            let at_finish = parser.finish();
            assert_eq!(yielded_at, expected, "{format} in chunks of {size}: {text:?}");
            assert_eq!(at_finish.len(), usize::from(expected.is_none()), "{format}: {text:?}");
        }
    }
}
