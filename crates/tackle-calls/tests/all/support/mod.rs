//! Shared test helpers: a seeded generator of model-like transcripts (prose, code blocks of
//! every kind the fence rules care about, thinking regions, CRLF), and chunked feeding.
#![allow(dead_code)]

use tackle_calls::{Codeblock, CodeblockScanner, ParsedCall, Parser, TextFormat, ToolIndex};

/// A small deterministic PRNG (xorshift64*), so failures reproduce from their seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// A generated transcript.
pub struct Transcript {
    pub text: String,
    /// Byte offset just past a leading thinking region's closer, if there is one.
    pub thinking_end: Option<usize>,
}

const WORDS: &[&str] = &[
    "the",
    "file",
    "run",
    "tests",
    "then",
    "fix",
    "it",
    "`x`",
    "value",
    "we",
    "need",
    "<b>",
    "@user",
    "a << b",
    "don't",
    "\"quoted\"",
    "``",
    "path/to/file.rs",
    "ok",
    "é",
    "数据",
    "😀",
    "end.",
];
const CODE: &[&str] = &[
    "x = 1",
    "print(\"hello\")",
    "for i in range(3):",
    "    total += i",
    "let y = `cmd`;",
    "fn main() {}",
    "",
    "  indented ``` not a fence",
    "return {\"a\": [1, 2]}",
    "```'''",
    "```== not a tag",
    "  ```",
    "`````",
    "\u{a0}",
    "\u{1c}",
];
const SHELL: &[&str] = &[
    "ls -la",
    "echo \"hello world\"",
    "grep -rn 'pattern' src/",
    "# don't worry",
    "echo $((1 << 3))",
    "cat <<< \"here string\"",
    "x=$'a\\'b'",
    "cd /tmp && make",
    "cat << NOPE",
    "echo \"a << b\"",
    "  ```",
    "`````",
];

fn prose_line(rng: &mut Rng) -> String {
    let n = 1 + rng.below(8);
    (0..n).map(|_| *rng.pick(WORDS)).collect::<Vec<_>>().join(" ")
}

/// Appends one code block; returns whether it must be followed by a blank line (a
/// non-exec block, whose closer gptme would keep open if prose followed directly).
fn code_block(rng: &mut Rng, out: &mut Vec<String>) -> bool {
    let lang = *rng.pick(&[
        "python",
        "bash",
        "sh",
        "shell",
        "ipython",
        "markdown",
        "text",
        "json",
        "",
        "save hello.py",
        "rust",
        "zsh",
        "js",
    ]);
    let fence = if rng.chance(15) { "````" } else { "```" };
    out.push(format!("{fence}{lang}"));
    let shell = matches!(lang, "bash" | "sh" | "shell" | "zsh");
    for _ in 0..rng.below(7) {
        if shell {
            match rng.below(10) {
                0 => {
                    out.push(
                        (*rng.pick(&["cat > notes.md << 'EOF'", "cat <<-EOF", "cat <<\"EOF\" > x", "cat <<EOF"]))
                            .into(),
                    );
                    out.push("# Notes".into());
                    out.push("```python".into());
                    out.push("print(1)".into());
                    out.push("```".into());
                    out.push("done".into());
                    out.push("EOF".into());
                }
                1 => {
                    out.push("echo \"start".into());
                    out.push("```".into());
                    out.push("end\"".into());
                }
                _ => out.push((*rng.pick(SHELL)).into()),
            }
        } else if lang == "ipython" && rng.chance(20) {
            out.push("s = \"\"\"".into());
            out.push("```".into());
            out.push("\"\"\"".into());
        } else if matches!(lang, "markdown" | "text") && fence == "```" && rng.chance(25) {
            // A nested block, closed, with more outer content after it.
            if rng.chance(50) {
                out.push("```python".into());
            } else {
                out.push("```".into());
            }
            out.push(prose_line(rng));
            out.push("```".into());
            out.push(prose_line(rng));
        } else {
            out.push((*rng.pick(CODE)).into());
        }
    }
    let mut exec = shell || lang == "ipython";
    if fence == "```" && rng.chance(8) {
        // Glued close + open.
        out.push("``````python".into());
        out.push("y = 2".into());
        exec = false;
    }
    out.push(fence.into());
    !exec || rng.chance(50)
}

/// A transcript from `seed`: prose and code blocks, sometimes a leading thinking region, an
/// unclosed block at the end, CRLF or lone-CR line endings.
pub fn transcript(seed: u64) -> Transcript {
    let mut rng = Rng::new(seed);
    let mut lines: Vec<String> = Vec::new();
    let mut thinking_lines = None;
    if rng.chance(15) {
        lines.push("<think>".into());
        lines.push(prose_line(&mut rng));
        if rng.chance(50) {
            lines.push("```python".into());
            lines.push("half a block".into());
        }
        lines.push("</think>".into());
        thinking_lines = Some(lines.len());
    }
    for _ in 0..1 + rng.below(8) {
        match rng.below(3) {
            0 => {
                for _ in 0..1 + rng.below(3) {
                    lines.push(prose_line(&mut rng));
                }
            }
            1 => lines.push(String::new()),
            _ => {
                if code_block(&mut rng, &mut lines) {
                    lines.push(String::new());
                }
            }
        }
    }
    if rng.chance(10) {
        lines.push("```python".into());
        lines.push("never closed".into());
    }
    let eol = match rng.below(20) {
        0..=2 => "\r\n",
        3 => "\r",
        _ => "\n",
    };
    let mut text = String::new();
    let mut thinking_end = None;
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            text.push_str(eol);
        }
        if Some(i) == thinking_lines {
            thinking_end = Some(text.len() - eol.len());
        }
        text.push_str(line);
    }
    if thinking_lines == Some(lines.len()) {
        thinking_end = Some(text.len());
    }
    if rng.chance(70) {
        text.push_str(eol);
    }
    Transcript { text, thinking_end }
}

/// Splits `text` into chunks of the given byte sizes (cycled), at any byte, and feeds them
/// through a UTF-8 stream, as a provider's deltas or a pipe would deliver them.
pub fn chunks(text: &str, sizes: &[usize]) -> Vec<Vec<u8>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    let mut i = 0;
    while at < bytes.len() {
        let size = sizes[i % sizes.len()].max(1);
        let end = (at + size).min(bytes.len());
        out.push(bytes[at..end].to_vec());
        at = end;
        i += 1;
    }
    out
}

/// The calls of `text` fed in chunks of `sizes` bytes.
pub fn parse_chunked(format: TextFormat, text: &str, tools: &ToolIndex, sizes: &[usize]) -> Vec<ParsedCall> {
    let mut parser = Parser::new(format, tools);
    let mut utf8 = tackle_calls::Utf8Stream::new();
    let mut calls = Vec::new();
    for chunk in chunks(text, sizes) {
        calls.extend(parser.feed(&utf8.decode(&chunk).unwrap()));
    }
    utf8.finish().unwrap();
    calls.extend(parser.finish());
    calls
}

/// The code blocks of `text` fed in chunks of `sizes` bytes.
pub fn codeblocks_chunked(text: &str, sizes: &[usize]) -> Vec<Codeblock> {
    let mut scanner = CodeblockScanner::new();
    let mut utf8 = tackle_calls::Utf8Stream::new();
    let mut blocks = Vec::new();
    for chunk in chunks(text, sizes) {
        blocks.extend(scanner.feed(&utf8.decode(&chunk).unwrap()));
    }
    utf8.finish().unwrap();
    blocks.extend(scanner.finish());
    blocks
}

/// Specs for the rule tests: the block-mapped tools of docs/reference/formats.md#langtag-dispatch, a JSON-body file reader, and a
/// tool whose parameters cover every schema type of docs/reference/formats.md#xml.
pub fn test_specs() -> Vec<tackle_core::ToolSpec> {
    use serde_json::json;
    use tackle_core::{BlockMapping, ToolSpec};
    let mapped = |name: &str, tags: &[&str], body: &str, words: Option<&str>, strip: bool, props: serde_json::Value| {
        let required: Vec<&str> = std::iter::once(body).chain(words).collect();
        ToolSpec::new(name, format!("The {name} tool."))
            .input_schema(
                json!({"type": "object", "properties": props, "required": required, "additionalProperties": false}),
            )
            .block(BlockMapping {
                langtags: tags.iter().map(|t| (*t).to_owned()).collect(),
                body_param: body.to_owned(),
                words_param: words.map(str::to_owned),
                strip_prompt: strip,
            })
    };
    vec![
        mapped(
            "bash",
            &["bash", "shell", "sh"],
            "command",
            None,
            true,
            json!({"command": {"type": "string"}, "timeout": {"type": "integer"}}),
        )
        .alias("Bash"),
        mapped(
            "save",
            &["save"],
            "content",
            Some("path"),
            false,
            json!({"path": {"type": "string"}, "content": {"type": "string"}}),
        ),
        mapped(
            "append",
            &["append"],
            "content",
            Some("path"),
            false,
            json!({"path": {"type": "string"}, "content": {"type": "string"}}),
        ),
        mapped(
            "patch",
            &["patch"],
            "patch",
            Some("path"),
            false,
            json!({"path": {"type": "string"}, "patch": {"type": "string"}}),
        ),
        ToolSpec::new("read_file", "Read a file.").alias("Read").input_schema(json!({
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "The file."},
                "offset": {"type": "integer", "minimum": 1},
                "limit": {"type": "integer"}
            },
            "required": ["path"],
            "additionalProperties": false
        })),
        ToolSpec::new("typed", "Every parameter type.").input_schema(json!({
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "count": {"type": "integer"},
                "ratio": {"type": "number"},
                "flag": {"type": "boolean"},
                "items": {"type": "array", "items": {"type": "string"}},
                "options": {"type": "object"},
                "either": {"type": ["integer", "string"]},
                "choice": {"enum": ["a", "b"]},
                "anything": {}
            },
            "required": ["text"],
            "additionalProperties": false
        })),
        ToolSpec::new("task_done", "Finish.")
            .input_schema(json!({"type": "object", "properties": {}, "additionalProperties": false})),
    ]
}

/// The index of [`test_specs`].
pub fn test_tools() -> ToolIndex {
    ToolIndex::new(&test_specs())
}
