//! Thinking regions, in every text format (docs/reference/formats.md#thinking-regions).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use pretty_assertions::assert_eq;
use tackle_calls::{TextFormat, codeblocks, parse};

/// The ids of the calls found in each format's version of a message: `{call:ID}` in the
/// template becomes a call with that id in the format's syntax.
fn ids(format: TextFormat, template: &str) -> Vec<String> {
    let text = render(format, template);
    let tools = support::test_tools();
    let whole = parse(format, &text, &tools);
    for size in [1, 3, 8] {
        assert_eq!(support::parse_chunked(format, &text, &tools, &[size]), whole, "{format}, chunks of {size}");
    }
    whole.into_iter().map(|c| c.id).collect()
}

fn render(format: TextFormat, template: &str) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(at) = rest.find("{call:") {
        out.push_str(&rest[..at]);
        let end = rest[at..].find('}').unwrap() + at;
        let id = &rest[at + 6..end];
        out.push_str(&match format {
            // Markdown ids are synthetic; the command tells the calls apart.
            TextFormat::Markdown => format!("```bash\n{id}\n```\n"),
            TextFormat::Xml => format!(
                "<function_calls><invoke name=\"bash\" id=\"{id}\"><parameter name=\"command\">{id}</parameter></invoke></function_calls>\n"
            ),
            TextFormat::Tool => format!("@bash({id}): {{\"command\": \"{id}\"}}\n"),
        });
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The calls' identities: ids, or for markdown the commands.
fn found(format: TextFormat, template: &str) -> Vec<String> {
    match format {
        TextFormat::Markdown => {
            let tools = support::test_tools();
            let text = render(format, template);
            assert_eq!(ids(format, template).len(), parse(format, &text, &tools).len());
            parse(format, &text, &tools).into_iter().map(|c| c.args["command"].as_str().unwrap().to_owned()).collect()
        }
        _ => ids(format, template),
    }
}

fn each_format(template: &str, expected: &[&str]) {
    for format in TextFormat::ALL {
        assert_eq!(found(format, template), expected, "{format}: {template:?}");
    }
}

#[test]
fn a_thinking_region_hides_its_calls() {
    each_format("<think>\nmaybe {call:a}</think>\n{call:b}", &["b"]);
    each_format("<thinking>\n{call:a}\n</thinking>\n{call:b}", &["b"]);
    // The closer must match the opener.
    each_format("<thinking>\n</think>\n{call:a}\n</thinking>\n{call:b}", &["b"]);
}

#[test]
fn the_opener_must_start_a_line() {
    each_format("note: <think>\n{call:a}", &["a"]);
    each_format(" <think>\n{call:a}", &["a"]);
}

#[test]
fn an_open_region_hides_everything_after_it_but_keeps_what_came_before() {
    each_format("{call:a}\n<think>\n{call:b}\nstill thinking", &["a"]);
}

#[test]
fn a_closer_without_an_opener_is_ordinary_text() {
    each_format("{call:a}\nsee </think> here\n{call:b}", &["a", "b"]);
}

#[test]
fn every_region_is_hidden_and_text_after_a_closer_counts_as_a_line_start() {
    each_format("<think>x</think>\n{call:a}\n<think>\n{call:b}\n</think>\n{call:c}", &["a", "c"]);
    // Right after the closer, a fence opens (gptme drops everything up to the closer).
    let blocks = codeblocks("<think>plan</think>```bash\nls\n```\n");
    assert_eq!(blocks.len(), 1);
    assert_eq!((blocks[0].lang.as_str(), blocks[0].start), ("bash", 19));
}

#[test]
fn a_thinking_tag_inside_a_code_block_is_content() {
    let blocks = codeblocks("```xml\n<think>\n```\n\n```bash\nls\n```\n");
    let langs: Vec<(&str, &str)> = blocks.iter().map(|b| (b.lang.as_str(), b.content.as_str())).collect();
    assert_eq!(langs, vec![("xml", "<think>"), ("bash", "ls")]);
}

#[test]
fn an_unclosed_fence_inside_a_region_does_not_swallow_what_follows() {
    each_format("<think>\n```python\nhalf a block\n</think>\n{call:a}", &["a"]);
}
