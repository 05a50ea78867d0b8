//! From a read element to a call: names, ids and typed arguments (formats.md §3).
//!
//! A parameter's text is converted by the type the tool's schema gives it: strings raw (one
//! leading newline dropped, one trailing newline dropped when no other is left), numbers and
//! JSON values trimmed and parsed, booleans from `true/false/1/0/yes/no`, unions as JSON when
//! that gives an allowed type and else as a string. Empty text for an optional parameter means
//! absent. **Differs from gptme**, which flattened every parameter into one content string.

use serde_json::Value;
use tackle_core::ToolSpec;

use super::scan::Element;
use super::text;
use crate::call::CallDraft;
use crate::input::Input;
use crate::json::{self, JsonProblem};
use crate::tools::{SpecExt, ToolIndex};

/// The call an element makes.
pub(crate) fn draft(element: &Element, input: &Input, tools: &ToolIndex) -> CallDraft {
    let attrs = text::attributes(input.str(element.attrs.0, element.attrs.1));
    if element.invoke { invoke(element, attrs, input, tools) } else { tool_use(element, attrs, input, tools) }
}

/// Where a value's text comes from: element content (raw markup) or an attribute (decoded).
#[derive(Clone, Copy)]
enum Source<'a> {
    Markup(&'a str),
    Attribute(&'a str),
}

fn invoke(element: &Element, attrs: Vec<(String, String)>, input: &Input, tools: &ToolIndex) -> CallDraft {
    let written = attrs.iter().find(|(k, _)| k == "name").map(|(_, v)| v.as_str()).unwrap_or_default();
    let spec = tools.resolve(written);
    let mut draft = CallDraft::new(spec.map_or(written, |s| s.name.as_str()));
    if written.is_empty() {
        draft.errors.push("An <invoke> element needs the tool's name: <invoke name=\"TOOL\">".to_owned());
    }
    draft.id = attrs.iter().find(|(k, _)| k == "id").map(|(_, v)| v.clone());
    for param in &element.params {
        let param_attrs = text::attributes(input.str(param.attrs.0, param.attrs.1));
        match param_attrs.iter().find(|(k, _)| k == "name") {
            Some((_, name)) => convert(spec, name, Source::Markup(input.str(param.value.0, param.value.1)), &mut draft),
            None => draft
                .errors
                .push("A <parameter> element needs the parameter's name: <parameter name=\"NAME\">".to_owned()),
        }
    }
    if let Some((from, to)) = element.body {
        body(spec, "invoke", input.str(from, to), &mut draft);
    }
    draft
}

fn tool_use(element: &Element, attrs: Vec<(String, String)>, input: &Input, tools: &ToolIndex) -> CallDraft {
    let written = element.name(input);
    let spec = tools.resolve(written);
    let mut draft = CallDraft::new(spec.map_or(written, |s| s.name.as_str()));
    let is_param = |name: &str| spec.is_some_and(|s| s.param(name).is_some());
    for (name, value) in &attrs {
        if name == "id" && !is_param(name) {
            draft.id = Some(value.clone());
        } else if is_param(name) {
            convert(spec, name, Source::Attribute(value), &mut draft);
        } else if let Some(words) = spec.and_then(|s| s.mapping()).and_then(|m| m.words_param.as_deref())
            && name == "args"
        {
            // gptme's own rendering writes the langtag words as `args="…"`.
            convert(spec, words, Source::Attribute(value), &mut draft);
        }
    }
    let Some((from, to)) = element.body else { return draft };
    let raw = input.str(from, to);
    match children(raw, spec) {
        Some(children) => {
            for (name, value) in children {
                convert(spec, name, Source::Markup(value), &mut draft);
            }
        }
        None => body(spec, written, raw, &mut draft),
    }
    draft
}

/// A body that is not parameter elements: the block mapping's body parameter, or a JSON
/// object of arguments.
fn body(spec: Option<&ToolSpec>, tag: &str, raw: &str, draft: &mut CallDraft) {
    if let Some(mapping) = spec.and_then(|s| s.mapping()) {
        convert(spec, &mapping.body_param, Source::Markup(raw), draft);
        return;
    }
    let decoded = text::decode(raw);
    if decoded.trim().is_empty() {
        return;
    }
    match json::read_object(&decoded) {
        Ok(args) => {
            for (name, value) in args {
                insert(draft, name, value);
            }
        }
        Err(problem) => draft.errors.push(format!(
            "The body of a <{tag}> element must be a JSON object with the tool's parameters: {}",
            match problem {
                JsonProblem::Invalid(message) => message,
                JsonProblem::NotObject(kind) => format!("got {kind}"),
            }
        )),
    }
}

/// The body as `<P>VALUE</P>` children, if it is nothing but those (whitespace between) and
/// each `P` is a parameter of the tool (any name, for a tool that is not loaded).
fn children<'a>(raw: &'a str, spec: Option<&ToolSpec>) -> Option<Vec<(&'a str, &'a str)>> {
    let mut out = Vec::new();
    let mut rest = raw.trim_start();
    while !rest.is_empty() {
        let after = rest.strip_prefix('<')?;
        let name_len = after.find(|c: char| c.is_whitespace() || c == '>' || c == '/')?;
        let name = &after[..name_len];
        if name.is_empty() || spec.is_some_and(|s| s.param(name).is_none()) {
            return None;
        }
        let gt = after.find('>')?;
        if after[..gt].ends_with('/') {
            out.push((name, ""));
            rest = after[gt + 1..].trim_start();
            continue;
        }
        let content = &after[gt + 1..];
        let close = format!("</{name}>");
        let end = find_outside_cdata(content, &close)?;
        out.push((name, &content[..end]));
        rest = content[end + close.len()..].trim_start();
    }
    (!out.is_empty()).then_some(out)
}

/// The first `needle` in `haystack` that is not inside a CDATA section.
fn find_outside_cdata(haystack: &str, needle: &str) -> Option<usize> {
    let mut from = 0;
    loop {
        let next_close = haystack[from..].find(needle).map(|n| from + n)?;
        match haystack[from..next_close].find("<![CDATA[") {
            Some(open) => {
                let section = from + open + 9;
                from = section + haystack[section..].find("]]>")? + 3;
            }
            None => return Some(next_close),
        }
    }
}

/// Converts one parameter's text by its schema type into `draft`.
fn convert(spec: Option<&ToolSpec>, name: &str, source: Source<'_>, draft: &mut CallDraft) {
    let schema = spec.and_then(|s| s.param(name));
    let types = schema.map_or(Types::STRING, Types::of);
    let optional = !spec.is_some_and(|s| s.is_required(name));
    let as_string = || match source {
        Source::Markup(raw) => text::decode(text::trim_newlines(raw)),
        Source::Attribute(value) => value.to_owned(),
    };
    let string_is_empty = match source {
        Source::Markup(raw) => text::trim_newlines(raw).is_empty(),
        Source::Attribute(value) => value.is_empty(),
    };
    if types.only_string() {
        if !(string_is_empty && optional) {
            insert(draft, name.to_owned(), Value::String(as_string()));
        }
        return;
    }
    let decoded = match source {
        Source::Markup(raw) => text::decode(raw),
        Source::Attribute(value) => value.to_owned(),
    };
    let trimmed = decoded.trim();
    if trimmed.is_empty() && optional {
        return;
    }
    let value = if types.single() == Some(Types::BOOLEAN) {
        match trimmed.to_lowercase().as_str() {
            "true" | "1" | "yes" => Some(Value::Bool(true)),
            "false" | "0" | "no" => Some(Value::Bool(false)),
            _ => None,
        }
    } else {
        serde_json::from_str::<Value>(trimmed).ok().filter(|v| types.allows(v))
    };
    match value {
        Some(value) => insert(draft, name.to_owned(), value),
        None if types.contains(Types::STRING) => insert(draft, name.to_owned(), Value::String(as_string())),
        None => {
            let shown: String = trimmed.chars().take(80).collect();
            let ellipsis = if shown.len() < trimmed.len() { "…" } else { "" };
            draft.errors.push(format!("Parameter `{name}` should be {} (got \"{shown}{ellipsis}\")", types.describe()));
            insert(draft, name.to_owned(), Value::String(decoded));
        }
    }
}

fn insert(draft: &mut CallDraft, name: String, value: Value) {
    if draft.args.contains_key(&name) {
        draft.errors.push(format!("Parameter `{name}` is given more than once"));
        return;
    }
    draft.args.insert(name, value);
}

/// The JSON types a schema allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Types(u8);

impl Types {
    const STRING: Types = Types(1);
    const INTEGER: Types = Types(2);
    const NUMBER: Types = Types(4);
    const BOOLEAN: Types = Types(8);
    const ARRAY: Types = Types(16);
    const OBJECT: Types = Types(32);
    const NULL: Types = Types(64);
    const ANY: Types = Types(127);
    const NAMES: [(Types, &'static str); 7] = [
        (Types::STRING, "string"),
        (Types::INTEGER, "integer"),
        (Types::NUMBER, "number"),
        (Types::BOOLEAN, "boolean"),
        (Types::ARRAY, "array"),
        (Types::OBJECT, "object"),
        (Types::NULL, "null"),
    ];

    fn of(schema: &Value) -> Types {
        let Some(map) = schema.as_object() else { return Types::ANY };
        match map.get("type") {
            Some(Value::String(t)) => return Types::named(t),
            Some(Value::Array(ts)) => {
                return Types(ts.iter().filter_map(Value::as_str).map(|t| Types::named(t).0).fold(0, |a, b| a | b));
            }
            _ => {}
        }
        if let Some(Value::Array(variants)) = map.get("anyOf").or_else(|| map.get("oneOf")) {
            return Types(variants.iter().map(|v| Types::of(v).0).fold(0, |a, b| a | b));
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            return Types(values.iter().map(|v| Types::of_value(v).0).fold(0, |a, b| a | b));
        }
        map.get("const").map_or(Types::ANY, Types::of_value)
    }

    fn named(name: &str) -> Types {
        Types::NAMES.iter().find(|(_, n)| *n == name).map_or(Types::ANY, |(t, _)| *t)
    }

    fn of_value(value: &Value) -> Types {
        match value {
            Value::Null => Types::NULL,
            Value::Bool(_) => Types::BOOLEAN,
            Value::Number(n) if n.is_i64() || n.is_u64() => Types::INTEGER,
            Value::Number(_) => Types::NUMBER,
            Value::String(_) => Types::STRING,
            Value::Array(_) => Types::ARRAY,
            Value::Object(_) => Types::OBJECT,
        }
    }

    fn contains(self, other: Types) -> bool {
        self.0 & other.0 != 0
    }

    fn only_string(self) -> bool {
        self.contains(Types::STRING) && self.0 & !(Types::STRING.0 | Types::NULL.0) == 0
    }

    /// The one non-null type, if there is exactly one.
    fn single(self) -> Option<Types> {
        let bits = self.0 & !Types::NULL.0;
        (bits.count_ones() == 1).then_some(Types(bits))
    }

    fn allows(self, value: &Value) -> bool {
        let kind = Types::of_value(value);
        self.contains(kind)
            || (kind == Types::INTEGER && self.contains(Types::NUMBER))
            || (kind == Types::NUMBER
                && self.contains(Types::INTEGER)
                && value.as_f64().is_some_and(|f| f.fract() == 0.0))
    }

    fn describe(self) -> String {
        let names: Vec<&str> =
            Types::NAMES.iter().filter(|(t, _)| *t != Types::NULL && self.contains(*t)).map(|(_, n)| *n).collect();
        names.join(" or ")
    }
}

/// Whether parameter `name` of `spec` takes its text raw, as a string (so a renderer writes
/// strings raw, and everything else as JSON).
pub(crate) fn takes_raw_string(spec: Option<&ToolSpec>, name: &str) -> bool {
    spec.and_then(|s| s.param(name)).map_or(Types::STRING, Types::of).only_string()
}
