//! Hostile and huge inputs (issue 5, "Bad input"): no panic, no hang, no quadratic blow-up.
//!
//! Linearity is checked without timing: each parser counts the bytes its scanners look at
//! (`bytes_examined`), and that count must stay within a constant multiple of the input
//! length whether the text comes whole or in 16-byte chunks. A parser that rescanned its
//! retained suffix on every chunk would blow far past the bound.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use pretty_assertions::assert_eq;
use tackle_calls::{CodeblockScanner, Parser, TextFormat, ToolIndex};

/// Work per input byte allowed: the look-ahead windows (20 + 5 lines) bound every case but
/// heredoc candidates, whose 200-line window is checked separately.
const WORK_PER_BYTE: u64 = 32;

/// Feeds `text` in chunks of `size` bytes to every parser; returns the calls per format and
/// the blocks, after checking the work bound.
fn feed_all(text: &str, size: usize, bound: u64) -> Vec<usize> {
    let tools = support::test_tools();
    let mut counts = Vec::new();
    for format in TextFormat::ALL {
        let mut parser = Parser::new(format, &tools);
        let mut found = 0;
        for chunk in text.as_bytes().chunks(size) {
            found += parser.feed(std::str::from_utf8(chunk).unwrap()).len();
        }
        let examined = parser.bytes_examined();
        found += parser.finish().len();
        assert!(
            examined <= bound * text.len() as u64 + 1024,
            "{format} in chunks of {size}: {examined} bytes examined for {} bytes",
            text.len()
        );
        counts.push(found);
    }
    let mut scanner = CodeblockScanner::new();
    let mut found = 0;
    for chunk in text.as_bytes().chunks(size) {
        found += scanner.feed(std::str::from_utf8(chunk).unwrap()).len();
    }
    let examined = scanner.bytes_examined();
    found += scanner.finish().len();
    assert!(examined <= bound * text.len() as u64 + 1024, "codeblocks in chunks of {size}: {examined}");
    counts.push(found);
    counts
}

/// Whole and in 16-byte chunks; the counts of (markdown, xml, tool, codeblocks) results.
fn check(text: &str) -> Vec<usize> {
    let whole = feed_all(text, text.len().max(1), WORK_PER_BYTE);
    assert_eq!(feed_all(text, 16, WORK_PER_BYTE), whole);
    whole
}

const MB: usize = 1 << 20;

#[test]
fn ten_megabytes_without_a_newline() {
    assert_eq!(check(&"word ".repeat(2 * MB)), vec![0, 0, 0, 0]);
    assert_eq!(check(&format!("```{}", "x".repeat(10 * MB))), vec![0, 0, 0, 0]);
    assert_eq!(check(&format!("@bash(c1): {{\"command\": \"{}", "x".repeat(10 * MB))), vec![0, 0, 1, 0]);
    assert_eq!(check(&format!("@{}", "x".repeat(10 * MB))), vec![0, 0, 0, 0]);
    assert_eq!(check(&format!("<tool-use><{}", "x".repeat(10 * MB))), vec![0, 0, 0, 0]);
}

#[test]
fn unterminated_fences_and_open_thinking() {
    let lines = "print('line')\n".repeat(MB / 14);
    assert_eq!(check(&format!("```bash\nls\n```\n```python\n{lines}")), vec![1, 0, 0, 1]);
    assert_eq!(check(&format!("```bash\nls\n```\n<think>\n```bash\nrm\n```\n{lines}")), vec![1, 0, 0, 1]);
    assert_eq!(check(&format!("```bash\nls\n```\n```md\n{}", "```x\n".repeat(MB / 5))), vec![1, 0, 0, 1]);
}

#[test]
fn deep_nesting() {
    let depth = 100_000;
    let text = format!("```markdown\n{}{}```\n", "```python\n".repeat(depth), "```\n".repeat(depth));
    assert_eq!(check(&text), vec![0, 0, 0, 1]);
    // Bare fences at depth 1 followed by content: every one runs the look-ahead.
    let text = format!("```md\n{}```\n", "```\nx\n```\ny\n".repeat(50_000));
    assert_eq!(check(&text), vec![0, 0, 0, 1]);
    let text = format!("```md\n{}", "```\nx\nx\nx\nx\nx\nx\nx\nx\nx\nx\nx\nx\nx\nx\nx\nx\nx\nx\n".repeat(20_000));
    check(&text);
}

#[test]
fn heredoc_candidates_stay_within_their_window() {
    // Every line opens a heredoc whose word never comes: each looks 200 lines ahead.
    let text = format!("```bash\n{}```\n", "cat << NOPE\n".repeat(20_000));
    let whole = feed_all(&text, text.len(), 220);
    assert_eq!(feed_all(&text, 16, 220), whole);
    assert_eq!(whole[3], 1);
}

#[test]
fn broken_xml_and_json_cut_mid_string() {
    // The first `<invoke ` ends the bash call (no `</invoke>`); the second call's parameter
    // opens a CDATA section that never closes: two malformed calls.
    let junk = "<<<< <invoke <parameter name=\"a\"> <![CDATA[ & &#; </param".repeat(MB / 60);
    assert_eq!(check(&format!("<function_calls>\n<invoke name=\"bash\">\n{junk}")), vec![0, 2, 0, 0]);
    assert_eq!(check(&format!("<tool-use>\n<bash>{junk}")), vec![0, 1, 0, 0]);
    // Without CDATA, each `<invoke ` ends the call before it.
    let junk = "<<<< <invoke <parameter name=\"a\"> & &#; </param".repeat(MB / 50);
    assert_eq!(check(&format!("<function_calls>\n<invoke name=\"bash\">\n{junk}")), vec![0, MB / 50 + 1, 0, 0]);
    let cut = "@bash(c1): {\"command\": \"echo \\\" {{{{ }}}}";
    assert_eq!(check(&format!("@bash(c0): {{}}\n{}", cut.repeat(MB / cut.len()))), vec![0, 0, 2, 0]);
    // Every line of the JSON starts with `@` and a header that never completes.
    let lines = format!("@bash(c1): {{\"command\": \"{}", "@bash(c2) {\n".repeat(MB / 12));
    assert_eq!(check(&lines), vec![0, 0, 1, 0]);
    // Every line is the next call's header: each call ends at the next.
    assert_eq!(check(&"@bash(c1): {\"command\": \"x\n".repeat(MB / 26)), vec![0, 0, MB / 26, 0]);
    // Many @ lines that are not calls, and many thinking look-alikes.
    assert_eq!(check(&"@a(b\n@x(y): [\n<thin\n<thinking\n``\n".repeat(MB / 32)), vec![0, 0, 0, 0]);
}

#[test]
fn many_cdata_sections_in_a_parameter_element() {
    // A `<tool-use>` child's parameter elements are read after the element: the closing tag
    // must be found in one pass, not searched again after every CDATA section.
    let sections = "<![CDATA[x]]>".repeat(200_000);
    let text = format!("<tool-use><read_file><file_path>{sections}</file_path></read_file></tool-use>");
    assert_eq!(check(&text), vec![0, 1, 0, 0]);
    let text = format!("<tool-use><read_file><path>{sections}</path><limit>{sections}</limit></read_file></tool-use>");
    assert_eq!(check(&text), vec![0, 1, 0, 0]);
}

#[test]
fn a_long_block_closes_without_quadratic_work() {
    let body = "x = 1  # ```python is content\n".repeat(MB / 30);
    let text = format!("```bash\n{body}```\n\n```python\n{body}```\n");
    assert_eq!(check(&text), vec![1, 0, 0, 2]);
    let tools = ToolIndex::default();
    let calls = tackle_calls::parse(TextFormat::Markdown, &text, &tools);
    assert!(calls.is_empty());
}
