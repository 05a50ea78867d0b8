//! Writing one call in a text format (docs/reference/formats.md#rendering, docs/reference/formats.md#xml rendering, docs/reference/formats.md#tool rendering).
//!
//! Every rendering is checked by parsing it back: a call that the format cannot express (a
//! shell block whose command leaves a quote open, a markdown block for a tool's parameters
//! that only xml or `tool` can carry) is refused with [`RenderError`] rather than written in a
//! form that would run something else.

use serde_json::{Map, Value};

use crate::call::TextFormat;
use crate::parser::parse;
use crate::pytext;
use crate::tools::{SpecExt, ToolIndex};
use crate::xml::scan::PARAM_ENDS;
use crate::xml::text;
use crate::xml::typed::takes_raw_string;

/// A call that cannot be written in a format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a call to '{tool}' with these arguments cannot be written in the {format} format: {reason}")]
pub struct RenderError {
    /// The tool.
    pub tool: String,
    /// The format.
    pub format: TextFormat,
    /// Why not.
    pub reason: String,
}

/// Writes the call `name(args)` with id `id` in `format`. In `markdown` the id is not written
/// (ids are synthetic there); the other formats carry it.
pub fn render_call(
    format: TextFormat,
    tools: &ToolIndex,
    name: &str,
    args: &Map<String, Value>,
    id: &str,
) -> Result<String, RenderError> {
    let refuse = |reason: &str| RenderError { tool: name.to_owned(), format, reason: reason.to_owned() };
    let text = match format {
        TextFormat::Markdown => markdown(tools, name, args).map_err(|why| refuse(&why.to_string()))?,
        TextFormat::Xml => xml(tools, name, args, id),
        TextFormat::Tool => {
            let json = serde_json::to_string(args).map_err(|err| refuse(&err.to_string()))?;
            format!("@{name}({id}): {json}")
        }
    };
    let parsed = parse(format, &text, tools);
    match parsed.as_slice() {
        [call]
            if call.name == name
                && &call.args == args
                && call.parse_error.is_none()
                && (format == TextFormat::Markdown || call.id == id) =>
        {
            Ok(text)
        }
        _ => Err(refuse("the text would not parse back to the same call")),
    }
}

/// The fence for a body: `max(3, L + 1)` backticks, `L` the longest run starting a line;
/// never exactly six, which followed by a langtag reads as a glued close and open (docs/reference/formats.md#fence-scanner).
pub(crate) fn fence_for(body: &str) -> String {
    let longest = body.split('\n').map(pytext::backtick_run).max().unwrap_or(0);
    let len = (longest + 1).max(3);
    "`".repeat(if len == 6 { 7 } else { len })
}

/// Why a call has no markdown block; the text is a [`RenderError`]'s reason.
#[derive(Debug, thiserror::Error)]
enum NoBlock {
    #[error("the tool is not loaded")]
    NotLoaded,
    /// An argument the tool's block cannot carry.
    #[error(
        "a ```{langtag} block carries only `{body}`{}, not `{other}`; use the xml or tool format",
        .words.as_ref().map(|w| format!(" and `{w}`")).unwrap_or_default()
    )]
    Unblockable { langtag: String, body: String, words: Option<String>, other: String },
    /// The body parameter is not a string.
    #[error("`{0}` must be a string")]
    BodyNotString(String),
    #[error("the langtag words must be a non-empty string")]
    BadWords,
    /// A tool without a mapping whose arguments do not serialize.
    #[error("{0}")]
    Json(#[source] serde_json::Error),
}

fn markdown(tools: &ToolIndex, name: &str, args: &Map<String, Value>) -> Result<String, NoBlock> {
    let spec = tools.resolve(name).ok_or(NoBlock::NotLoaded)?;
    let (langtag, body) = match spec.mapping() {
        Some(mapping) => {
            let allowed = |key: &String| *key == mapping.body_param || mapping.words_param.as_ref() == Some(key);
            if let Some(other) = args.keys().find(|k| !allowed(k)) {
                return Err(NoBlock::Unblockable {
                    langtag: mapping.langtags.first().unwrap_or(&spec.name).clone(),
                    body: mapping.body_param.clone(),
                    words: mapping.words_param.clone(),
                    other: other.clone(),
                });
            }
            let body = match args.get(&mapping.body_param) {
                Some(Value::String(body)) => body.clone(),
                _ => return Err(NoBlock::BodyNotString(mapping.body_param.clone())),
            };
            let body = if mapping.strip_prompt && body.starts_with("$ ") { format!("$ {body}") } else { body };
            let mut langtag = mapping.langtags.first().unwrap_or(&spec.name).clone();
            if let Some(words) = mapping.words_param.as_ref().and_then(|w| args.get(w)) {
                match words {
                    Value::String(words) if !words.is_empty() => {
                        langtag.push(' ');
                        langtag.push_str(words);
                    }
                    _ => return Err(NoBlock::BadWords),
                }
            }
            (langtag, body)
        }
        None => {
            let body = serde_json::to_string_pretty(args).map_err(NoBlock::Json)?;
            (spec.name.clone(), body)
        }
    };
    let fence = fence_for(&body);
    Ok(format!("{fence}{langtag}\n{body}\n{fence}"))
}

fn xml(tools: &ToolIndex, name: &str, args: &Map<String, Value>, id: &str) -> String {
    let spec = tools.resolve(name);
    let mut out =
        format!("<function_calls>\n<invoke name=\"{}\" id=\"{}\">\n", text::escape_attr(name), text::escape_attr(id));
    for (param, value) in args {
        let written = match value {
            Value::String(s) if takes_raw_string(spec, param) => xml_string(s),
            other => {
                let json = other.to_string();
                if text::needs_cdata(&json, &PARAM_ENDS) { text::cdata(&json) } else { json }
            }
        };
        out.push_str(&format!("<parameter name=\"{}\">{written}</parameter>\n", text::escape_attr(param)));
    }
    out.push_str("</invoke>\n</function_calls>");
    out
}

/// A string parameter's text: raw where that reads back unchanged (a multi-line value starts
/// on its own line), else CDATA.
pub(crate) fn xml_string(value: &str) -> String {
    let newlines = value.matches('\n').count();
    if value.is_empty() || text::needs_cdata(value, &PARAM_ENDS) || (newlines == 1 && value.ends_with('\n')) {
        text::cdata(value)
    } else if newlines > 0 {
        format!("\n{value}")
    } else {
        value.to_owned()
    }
}
