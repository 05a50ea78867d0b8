//! `tackle parse`: the calls (or code blocks) a model message holds, as the agent loop would
//! see them (docs/reference/formats.md#tackle-parse). Reads stdin, prints one JSON array; `--streaming` feeds stdin to
//! the incremental parser as it arrives and must print the same array; `--events` prints one
//! JSON line per call or block instead, with the input offset it was found at.

use std::io::{Read as _, Write as _};
use std::process::ExitCode;

use serde::Serialize;
use serde_json::{Map, Value};
use tackle::text_calls::{Codeblock, CodeblockScanner, ParsedCall, Parser, TextFormat, ToolIndex, Utf8Stream};

use crate::cli::ParseArgs;
use crate::exit::{CommandResult, Failure, OK, write_failure};
use crate::{session, stdout};

/// One element of the output array.
#[derive(Debug, Serialize)]
struct CallJson<'a> {
    tool: &'a str,
    args: &'a Map<String, Value>,
    id: &'a str,
    start: usize,
    end: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
}

impl<'a> From<&'a ParsedCall> for CallJson<'a> {
    fn from(call: &'a ParsedCall) -> Self {
        CallJson {
            tool: &call.name,
            args: &call.args,
            id: &call.id,
            start: call.start,
            end: call.end,
            error: call.parse_error.as_deref(),
        }
    }
}

/// One call or block, as printed: written straight from the parser's own values.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum FoundJson<'a> {
    Call(CallJson<'a>),
    Block(&'a Codeblock),
}

impl<'a> From<&'a Found> for FoundJson<'a> {
    fn from(found: &'a Found) -> Self {
        match found {
            Found::Call(call) => FoundJson::Call(CallJson::from(call)),
            Found::Block(block) => FoundJson::Block(block),
        }
    }
}

/// One line of `--events`.
#[derive(Debug, Serialize)]
struct EventJson<'a> {
    fed_bytes: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    call: Option<CallJson<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    block: Option<&'a Codeblock>,
}

impl<'a> EventJson<'a> {
    fn new(fed_bytes: usize, found: &'a Found) -> Self {
        match FoundJson::from(found) {
            FoundJson::Call(call) => EventJson { fed_bytes, call: Some(call), block: None },
            FoundJson::Block(block) => EventJson { fed_bytes, call: None, block: Some(block) },
        }
    }
}

/// What the command finds: calls or blocks.
enum Finder<'t> {
    Calls(Parser<'t>),
    Blocks(CodeblockScanner),
}

enum Found {
    Call(ParsedCall),
    Block(Codeblock),
}

impl Finder<'_> {
    fn feed(&mut self, text: &str) -> Vec<Found> {
        match self {
            Finder::Calls(parser) => parser.feed(text).into_iter().map(Found::Call).collect(),
            Finder::Blocks(scanner) => scanner.feed(text).into_iter().map(Found::Block).collect(),
        }
    }

    fn finish(self) -> Vec<Found> {
        match self {
            Finder::Calls(parser) => parser.finish().into_iter().map(Found::Call).collect(),
            Finder::Blocks(scanner) => scanner.finish().into_iter().map(Found::Block).collect(),
        }
    }
}

/// `tackle parse`.
pub fn run(args: ParseArgs) -> CommandResult {
    let format: TextFormat = args.format;
    // The tools decide which blocks are calls; code blocks need none (and building the
    // registry is most of the command's start).
    let tools = if args.codeblocks { ToolIndex::default() } else { tool_index(&args)? };
    let mut finder = if args.codeblocks {
        Finder::Blocks(CodeblockScanner::new())
    } else {
        Finder::Calls(Parser::new(format, &tools))
    };

    let mut stdin = std::io::stdin().lock();
    // Buffered; with `--streaming` each batch of events is flushed as it is found.
    let mut writer = stdout::buffered();
    let mut utf8 = Utf8Stream::new();
    let mut found = Vec::new();
    let mut fed = 0usize;
    let mut report = |items: Vec<Found>, fed: usize, out: &mut Vec<Found>| -> Result<(), Failure> {
        if args.events {
            for item in &items {
                stdout::write_json(&mut writer, &EventJson::new(fed, item), false)?;
            }
            if args.streaming && !items.is_empty() {
                writer.flush().map_err(write_failure)?;
            }
        }
        out.extend(items);
        Ok(())
    };

    // Without `--events`, when each item was found is not shown, so stdin is fed as it comes
    // in that case too: the parsers find the same items for any split of the text, and
    // neither the input nor the parser's buffer then grows with the input (memory that is
    // fresh costs a page fault per 4 KiB).
    if args.streaming || !args.events {
        let mut buf = vec![0u8; 256 * 1024];
        loop {
            let n = match stdin.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(Failure::usage(format!("cannot read stdin: {err}"))),
            };
            let text = utf8.decode(&buf[..n]).map_err(utf8_failure)?;
            fed += n;
            report(finder.feed(&text), fed, &mut found)?;
        }
    } else {
        let mut bytes = Vec::new();
        stdin.read_to_end(&mut bytes).map_err(|err| Failure::usage(format!("cannot read stdin: {err}")))?;
        let text = utf8.decode(&bytes).map_err(utf8_failure)?;
        fed = bytes.len();
        report(finder.feed(&text), fed, &mut found)?;
    }
    utf8.finish().map_err(utf8_failure)?;
    report(finder.finish(), fed, &mut found)?;

    if !args.events {
        let items: Vec<FoundJson<'_>> = found.iter().map(FoundJson::from).collect();
        stdout::write_json(&mut writer, &items, true)?;
    }
    writer.flush().map_err(write_failure)?;
    Ok(ExitCode::from(OK))
}

/// The tools that `--tools` (default: the default set) selects, to recognise calls.
fn tool_index(args: &ParseArgs) -> Result<ToolIndex, Failure> {
    let registry = tackle::builtin_registry();
    let list = args.selection.tools.as_deref().unwrap_or(session::TOOLS_DEFAULT);
    let selection = registry.select(list, session::TOOLS_DEFAULT).map_err(|err| Failure::usage(err.to_string()))?;
    Ok(ToolIndex::from_toolset(&registry.instantiate(&selection)))
}

fn utf8_failure(err: tackle::text_calls::InvalidUtf8) -> Failure {
    Failure::usage(format!("stdin is not valid UTF-8 (byte {}); tackle parse reads UTF-8 text", err.offset))
}
