//! From a read element to a call: names, ids and typed arguments (docs/reference/formats.md#xml).
//!
//! A parameter's text is converted by the type the tool's schema gives it: strings raw (one
//! leading newline dropped, one trailing newline dropped when no other is left), numbers and
//! JSON values trimmed and parsed, booleans from `true/false/1/0/yes/no`, unions as JSON when
//! that gives an allowed type and else as a string. Empty text for an optional parameter means
//! absent. **Differs from gptme**, which flattened every parameter into one content string.

use serde_json::Value;
use tackle_core::ToolSpec;

use super::scan::{self, Element};
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
            Some((_, name)) => {
                if !param.closed {
                    draft.errors.push(format!("Parameter `{name}` has no closing </parameter>"));
                }
                convert(spec, name, Source::Markup(input.str(param.value.0, param.value.1)), &mut draft);
            }
            None => draft
                .errors
                .push("A <parameter> element needs the parameter's name: <parameter name=\"NAME\">".to_owned()),
        }
    }
    if let Some((from, to)) = element.body {
        body(spec, "invoke", input.str(from, to), &mut draft);
    }
    if !element.closed {
        draft.errors.push("The <invoke> element has no closing </invoke>".to_owned());
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
    if let Some((from, to)) = element.body {
        let raw = input.str(from, to);
        // Elements that name no parameter are the body of a tool that takes one (html for
        // `save`); otherwise they are parameters, and names not in the schema are passed on as
        // strings for validation to report (docs/reference/formats.md#xml).
        match children(raw, input) {
            Some(children) if spec.and_then(|s| s.mapping()).is_none() || children.iter().any(|c| is_param(c.name)) => {
                for child in children {
                    if !child.closed {
                        draft.errors.push(format!("Parameter `{0}` has no closing </{0}>", child.name));
                    }
                    convert(spec, child.name, Source::Markup(child.value), &mut draft);
                }
            }
            _ => body(spec, written, raw, &mut draft),
        }
    }
    if !element.closed {
        draft.errors.push(format!("The <{written}> element has no closing </{written}>"));
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

/// A `<P>VALUE</P>` element in a `<tool-use>` child's body.
struct Child<'a> {
    name: &'a str,
    value: &'a str,
    /// Whether it ended at its `</P>` (or was self-closing); an unclosed one runs to the end.
    closed: bool,
}

/// The body as `<P>VALUE</P>` elements, if it is nothing but those (whitespace between).
/// Each byte is looked at a bounded number of times (counted in `input`).
fn children<'a>(raw: &'a str, input: &Input) -> Option<Vec<Child<'a>>> {
    let mut out = Vec::new();
    let mut rest = raw.trim_start();
    while !rest.is_empty() {
        let after = rest.strip_prefix('<')?;
        let name_len = after.find(|c: char| !scan::is_name_char(c)).unwrap_or(after.len());
        let name = &after[..name_len];
        if !name.starts_with(scan::is_name_start) {
            return None;
        }
        let gt = name_len + after[name_len..].find('>')?;
        input.examine(gt + 2);
        if after[..gt].ends_with('/') {
            out.push(Child { name, value: "", closed: true });
            rest = after[gt + 1..].trim_start();
            continue;
        }
        let content = &after[gt + 1..];
        match find_closing(content, name, input) {
            Some((end, close_len)) => {
                out.push(Child { name, value: &content[..end], closed: true });
                rest = content[end + close_len..].trim_start();
            }
            None => {
                out.push(Child { name, value: content, closed: false });
                rest = "";
            }
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The first `</name>` in `haystack` that is not inside a CDATA section, and its length:
/// one forward scan.
fn find_closing(haystack: &str, name: &str, input: &Input) -> Option<(usize, usize)> {
    let bytes = haystack.as_bytes();
    let mut from = 0;
    while let Some(n) = memchr::memchr(b'<', &bytes[from..]) {
        input.examine(n + 1);
        let at = from + n;
        let tag = &bytes[at..];
        if let Some(closing) = tag.strip_prefix(b"</")
            && let Some(after) = closing.strip_prefix(name.as_bytes())
            && after.first() == Some(&b'>')
        {
            return Some((at, name.len() + 3));
        }
        if tag.starts_with(b"<![CDATA[") {
            let section = at + 9;
            let close = memchr::memmem::find(&bytes[section..], b"]]>");
            input.examine(close.map_or(bytes.len() - section, |n| n + 3));
            from = section + close? + 3;
        } else {
            from = at + 1;
        }
    }
    input.examine(bytes.len() - from);
    None
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
    let mut too_deep = None;
    let value = if types.single() == Some(Types::BOOLEAN) {
        match trimmed.to_lowercase().as_str() {
            "true" | "1" | "yes" => Some(Value::Bool(true)),
            "false" | "0" | "no" => Some(Value::Bool(false)),
            _ => None,
        }
    } else {
        match serde_json::from_str::<Value>(trimmed) {
            Ok(value) => Some(value).filter(|v| types.allows(v)),
            Err(err) => {
                too_deep = tackle_core::text::json_too_deep(&err).then(|| tackle_core::text::json_error(&err));
                None
            }
        }
    };
    match (value, too_deep) {
        (Some(value), _) => insert(draft, name.to_owned(), value),
        (None, _) if types.contains(Types::STRING) => insert(draft, name.to_owned(), Value::String(as_string())),
        (None, Some(problem)) => {
            draft.errors.push(format!("Parameter `{name}` could not be read: {problem}"));
            insert(draft, name.to_owned(), Value::String(decoded));
        }
        (None, None) => {
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
