//! One open code block and the per-line rules that decide where it ends (docs/reference/formats.md#fence-scanner
//! step 5): glued closers, heredocs and quotes in shell blocks, triple quotes in Python blocks,
//! nesting depth, and the look-ahead that tells a nested opener from a closer.
//!
//! Every look-ahead is bounded (1, 20 + 5, and 200 lines) and resumable: when the lines it
//! needs have not arrived, the block says `Wait` and keeps how far it got, so a streamed
//! message is never rescanned and the decision is the one the whole text would give.
//!
//! Deliberate differences from gptme 0.35.1 (docs/formats-differences.md):
//! - a bare fence at depth 1 of a non-exec block whose look-ahead finds no nested block
//!   **closes** the block (gptme kept it as content, so a block followed directly by prose
//!   never closed);
//! - inside a confirmed heredoc every fence line is content (gptme closed on a bare fence
//!   followed by a blank line);
//! - `py` blocks track triple quotes as `ipython` blocks do.

pub(crate) mod python;
pub(crate) mod shell;

use crate::input::Input;
use crate::lines::{LineAt, LineWindow};
use crate::pytext;

use python::PyQuotes;
use shell::ShellQuotes;

/// Languages whose blocks have heredocs and shell quoting.
const SHELL_LANGS: &[&str] = &["shell", "sh", "bash", "zsh", "fish", "ksh", "nu", "ps1", "powershell"];

/// How far ahead a heredoc opener looks for its terminator.
const HEREDOC_WINDOW: usize = 200;
/// How far ahead a bare fence looks for the closer of a nested block.
const NEST_WINDOW: usize = 20;
/// How far after that closer it looks for more content of the outer block.
const NEST_MORE_WINDOW: usize = 5;

/// An open code block.
#[derive(Debug)]
pub(crate) struct Block {
    /// Byte position of the opening fence.
    pub start: usize,
    /// The langtag (the rest of the opener line, stripped).
    pub lang: String,
    fence_len: usize,
    shell: bool,
    exec: bool,
    python_strings: bool,
    depth: u32,
    content_start: usize,
    content_end: Option<usize>,
    heredoc: Option<String>,
    quotes: ShellQuotes,
    py: PyQuotes,
    stage: Stage,
}

/// Progress on the current line, so a line waiting for look-ahead resumes where it stopped.
#[derive(Debug)]
enum Stage {
    Fresh,
    Heredoc { word: String, k: usize },
    Fence,
    NextLine,
    Nested { j: usize },
    NestedMore { j: usize, k: usize },
}

/// The outcome of running a block over the lines that have arrived.
#[derive(Debug)]
pub(crate) enum BlockStep {
    /// More text is needed.
    Wait,
    /// The block is complete. Scanning resumes at `resume`, as at the start of a line.
    Closed { content: String, end: usize, resume: usize },
    /// The message ended inside the block: it is never emitted, and its lines are consumed.
    Unclosed,
}

/// What one line does to the block.
enum Decision {
    Wait,
    Content,
    Close {
        end: usize,
    },
    /// A glued closer: the block ends at `at`, and the rest of the line is a new line.
    Glued {
        at: usize,
    },
}

impl Block {
    /// Opens a block at `start`, whose opener line text is `opener`; the content starts at
    /// `content_start`.
    pub fn open(start: usize, opener: &str, content_start: usize) -> Block {
        let fence_len = pytext::backtick_run(opener);
        let lang = pytext::strip(&opener[fence_len..]).to_owned();
        let shell = SHELL_LANGS.contains(&lang.as_str());
        Block {
            start,
            fence_len,
            shell,
            exec: shell || lang == "ipython",
            python_strings: lang == "ipython" || lang == "py",
            lang,
            depth: 1,
            content_start,
            content_end: None,
            heredoc: None,
            quotes: ShellQuotes::default(),
            py: PyQuotes::default(),
            stage: Stage::Fresh,
        }
    }

    /// Whether the current line's decision waits for later lines (a look-ahead), rather than
    /// for the line itself.
    pub fn waits_for_lines(&self) -> bool {
        !matches!(self.stage, Stage::Fresh)
    }

    /// Runs the block over the lines of `lines` (line 0 is the block's current line).
    pub fn step(&mut self, input: &mut Input, lines: &mut LineWindow) -> BlockStep {
        loop {
            let line = match lines.get(input, 0) {
                LineAt::Line(line) => line,
                LineAt::Wait => return BlockStep::Wait,
                LineAt::End => return BlockStep::Unclosed,
            };
            match self.decide(input, lines, line.start, line.end) {
                Decision::Wait => return BlockStep::Wait,
                Decision::Content => {
                    self.content_end = Some(line.end);
                    self.stage = Stage::Fresh;
                    lines.pop();
                }
                Decision::Close { end } => {
                    return BlockStep::Closed { content: self.content(input), end, resume: line.next };
                }
                Decision::Glued { at } => {
                    return BlockStep::Closed { content: self.content(input), end: at, resume: at };
                }
            }
        }
    }

    /// The content lines joined with `\n`.
    fn content(&self, input: &Input) -> String {
        let Some(end) = self.content_end else { return String::new() };
        let raw = input.str(self.content_start, end);
        if memchr::memchr(b'\r', raw.as_bytes()).is_some() {
            raw.replace("\r\n", "\n").replace('\r', "\n")
        } else {
            raw.to_owned()
        }
    }

    fn decide(&mut self, input: &mut Input, lines: &mut LineWindow, start: usize, end: usize) -> Decision {
        if let Stage::Fresh = self.stage {
            let text = input.str(start, end);
            input.examine(text.len());
            if let Some(at) = self.glued_close(text) {
                return Decision::Glued { at: start + at };
            }
            if self.shell {
                match &self.heredoc {
                    None => {
                        let (word, quotes) = shell::scan_line(text, self.quotes);
                        self.quotes = quotes;
                        if let Some(word) = word {
                            self.stage = Stage::Heredoc { word, k: 1 };
                        }
                    }
                    Some(word) if pytext::strip(text) == word => {
                        self.heredoc = None;
                        self.quotes = ShellQuotes::default();
                    }
                    Some(_) => {}
                }
            }
            if self.python_strings {
                self.py = self.py.scan_line(text);
            }
            if let Stage::Fresh = self.stage {
                self.stage = Stage::Fence;
            }
        }
        if let Stage::Heredoc { word, k } = &mut self.stage {
            let mut confirmed = false;
            while *k <= HEREDOC_WINDOW {
                match lines.get(input, *k) {
                    LineAt::Wait => return Decision::Wait,
                    LineAt::End => break,
                    LineAt::Line(later) => {
                        let text = later.text(input);
                        input.examine(text.len());
                        if pytext::strip(text) == word {
                            confirmed = true;
                            break;
                        }
                    }
                }
                *k += 1;
            }
            if confirmed {
                self.heredoc = Some(std::mem::take(word));
            }
            self.stage = Stage::Fence;
        }
        if let Stage::Fence = self.stage {
            match self.fence_line(input.str(start, end), end) {
                Some(decision) => return decision,
                None => self.stage = Stage::NextLine,
            }
        }
        if let Stage::NextLine = self.stage {
            match lines.get(input, 1) {
                LineAt::Wait => return Decision::Wait,
                LineAt::End => return Decision::Close { end },
                LineAt::Line(next) => {
                    let text = next.text(input);
                    input.examine(text.len());
                    if pytext::is_blank(text) || text.starts_with("```") {
                        return Decision::Close { end };
                    }
                }
            }
            self.stage = Stage::Nested { j: 1 };
        }
        if let Stage::Nested { j } = &mut self.stage {
            let mut found = None;
            while *j < NEST_WINDOW {
                match lines.get(input, *j) {
                    LineAt::Wait => return Decision::Wait,
                    LineAt::End => break,
                    LineAt::Line(later) => {
                        let text = later.text(input);
                        input.examine(text.len());
                        let stripped = pytext::strip(text);
                        if stripped.len() >= 3 && stripped.bytes().all(|b| b == b'`') {
                            found = Some(*j);
                            break;
                        }
                        if text.starts_with("```") {
                            break;
                        }
                    }
                }
                *j += 1;
            }
            match found {
                Some(j) => self.stage = Stage::NestedMore { j, k: j + 1 },
                None => return Decision::Close { end },
            }
        }
        if let Stage::NestedMore { j, k } = &mut self.stage {
            while *k < *j + NEST_MORE_WINDOW {
                match lines.get(input, *k) {
                    LineAt::Wait => return Decision::Wait,
                    LineAt::End => break,
                    LineAt::Line(later) => {
                        let text = later.text(input);
                        input.examine(text.len());
                        if !pytext::is_blank(text) {
                            self.depth += 1;
                            return Decision::Content;
                        }
                    }
                }
                *k += 1;
            }
            return Decision::Close { end };
        }
        Decision::Content
    }

    /// A glued closer at depth 1: the line starts with the block's fence, and the rest opens
    /// the next block (three or more backticks, then a non-space) or a thinking region. The
    /// result is the byte offset in the line where the rest starts.
    fn glued_close(&self, text: &str) -> Option<usize> {
        if self.depth != 1 || pytext::backtick_run(text) < self.fence_len {
            return None;
        }
        let rest = &text[self.fence_len..];
        let opens_block =
            rest.starts_with("```") && pytext::first_char(&rest[3..]).is_some_and(|c| !pytext::is_space(c));
        let opens_thinking = rest.starts_with("<think>") || rest.starts_with("<thinking>");
        (opens_block || opens_thinking).then_some(self.fence_len)
    }

    /// The rules for a line that may be a fence, once heredoc and quote state are known.
    /// `None` means a depth-1 bare closer candidate of a non-exec block: look ahead.
    fn fence_line(&mut self, text: &str, end: usize) -> Option<Decision> {
        let run = pytext::backtick_run(text);
        if run < 3 || self.heredoc.is_some() {
            return Some(Decision::Content);
        }
        let rest = &text[run..];
        if pytext::is_blank(rest) && (run == self.fence_len || self.depth > 1) {
            if self.quotes.open() || self.py.in_triple() {
                return Some(Decision::Content);
            }
            if self.depth > 1 {
                self.depth -= 1;
                return Some(Decision::Content);
            }
            if self.exec {
                return Some(Decision::Close { end });
            }
            return None;
        }
        if self.py.in_triple() {
            return Some(Decision::Content);
        }
        let tag = pytext::strip(rest);
        if pytext::first_char(tag).is_some_and(|c| c.is_alphanumeric() || matches!(c, '_' | '/' | '.' | '~')) {
            self.depth += 1;
        }
        Some(Decision::Content)
    }
}
