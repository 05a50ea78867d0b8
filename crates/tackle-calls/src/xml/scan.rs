//! The lenient tag scanner (docs/reference/formats.md#xml): wrapper tags in prose, and each call element from
//! its start tag to its closing tag, resumable at any byte.
//!
//! Not an XML parser: parameter text is taken raw up to the first matching closing tag (a
//! `<![CDATA[ … ]]>` section hides closing tags inside it), start tags are read leniently, and
//! anything else between elements is ignored.
//!
//! A closing tag that is missing must not swallow the calls after it
//! (docs/formats-differences.md): outside CDATA, a parameter value also ends at `</invoke>`,
//! at the start of another `<invoke` or at `</function_calls>`; an `<invoke>` element ends at
//! another `<invoke` or at `</function_calls>`; a `<tool-use>` child ends at `</tool-use>` or
//! `<tool-use>`. What ends that way, and an element whose start tag is complete when the
//! message ends, is marked unclosed, so it becomes a call with a parse error.

use crate::input::Input;

/// The two wrappers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wrapper {
    /// `<function_calls>` with `<invoke name=…>` children.
    FunctionCalls,
    /// `<tool-use>` with one element per call, named after the tool.
    ToolUse,
}

impl Wrapper {
    fn close_tag(self) -> &'static [u8] {
        match self {
            Wrapper::FunctionCalls => b"</function_calls>",
            Wrapper::ToolUse => b"</tool-use>",
        }
    }
}

/// What a `<` in prose is.
#[derive(Debug)]
pub(crate) enum Tag {
    Wait,
    Text,
    /// A wrapper opens; prose resumes at the position given.
    Open(Wrapper, usize),
    /// The wrapper closes; prose resumes at the position given.
    Close(usize),
    /// A call element starts here.
    Child(Element),
}

#[derive(PartialEq, Eq)]
enum Prefix {
    Full,
    Partial,
    No,
}

fn prefix(avail: &[u8], pattern: &[u8]) -> Prefix {
    if avail.len() >= pattern.len() {
        if avail.starts_with(pattern) { Prefix::Full } else { Prefix::No }
    } else if pattern.starts_with(avail) {
        Prefix::Partial
    } else {
        Prefix::No
    }
}

/// Whether `avail` starts with the tag `pattern`. A pattern without its final `>` is a tag
/// name (`<invoke`), which needs a delimiter after it.
fn tag_prefix(avail: &[u8], pattern: &[u8]) -> Prefix {
    if pattern.ends_with(b">") {
        return prefix(avail, pattern);
    }
    match prefix(avail, pattern) {
        Prefix::Full => match avail.get(pattern.len()) {
            Some(b) if is_delimiter(*b) => Prefix::Full,
            Some(_) => Prefix::No,
            None => Prefix::Partial,
        },
        other => other,
    }
}

/// The longest element name taken as a tool name in `<tool-use>`.
const MAX_NAME: usize = 256;

fn is_delimiter(b: u8) -> bool {
    b.is_ascii_whitespace() || b == b'>' || b == b'/'
}

pub(crate) fn is_name_start(c: char) -> bool {
    c.is_alphabetic() || c == '_'
}

pub(crate) fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')
}

/// Classifies the `<` at `at`, inside `wrapper` (or outside any).
pub(crate) fn classify(input: &Input, at: usize, wrapper: Option<Wrapper>) -> Tag {
    let avail = input.tail(at);
    let mut partial = false;
    let full = |pattern: &[u8], partial: &mut bool| match prefix(avail, pattern) {
        Prefix::Full => true,
        Prefix::Partial => {
            *partial = true;
            false
        }
        Prefix::No => false,
    };
    let tag = match wrapper {
        None if full(b"<function_calls>", &mut partial) => Tag::Open(Wrapper::FunctionCalls, at + 16),
        None if full(b"<tool-use>", &mut partial) => Tag::Open(Wrapper::ToolUse, at + 10),
        None => Tag::Text,
        Some(wrapper) if full(wrapper.close_tag(), &mut partial) => Tag::Close(at + wrapper.close_tag().len()),
        Some(Wrapper::FunctionCalls) => match tag_prefix(avail, b"<invoke") {
            Prefix::Full => Tag::Child(Element::new(at, at + 7, b"</invoke>".to_vec(), true)),
            Prefix::Partial => {
                partial = true;
                Tag::Text
            }
            Prefix::No => Tag::Text,
        },
        Some(Wrapper::ToolUse) => {
            // A tool name is short; a longer run is text (and a partial one is not rescanned
            // at length on every chunk).
            let text = input.str(at + 1, input.end());
            let mut cut = text.len().min(MAX_NAME + 1);
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            let after = &text[..cut];
            input.examine(after.len());
            match (after.chars().next(), after.find(|c: char| !is_name_char(c))) {
                (Some(_), None) if after.len() > MAX_NAME => Tag::Text,
                (None, _) => {
                    partial = true;
                    Tag::Text
                }
                (Some(first), _) if !is_name_start(first) => Tag::Text,
                (Some(_), None) => {
                    partial = true;
                    Tag::Text
                }
                (Some(_), Some(len)) => {
                    let name = &after[..len];
                    if is_delimiter(after.as_bytes()[len]) && name != "tool-use" && name != "function_calls" {
                        Tag::Child(Element::new(at, at + 1 + len, format!("</{name}>").into_bytes(), false))
                    } else {
                        Tag::Text
                    }
                }
            }
        }
    };
    if partial && !input.finished() { Tag::Wait } else { tag }
}

/// One call element being read: `<invoke …>…</invoke>` or `<TOOL …>…</TOOL>`.
#[derive(Debug)]
pub(crate) struct Element {
    /// Byte position of its `<`.
    pub start: usize,
    /// End of the tag name.
    pub name_end: usize,
    /// Whether this is an `<invoke>` (else a `<tool-use>` child named after its tool).
    pub invoke: bool,
    /// The start tag's text after the name (its attributes).
    pub attrs: (usize, usize),
    /// `<parameter>` children: the start tag's attribute text and the raw value.
    pub params: Vec<RawParam>,
    /// The raw text between the start and closing tags (for `<invoke>`: only when it has no
    /// `<parameter>` children).
    pub body: Option<(usize, usize)>,
    /// Whether the element ended at its own closing tag (or was self-closing).
    pub closed: bool,
    close_tag: Vec<u8>,
    phase: Phase,
    cdata: Option<usize>,
}

/// A `<parameter>` child, as byte ranges.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RawParam {
    pub attrs: (usize, usize),
    pub value: (usize, usize),
    /// Whether the value ended at `</parameter>` (or the tag was self-closing).
    pub closed: bool,
}

/// Tags that end an unclosed `<parameter>` value (after its own `</parameter>`, which comes
/// first in the list). A tag without its final `>` must be followed by a delimiter.
pub(crate) const PARAM_ENDS: [&[u8]; 4] = [b"</parameter>", b"</invoke>", b"<invoke", b"</function_calls>"];

/// What an `<invoke>` element's content looks for: its closer, a parameter, and the tags that
/// end an `<invoke>` that lacks its `</invoke>`.
const INVOKE_TARGETS: [&[u8]; 4] = [b"</invoke>", b"<parameter", b"<invoke", b"</function_calls>"];

/// Tags that end a `<tool-use>` child that lacks its closing tag.
const TOOL_USE_BREAKS: [&[u8]; 2] = [b"</tool-use>", b"<tool-use>"];

#[derive(Debug)]
enum Phase {
    StartTag { scan: usize, quote: Option<u8>, after_eq: bool },
    Content { body_start: usize, scan: usize },
    ParamTag { tag_start: usize, body_start: usize, scan: usize, quote: Option<u8>, after_eq: bool },
    ParamValue { attrs: (usize, usize), body_start: usize, value_start: usize, scan: usize },
}

/// The outcome of reading an element over the text that has arrived.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum ElementStep {
    Wait,
    /// Complete; the element ends at the position given.
    Complete(usize),
    /// The message ended inside the start tag: no call.
    Incomplete,
}

enum Found {
    Wait,
    Incomplete,
    At(usize, usize),
}

impl Element {
    fn new(start: usize, name_end: usize, close_tag: Vec<u8>, invoke: bool) -> Element {
        Element {
            start,
            name_end,
            invoke,
            attrs: (name_end, name_end),
            params: Vec::new(),
            body: None,
            closed: false,
            close_tag,
            phase: Phase::StartTag { scan: name_end, quote: None, after_eq: false },
            cdata: None,
        }
    }

    /// The tag name as written.
    pub fn name<'a>(&self, input: &'a Input) -> &'a str {
        input.str(self.start + 1, self.name_end)
    }

    /// Reads on over the text that has arrived.
    pub fn step(&mut self, input: &mut Input) -> ElementStep {
        loop {
            match self.phase {
                Phase::StartTag { scan, quote, after_eq } => match tag_end(input, scan, quote, after_eq) {
                    Err((scan, quote, after_eq)) => {
                        self.phase = Phase::StartTag { scan, quote, after_eq };
                        return if input.finished() { ElementStep::Incomplete } else { ElementStep::Wait };
                    }
                    Ok(tag) => {
                        let self_closing = tag.self_closing(input, self.name_end);
                        self.attrs = (self.name_end, if self_closing { tag.at - 1 } else { tag.at });
                        if self_closing {
                            self.closed = true;
                            return ElementStep::Complete(tag.at + 1);
                        }
                        self.phase = Phase::Content { body_start: tag.content(), scan: tag.content() };
                    }
                },
                Phase::Content { body_start, scan } => {
                    let mut scan = scan;
                    let child_targets = [&self.close_tag[..], TOOL_USE_BREAKS[0], TOOL_USE_BREAKS[1]];
                    let targets = if self.invoke { &INVOKE_TARGETS[..] } else { &child_targets[..] };
                    let found = find_markup(input, &mut scan, &mut self.cdata, targets);
                    let body_end = match found {
                        Found::Wait => {
                            self.phase = Phase::Content { body_start, scan };
                            return ElementStep::Wait;
                        }
                        Found::At(1, at) if self.invoke => {
                            self.phase = Phase::ParamTag {
                                tag_start: at,
                                body_start,
                                scan: at + 10,
                                quote: None,
                                after_eq: false,
                            };
                            continue;
                        }
                        Found::At(0, at) => {
                            self.closed = true;
                            at
                        }
                        // Another call, the wrapper's end, or the message's end comes first.
                        Found::At(_, at) => at,
                        Found::Incomplete => input.end(),
                    };
                    if self.params.is_empty() {
                        self.body = Some((body_start, body_end));
                    }
                    return ElementStep::Complete(if self.closed { body_end + self.close_tag.len() } else { body_end });
                }
                Phase::ParamTag { tag_start, body_start, scan, quote, after_eq } => {
                    match tag_end(input, scan, quote, after_eq) {
                        // The message ends inside a `<parameter>` start tag.
                        Err(_) if input.finished() => return ElementStep::Complete(input.end()),
                        Err((scan, quote, after_eq)) => {
                            self.phase = Phase::ParamTag { tag_start, body_start, scan, quote, after_eq };
                            return ElementStep::Wait;
                        }
                        Ok(tag) => {
                            let attrs_start = tag_start + 10;
                            if tag.self_closing(input, attrs_start - 1) {
                                self.params.push(RawParam {
                                    attrs: (attrs_start, tag.at - 1),
                                    value: (tag.at, tag.at),
                                    closed: true,
                                });
                                self.phase = Phase::Content { body_start, scan: tag.at + 1 };
                            } else {
                                self.phase = Phase::ParamValue {
                                    attrs: (attrs_start, tag.at),
                                    body_start,
                                    value_start: tag.content(),
                                    scan: tag.content(),
                                };
                            }
                        }
                    }
                }
                Phase::ParamValue { attrs, body_start, value_start, scan } => {
                    let mut scan = scan;
                    match find_markup(input, &mut scan, &mut self.cdata, &PARAM_ENDS) {
                        Found::Wait => {
                            self.phase = Phase::ParamValue { attrs, body_start, value_start, scan };
                            return ElementStep::Wait;
                        }
                        Found::Incomplete => {
                            let end = input.end();
                            self.params.push(RawParam { attrs, value: (value_start, end), closed: false });
                            return ElementStep::Complete(end);
                        }
                        Found::At(0, at) => {
                            self.params.push(RawParam { attrs, value: (value_start, at), closed: true });
                            self.phase = Phase::Content { body_start, scan: at + PARAM_ENDS[0].len() };
                        }
                        // The tag that ends the value early is read again as the element's content.
                        Found::At(_, at) => {
                            self.params.push(RawParam { attrs, value: (value_start, at), closed: false });
                            self.phase = Phase::Content { body_start, scan: at };
                        }
                    }
                }
            }
        }
    }
}

/// Finds the end of a start tag, from `scan`: its `>` (the content starts after it), or an
/// unquoted `<` that shows the tag is broken (the content starts at that `<`). A quote right
/// after `=` (spaces allowed) runs to the same quote and hides both. On `Err`, the state to
/// resume with.
fn tag_end(
    input: &mut Input,
    scan: usize,
    mut quote: Option<u8>,
    mut after_eq: bool,
) -> Result<TagEnd, (usize, Option<u8>, bool)> {
    let bytes = input.tail(scan);
    for (i, &b) in bytes.iter().enumerate() {
        match quote {
            Some(q) => {
                if b == q {
                    quote = None;
                }
            }
            None => match b {
                b'>' | b'<' => {
                    input.examine(i + 1);
                    return Ok(TagEnd { at: scan + i, closed: b == b'>' });
                }
                b'=' => after_eq = true,
                b'"' | b'\'' if after_eq => {
                    quote = Some(b);
                    after_eq = false;
                }
                b if b.is_ascii_whitespace() => {}
                _ => after_eq = false,
            },
        }
    }
    input.examine(bytes.len());
    Err((input.end(), quote, after_eq))
}

/// Where a start tag ends: at `at`, with a `>` there (`closed`) or a stray `<`.
struct TagEnd {
    at: usize,
    closed: bool,
}

impl TagEnd {
    /// Where the element's content starts.
    fn content(&self) -> usize {
        if self.closed { self.at + 1 } else { self.at }
    }

    /// Whether the tag ends with `/>`.
    fn self_closing(&self, input: &Input, after_name: usize) -> bool {
        self.closed && self.at > after_name && input.byte(self.at - 1) == Some(b'/')
    }
}

/// Finds the first of `targets` at or after `scan`, outside CDATA sections (a target without
/// its final `>` must be followed by a delimiter).
fn find_markup(input: &mut Input, scan: &mut usize, cdata: &mut Option<usize>, targets: &[&[u8]]) -> Found {
    let end = input.end();
    let stop = if input.finished() { Found::Incomplete } else { Found::Wait };
    loop {
        if let Some(from) = *cdata {
            match memchr::memmem::find(input.bytes(from, end), b"]]>") {
                Some(n) => {
                    input.examine(n + 3);
                    *cdata = None;
                    *scan = from + n + 3;
                }
                None => {
                    input.examine(end - from);
                    *cdata = Some(end.saturating_sub(2).max(from));
                    return stop;
                }
            }
        }
        let Some(n) = memchr::memchr(b'<', input.bytes(*scan, end)) else {
            input.examine(end - *scan);
            *scan = end;
            return stop;
        };
        input.examine(n + 1);
        let at = *scan + n;
        let avail = input.tail(at);
        let mut partial = false;
        match prefix(avail, b"<![CDATA[") {
            Prefix::Full => {
                *cdata = Some(at + 9);
                continue;
            }
            Prefix::Partial => partial = true,
            Prefix::No => {}
        }
        for (i, target) in targets.iter().enumerate() {
            match tag_prefix(avail, target) {
                Prefix::Full => return Found::At(i, at),
                Prefix::Partial => partial = true,
                Prefix::No => {}
            }
        }
        if partial && !input.finished() {
            *scan = at;
            return Found::Wait;
        }
        *scan = at + 1;
    }
}
