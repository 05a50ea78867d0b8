//! The system-prompt section that teaches a text format (docs/reference/formats.md#results-back-to-the-model): the format's rules,
//! each loaded tool's description with an example call, its parameters (the JSON Schema for
//! tools that take a JSON object), and the warning that examples meant to be shown, not run,
//! go in a fence with a non-tool langtag.
//!
//! Kept short for providers with description limits: each description is cut to
//! [`MAX_DESCRIPTION_CHARS`], and schemas are written as compact JSON.

use serde_json::{Map, Value, json};
use tackle_core::ToolSpec;

use super::call::render_call;
use crate::call::TextFormat;
use crate::tools::{SpecExt, ToolIndex};
use crate::xml::typed::takes_raw_string;

/// The longest tool description the instructions carry (OpenAI's function description limit).
pub const MAX_DESCRIPTION_CHARS: usize = 1024;

/// The instructions for `format` and the tools of `tools`.
pub fn instructions(format: TextFormat, tools: &ToolIndex) -> String {
    let mut out = rules(format, tools);
    out.push_str("\n\n## Tools\n");
    for spec in tools.specs() {
        out.push_str(&tool_section(format, tools, spec));
    }
    out
}

fn rules(format: TextFormat, tools: &ToolIndex) -> String {
    match format {
        TextFormat::Markdown => {
            let mut text = String::from(
                "# Calling tools\n\
                 Call a tool by writing a fenced code block whose language tag names it. Every such block is \
                 run as soon as it is complete, in the order written, and the results come back in the next \
                 message.\n",
            );
            for spec in tools.specs() {
                if let Some(mapping) = spec.mapping().filter(|m| m.words_param.is_none() && m.langtags.len() > 1) {
                    let tags: Vec<String> = mapping.langtags.iter().map(|t| format!("```{t}")).collect();
                    text.push_str(&format!(
                        "- {} blocks are executed: their body is the `{}` of the `{}` tool.\n",
                        tags.join(", "),
                        mapping.body_param,
                        spec.name
                    ));
                }
            }
            text.push_str(
                "- For a tool without its own block form, the tag is the tool's name and the body is one JSON \
                 object of arguments.\n\
                 To show code or an example without running it, use a fence whose tag names no tool (```text, \
                 ```python, or a file name such as ```src/main.rs).",
            );
            text
        }
        TextFormat::Xml => "# Calling tools\n\
             Call tools with XML, in this shape:\n\
             ```xml\n<function_calls>\n<invoke name=\"TOOL\">\n<parameter name=\"NAME\">VALUE</parameter>\n</invoke>\n</function_calls>\n```\n\
             Parameter text is taken as written, with no escaping. Numbers, booleans, arrays and objects are \
             written as JSON. A value that contains the closing parameter tag goes in a CDATA section. One \
             function_calls element may hold several invoke elements; each runs as soon as its closing invoke \
             tag is written, and the results come back in the next message as tool-result elements.\n\
             XML inside a code fence is not run: to show an example without running it, put it in a fence \
             (as above)."
            .to_owned(),
        TextFormat::Tool => "# Calling tools\n\
             Call a tool with a line that starts like this:\n\
             ```text\n@TOOL(CALL_ID): {\"param\": \"value\"}\n```\n\
             CALL_ID is an id you choose, unique in the conversation (letters, digits, _ - : .). The arguments \
             are one JSON object, which may span several lines. Each call runs as soon as its closing brace is \
             written; the results come back in the next message as @result(CALL_ID): {…} lines.\n\
             A line inside a code fence is not a call: to show an example without running it, put it in a fence \
             (as above)."
            .to_owned(),
    }
}

fn tool_section(format: TextFormat, tools: &ToolIndex, spec: &ToolSpec) -> String {
    let mut out = format!("\n### {}\n{}\n", spec.name, cut(&spec.description, MAX_DESCRIPTION_CHARS));
    match (format, spec.mapping()) {
        (TextFormat::Markdown, Some(mapping)) => {
            let tag = mapping.langtags.first().unwrap_or(&spec.name);
            match &mapping.words_param {
                Some(words) => out.push_str(&format!(
                    "The words after `{tag}` are `{words}`; the block's body is `{}`.\n",
                    mapping.body_param
                )),
                None => out.push_str(&format!("The block's body is `{}`.\n", mapping.body_param)),
            }
        }
        (TextFormat::Xml, _) => out.push_str(&parameter_list(spec)),
        _ => out.push_str(&format!("Parameters (JSON Schema): {}\n", spec.input_schema)),
    }
    if let Ok(example) = render_call(format, tools, &spec.name, &example_args(format, spec), "call_1") {
        out.push_str(&format!("Example:\n{example}\n"));
    }
    out
}

/// One line per parameter: name, type, whether required, description.
fn parameter_list(spec: &ToolSpec) -> String {
    let Some(props) = spec.input_schema.get("properties").and_then(Value::as_object) else {
        return String::new();
    };
    if props.is_empty() {
        return "Parameters: none.\n".to_owned();
    }
    let mut out = String::from("Parameters:\n");
    for (name, schema) in props {
        let kind = match schema.get("type") {
            Some(Value::String(t)) => t.clone(),
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" or "),
            _ if schema.get("enum").is_some() => format!("one of {}", schema["enum"]),
            _ => "any JSON".to_owned(),
        };
        let required = if spec.is_required(name) { ", required" } else { "" };
        let description = schema.get("description").and_then(Value::as_str).unwrap_or_default();
        out.push_str(&format!("- {name} ({kind}{required}): {}\n", cut(description, 300)));
    }
    out
}

/// Placeholder arguments for the example call: the required parameters (all of them for a
/// markdown block mapping), each with a value of its type.
fn example_args(format: TextFormat, spec: &ToolSpec) -> Map<String, Value> {
    let mut args = Map::new();
    let names: Vec<String> = match (format, spec.mapping()) {
        (TextFormat::Markdown, Some(mapping)) => {
            mapping.words_param.iter().chain(std::iter::once(&mapping.body_param)).cloned().collect()
        }
        _ => spec.required_params().into_iter().map(str::to_owned).collect(),
    };
    for name in names {
        let schema = spec.param(&name).cloned().unwrap_or(Value::Null);
        let value = if let Some(first) = schema.get("enum").and_then(Value::as_array).and_then(|v| v.first()) {
            first.clone()
        } else if takes_raw_string(Some(spec), &name) {
            json!(format!("<{name}>"))
        } else {
            match schema.get("type").and_then(Value::as_str) {
                Some("integer" | "number") => json!(schema.get("minimum").cloned().unwrap_or(json!(1))),
                Some("boolean") => json!(true),
                Some("array") => json!([]),
                Some("object") => json!({}),
                _ => json!(format!("<{name}>")),
            }
        };
        args.insert(name, value);
    }
    args
}

/// `text` cut to `max` characters at a word boundary, with `…`.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let head: String = text.chars().take(max - 1).collect();
    let head = head.rsplit_once(char::is_whitespace).map_or(head.as_str(), |(h, _)| h).trim_end();
    format!("{head}…")
}
