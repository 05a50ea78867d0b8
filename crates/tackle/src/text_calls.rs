//! Tool calls written as text (markdown fences, XML, `@tool(id): {json}`): the parser of a
//! model's reply, streaming or whole, for models without native tool calling and for
//! `tackle parse` (docs/call-formats.md).

pub use tackle_calls::{
    Codeblock, CodeblockScanner, InvalidUtf8, ParsedCall, Parser, TextFormat, ToolIndex, UnknownTextFormat, Utf8Stream,
    codeblocks, parse,
};
