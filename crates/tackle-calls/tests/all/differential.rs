//! Differential test against gptme 0.35.1 (installed from PyPI by
//! `scripts/install-test-deps.sh` into `.venv-test`): on generated transcripts, the code
//! blocks Tackle finds agree with `gptme.codeblock.Codeblock.iter_from_markdown`.
//!
//! The generator keeps clear of the deliberate differences listed in
//! `docs/formats-differences.md` (it puts a blank line after a non-exec block's closer, keeps
//! thinking regions at the start, writes no `py` blocks); each of those differences has its
//! own test in `deliberate_differences`, which also checks that gptme still behaves as the
//! document says.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use std::path::PathBuf;
use std::process::Command;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tackle_calls::codeblocks;

fn python() -> PathBuf {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.venv-test/bin/python");
    assert!(path.exists(), "gptme's virtualenv is missing: run scripts/install-test-deps.sh (it creates .venv-test)");
    path
}

/// gptme's blocks for each text: `[{lang, content, start}]`.
fn gptme_blocks(texts: &[String]) -> Vec<Vec<Value>> {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("texts.json");
    std::fs::write(&input, serde_json::to_string(texts).unwrap()).unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/support/gptme_codeblocks.py");
    let output = Command::new(python()).arg(script).arg(&input).output().unwrap();
    assert!(output.status.success(), "gptme failed: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// The line index of byte `at` in `text` after `\r\n` / `\r` became `\n`.
fn line_of(text: &str, at: usize) -> usize {
    text[..at].replace("\r\n", "\n").matches(['\n', '\r']).count()
}

/// Our blocks in gptme's shape (`start` as gptme's line index: after a leading thinking
/// region gptme counts lines from its closer).
fn our_blocks(text: &str, thinking_end: Option<usize>) -> Vec<Value> {
    let base = thinking_end.map_or(0, |end| line_of(text, end));
    codeblocks(text)
        .into_iter()
        .map(|b| {
            let byte = text.char_indices().nth(b.start).map_or(text.len(), |(i, _)| i);
            json!({"lang": b.lang, "content": b.content, "start": line_of(text, byte) - base})
        })
        .collect()
}

#[test]
fn code_blocks_agree_with_gptme_on_generated_transcripts() {
    // TACKLE_DIFF_CASES runs a longer comparison (the default keeps CI quick).
    let cases: u64 = std::env::var("TACKLE_DIFF_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(600);
    let transcripts: Vec<support::Transcript> = (0..cases).map(support::transcript).collect();
    let texts: Vec<String> = transcripts.iter().map(|t| t.text.clone()).collect();
    let theirs = gptme_blocks(&texts);
    let mut with_blocks = 0;
    for (seed, (transcript, theirs)) in transcripts.iter().zip(theirs).enumerate() {
        let ours = our_blocks(&transcript.text, transcript.thinking_end);
        with_blocks += usize::from(!ours.is_empty());
        assert_eq!(ours, theirs, "transcript {seed}:\n{:?}", transcript.text);
    }
    // The comparison means something only if most transcripts have blocks.
    assert!(with_blocks * 3 > transcripts.len() * 2, "only {with_blocks} transcripts had blocks");
}

/// Each deliberate difference: gptme's result (asserted, so the document stays true) and ours.
#[test]
fn deliberate_differences() {
    struct Case {
        name: &'static str,
        text: &'static str,
        gptme: Vec<(&'static str, &'static str)>,
        ours: Vec<(&'static str, &'static str)>,
    }
    let cases = [
        Case {
            name: "a bare closer followed directly by prose closes the block",
            text: "```python\nprint(1)\n```\nThat prints 1.\n",
            gptme: vec![],
            ours: vec![("python", "print(1)")],
        },
        Case {
            name: "a fence inside a heredoc stays content even before a blank line",
            text: "```bash\ncat > a.md << EOF\n```\n\nEOF\n```\n",
            gptme: vec![("bash", "cat > a.md << EOF")],
            ours: vec![("bash", "cat > a.md << EOF\n```\n\nEOF")],
        },
        Case {
            name: "py blocks track triple quotes",
            text: "```py\ns = \"\"\"\n```\n\n\"\"\"\n```\n",
            gptme: vec![("py", "s = \"\"\"")],
            ours: vec![("py", "s = \"\"\"\n```\n\n\"\"\"")],
        },
        Case {
            name: "blocks before an unclosed thinking region are kept",
            text: "```bash\nls\n```\n<think>\nstill thinking\n",
            gptme: vec![],
            ours: vec![("bash", "ls")],
        },
        Case {
            name: "a closing thinking tag without an opener is ordinary text",
            text: "```bash\nls\n```\nnote: </think> is a tag\n```bash\npwd\n```\n",
            gptme: vec![("bash", "pwd")],
            ours: vec![("bash", "ls"), ("bash", "pwd")],
        },
        Case {
            name: "every thinking region is hidden, not only the first",
            text: "<think>a</think>\n```bash\nls\n```\n<think>\n```bash\nrm -rf x\n```\n</think>\n",
            gptme: vec![("bash", "ls"), ("bash", "rm -rf x")],
            ours: vec![("bash", "ls")],
        },
    ];
    let texts: Vec<String> = cases.iter().map(|c| c.text.to_owned()).collect();
    let theirs = gptme_blocks(&texts);
    for (case, theirs) in cases.iter().zip(theirs) {
        let theirs: Vec<(String, String)> = theirs
            .iter()
            .map(|b| (b["lang"].as_str().unwrap().to_owned(), b["content"].as_str().unwrap().to_owned()))
            .collect();
        let expected: Vec<(String, String)> = case.gptme.iter().map(|(l, c)| ((*l).into(), (*c).into())).collect();
        assert_eq!(theirs, expected, "gptme on: {}", case.name);
        let ours: Vec<(String, String)> = codeblocks(case.text).into_iter().map(|b| (b.lang, b.content)).collect();
        let expected: Vec<(String, String)> = case.ours.iter().map(|(l, c)| ((*l).into(), (*c).into())).collect();
        assert_eq!(ours, expected, "ours on: {}", case.name);
    }
}
