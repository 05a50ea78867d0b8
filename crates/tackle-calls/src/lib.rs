//! Text tool-call formats (docs/reference/formats.md): how a model that has no native function calling
//! calls tools from ordinary text, in three dialects, both directions.
//!
//! - **Parse**: [`parse`] a whole message, or feed a streamed one to a [`Parser`], which
//!   yields each call once it is complete and final. Calls are [`ParsedCall`]s with offsets
//!   in code points; a malformed call still comes out, with its `parse_error`, and
//!   [`ParsedCall::to_tool_call`] turns it into the `tackle_core::ToolCall` the executor
//!   answers (a malformed one as an error the model can read).
//! - **Render**: [`render_call`] writes a call in a format, [`render_results`] writes the
//!   outputs of a message back as one user message (docs/reference/formats.md#results-back-to-the-model), and [`instructions`] builds the
//!   system-prompt section that teaches a format for the loaded tools.
//! - **Code blocks**: [`codeblocks`] and [`CodeblockScanner`] expose the docs/reference/formats.md#fence-scanner fence scanner
//!   (gptme 0.35.1's rules) that every format uses to tell prose from code.
//!
//! The tools a parser dispatches to come from a [`ToolIndex`], built from the session's
//! specs. How the agent loop uses all this:
//!
//! ```
//! use tackle_calls::{TextFormat, CallResult, Parser, ToolIndex, instructions, render_results};
//!
//! let tools = ToolIndex::default(); // ToolIndex::from_toolset(session.tools())
//! let system_prompt_part = instructions(TextFormat::Tool, &tools);
//! let mut parser = Parser::new(TextFormat::Tool, &tools).with_step(3);
//! let mut calls = Vec::new();
//! for delta in ["Reading it.\n@read_file(r1): {\"path\"", ": \"a.txt\"}\n"] {
//!     calls.extend(parser.feed(delta)); // start each call as soon as it is final
//! }
//! calls.extend(parser.finish());
//! // … run calls[i].to_tool_call() through the executor, then answer in one user message:
//! let user_message = render_results(TextFormat::Tool, &[CallResult {
//!     tool: &calls[0].name, id: &calls[0].id, is_error: false, output: "hello",
//! }]);
//! assert_eq!(user_message, "@result(r1): {\"tool\":\"read_file\",\"is_error\":false,\"output\":\"hello\"}");
//! # let _ = system_prompt_part;
//! ```

mod atcall;
mod call;
mod engine;
mod fence;
mod input;
mod json;
mod lines;
mod markdown;
mod parser;
mod pytext;
mod render;
mod tools;
mod wake;
mod xml;

pub use call::{Codeblock, ParsedCall, TextFormat, UnknownTextFormat};
pub use input::{InvalidUtf8, Utf8Stream};
pub use parser::{CodeblockScanner, Parser, codeblocks, parse};
pub use render::{CallResult, MAX_DESCRIPTION_CHARS, RenderError, instructions, render_call, render_results};
pub use tools::ToolIndex;
