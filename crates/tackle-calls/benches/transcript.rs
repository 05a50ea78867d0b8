//! A model-like transcript for benchmarks: prose paragraphs and code blocks of the kinds the
//! fence rules treat differently (shell with quotes and heredocs, Python, nested markdown,
//! JSON-body tool blocks), each block followed by a blank line so gptme and Tackle agree on
//! every block. Deterministic: the same sizes give the same text.
#![allow(dead_code)]

const PROSE: &[&str] = &[
    "Let me look at how the parser handles this case before changing anything.",
    "The failing test expects the offsets in code points, so multi-byte text such as é or 数据 matters.",
    "I'll run the suite again after the fix; `cargo test` should pass.",
    "Here is the plan: read the file, patch the function, then verify.",
];

const BLOCKS: &[&str] = &[
    "```bash\ncd /work/project && ls -la src/\ngrep -rn \"fn parse\" src/ | head -20\necho \"done: it's fine\"\n```",
    "```python\ndef total(items):\n    result = 0\n    for item in items:\n        result += item.price * item.quantity\n    return result\n```",
    "```bash\ncat > notes.md << 'EOF'\n# Notes\n```python\nprint(1)\n```\nEOF\n```",
    "```markdown\n# Usage\n\n```bash\ntackle parse < message.txt\n```\n\nThat prints one JSON array.\n```",
    "```read_file\n{\"path\": \"src/lib.rs\", \"offset\": 10, \"limit\": 40}\n```",
    "```ipython\ns = \"\"\"\n```\nnot a fence\n\"\"\"\nprint(len(s))\n```",
    "```save src/util.rs\npub fn clamp(x: i64, lo: i64, hi: i64) -> i64 {\n    x.max(lo).min(hi)\n}\n```",
];

/// About `bytes` of transcript holding `blocks` code blocks.
pub fn transcript(bytes: usize, blocks: usize) -> String {
    let per_block = bytes / blocks.max(1);
    let mut out = String::with_capacity(bytes + per_block);
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    for _ in 0..blocks {
        let start = out.len();
        let block = BLOCKS[next(BLOCKS.len())];
        // Prose up to the share of this segment, then the block and a blank line.
        while out.len() - start + block.len() + 2 < per_block {
            out.push_str(PROSE[next(PROSE.len())]);
            out.push(if next(4) == 0 { '\n' } else { ' ' });
        }
        out.push_str("\n\n");
        out.push_str(block);
        out.push_str("\n\n");
    }
    out
}

/// The tools the benchmark dispatches markdown blocks to.
pub fn tools() -> tackle_calls::ToolIndex {
    use serde_json::json;
    use tackle_core::{BlockMapping, ToolSpec};
    let string_params = |names: &[&str]| {
        let props: serde_json::Map<String, serde_json::Value> =
            names.iter().map(|n| ((*n).to_owned(), json!({"type": "string"}))).collect();
        json!({"type": "object", "properties": props, "required": names})
    };
    let specs = [
        ToolSpec::new("bash", "Run a command.").input_schema(string_params(&["command"])).block(BlockMapping {
            langtags: vec!["bash".into(), "shell".into(), "sh".into()],
            body_param: "command".into(),
            words_param: None,
            strip_prompt: true,
        }),
        ToolSpec::new("save", "Write a file.").input_schema(string_params(&["path", "content"])).block(BlockMapping {
            langtags: vec!["save".into()],
            body_param: "content".into(),
            words_param: Some("path".into()),
            strip_prompt: false,
        }),
        ToolSpec::new("read_file", "Read a file.").input_schema(string_params(&["path"])),
    ];
    tackle_calls::ToolIndex::new(&specs)
}
