//! Elicitation from imported servers (docs/mcp.md#elicitation): a server asks, in the middle
//! of a call, for a form to be filled in (MCP `elicitation/create`, form mode). Tackle declares
//! the capability; the answer comes from an [`Elicitor`]: on a terminal the person fills the
//! form in (the command line's elicitor, built on these helpers: [`Form::describe`],
//! [`Field::question`], [`Field::parse`]); without one, the user config's
//! `[mcp] elicitation` says what happens ([`Unattended`]: decline, the default, or accept
//! every field's default). A URL-mode request is declined: Tackle opens no links for servers.
//!
//! Whatever a server writes (its message, titles, descriptions, choices) is shown with its
//! control characters escaped, so a server cannot draw on the person's terminal.

use std::fmt::Write as _;

use serde::Deserialize;
use serde_json::{Map, Value, json};
use tackle_core::BoxFuture;

/// The most fields a form may have; a larger one is declined unseen (a server cannot flood the
/// terminal).
pub const MAX_FIELDS: usize = 64;

/// What happens to a form when nobody can be asked (`[mcp] elicitation` in the user config;
/// never taken from a workspace).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Unattended {
    /// Every form is declined.
    #[default]
    Decline,
    /// Every field takes its schema default; a form with a required field without one is
    /// declined.
    AcceptDefaults,
}

/// How the form was answered.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitAnswer {
    /// Filled in: the values by field name.
    Accept(Map<String, Value>),
    /// Refused.
    Decline,
    /// Dismissed without a choice.
    Cancel,
}

impl ElicitAnswer {
    /// The `elicitation/create` result.
    pub fn to_wire(&self) -> Value {
        match self {
            ElicitAnswer::Accept(content) => json!({"action": "accept", "content": content}),
            ElicitAnswer::Decline => json!({"action": "decline"}),
            ElicitAnswer::Cancel => json!({"action": "cancel"}),
        }
    }
}

/// Who answers a server's form.
pub trait Elicitor: Send + Sync {
    /// Answers `form`.
    fn elicit(&self, form: Form) -> BoxFuture<'_, ElicitAnswer>;
}

impl Elicitor for Unattended {
    fn elicit(&self, form: Form) -> BoxFuture<'_, ElicitAnswer> {
        let answer = match self {
            Unattended::Decline => ElicitAnswer::Decline,
            Unattended::AcceptDefaults => form.defaults().map_or(ElicitAnswer::Decline, ElicitAnswer::Accept),
        };
        Box::pin(std::future::ready(answer))
    }
}

/// The kind of a field.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// Text (`format` such as `email`, `uri`, `date` when given).
    Text {
        /// The server's format.
        format: Option<String>,
    },
    /// A number.
    Number,
    /// A whole number.
    Integer,
    /// Yes or no.
    Boolean,
    /// One of these values, each with its label.
    Choice(Vec<(String, String)>),
    /// Any of these values, each with its label.
    Choices(Vec<(String, String)>),
}

/// One field of a form.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The property name (the key of the answer).
    pub name: String,
    /// Its title, when the server gave one.
    pub title: Option<String>,
    /// What it is for.
    pub description: Option<String>,
    /// Its kind.
    pub kind: Kind,
    /// Its schema default.
    pub default: Option<Value>,
    /// Whether an answer must give it.
    pub required: bool,
}

/// A form a server asks to have filled in.
#[derive(Debug, Clone, PartialEq)]
pub struct Form {
    /// The server's name.
    pub server: String,
    /// What it says it wants.
    pub message: String,
    /// Its fields, in the schema's order.
    pub fields: Vec<Field>,
}

/// `text` with its control characters escaped, at most `max` characters.
pub fn shown(text: &str, max: usize) -> String {
    let mut out: String = text
        .chars()
        .take(max)
        .flat_map(|c| if c.is_control() && c != '\n' { c.escape_default().collect::<Vec<_>>() } else { vec![c] })
        .collect();
    if text.chars().count() > max {
        out.push('…');
    }
    out
}

/// The values and labels of an enum property (`enum` with `enumNames`, or `oneOf`/`anyOf` of
/// `{const, title}`).
fn choices(schema: &Value) -> Option<Vec<(String, String)>> {
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let names = schema.get("enumNames").and_then(Value::as_array);
        return Some(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let value = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                    let label = names.and_then(|n| n.get(i)).and_then(Value::as_str).unwrap_or(&value).to_owned();
                    (value, label)
                })
                .collect(),
        );
    }
    let options = schema.get("oneOf").or_else(|| schema.get("anyOf")).and_then(Value::as_array)?;
    Some(
        options
            .iter()
            .filter_map(|option| {
                let value = option.get("const")?;
                let value = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
                let label = option.get("title").and_then(Value::as_str).unwrap_or(&value).to_owned();
                Some((value, label))
            })
            .collect(),
    )
}

impl Form {
    /// The form of a `requestedSchema` (fields of a kind it does not know are text).
    pub fn from_schema(server: &str, message: &str, schema: &Value) -> Form {
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let properties = schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
        let fields = properties
            .into_iter()
            .map(|(name, property)| {
                let text = |key: &str| property.get(key).and_then(Value::as_str).map(str::to_owned);
                let kind = match property.get("type").and_then(Value::as_str) {
                    Some("array") => Kind::Choices(property.get("items").and_then(choices).unwrap_or_default()),
                    _ if choices(&property).is_some() => Kind::Choice(choices(&property).unwrap_or_default()),
                    Some("number") => Kind::Number,
                    Some("integer") => Kind::Integer,
                    Some("boolean") => Kind::Boolean,
                    _ => Kind::Text { format: text("format") },
                };
                Field {
                    required: required.contains(&name.as_str()),
                    title: text("title"),
                    description: text("description"),
                    default: property.get("default").cloned(),
                    kind,
                    name,
                }
            })
            .collect();
        Form { server: server.to_owned(), message: message.to_owned(), fields }
    }

    /// Every field's default; `None` when a required field has none.
    pub fn defaults(&self) -> Option<Map<String, Value>> {
        let mut content = Map::new();
        for field in &self.fields {
            match &field.default {
                Some(default) => {
                    content.insert(field.name.clone(), default.clone());
                }
                None if field.required => return None,
                None => {}
            }
        }
        Some(content)
    }

    /// The form for the person: who asks, what, and each field (type, description, default,
    /// choices), escaped.
    pub fn describe(&self) -> String {
        let mut text = format!(
            "MCP server '{}' asks for input:\n  {}\n",
            shown(&self.server, 64),
            shown(&self.message, 2000).replace('\n', "\n  ")
        );
        for field in &self.fields {
            let _ = writeln!(text, "  • {}", field.summary());
        }
        text
    }
}

impl Field {
    /// `name (type, required): description [default: x] {choices}` on one line, escaped.
    pub fn summary(&self) -> String {
        let label = match &self.title {
            Some(title) if !title.eq_ignore_ascii_case(&self.name) => {
                format!("{} ({})", shown(title, 80), shown(&self.name, 64))
            }
            Some(title) => shown(title, 80),
            None => shown(&self.name, 64),
        };
        let kind = match &self.kind {
            Kind::Text { format: Some(format) } => format!("text, {}", shown(format, 32)),
            Kind::Text { format: None } => "text".to_owned(),
            Kind::Number => "number".to_owned(),
            Kind::Integer => "integer".to_owned(),
            Kind::Boolean => "yes/no".to_owned(),
            Kind::Choice(_) => "one of the choices".to_owned(),
            Kind::Choices(_) => "any of the choices, comma-separated".to_owned(),
        };
        let mut line = format!("{label} ({kind}{})", if self.required { ", required" } else { "" });
        if let Some(description) = &self.description {
            let _ = write!(line, ": {}", shown(description, 300).replace('\n', " "));
        }
        if let Kind::Choice(options) | Kind::Choices(options) = &self.kind {
            let listed: Vec<String> = options
                .iter()
                .enumerate()
                .map(|(i, (value, label))| {
                    if label == value {
                        format!("{}) {}", i + 1, shown(value, 80))
                    } else {
                        format!("{}) {} ({})", i + 1, shown(label, 80), shown(value, 80))
                    }
                })
                .collect();
            let _ = write!(line, " — {}", listed.join("  "));
        }
        if let Some(default) = &self.default {
            let _ = write!(line, " [default: {}]", shown(&plain(default), 120));
        }
        line
    }

    /// The question for this field: its name, and what Enter gives.
    pub fn question(&self) -> String {
        let enter = match (&self.default, self.required) {
            (Some(default), _) => format!(" [Enter: {}]", shown(&plain(default), 80)),
            (None, false) => " [Enter: leave it out]".to_owned(),
            (None, true) => String::new(),
        };
        format!("  {}{enter}: ", shown(self.title.as_deref().unwrap_or(&self.name), 80))
    }

    /// The value of `answer` (one line): `Ok(None)` leaves the field out (Enter on an optional
    /// field without a default); Enter takes the default; an error says what is expected.
    // A string: the error is only ever shown to the person, who is asked the field again.
    pub fn parse(&self, answer: &str) -> Result<Option<Value>, String> {
        let answer = answer.trim();
        if answer.is_empty() {
            return match (&self.default, self.required) {
                (Some(default), _) => Ok(Some(default.clone())),
                (None, false) => Ok(None),
                (None, true) => Err("this field is required".to_owned()),
            };
        }
        // A string, as `parse`'s own error.
        let pick = |options: &[(String, String)], word: &str| -> Result<String, String> {
            let word = word.trim();
            if let Ok(index) = word.parse::<usize>()
                && (1..=options.len()).contains(&index)
            {
                return Ok(options[index - 1].0.clone());
            }
            options
                .iter()
                .find(|(value, label)| value == word || label.eq_ignore_ascii_case(word))
                .map(|(value, _)| value.clone())
                .ok_or_else(|| format!("choose a number from 1 to {} or one of the values", options.len()))
        };
        match &self.kind {
            Kind::Text { .. } => Ok(Some(Value::String(answer.to_owned()))),
            Kind::Number => answer
                .parse::<f64>()
                .ok()
                .filter(|n| n.is_finite())
                .and_then(|n| serde_json::Number::from_f64(n).map(Value::Number))
                .map(Some)
                .ok_or_else(|| "type a number".to_owned()),
            Kind::Integer => {
                answer.parse::<i64>().map(|n| Some(json!(n))).map_err(|_| "type a whole number".to_owned())
            }
            Kind::Boolean => match answer.to_ascii_lowercase().as_str() {
                "y" | "yes" | "true" => Ok(Some(Value::Bool(true))),
                "n" | "no" | "false" => Ok(Some(Value::Bool(false))),
                _ => Err("answer y or n".to_owned()),
            },
            Kind::Choice(options) => pick(options, answer).map(|v| Some(Value::String(v))),
            Kind::Choices(options) => answer
                .split(',')
                .map(|word| pick(options, word).map(Value::String))
                .collect::<Result<Vec<_>, _>>()
                .map(|values| Some(Value::Array(values))),
        }
    }
}

/// A JSON value as a person reads it: a string without its quotes.
fn plain(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(items) => items.iter().map(plain).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn booking() -> Form {
        Form::from_schema(
            "hotel",
            "Book a room",
            &json!({"type": "object", "required": ["guest"], "properties": {
                "guest": {"type": "string", "description": "Who stays"},
                "nights": {"type": "integer", "default": 2, "description": "How many nights"},
                "room": {"type": "string", "enum": ["single", "double"], "enumNames": ["Single", "Double"], "default": "single"},
                "breakfast": {"type": "boolean", "default": false},
                "email": {"type": "string", "format": "email"},
                "extras": {"type": "array", "items": {"anyOf": [{"const": "spa", "title": "Spa"}, {"const": "gym"}]}}
            }}),
        )
    }

    #[test]
    fn a_schema_becomes_fields_and_defaults() {
        let form = booking();
        let names: Vec<&str> = form.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["guest", "nights", "room", "breakfast", "email", "extras"]);
        assert_eq!(
            form.fields[2].kind,
            Kind::Choice(vec![("single".into(), "Single".into()), ("double".into(), "Double".into())])
        );
        assert_eq!(
            form.fields[5].kind,
            Kind::Choices(vec![("spa".into(), "Spa".into()), ("gym".into(), "gym".into())])
        );
        // A required field without a default: accept-defaults declines.
        assert_eq!(form.defaults(), None);
        let mut optional = form.clone();
        optional.fields[0].required = false;
        assert_eq!(
            Value::Object(optional.defaults().unwrap()),
            json!({"nights": 2, "room": "single", "breakfast": false})
        );
        assert_eq!(
            form.describe(),
            "MCP server 'hotel' asks for input:\n  Book a room\n  • guest (text, required): Who stays\n  \
             • nights (integer): How many nights [default: 2]\n  • room (one of the choices) — 1) Single (single)  2) Double (double) [default: single]\n  \
             • breakfast (yes/no) [default: false]\n  • email (text, email)\n  • extras (any of the choices, comma-separated) — 1) Spa (spa)  2) gym\n"
        );
    }

    #[test]
    fn answers_are_parsed_by_kind() {
        let form = booking();
        let field = |name: &str| form.fields.iter().find(|f| f.name == name).unwrap();
        assert_eq!(field("guest").parse(" Ada ").unwrap(), Some(json!("Ada")));
        assert!(field("guest").parse("").is_err());
        assert_eq!(field("nights").parse("").unwrap(), Some(json!(2)));
        assert_eq!(field("nights").parse("3").unwrap(), Some(json!(3)));
        assert!(field("nights").parse("2.5").is_err());
        assert_eq!(field("room").parse("2").unwrap(), Some(json!("double")));
        assert_eq!(field("room").parse("double").unwrap(), Some(json!("double")));
        assert_eq!(field("room").parse("single").unwrap(), Some(json!("single")));
        assert!(field("room").parse("3").is_err());
        assert!(field("room").parse("suite").is_err());
        assert_eq!(field("breakfast").parse("y").unwrap(), Some(json!(true)));
        assert!(field("breakfast").parse("maybe").is_err());
        assert_eq!(field("email").parse("").unwrap(), None);
        assert_eq!(field("extras").parse("1, gym").unwrap(), Some(json!(["spa", "gym"])));
        assert_eq!(field("nights").question(), "  nights [Enter: 2]: ");
        assert_eq!(field("email").question(), "  email [Enter: leave it out]: ");
    }

    #[test]
    fn a_hostile_server_cannot_draw_on_the_terminal() {
        let form = Form::from_schema(
            "evil\x1b[2J",
            "clear\x1b[2J\x07 me",
            &json!({"properties": {"a\x1b]0;t\x07": {"type": "string", "description": "\x1b[31mred", "default": "\x1b[1m"}}}),
        );
        let text = format!("{}{}", form.describe(), form.fields[0].question());
        assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
        assert!(text.contains("\\u{1b}[2J"), "{text}");
    }

    #[tokio::test]
    async fn unattended_answers() {
        let mut form = booking();
        assert_eq!(Unattended::Decline.elicit(form.clone()).await, ElicitAnswer::Decline);
        assert_eq!(Unattended::AcceptDefaults.elicit(form.clone()).await, ElicitAnswer::Decline);
        form.fields[0].default = Some(json!("guest"));
        let ElicitAnswer::Accept(content) = Unattended::AcceptDefaults.elicit(form).await else { panic!() };
        assert_eq!(
            Value::Object(content),
            json!({"guest": "guest", "nights": 2, "room": "single", "breakfast": false})
        );
        assert_eq!(ElicitAnswer::Decline.to_wire(), json!({"action": "decline"}));
    }
}
