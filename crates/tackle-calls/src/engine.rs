//! The incremental scanner behind every parser: one left-to-right state machine over the
//! message that separates prose from code blocks (docs/reference/formats.md#fence-scanner), thinking regions (docs/reference/formats.md#thinking-regions) and, in the
//! `tool` and `xml` formats, call spans (docs/reference/formats.md#tool, docs/reference/formats.md#xml). Whole-text parsing is the same machine fed
//! once, so streaming can only delay a result, never change it (docs/reference/formats.md#incremental-parser).
//!
//! Each state keeps how far it has looked, so text that arrives in small chunks is examined a
//! bounded number of times; only the unresolved suffix is retained.
//!
//! Where the rules are silent, these decisions hold (docs/formats-differences.md):
//! - a thinking region starts at a line start in prose (or glued after a closing fence), not
//!   inside a code block, where `<think>` is the block's content;
//! - the text after a thinking region's closer is treated as the start of a line;
//! - a call span (`@…{…}`, an xml call element) is opaque to the fence scanner, so a fence
//!   inside a JSON string or an xml parameter does not open a block.

use crate::atcall::{AtCall, AtStep};
use crate::call::{CallDraft, Codeblock, ParsedCall, TextFormat};
use crate::fence::{Block, BlockStep};
use crate::input::Input;
use crate::lines::{LineAt, LineWindow};
use crate::markdown;
use crate::pytext;
use crate::tools::ToolIndex;
use crate::wake::Wake;
use crate::xml::scan::{self, Element, ElementStep, Tag, Wrapper};
use crate::xml::typed;

/// What the engine looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// The docs/reference/formats.md#fence-scanner code blocks themselves.
    Codeblocks,
    /// Calls in a text format.
    Calls(TextFormat),
}

/// Something found.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Event {
    Block(Codeblock),
    Call(ParsedCall),
}

#[derive(Debug)]
enum State {
    /// At the start of a line (or of text treated as one) outside any block.
    LineStart(usize),
    /// A fence opener line is being received.
    Opener(usize),
    /// In a prose line, scanned up to the position given.
    Prose(usize),
    Block(Box<Block>),
    Think {
        closer: &'static [u8],
        scan: usize,
    },
    At(Box<AtCall>),
    Element(Box<Element>),
    /// Nothing after this point can be found (the end, or an unclosed construct at the end).
    Done,
}

/// The scanner.
#[derive(Debug)]
pub(crate) struct Engine<'t> {
    pub input: Input,
    tools: Option<&'t ToolIndex>,
    mode: Mode,
    state: State,
    lines: LineWindow,
    wrapper: Option<Wrapper>,
    step: u32,
    calls: u32,
    out: Vec<Event>,
    wake: Wake,
}

enum Next {
    Go(State),
    Wait(State),
}

impl<'t> Engine<'t> {
    /// A scanner for `mode`; `tools` is needed for calls.
    pub fn new(mode: Mode, tools: Option<&'t ToolIndex>, step: u32) -> Self {
        Engine {
            input: Input::default(),
            tools,
            mode,
            state: State::LineStart(0),
            lines: LineWindow::default(),
            wrapper: None,
            step,
            calls: 0,
            out: Vec::new(),
            wake: Wake::Any,
        }
    }

    /// Sets the step number used in synthetic ids.
    pub fn set_step(&mut self, step: u32) {
        self.step = step;
    }

    /// Takes more text and returns what it completed.
    ///
    /// Inlined into the caller's loop: most streamed chunks only append, and a call per chunk
    /// would cost about as much as the whole-text scan of it.
    #[inline(always)]
    pub fn feed(&mut self, chunk: &str) -> Vec<Event> {
        // A `\r` at the end of what had arrived waits for the next byte, whatever it is.
        let previous = self.input.last_byte();
        self.input.push(chunk);
        if previous == Some(b'\r') || self.wake.by(previous, chunk.as_bytes()) {
            return self.woken();
        }
        Vec::new()
    }

    /// Runs the waiting state on what has arrived; returns what it completed.
    #[inline(never)]
    fn woken(&mut self) -> Vec<Event> {
        self.run();
        std::mem::take(&mut self.out)
    }

    /// Ends the message and returns the rest.
    pub fn finish(&mut self) -> Vec<Event> {
        self.input.finish();
        self.run();
        std::mem::take(&mut self.out)
    }

    fn run(&mut self) {
        loop {
            let state = std::mem::replace(&mut self.state, State::Done);
            match self.advance(state) {
                Next::Go(next) => self.state = next,
                Next::Wait(next) => {
                    self.state = next;
                    break;
                }
            }
        }
        let end = self.input.end();
        // Prose decides something only at a line that starts a fence or a thinking region (or
        // an `@` call), and in xml at a tag; waiting on a partial one needs any byte.
        let starters = [b'`', b'<', if self.mode == Mode::Calls(TextFormat::Tool) { b'@' } else { b'<' }];
        let (keep, wake) = match &self.state {
            State::LineStart(at) | State::Prose(at) if *at < end => (*at, Wake::Any),
            // A line start that is not after a line break (after a thinking region's closer).
            State::LineStart(at) => (*at, Wake::bytes(starters)),
            State::Prose(at) if self.mode == Mode::Calls(TextFormat::Xml) => (*at, Wake::Tags),
            State::Prose(at) => (*at, Wake::line_start(starters)),
            State::Opener(at) => (*at, Wake::NEWLINE),
            State::Block(block) => {
                // Only a line that starts with a backtick can end a block; until one arrives the
                // lines wait, unprocessed. A look-ahead, or a fence line being received, needs
                // the next line break.
                let decisive = block.waits_for_lines()
                    || self.lines.current_start(end).is_some_and(|at| self.input.byte(at) == Some(b'`'));
                (block.start, if decisive { Wake::NEWLINE } else { Wake::line_start([b'`'; 3]) })
            }
            State::Think { scan, .. } => (*scan, Wake::byte(b'>')),
            State::At(call) => (call.start, if call.in_body() { Wake::bytes([b'}', b'\n', b'\r']) } else { Wake::Any }),
            State::Element(element) => (element.start, Wake::byte(b'>')),
            State::Done => (end, Wake::Never),
        };
        self.wake = wake;
        self.input.release(keep);
    }

    fn advance(&mut self, state: State) -> Next {
        match state {
            State::LineStart(at) => self.line_start(at),
            State::Opener(at) => self.opener(at),
            State::Prose(scan) => self.prose(scan),
            State::Block(mut block) => match block.step(&mut self.input, &mut self.lines) {
                BlockStep::Wait => Next::Wait(State::Block(block)),
                BlockStep::Closed { content, end, resume } => {
                    self.emit_block(*block, content, end);
                    Next::Go(State::LineStart(resume))
                }
                BlockStep::Unclosed => Next::Go(State::Done),
            },
            State::Think { closer, scan } => {
                let end = self.input.end();
                match memchr::memmem::find(self.input.bytes(scan, end), closer) {
                    Some(n) => {
                        self.input.examine(n + closer.len());
                        Next::Go(State::LineStart(scan + n + closer.len()))
                    }
                    None if self.input.finished() => Next::Go(State::Done),
                    None => {
                        self.input.examine(end - scan);
                        let resume = end.saturating_sub(closer.len() - 1).max(scan);
                        Next::Wait(State::Think { closer, scan: resume })
                    }
                }
            }
            State::At(mut call) => match call.step(&mut self.input) {
                AtStep::Wait => Next::Wait(State::At(call)),
                AtStep::NotACall => Next::Go(State::Prose(call.start)),
                AtStep::Complete { end } => {
                    if let Some(tools) = self.tools {
                        let draft = call.draft(&self.input, tools, end);
                        self.emit_call(draft, call.start, end);
                    }
                    Next::Go(State::Prose(end))
                }
                AtStep::Unbalanced { end, next_call } => {
                    if let Some(tools) = self.tools {
                        let draft = call.unbalanced_draft(&self.input, tools, next_call);
                        self.emit_call(draft, call.start, end);
                    }
                    Next::Go(State::LineStart(end))
                }
            },
            State::Element(mut element) => match element.step(&mut self.input) {
                ElementStep::Wait => Next::Wait(State::Element(element)),
                ElementStep::Complete(end) => {
                    if let Some(tools) = self.tools {
                        let draft = typed::draft(&element, &self.input, tools);
                        self.emit_call(draft, element.start, end);
                    }
                    Next::Go(State::Prose(end))
                }
                ElementStep::Incomplete => Next::Go(State::Done),
            },
            State::Done => Next::Wait(State::Done),
        }
    }

    /// The line-start rules: a fence opener, a thinking opener, an `@` call; else prose.
    fn line_start(&mut self, at: usize) -> Next {
        let finished = self.input.finished();
        let avail = self.input.tail(at);
        let Some(&first) = avail.first() else {
            return if finished { Next::Go(State::Done) } else { Next::Wait(State::LineStart(at)) };
        };
        match first {
            b'`' => {
                let run = avail.iter().take_while(|b| **b == b'`').count();
                if run >= 3 {
                    self.lines.reset(at);
                    Next::Go(State::Opener(at))
                } else if run == avail.len() && !finished {
                    Next::Wait(State::LineStart(at))
                } else {
                    Next::Go(State::Prose(at))
                }
            }
            b'<' => {
                for (opener, closer) in [(&b"<think>"[..], &b"</think>"[..]), (&b"<thinking>"[..], &b"</thinking>"[..])]
                {
                    if avail.starts_with(opener) {
                        return Next::Go(State::Think { closer, scan: at + opener.len() });
                    }
                }
                let partial = |opener: &[u8]| avail.len() < opener.len() && opener.starts_with(avail);
                if !finished && (partial(b"<think>") || partial(b"<thinking>")) {
                    Next::Wait(State::LineStart(at))
                } else {
                    Next::Go(State::Prose(at))
                }
            }
            b'@' if self.mode == Mode::Calls(TextFormat::Tool) => Next::Go(State::At(Box::new(AtCall::new(at)))),
            _ => Next::Go(State::Prose(at)),
        }
    }

    /// A line starting with three or more backticks opens a block once the whole line is in.
    fn opener(&mut self, at: usize) -> Next {
        let line = match self.lines.get(&mut self.input, 0) {
            LineAt::Line(line) => line,
            LineAt::Wait => return Next::Wait(State::Opener(at)),
            LineAt::End => return Next::Go(State::Done),
        };
        let text = line.text(&self.input);
        // "``````lang": the first three backticks closed an earlier block (docs/reference/formats.md#fence-scanner step 4).
        let glued =
            text.starts_with("``````") && text[6..].chars().next().is_some_and(|c| c != '`' && !pytext::is_space(c));
        let skip = if glued { 3 } else { 0 };
        let block = Block::open(at + skip, &text[skip..], line.next);
        self.lines.pop();
        Next::Go(State::Block(Box::new(block)))
    }

    /// The rest of a prose line: in `xml`, wrapper and call tags; the line's end.
    fn prose(&mut self, scan: usize) -> Next {
        let end = self.input.end();
        let bytes = self.input.bytes(scan, end);
        let xml = self.mode == Mode::Calls(TextFormat::Xml);
        let found = if xml { memchr::memchr3(b'<', b'\n', b'\r', bytes) } else { memchr::memchr2(b'\n', b'\r', bytes) };
        let Some(n) = found else {
            self.input.examine(bytes.len());
            return if self.input.finished() { Next::Go(State::Done) } else { Next::Wait(State::Prose(end)) };
        };
        self.input.examine(n + 1);
        let at = scan + n;
        match self.input.byte(at) {
            Some(b'\n') => Next::Go(State::LineStart(at + 1)),
            Some(b'\r') => match self.input.byte(at + 1) {
                Some(next) => Next::Go(State::LineStart(at + 1 + usize::from(next == b'\n'))),
                None if self.input.finished() => Next::Go(State::LineStart(at + 1)),
                None => Next::Wait(State::Prose(at)),
            },
            _ => match scan::classify(&self.input, at, self.wrapper) {
                Tag::Wait => Next::Wait(State::Prose(at)),
                Tag::Text => Next::Go(State::Prose(at + 1)),
                Tag::Open(wrapper, resume) => {
                    self.wrapper = Some(wrapper);
                    Next::Go(State::Prose(resume))
                }
                Tag::Close(resume) => {
                    self.wrapper = None;
                    Next::Go(State::Prose(resume))
                }
                Tag::Child(element) => Next::Go(State::Element(Box::new(element))),
            },
        }
    }

    fn emit_block(&mut self, block: Block, content: String, end: usize) {
        match self.mode {
            Mode::Codeblocks => {
                let start = self.input.char_offset(block.start);
                let end = self.input.char_offset(end);
                self.out.push(Event::Block(Codeblock { lang: block.lang, content, start, end }));
            }
            Mode::Calls(TextFormat::Markdown) => {
                if let Some(draft) = self.tools.and_then(|tools| markdown::dispatch(tools, &block.lang, &content)) {
                    self.emit_call(draft, block.start, end);
                }
            }
            Mode::Calls(_) => {}
        }
    }

    fn emit_call(&mut self, draft: CallDraft, start: usize, end: usize) {
        self.calls += 1;
        let parse_error = draft.parse_error();
        let id = draft.id.unwrap_or_else(|| format!("call_{}_{}", self.step, self.calls));
        let start = self.input.char_offset(start);
        let end = self.input.char_offset(end);
        self.out.push(Event::Call(ParsedCall { name: draft.name, args: draft.args, id, start, end, parse_error }));
    }
}
