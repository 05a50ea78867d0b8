//! The fence scanner, rule by rule (docs/reference/formats.md#fence-scanner). Every case is also run under every
//! chunking of one to seven bytes, so each rule is checked for streaming too (docs/reference/formats.md#incremental-parser).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use pretty_assertions::assert_eq;
use tackle_calls::{Codeblock, codeblocks};

/// The blocks of `text` as `(lang, content)`, checked to be the same under chunked feeding.
fn blocks(text: &str) -> Vec<(String, String)> {
    let whole = codeblocks(text);
    for size in 1..=7 {
        assert_eq!(support::codeblocks_chunked(text, &[size]), whole, "chunks of {size} bytes of {text:?}");
    }
    assert_eq!(support::codeblocks_chunked(text, &[1, 5, 2, 11, 3]), whole);
    whole.into_iter().map(|b| (b.lang, b.content)).collect()
}

fn b(lang: &str, content: &str) -> (String, String) {
    (lang.to_owned(), content.to_owned())
}

#[test]
fn a_message_with_fewer_than_two_fence_runs_has_no_blocks() {
    assert_eq!(blocks("```python\nprint(1)\n"), vec![]);
    assert_eq!(blocks("no fences at all"), vec![]);
    assert_eq!(blocks("one ``` run inside a line\n"), vec![]);
}

#[test]
fn line_endings_are_normalised_but_offsets_are_the_originals() {
    let text = "a\r\n```sh\r\nls\r\npwd\r\n```\r\nz";
    let whole = codeblocks(text);
    assert_eq!(
        whole,
        vec![Codeblock { lang: "sh".into(), content: "ls\npwd".into(), start: 3, end: 3 + 7 + 4 + 5 + 3 }]
    );
    assert_eq!(blocks("```sh\rls\r```\r"), vec![b("sh", "ls")]);
    // A \r\n split between chunks is one line break.
    assert_eq!(support::codeblocks_chunked(text, &[4]), whole);
}

#[test]
fn offsets_are_code_points_with_end_exclusive() {
    let text = "é😀\n```py\nx = \"数据\"\n```\nafter";
    let block = &codeblocks(text)[0];
    assert_eq!(block.start, 3);
    assert_eq!(
        &text.chars().skip(block.start).take(block.end - block.start).collect::<String>(),
        "```py\nx = \"数据\"\n```"
    );
}

#[test]
fn an_opener_is_three_or_more_backticks_at_column_zero() {
    assert_eq!(blocks("````  python  \nx\n````\n"), vec![b("python", "x")]);
    // A shorter bare fence inside a longer one is content.
    assert_eq!(blocks("````md\n```\nx\n````\n"), vec![b("md", "```\nx")]);
    assert_eq!(blocks("  ```python\nx\n  ```\n"), vec![]);
    assert_eq!(blocks("~~~python\nx\n~~~\n"), vec![]);
    assert_eq!(blocks("``python\nx\n``\n"), vec![]);
}

#[test]
fn six_backticks_then_a_langtag_close_and_open() {
    assert_eq!(blocks("```sh\nls\n``````python\nprint(1)\n```\n"), vec![b("sh", "ls"), b("python", "print(1)")]);
    // The same at the outer level: the first three backticks closed an earlier block.
    assert_eq!(blocks("``````python\nx\n```\n"), vec![b("python", "x")]);
    // Six bare backticks are no glued pair; a space after them is none either.
    assert_eq!(blocks("```md\n``````\n```\n"), vec![b("md", "``````")]);
    assert_eq!(blocks("```md\n``` ```x\n```\n"), vec![b("md", "``` ```x")]);
}

#[test]
fn a_glued_closer_needs_the_blocks_own_fence_length() {
    assert_eq!(blocks("````md\n``````python\nx\n```\ny\n````\n"), vec![b("md", "``````python\nx\n```\ny")]);
    // Seven backticks after a three-backtick fence: the rest is "````", which opens again.
    assert_eq!(blocks("```sh\nls\n```````\n"), vec![b("sh", "ls")]);
}

#[test]
fn a_fence_glued_to_a_thinking_tag_closes_the_block_and_starts_the_region() {
    let text = "```sh\nls\n```<think>\n```bash\nhidden\n```\n</think>\n```bash\npwd\n```\n";
    assert_eq!(blocks(text), vec![b("sh", "ls"), b("bash", "pwd")]);
    assert_eq!(blocks("```sh\nls\n```<thinking>x</thinking>\n"), vec![b("sh", "ls")]);
}

#[test]
fn a_confirmed_heredoc_keeps_its_fences() {
    let text = "```bash\ncat > README.md << 'EOF'\n# Title\n```python\nprint(1)\n```\n\nEOF\n```\n";
    assert_eq!(blocks(text), vec![b("bash", "cat > README.md << 'EOF'\n# Title\n```python\nprint(1)\n```\n\nEOF")]);
    for opener in ["<<EOF", "<<-EOF", "<<'EOF'", "<<\"EOF\"", "<< 'EOF'", "<<  EOF"] {
        let text = format!("```sh\ncat {opener}\n```\n  EOF  \n```\n");
        assert_eq!(blocks(&text), vec![b("sh", &format!("cat {opener}\n```\n  EOF  "))], "{opener}");
    }
}

#[test]
fn what_is_not_a_heredoc_does_not_hide_the_closer() {
    for line in ["cat <<< EOF", "echo $((1 << EOF))", "echo x << 2", "echo \"<< EOF\"", "# << EOF", "echo \\<< EOF"] {
        let text = format!("```bash\n{line}\n```\nEOF\n");
        assert_eq!(blocks(&text), vec![b("bash", line)], "{line}");
    }
}

#[test]
fn a_heredoc_needs_its_terminator_within_200_lines() {
    let filler = |n: usize| "x\n".repeat(n);
    // Terminator 200 lines after the opener: confirmed, so the fence is content and the block
    // runs on (unclosed here).
    let confirmed = format!("```bash\ncat << EOF\n```\n{}EOF\n", filler(198));
    assert_eq!(blocks(&confirmed), vec![]);
    let unconfirmed = format!("```bash\ncat << EOF\n```\n{}EOF\n", filler(199));
    assert_eq!(blocks(&unconfirmed), vec![b("bash", "cat << EOF")]);
    // The terminator ends the heredoc; a later bare fence closes the block.
    assert_eq!(blocks("```sh\ncat <<X\n```\nX\n```\n"), vec![b("sh", "cat <<X\n```\nX")]);
}

#[test]
fn an_open_shell_quote_keeps_a_bare_fence_as_content() {
    assert_eq!(blocks("```bash\necho \"start\n```\nend\"\n```\n"), vec![b("bash", "echo \"start\n```\nend\"")]);
    assert_eq!(blocks("```sh\necho 'a\n```\nb'\n```\n"), vec![b("sh", "echo 'a\n```\nb'")]);
    // Escaped and ANSI-C quotes do not leave a quote open.
    assert_eq!(blocks("```bash\necho \\\"x\n```\n"), vec![b("bash", "echo \\\"x")]);
    assert_eq!(blocks("```bash\nx=$'it\\'s'\n```\n"), vec![b("bash", "x=$'it\\'s'")]);
    // Only shell langs track quotes: a python block closes.
    assert_eq!(blocks("```python\ns = \"start\n```\n"), vec![b("python", "s = \"start")]);
}

#[test]
fn python_triple_quotes_keep_any_fence_as_content() {
    for lang in ["ipython", "py"] {
        let text = format!("```{lang}\ns = \"\"\"\n```bash\n```\n\"\"\"\nprint(s)\n```\n");
        assert_eq!(blocks(&text), vec![b(lang, "s = \"\"\"\n```bash\n```\n\"\"\"\nprint(s)")], "{lang}");
    }
    assert_eq!(blocks("```ipython\ns = '''\n```\n'''\n```\n"), vec![b("ipython", "s = '''\n```\n'''")]);
    assert_eq!(blocks("```ipython\nv = '\"\"\"'\n```\n"), vec![b("ipython", "v = '\"\"\"'")]);
}

#[test]
fn a_bare_fence_inside_a_nested_block_closes_the_nested_block() {
    assert_eq!(blocks("```markdown\n```python\nx\n```\n```\n"), vec![b("markdown", "```python\nx\n```")]);
    // Any length closes a nested block.
    assert_eq!(blocks("```markdown\n```python\nx\n`````\n```\n"), vec![b("markdown", "```python\nx\n`````")]);
}

#[test]
fn an_exec_block_closes_at_its_bare_fence_whatever_follows() {
    assert_eq!(blocks("```bash\nls\n```\ntext\n```\nmore\n```\n"), vec![b("bash", "ls"), b("", "more")]);
    assert_eq!(blocks("```ipython\nx\n```\ny\n"), vec![b("ipython", "x")]);
}

#[test]
fn a_non_exec_bare_fence_closes_before_a_blank_line_a_fence_or_the_end() {
    assert_eq!(blocks("```python\nx\n```\n\nprose\n"), vec![b("python", "x")]);
    assert_eq!(blocks("```python\nx\n```\n```bash\nls\n```\n"), vec![b("python", "x"), b("bash", "ls")]);
    assert_eq!(blocks("```python\nx\n```"), vec![b("python", "x")]);
}

#[test]
fn a_bare_fence_followed_by_content_opens_a_nested_block_when_the_look_ahead_says_so() {
    let nested = "```markdown\nIntro\n```\ncode\n```\nOutro\n```\n";
    assert_eq!(blocks(nested), vec![b("markdown", "Intro\n```\ncode\n```\nOutro")]);
    // No nested closer with content after it: the fence closes the block (differs from gptme).
    assert_eq!(blocks("```python\nprint(1)\n```\nThat prints 1.\n"), vec![b("python", "print(1)")]);
    // The look-ahead stops at a tagged fence.
    let tagged = "```markdown\nIntro\n```\ncode\n```python\n```\n\nOutro\n";
    assert_eq!(blocks(tagged), vec![b("markdown", "Intro"), b("python", "")]);
}

#[test]
fn the_nested_look_ahead_is_20_lines_then_5() {
    let lines = |n: usize| "c\n".repeat(n);
    // The inner closer may be 19 lines after the bare fence, not 20.
    let within = format!("```md\n```\n{}```\nafter\n```\n", lines(18));
    assert_eq!(blocks(&within), vec![b("md", &format!("```\n{}```\nafter", lines(18)))]);
    let beyond = format!("```md\n```\n{}```\nafter\n```\n", lines(19));
    assert_eq!(blocks(&beyond)[0], b("md", ""));
    // Content must follow the inner closer within 4 lines.
    let near = "```md\n```\nc\n```\n\n\n\nafter\n```\n";
    assert_eq!(blocks(near), vec![b("md", "```\nc\n```\n\n\n\nafter")]);
    let far = "```md\n```\nc\n```\n\n\n\n\nafter\n```\n";
    assert_eq!(blocks(far)[0], b("md", ""));
    // An indented bare fence counts in the look-ahead (gptme strips the line there), so the
    // bare fence opens a nested block; but it closes nothing, so the block stays open.
    assert_eq!(blocks("```md\n```\nc\n  ```\nafter\n```\n"), vec![]);
}

#[test]
fn a_tagged_fence_opens_a_nested_block_only_with_a_real_langtag() {
    assert_eq!(blocks("```md\n```~x\ninner\n```\nafter\n```\n"), vec![b("md", "```~x\ninner\n```\nafter")]);
    assert_eq!(blocks("```md\n```=\n```\n"), vec![b("md", "```=")]);
    assert_eq!(blocks("```md\n```'''\n```\n"), vec![b("md", "```'''")]);
    for tag in ["_x", "/x", ".x", "9"] {
        let text = format!("```md\n```{tag}\n```\n```\n");
        assert_eq!(blocks(&text), vec![b("md", &format!("```{tag}\n```"))], "{tag}");
    }
}

#[test]
fn an_unclosed_block_is_never_emitted_and_swallows_the_rest() {
    assert_eq!(blocks("```python\nx\n"), vec![]);
    assert_eq!(blocks("```bash\nls\n```bash\npwd\n```\n"), vec![]);
    assert_eq!(blocks("```python\nok\n```\n\n```bash\nnever closed\n\n```python\ny\n"), vec![b("python", "ok")]);
}

#[test]
fn content_has_no_fence_lines_and_no_final_newline() {
    assert_eq!(blocks("```\n```\n"), vec![b("", "")]);
    assert_eq!(blocks("```text\n\n```\n"), vec![b("text", "")]);
    assert_eq!(blocks("```text\na\n\n```\n"), vec![b("text", "a\n")]);
    let block = &codeblocks("```text\na\n```  \n")[0];
    assert_eq!((block.start, block.end), (0, 15));
}
