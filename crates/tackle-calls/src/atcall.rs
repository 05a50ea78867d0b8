//! The `tool` format (docs/reference/formats.md#tool): `@NAME(CALL_ID): {json}` at the start of a prose line.
//!
//! The recogniser is a resumable state machine over the bytes after the `@`: the name runs to
//! the first `(` on the line, the id is `[A-Za-z0-9_\-:.]+`, then `:`, optional whitespace
//! (line breaks included, as gptme's `\s*`) and `{`. From that brace it matches braces outside
//! JSON strings; a backslash escapes only inside a string (**differs from gptme**, which let a
//! backslash outside a string hide a brace). Each byte is looked at once (a line that starts
//! with `@` inside the JSON twice).
//!
//! JSON without its balancing brace is not lost (docs/formats-differences.md): when a line
//! inside it starts with a complete `@NAME(CALL_ID): {` (inside a JSON string or not), the
//! call ends before that line and the next call starts there; when the message ends first,
//! the call runs to the end. Either way it is a call with a parse error.

use crate::call::CallDraft;
use crate::input::Input;
use crate::json::{self, JsonProblem};
use crate::pytext;
use crate::tools::ToolIndex;

/// A possible call starting at an `@`.
#[derive(Debug)]
pub(crate) struct AtCall {
    /// Byte position of the `@`.
    pub start: usize,
    name_end: usize,
    id_start: usize,
    id_end: usize,
    brace: usize,
    phase: Phase,
    /// A line inside the JSON that starts with `@`: is it the next call's header?
    probe: Option<Box<AtCall>>,
}

#[derive(Debug, Clone, Copy)]
enum Phase {
    Name { scan: usize },
    Id { scan: usize },
    Colon { at: usize },
    Space { scan: usize },
    Body { scan: usize, depth: u32, in_string: bool, escape: bool },
}

/// The outcome of running the recogniser over the text that has arrived.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum AtStep {
    Wait,
    /// The line is prose after all.
    NotACall,
    /// The call ends at `end` (just past its balancing brace).
    Complete {
        end: usize,
    },
    /// The JSON has no balancing brace: the call ends at `end`, where the next call starts
    /// (`next_call`) or the message ends.
    Unbalanced {
        end: usize,
        next_call: bool,
    },
}

/// Whether the text after an `@` is a call's header, up to its `{`.
enum Header {
    Wait,
    No,
    Yes,
}

impl AtCall {
    /// A candidate at the `@` at `start`.
    pub fn new(start: usize) -> AtCall {
        AtCall {
            start,
            name_end: 0,
            id_start: 0,
            id_end: 0,
            brace: 0,
            phase: Phase::Name { scan: start + 1 },
            probe: None,
        }
    }

    /// Whether the recogniser is matching braces (only a `}` or a line break can decide the
    /// call).
    pub fn in_body(&self) -> bool {
        matches!(self.phase, Phase::Body { .. }) && self.probe.is_none()
    }

    /// Runs over the text that has arrived.
    pub fn step(&mut self, input: &mut Input) -> AtStep {
        match self.header(input) {
            Header::Wait => AtStep::Wait,
            Header::No => AtStep::NotACall,
            Header::Yes => match self.phase {
                Phase::Body { scan, depth, in_string, escape } => {
                    self.match_braces(input, scan, depth, in_string, escape)
                }
                _ => unreachable!("a header ends in the body"),
            },
        }
    }

    /// Recognises the header up to its `{` (at the end of the message, an incomplete header is
    /// not one).
    fn header(&mut self, input: &mut Input) -> Header {
        let end = input.end();
        let waiting = if input.finished() { Header::No } else { Header::Wait };
        loop {
            match self.phase {
                Phase::Name { scan } => {
                    let found = memchr::memchr3(b'(', b'\n', b'\r', input.bytes(scan, end));
                    input.examine(found.map_or(end - scan, |n| n + 1));
                    match found {
                        None => {
                            self.phase = Phase::Name { scan: end };
                            return waiting;
                        }
                        Some(n) if input.byte(scan + n) == Some(b'(') && scan + n > self.start + 1 => {
                            self.name_end = scan + n;
                            self.id_start = scan + n + 1;
                            self.phase = Phase::Id { scan: scan + n + 1 };
                        }
                        Some(_) => return Header::No,
                    }
                }
                Phase::Id { scan } => {
                    let run = input.tail(scan).iter().take_while(|b| is_id_byte(**b)).count();
                    input.examine(run + 1);
                    let at = scan + run;
                    match input.byte(at) {
                        None => {
                            self.phase = Phase::Id { scan: at };
                            return waiting;
                        }
                        Some(b')') if at > self.id_start => {
                            self.id_end = at;
                            self.phase = Phase::Colon { at: at + 1 };
                        }
                        Some(_) => return Header::No,
                    }
                }
                Phase::Colon { at } => match input.byte(at) {
                    None => return waiting,
                    Some(b':') => self.phase = Phase::Space { scan: at + 1 },
                    Some(_) => return Header::No,
                },
                Phase::Space { scan } => match input.char_at(scan) {
                    None => {
                        self.phase = Phase::Space { scan };
                        return waiting;
                    }
                    Some('{') => {
                        self.brace = scan;
                        self.phase = Phase::Body { scan: scan + 1, depth: 1, in_string: false, escape: false };
                    }
                    Some(c) if pytext::is_space(c) => {
                        input.examine(1);
                        self.phase = Phase::Space { scan: scan + c.len_utf8() };
                    }
                    Some(_) => return Header::No,
                },
                Phase::Body { .. } => return Header::Yes,
            }
        }
    }

    fn match_braces(
        &mut self,
        input: &mut Input,
        mut scan: usize,
        mut depth: u32,
        mut in_string: bool,
        mut escape: bool,
    ) -> AtStep {
        loop {
            // A line inside the JSON that starts with `@` may be the next call.
            if let Some(probe) = &mut self.probe {
                match probe.header(input) {
                    Header::Wait => {
                        self.phase = Phase::Body { scan, depth, in_string, escape };
                        return AtStep::Wait;
                    }
                    Header::Yes => return AtStep::Unbalanced { end: probe.start, next_call: true },
                    Header::No => self.probe = None,
                }
            }
            let end = input.end();
            let bytes = input.bytes(scan, end);
            // Braces and strings are matched line by line.
            let line_end = memchr::memchr2(b'\n', b'\r', bytes).unwrap_or(bytes.len());
            let line = &bytes[..line_end];
            let mut i = 0;
            while i < line.len() {
                if escape {
                    escape = false;
                    i += 1;
                    continue;
                }
                let found = if in_string {
                    memchr::memchr2(b'"', b'\\', &line[i..])
                } else {
                    memchr::memchr3(b'"', b'{', b'}', &line[i..])
                };
                let Some(n) = found else { break };
                i += n;
                match line[i] {
                    b'\\' => escape = true,
                    b'"' => in_string = !in_string,
                    b'{' => depth += 1,
                    _ => {
                        depth -= 1;
                        if depth == 0 {
                            input.examine(i + 1);
                            return AtStep::Complete { end: scan + i + 1 };
                        }
                    }
                }
                i += 1;
            }
            input.examine(line_end);
            scan += line_end;
            if line_end == bytes.len() {
                self.phase = Phase::Body { scan, depth, in_string, escape };
                return if input.finished() { AtStep::Unbalanced { end, next_call: false } } else { AtStep::Wait };
            }
            // A line break: the next line starts after `\n`, `\r` or `\r\n`.
            escape = false;
            let after = match (bytes[line_end], bytes.get(line_end + 1)) {
                (b'\r', Some(b'\n')) => 2,
                (b'\r', None) if !input.finished() => {
                    self.phase = Phase::Body { scan, depth, in_string, escape };
                    return AtStep::Wait;
                }
                _ => 1,
            };
            input.examine(after);
            let next_line = scan + after;
            match input.byte(next_line) {
                None if !input.finished() => {
                    self.phase = Phase::Body { scan, depth, in_string, escape };
                    return AtStep::Wait;
                }
                Some(b'@') => self.probe = Some(Box::new(AtCall::new(next_line))),
                _ => {}
            }
            scan = next_line;
        }
    }

    /// The call whose JSON has no balancing brace (`next_call` from [`AtStep::Unbalanced`]).
    pub fn unbalanced_draft(&self, input: &Input, tools: &ToolIndex, next_call: bool) -> CallDraft {
        let mut draft = self.named_draft(input, tools);
        let cause = if next_call { "the next call starts" } else { "the message ends" };
        draft.errors.push(format!(
            "The JSON arguments for tool '{}' have no closing brace before {cause}. Send the arguments as one complete JSON object.",
            draft.name
        ));
        draft
    }

    /// A draft with the call's name and id.
    fn named_draft(&self, input: &Input, tools: &ToolIndex) -> CallDraft {
        let written = input.str(self.start + 1, self.name_end);
        let name = tools.resolve(written).map_or(written, |spec| spec.name.as_str());
        let mut draft = CallDraft::new(name);
        draft.id = Some(input.str(self.id_start, self.id_end).to_owned());
        draft
    }

    /// The call, once complete (`end` from [`AtStep::Complete`]).
    pub fn draft(&self, input: &Input, tools: &ToolIndex, end: usize) -> CallDraft {
        let mut draft = self.named_draft(input, tools);
        let name = &draft.name;
        match json::read_object(input.str(self.brace, end)) {
            Ok(args) => draft.args = args,
            Err(JsonProblem::Invalid(error)) => draft.errors.push(format!(
                "Invalid JSON in arguments for tool '{name}': {error}. Send the arguments as one JSON object."
            )),
            Err(JsonProblem::NotObject(kind)) => {
                draft.errors.push(format!("Arguments for tool '{name}' must be a JSON object, got {kind}"));
            }
        }
        draft
    }
}

fn is_id_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b':' | b'.')
}
