//! The public parsers: whole-text functions and the incremental [`Parser`] (docs/reference/formats.md#incremental-parser).
//!
//! ```
//! use tackle_calls::{TextFormat, Parser, ToolIndex, parse};
//!
//! let tools = ToolIndex::default();
//! let text = "@read_file(c1): {\"path\": \"a.txt\"}\n";
//! let mut parser = Parser::new(TextFormat::Tool, &tools);
//! let mut calls = Vec::new();
//! for chunk in ["@read_fi", "le(c1): {\"path\":", " \"a.txt\"}\n"] {
//!     calls.extend(parser.feed(chunk)); // only complete, final calls
//! }
//! calls.extend(parser.finish());
//! assert_eq!(calls, parse(TextFormat::Tool, text, &tools));
//! assert_eq!(calls[0].id, "c1");
//! ```

use crate::call::{Codeblock, ParsedCall, TextFormat};
use crate::engine::{Engine, Event, Mode};
use crate::tools::ToolIndex;

/// Parses a whole message.
pub fn parse(format: TextFormat, text: &str, tools: &ToolIndex) -> Vec<ParsedCall> {
    let mut parser = Parser::new(format, tools);
    let mut calls = parser.feed(text);
    calls.extend(parser.finish());
    calls
}

/// The code blocks of a whole message (docs/reference/formats.md#fence-scanner).
pub fn codeblocks(text: &str) -> Vec<Codeblock> {
    let mut scanner = CodeblockScanner::new();
    let mut blocks = scanner.feed(text);
    blocks.extend(scanner.finish());
    blocks
}

/// An incremental call parser for one message.
///
/// [`Parser::feed`] returns only calls that no continuation of the text could change;
/// [`Parser::finish`] applies the end-of-text rules and returns the rest. For any way of
/// splitting a text into chunks, the calls of all `feed`s plus `finish` equal
/// [`parse`] of the whole text, and the total work is linear in its length.
#[derive(Debug)]
pub struct Parser<'t> {
    engine: Engine<'t>,
}

impl<'t> Parser<'t> {
    /// A parser for `format` that dispatches to `tools`. Synthetic ids are `call_1_{n}`
    /// unless [`Parser::with_step`] says otherwise.
    pub fn new(format: TextFormat, tools: &'t ToolIndex) -> Self {
        Parser { engine: Engine::new(Mode::Calls(format), Some(tools), 1) }
    }

    /// Sets the agent step used in synthetic ids (`call_{step}_{n}`).
    pub fn with_step(mut self, step: u32) -> Self {
        self.engine.set_step(step);
        self
    }

    /// Takes the next chunk; returns the calls it completed.
    #[inline(always)]
    pub fn feed(&mut self, chunk: &str) -> Vec<ParsedCall> {
        calls(self.engine.feed(chunk))
    }

    /// Ends the message; returns the remaining calls.
    pub fn finish(mut self) -> Vec<ParsedCall> {
        calls(self.engine.finish())
    }

    /// Bytes received so far.
    pub fn fed_bytes(&self) -> usize {
        self.engine.input.len()
    }

    /// Bytes the scanners have looked at so far (a work measure: it stays within a small
    /// multiple of [`Parser::fed_bytes`] however the text is chunked).
    pub fn bytes_examined(&self) -> u64 {
        self.engine.input.examined()
    }
}

/// An incremental scanner for the docs/reference/formats.md#fence-scanner code blocks of one message (`tackle parse
/// --codeblocks`), with the same contract as [`Parser`].
#[derive(Debug)]
pub struct CodeblockScanner {
    engine: Engine<'static>,
}

impl Default for CodeblockScanner {
    fn default() -> Self {
        CodeblockScanner::new()
    }
}

impl CodeblockScanner {
    /// A new scanner.
    pub fn new() -> Self {
        CodeblockScanner { engine: Engine::new(Mode::Codeblocks, None, 1) }
    }

    /// Takes the next chunk; returns the blocks it completed.
    #[inline(always)]
    pub fn feed(&mut self, chunk: &str) -> Vec<Codeblock> {
        blocks(self.engine.feed(chunk))
    }

    /// Ends the message; returns the remaining blocks.
    pub fn finish(mut self) -> Vec<Codeblock> {
        blocks(self.engine.finish())
    }

    /// Bytes received so far.
    pub fn fed_bytes(&self) -> usize {
        self.engine.input.len()
    }

    /// Bytes the scanner has looked at so far (see [`Parser::bytes_examined`]).
    pub fn bytes_examined(&self) -> u64 {
        self.engine.input.examined()
    }
}

#[inline]
fn calls(events: Vec<Event>) -> Vec<ParsedCall> {
    if events.is_empty() {
        return Vec::new();
    }
    events
        .into_iter()
        .filter_map(|e| match e {
            Event::Call(call) => Some(call),
            Event::Block(_) => None,
        })
        .collect()
}

#[inline]
fn blocks(events: Vec<Event>) -> Vec<Codeblock> {
    if events.is_empty() {
        return Vec::new();
    }
    events
        .into_iter()
        .filter_map(|e| match e {
            Event::Block(block) => Some(block),
            Event::Call(_) => None,
        })
        .collect()
}
