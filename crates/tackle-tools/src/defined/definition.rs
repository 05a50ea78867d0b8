//! One tool definition file (docs/reference/tools.md#tools-defined-in-files): its TOML read
//! into a [`ToolDefinition`], or the one error that says what to fix. Everything a file can
//! get wrong is caught here, before the tool is offered: unknown keys (a misspelt hint would
//! otherwise be silently ignored), a name no dialect accepts, both or neither of `command` and
//! `script`, an input schema that is not a valid JSON Schema of an object, argument names a
//! script could not tell apart, a timeout that is not a duration.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use super::env_names;

/// The longest timeout a definition may set.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 3600);

/// The prefix reserved for imported MCP tools.
const MCP_PREFIX: &str = "mcp__";

/// What a defined tool runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Runner {
    /// A program and its arguments, run directly; the call's arguments arrive as one JSON
    /// object on stdin.
    Command(Vec<String>),
    /// A bash script body, run by `bash -c`; the arguments arrive in the environment
    /// ([`env_names`]).
    Script(String),
}

/// A tool definition that passed every check.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    /// The wire name.
    pub name: String,
    /// The model-facing description.
    pub description: String,
    /// The input schema as written (a JSON Schema object).
    pub input_schema: Value,
    /// What it runs.
    pub runner: Runner,
    /// The file claims the tool only reads.
    pub read_only: bool,
    /// The file says the tool may destroy data (the default unless it claims read-only).
    pub destructive: bool,
    /// The file says calls may run alongside other safe calls.
    pub concurrency_safe: bool,
    /// The deadline of one call; `None`: the executor's default.
    pub timeout: Option<Duration>,
}

/// The file as TOML gives it, before the checks.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDefinition {
    name: String,
    description: String,
    input_schema: toml::Table,
    command: Option<Vec<String>>,
    script: Option<String>,
    read_only: Option<bool>,
    destructive: Option<bool>,
    concurrency_safe: Option<bool>,
    timeout: Option<RawTimeout>,
}

/// `timeout = 30` (seconds) or `timeout = "1m30s"`.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawTimeout {
    Seconds(i64),
    Text(String),
}

/// Why a tool definition file was not loaded; shown after the file's path.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DefinitionError {
    /// Not UTF-8 TOML, a missing or unknown key, a value of the wrong type.
    #[error("not a valid tool definition: {0}")]
    Toml(String),
    /// The name is not one every dialect accepts.
    #[error(
        "name '{0}' must be 1 to 64 ASCII letters, digits, '_' and '-', starting with a letter or '_' (and not \
         starting with mcp__, which is reserved for MCP tools)"
    )]
    BadName(String),
    /// The description is blank.
    #[error("description is empty")]
    EmptyDescription,
    /// Both `command` and `script`, or neither.
    #[error("give exactly one of command (an argv array) and script (a bash script body)")]
    Runner,
    /// `command = []` or a blank program.
    #[error("command must name a program: a non-empty array whose first element is not blank")]
    EmptyCommand,
    /// `script = ""`.
    #[error("script is empty")]
    EmptyScript,
    /// The input schema is not a valid JSON Schema of an object.
    #[error("input_schema: {0}")]
    Schema(String),
    /// Two arguments of a script tool would land in the same variable, or one in none.
    #[error("input_schema: {0}")]
    ArgumentNames(String),
    /// The timeout is not a duration within bounds.
    #[error(
        "timeout '{0}' must be a duration from 1ms to 24h: seconds as a number, or text such as \"30s\", \"500ms\", \"2m\", \"1h\""
    )]
    Timeout(String),
}

/// Whether `name` is a tool name every dialect and call format accepts (Gemini's rule, the
/// strictest: a letter or `_` first) and not one reserved for MCP imports.
pub fn valid_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    let first_ok = bytes.next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    first_ok
        && name.len() <= 64
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        && !name.starts_with(MCP_PREFIX)
}

/// Reads and checks one definition file's bytes.
pub fn parse_definition(bytes: &[u8]) -> Result<ToolDefinition, DefinitionError> {
    let text = std::str::from_utf8(bytes).map_err(|_| DefinitionError::Toml("the file is not UTF-8".to_owned()))?;
    let raw: RawDefinition = toml::from_str(text).map_err(|err| DefinitionError::Toml(one_line(&err.to_string())))?;
    let name = raw.name.trim().to_owned();
    if !valid_name(&name) {
        return Err(DefinitionError::BadName(name.chars().take(80).collect()));
    }
    let description = raw.description.trim().to_owned();
    if description.is_empty() {
        return Err(DefinitionError::EmptyDescription);
    }
    let runner = match (raw.command, raw.script) {
        (Some(argv), None) => {
            if argv.first().is_none_or(|program| program.trim().is_empty()) {
                return Err(DefinitionError::EmptyCommand);
            }
            Runner::Command(argv)
        }
        (None, Some(script)) if script.trim().is_empty() => return Err(DefinitionError::EmptyScript),
        (None, Some(script)) => Runner::Script(script),
        _ => return Err(DefinitionError::Runner),
    };
    let input_schema =
        serde_json::to_value(&raw.input_schema).map_err(|err| DefinitionError::Schema(err.to_string()))?;
    check_schema(&input_schema)?;
    if matches!(runner, Runner::Script(_)) {
        check_argument_names(&input_schema)?;
    }
    let timeout = raw.timeout.map(parse_timeout).transpose()?;
    let read_only = raw.read_only.unwrap_or(false);
    Ok(ToolDefinition {
        name,
        description,
        input_schema,
        runner,
        read_only,
        destructive: raw.destructive.unwrap_or(!read_only),
        concurrency_safe: raw.concurrency_safe.unwrap_or(false),
        timeout,
    })
}

/// A valid JSON Schema (against its meta-schema, and compilable: a bad `pattern` fails here)
/// whose root is an object.
fn check_schema(schema: &Value) -> Result<(), DefinitionError> {
    let bad = |why: String| DefinitionError::Schema(one_line(&why));
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(bad("must have type = \"object\" at its root (the arguments are one object)".to_owned()));
    }
    if let Some(properties) = schema.get("properties")
        && !properties.is_object()
    {
        return Err(bad("properties must be a table".to_owned()));
    }
    jsonschema::meta::validate(schema).map_err(|err| bad(format!("not a valid JSON Schema: {err}")))?;
    jsonschema::validator_for(schema).map_err(|err| bad(format!("cannot be compiled: {err}")))?;
    Ok(())
}

/// Every declared argument of a script tool has its own variable.
fn check_argument_names(schema: &Value) -> Result<(), DefinitionError> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return Ok(()) };
    let mut seen: Vec<(String, &str)> = Vec::new();
    for name in properties.keys() {
        let Some(var) = env_names::var_name(name) else {
            return Err(DefinitionError::ArgumentNames(format!(
                "argument '{}' has no variable name (it must not be empty); rename it",
                one_line(name)
            )));
        };
        if let Some((_, other)) = seen.iter().find(|(known, _)| *known == var) {
            return Err(DefinitionError::ArgumentNames(format!(
                "arguments '{other}' and '{name}' would both be {var}; rename one"
            )));
        }
        seen.push((var, name));
    }
    Ok(())
}

/// A duration: seconds as a number, or digits with a unit (`ms`, `s`, `m`, `h`), several
/// joined (`1m30s`).
fn parse_timeout(raw: RawTimeout) -> Result<Duration, DefinitionError> {
    let (shown, parsed) = match raw {
        RawTimeout::Seconds(secs) => (secs.to_string(), u64::try_from(secs).ok().map(Duration::from_secs)),
        RawTimeout::Text(text) => {
            let parsed = parse_duration_text(text.trim());
            (text, parsed)
        }
    };
    parsed
        .filter(|d| *d >= Duration::from_millis(1) && *d <= MAX_TIMEOUT)
        .ok_or_else(|| DefinitionError::Timeout(one_line(&shown)))
}

fn parse_duration_text(text: &str) -> Option<Duration> {
    if text.is_empty() {
        return None;
    }
    if let Ok(secs) = text.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 9 {
            return None;
        }
        let number: u64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest.bytes().take_while(u8::is_ascii_alphabetic).count();
        let part = match &rest[..unit_len] {
            "ms" => Duration::from_millis(number),
            "s" => Duration::from_secs(number),
            "m" => Duration::from_secs(number * 60),
            "h" => Duration::from_secs(number * 3600),
            _ => return None,
        };
        total = total.checked_add(part)?;
        rest = &rest[unit_len..];
    }
    Some(total)
}

/// `text` on one line, at most 300 characters (a message names what the file holds).
fn one_line(text: &str) -> String {
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    line.chars().take(300).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const SCHEMA: &str = "[input_schema]\ntype = \"object\"\n[input_schema.properties.path]\ntype = \"string\"\n";

    fn parse(text: &str) -> Result<ToolDefinition, DefinitionError> {
        parse_definition(text.as_bytes())
    }

    #[test]
    fn a_command_tool_with_every_key() {
        let def = parse(&format!(
            "name = \"count_words\"\ndescription = \" Counts words. \"\ncommand = [\"wc\", \"-w\"]\nread_only = true\n\
             concurrency_safe = true\ntimeout = \"1m30s\"\n{SCHEMA}"
        ))
        .unwrap();
        assert_eq!(
            def,
            ToolDefinition {
                name: "count_words".into(),
                description: "Counts words.".into(),
                input_schema: serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}}}),
                runner: Runner::Command(vec!["wc".into(), "-w".into()]),
                read_only: true,
                destructive: false,
                concurrency_safe: true,
                timeout: Some(Duration::from_secs(90)),
            }
        );
    }

    #[test]
    fn a_script_tool_takes_defaults() {
        let def = parse(&format!("name = \"s\"\ndescription = \"d\"\nscript = \"echo hi\"\n{SCHEMA}")).unwrap();
        assert_eq!(def.runner, Runner::Script("echo hi".into()));
        assert_eq!((def.read_only, def.destructive, def.concurrency_safe, def.timeout), (false, true, false, None));
    }

    #[test]
    fn each_mistake_is_named() {
        let cases: &[(&str, &str)] = &[
            ("name = ", "not a valid tool definition"),
            ("description = \"d\"\nscript = \"x\"\n", "missing field `name`"),
            ("name = \"a\"\ndescription = \"d\"\nscript = \"x\"\nreadonly = true\n", "unknown field `readonly`"),
            ("name = \"a\"\ndescription = \"d\"\n", "give exactly one of command"),
            ("name = \"a\"\ndescription = \"d\"\nscript = \"x\"\ncommand = [\"y\"]\n", "give exactly one of command"),
            ("name = \"a\"\ndescription = \"d\"\ncommand = []\n", "command must name a program"),
            ("name = \"a\"\ndescription = \"d\"\nscript = \"  \"\n", "script is empty"),
            ("name = \"a b\"\ndescription = \"d\"\nscript = \"x\"\n", "name 'a b' must be"),
            ("name = \"1a\"\ndescription = \"d\"\nscript = \"x\"\n", "name '1a' must be"),
            ("name = \"mcp__git__x\"\ndescription = \"d\"\nscript = \"x\"\n", "reserved for MCP tools"),
            ("name = \"a\"\ndescription = \" \"\nscript = \"x\"\n", "description is empty"),
            ("name = \"a\"\ndescription = \"d\"\nscript = \"x\"\ntimeout = \"soon\"\n", "timeout 'soon'"),
            ("name = \"a\"\ndescription = \"d\"\nscript = \"x\"\ntimeout = 0\n", "timeout '0'"),
            ("name = \"a\"\ndescription = \"d\"\nscript = \"x\"\ntimeout = \"25h\"\n", "timeout '25h'"),
        ];
        for (head, expected) in cases {
            let text = format!("{head}{SCHEMA}");
            let err = parse(&text).unwrap_err().to_string();
            assert!(err.contains(expected), "{head:?}: {err}");
        }
        let long = "x".repeat(65);
        assert!(parse(&format!("name = \"{long}\"\ndescription = \"d\"\nscript = \"x\"\n{SCHEMA}")).is_err());
        assert!(parse_definition(b"name = \"\xff\"").unwrap_err().to_string().contains("not UTF-8"));
    }

    #[test]
    fn bad_schemas_are_refused() {
        let head = "name = \"a\"\ndescription = \"d\"\ncommand = [\"x\"]\n";
        let cases: &[(&str, &str)] = &[
            ("[input_schema]\ntype = \"string\"\n", "type = \"object\" at its root"),
            ("[input_schema]\n", "type = \"object\" at its root"),
            ("[input_schema]\ntype = \"object\"\nproperties = 3\n", "properties must be a table"),
            (
                "[input_schema]\ntype = \"object\"\n[input_schema.properties.a]\ntype = \"strung\"\n",
                "not a valid JSON Schema",
            ),
            ("[input_schema]\ntype = \"object\"\nrequired = \"a\"\n", "not a valid JSON Schema"),
            (
                "[input_schema]\ntype = \"object\"\n[input_schema.properties.a]\ntype = \"string\"\npattern = \"(\"\n",
                "input_schema",
            ),
        ];
        for (schema, expected) in cases {
            let err = parse(&format!("{head}{schema}")).unwrap_err();
            assert!(matches!(err, DefinitionError::Schema(_)), "{schema:?}: {err}");
            assert!(err.to_string().contains(expected), "{schema:?}: {err}");
        }
        assert!(parse(head).unwrap_err().to_string().contains("missing field `input_schema`"));
    }

    #[test]
    fn script_arguments_that_share_a_variable_are_refused() {
        let text = "name = \"a\"\ndescription = \"d\"\nscript = \"x\"\n[input_schema]\ntype = \"object\"\n\
                    [input_schema.properties.a-b]\ntype = \"string\"\n[input_schema.properties.A_B]\ntype = \"string\"\n";
        let err = parse(text).unwrap_err().to_string();
        assert_eq!(err, "input_schema: arguments 'A_B' and 'a-b' would both be TACKLE_ARG_A_B; rename one");
        // The same names are fine for a command tool: its arguments arrive as JSON.
        assert!(parse(&text.replace("script = \"x\"", "command = [\"x\"]")).is_ok());
    }

    #[test]
    fn the_examples_of_the_reference_parse() {
        let reference = include_str!("../../../../docs/reference/tools.md");
        let section = reference.split("\n## Tools defined in files\n").nth(1).unwrap().split("\n## ").next().unwrap();
        let examples: Vec<&str> =
            section.split("```toml\n").skip(1).map(|block| block.split("\n```").next().unwrap()).collect();
        assert_eq!(examples.len(), 2);
        let parsed: Vec<ToolDefinition> = examples.iter().map(|text| parse(text).unwrap()).collect();
        assert_eq!(parsed[0].runner, Runner::Command(vec!["jq".into(), "-r".into(), ".text | ascii_upcase".into()]));
        assert!(matches!(&parsed[1].runner, Runner::Script(script) if script.contains("$TACKLE_ARG_PATH")));
    }

    #[test]
    fn durations() {
        for (text, ms) in [("30", 30_000), ("500ms", 500), ("2m", 120_000), ("1h", 3_600_000), ("1m30s", 90_000)] {
            assert_eq!(parse_duration_text(text), Some(Duration::from_millis(ms)), "{text}");
        }
        for text in ["", "s", "1x", "1.5s", "-1s", "1s2", "9999999999s"] {
            assert_eq!(parse_duration_text(text), None, "{text}");
        }
    }
}
