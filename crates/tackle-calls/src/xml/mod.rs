//! The `xml` format (docs/reference/formats.md#xml): `<function_calls><invoke name="TOOL">` with
//! `<parameter name="P">` children, and `<tool-use><TOOL attr="…">BODY</TOOL>`.
//!
//! A wrapper opens where its tag appears in prose (outside code blocks and thinking regions,
//! which the engine skips); inside it, each call element is read by the lenient scanner in
//! [`scan`] and turned into a call with typed arguments by [`typed`]. A call is complete at
//! its own closing tag: the wrapper's closing tag is not waited for, so a streamed call is
//! yielded as soon as it is written (**differs from gptme**, which required both wrapper tags
//! somewhere in the message).

pub(crate) mod scan;
pub(crate) mod text;
pub(crate) mod typed;
