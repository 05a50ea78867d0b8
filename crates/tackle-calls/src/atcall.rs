//! The `tool` format (formats.md §4): `@NAME(CALL_ID): {json}` at the start of a prose line.
//!
//! The recogniser is a resumable state machine over the bytes after the `@`: the name runs to
//! the first `(` on the line, the id is `[A-Za-z0-9_\-:.]+`, then `:`, optional whitespace
//! (line breaks included, as gptme's `\s*`) and `{`. From that brace it matches braces outside
//! JSON strings; a backslash escapes only inside a string (**differs from gptme**, which let a
//! backslash outside a string hide a brace). Each byte is looked at once.

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
    /// The message ended before the balancing brace: scanning stops.
    Incomplete,
}

impl AtCall {
    /// A candidate at the `@` at `start`.
    pub fn new(start: usize) -> AtCall {
        AtCall { start, name_end: 0, id_start: 0, id_end: 0, brace: 0, phase: Phase::Name { scan: start + 1 } }
    }

    /// Whether the recogniser is matching braces (only a `}` can complete the call).
    pub fn in_body(&self) -> bool {
        matches!(self.phase, Phase::Body { .. })
    }

    /// Runs over the text that has arrived.
    pub fn step(&mut self, input: &mut Input) -> AtStep {
        let end = input.end();
        let waiting = if input.finished() { AtStep::NotACall } else { AtStep::Wait };
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
                        Some(_) => return AtStep::NotACall,
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
                        Some(_) => return AtStep::NotACall,
                    }
                }
                Phase::Colon { at } => match input.byte(at) {
                    None => return waiting,
                    Some(b':') => self.phase = Phase::Space { scan: at + 1 },
                    Some(_) => return AtStep::NotACall,
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
                    Some(_) => return AtStep::NotACall,
                },
                Phase::Body { scan, depth, in_string, escape } => {
                    return self.match_braces(input, scan, depth, in_string, escape);
                }
            }
        }
    }

    fn match_braces(
        &mut self,
        input: &mut Input,
        scan: usize,
        mut depth: u32,
        mut in_string: bool,
        mut escape: bool,
    ) -> AtStep {
        let end = input.end();
        let bytes = input.bytes(scan, end);
        let mut i = 0;
        while i < bytes.len() {
            if escape {
                escape = false;
                i += 1;
                continue;
            }
            let found = if in_string {
                memchr::memchr2(b'"', b'\\', &bytes[i..])
            } else {
                memchr::memchr3(b'"', b'{', b'}', &bytes[i..])
            };
            let Some(n) = found else { break };
            i += n;
            match bytes[i] {
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
        input.examine(bytes.len());
        self.phase = Phase::Body { scan: end, depth, in_string, escape };
        if input.finished() { AtStep::Incomplete } else { AtStep::Wait }
    }

    /// The call, once complete (`end` from [`AtStep::Complete`]).
    pub fn draft(&self, input: &Input, tools: &ToolIndex, end: usize) -> CallDraft {
        let written = input.str(self.start + 1, self.name_end);
        let name = tools.resolve(written).map_or(written, |spec| spec.name.as_str());
        let mut draft = CallDraft::new(name);
        draft.id = Some(input.str(self.id_start, self.id_end).to_owned());
        match json::read_object(input.str(self.brace, end)) {
            Ok(args) => draft.args = args,
            Err(JsonProblem::Invalid(error)) => draft.errors.push(format!(
                "Invalid JSON in arguments for tool '{name}': {error}. Send the arguments as one JSON object."
            )),
            Err(JsonProblem::NotObject(kind)) => {
                draft.errors.push(format!("Arguments for tool '{name}' must be a JSON object, got {kind}"))
            }
        }
        draft
    }
}

fn is_id_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b':' | b'.')
}
