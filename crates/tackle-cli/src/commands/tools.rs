//! `tackle tools list | schema | call | batch`.

use std::io::Write as _;
use std::process::ExitCode;

use serde::Serialize;
use serde_json::{Value, json};
use tackle::tool_catalog::{
    ALL_TOOLSET, Availability, Executor, LOAD_SKILL, Registry, RegistryEntry, Selection, render_tools,
};
use tackle::{ErrorKind, OutputMeta, SessionTemplate, ToolCall, ToolOutput, ToolSession};
use tokio::io::AsyncBufReadExt as _;
use tokio_util::sync::CancellationToken;

use crate::cli::{BatchArgs, CallArgs, ListArgs, SchemaArgs, ToolSelection};
use crate::exit::{CommandResult, Failure, OK, TOOL_FAILED, USAGE, write_failure};
use crate::{session, signals, stdout};

/// One element of `tools list --json`.
#[derive(Debug, Serialize)]
struct ListedTool<'a> {
    name: &'a str,
    aliases: &'a [String],
    description: &'a str,
    toolsets: Vec<String>,
    read_only: bool,
    concurrency_safe: bool,
    source: String,
}

impl<'a> ListedTool<'a> {
    fn new(entry: &'a RegistryEntry) -> Self {
        let mut toolsets = entry.toolsets.clone();
        if entry.in_toolset(ALL_TOOLSET) {
            toolsets.push(ALL_TOOLSET.to_owned());
        }
        ListedTool {
            name: &entry.spec.name,
            aliases: &entry.spec.aliases,
            description: &entry.spec.description,
            toolsets,
            read_only: entry.spec.annotations.read_only,
            concurrency_safe: entry.spec.concurrency_safe,
            source: entry.source.to_string(),
        }
    }
}

/// The registry and selection of the `tools list` and `tools schema` commands: built-ins and
/// the tools of the MCP servers configured for the current directory (which are then shut
/// down), and the template they came from (for the skills and agents it offers).
async fn listing(selection: &ToolSelection) -> Result<(Registry, Selection, SessionTemplate), Failure> {
    let workspace = session::workspace(None)?;
    let config = session::config(&workspace, false, session::interactive())?;
    let template =
        session::builder(&workspace, config, selection).default_tools(session::TOOLS_DEFAULT).build_template().await?;
    template.close().await;
    Ok((template.registry().clone(), template.selection().clone(), template))
}

/// `tackle tools list`.
pub async fn list(args: ListArgs) -> CommandResult {
    let (registry, selection, template) = listing(&args.selection).await?;
    let entries: Vec<&RegistryEntry> = selection.names.iter().filter_map(|name| registry.get(name)).collect();
    // The agents `subagent` can start (listed after the tools); definitions that cannot be
    // used are named here, not silently dropped.
    let agents = match selection.names.iter().any(|name| name == "subagent") {
        true => template.agent_definitions(),
        false => Default::default(),
    };
    for warning in &agents.warnings {
        diagln!("tackle: agent definition skipped: {warning}");
    }
    if args.json {
        let listed: Vec<ListedTool<'_>> = entries.iter().map(|e| ListedTool::new(e)).collect();
        stdout::print_json(&listed)?;
    } else {
        let mut out = stdout::buffered();
        let width = entries.iter().map(|e| e.spec.name.len()).max().unwrap_or(4).max(4);
        let lines = entries.iter().map(|entry| {
            let listed = ListedTool::new(entry);
            format!("{:width$}  {:22}  {}", listed.name, listed.toolsets.join(","), entry.spec.summary())
        });
        for line in lines {
            writeln!(out, "{line}").map_err(write_failure)?;
        }
        // Tools that exist but cannot be offered here, each with why (`web_search` without a
        // search backend).
        let unavailable: Vec<(&str, &str)> = registry
            .entries()
            .iter()
            .filter_map(|entry| match &entry.spec.availability {
                Availability::Unavailable(reason) => Some((entry.spec.name.as_str(), reason.as_str())),
                Availability::Available => None,
            })
            .collect();
        if !unavailable.is_empty() {
            writeln!(out, "\nUnavailable:").map_err(write_failure)?;
            let width = unavailable.iter().map(|(name, _)| name.len()).max().unwrap_or(4);
            for (name, reason) in unavailable {
                writeln!(out, "  {name:width$}  {reason}").map_err(write_failure)?;
            }
        }
        out.flush().map_err(write_failure)?;
    }
    // Tool files that could not be used are named with their error: on stderr by the
    // session's notices, and in the listing too when it is text.
    let skipped = &template.file_tools().skipped;
    if !args.json && !skipped.is_empty() {
        let mut out = stdout::buffered();
        writeln!(out, "\nTool files not loaded:").map_err(write_failure)?;
        for file in skipped {
            writeln!(out, "  {}: {}", file.path, file.error).map_err(write_failure)?;
        }
        out.flush().map_err(write_failure)?;
    }
    if selection.names.iter().any(|name| name == LOAD_SKILL) {
        let skills = template.skills();
        for warning in &skills.warnings {
            diagln!("tackle: {warning}");
        }
        if !args.json && !skills.skills.is_empty() {
            let mut out = stdout::buffered();
            writeln!(out, "\nSkills (load_skill NAME):").map_err(write_failure)?;
            let width = skills.skills.iter().map(|s| s.name.len()).max().unwrap_or(4);
            for skill in &skills.skills {
                let description: String = skill.description.split_whitespace().collect::<Vec<_>>().join(" ");
                writeln!(out, "  {:width$}  {description}", skill.name).map_err(write_failure)?;
            }
            out.flush().map_err(write_failure)?;
        }
    }
    if !args.json && !agents.agents.is_empty() {
        let mut out = stdout::buffered();
        writeln!(out, "\nAgents (subagent_type):").map_err(write_failure)?;
        let width = agents.agents.iter().map(|a| a.name.len()).max().unwrap_or(4);
        for agent in &agents.agents {
            let description: String = agent.description.split_whitespace().collect::<Vec<_>>().join(" ");
            writeln!(out, "  {:width$}  {description}", agent.name).map_err(write_failure)?;
        }
        out.flush().map_err(write_failure)?;
    }
    Ok(ExitCode::from(OK))
}

/// `tackle tools schema`.
pub async fn schema(args: SchemaArgs) -> CommandResult {
    let (registry, selection, _) = listing(&args.selection).await?;
    let tools = registry.instantiate(&selection);
    let specs: Vec<_> = if args.names.is_empty() {
        tools.specs().collect()
    } else {
        args.names
            .iter()
            .map(|name| {
                tools.resolve(name).map(|h| h.spec()).ok_or_else(|| Failure::usage(tools.not_found_message(name)))
            })
            .collect::<Result<_, _>>()?
    };
    stdout::print_json(&render_tools(specs, args.dialect))?;
    Ok(ExitCode::from(OK))
}

/// The JSON form of one call's output (`tools call --json`, each `tools batch` line).
#[derive(Debug, Serialize)]
struct CallResult<'a> {
    id: &'a str,
    tool: Option<&'a str>,
    is_error: bool,
    output: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    structured: Option<&'a Value>,
    meta: &'a OutputMeta,
}

fn call_result<'a>(session: &'a ToolSession, name: Option<&'a str>, output: &'a ToolOutput) -> CallResult<'a> {
    let tool = name.map(|n| session.tools().resolve(n).map_or(n, |h| h.spec().name.as_str()));
    CallResult {
        id: &output.call_id,
        tool,
        is_error: output.is_error,
        output: output.text_content(),
        structured: output.structured.as_ref(),
        meta: &output.meta,
    }
}

/// `tackle tools call`: one call in a fresh session. Read-before-edit is off: the person
/// typing the command is the reader.
pub async fn call(args: CallArgs) -> CommandResult {
    let raw = match args.args.as_deref() {
        None => "{}".to_owned(),
        Some("-") => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                .map_err(|err| Failure::usage(format!("cannot read the arguments from stdin: {err}")))?;
            text
        }
        Some(text) => text.to_owned(),
    };
    let tackle =
        session::tools_builder(&args.session)?.narrow_to(&args.name).enforce_read_before_edit(false).build().await?;
    if let Err(failure) = session::announce_sandbox(tackle.template()) {
        tackle.close().await;
        return Err(failure);
    }
    let interrupt = signals::interrupt();
    let call = ToolCall::from_text("call_1", args.name.clone(), raw);
    let output = tackle.executor().run(tackle.session(), call, &interrupt.token).await;
    let session = tackle.session();

    let code = if let Some(code) = interrupt.exit_code() {
        code
    } else if output.meta.rejected {
        USAGE
    } else if output.is_error {
        TOOL_FAILED
    } else {
        OK
    };
    if args.json {
        stdout::print_json(&call_result(session, Some(&args.name), &output))?;
    } else if output.meta.rejected {
        diagln!("tackle: {}", output.text_content());
        if output.meta.error_kind == Some(ErrorKind::InvalidInput)
            && let Some(handle) = session.tools().resolve(&args.name)
        {
            let spec = handle.spec();
            diagln!(
                "tackle: for example: tackle tools call {} '{}' (every parameter: tackle tools schema {})",
                spec.name,
                example_arguments(&spec.input_schema),
                spec.name
            );
        }
    } else {
        let mut text = output.text_content();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        stdout::print(&text)?;
    }
    tackle.close().await;
    Ok(ExitCode::from(code))
}

/// Arguments of the right shape for a tool's schema: each required parameter with a
/// placeholder of its type (`{"file_path": "FILE_PATH"}`); the first parameter when none is
/// required (`bash`'s `command`, required unless `restart`).
fn example_arguments(schema: &Value) -> Value {
    let mut required: Vec<&str> =
        schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    if required.is_empty() {
        required.extend(schema["properties"].as_object().and_then(|p| p.keys().next()).map(String::as_str));
    }
    let example = required
        .into_iter()
        .map(|name| {
            let property = &schema["properties"][name];
            let kind = property["type"].as_str().or_else(|| property["type"][0].as_str()).unwrap_or("string");
            let value = match kind {
                "integer" | "number" => json!(1),
                "boolean" => json!(true),
                "array" => json!([]),
                "object" => json!({}),
                _ => property["enum"][0].clone().as_str().map_or_else(|| json!(name.to_uppercase()), |v| json!(v)),
            };
            (name.to_owned(), value)
        })
        .collect::<serde_json::Map<_, _>>();
    Value::Object(example)
}

/// `tackle tools batch`: JSON Lines in, one JSON output per call out, one session throughout.
/// Each line runs as soon as it arrives and its outputs are flushed before the next is read.
pub async fn batch(args: BatchArgs) -> CommandResult {
    let mut tackle = session::tools_builder(&args.session)?.build().await?;
    if let Err(failure) = session::check_sandbox(tackle.template()) {
        tackle.close().await;
        return Err(failure);
    }
    let interrupt = signals::interrupt();
    let cancel = &interrupt.token;
    let mut reader = tokio::io::BufReader::new(tokio::io::stdin());
    let mut line = Vec::new();
    let mut line_number = 0usize;
    let result = loop {
        line.clear();
        // A signal while waiting for input ends the batch too (the session still closes).
        let read = tokio::select! {
            read = reader.read_until(b'\n', &mut line) => read,
            () = cancel.cancelled() => break Ok(ExitCode::from(interrupt.exit_code().unwrap_or(130))),
        };
        match read {
            Ok(0) => break Ok(ExitCode::from(OK)),
            Ok(_) => {}
            Err(err) => break Err(Failure::failed(format!("cannot read stdin: {err}"))),
        }
        line_number += 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        tackle.refresh_tools().await;
        let lines = run_batch_line(tackle.session(), tackle.executor(), &line, line_number, cancel).await;
        // A reader waits for each line's outputs: flushed once per line of input.
        let mut out = stdout::buffered();
        let written = lines.iter().try_for_each(|l| writeln!(out, "{l}")).and_then(|()| out.flush());
        if let Err(err) = written {
            break Err(write_failure(err));
        }
        if cancel.is_cancelled() {
            break Ok(ExitCode::from(interrupt.exit_code().unwrap_or(130)));
        }
    };
    tackle.close().await;
    result
}

/// One element of a batch line: a call to run, or an error already decided.
enum Entry {
    Call(ToolCall),
    Invalid { id: String, message: String },
}

async fn run_batch_line(
    session: &ToolSession,
    executor: &Executor,
    line: &[u8],
    line_number: usize,
    cancel: &CancellationToken,
) -> Vec<String> {
    let entries = parse_batch_line(line, line_number);
    let calls: Vec<ToolCall> = entries
        .iter()
        .filter_map(|e| match e {
            Entry::Call(call) => Some(call.clone()),
            Entry::Invalid { .. } => None,
        })
        .collect();
    let mut outputs = executor.run_turn(session, calls, cancel).await.into_iter();
    entries
        .iter()
        .map(|entry| match entry {
            Entry::Call(call) => match outputs.next() {
                Some(output) => to_json_line(&call_result(session, Some(&call.name), &output)),
                None => invalid_line(&call.id, "the executor returned no output for this call"),
            },
            Entry::Invalid { id, message } => invalid_line(id, message),
        })
        .collect()
}

fn parse_batch_line(line: &[u8], line_number: usize) -> Vec<Entry> {
    let synthetic = |n: usize| format!("batch_{line_number}_{n}");
    let shape = "each line must be a call object {\"name\": ..., \"args\": {...}} or an array of them";
    let value: Value = match std::str::from_utf8(line)
        .map_err(|e| e.to_string())
        .and_then(|t| serde_json::from_str(t).map_err(|e| tackle::tool_catalog::json_error(&e)))
    {
        Ok(value) => value,
        Err(err) => {
            return vec![Entry::Invalid {
                id: synthetic(1),
                message: format!("Line {line_number} is not valid JSON ({err}); {shape}."),
            }];
        }
    };
    let items = match value {
        Value::Array(items) => items,
        object @ Value::Object(_) => vec![object],
        other => {
            let kind = if other.is_null() { "null" } else { "not an object or array" };
            return vec![Entry::Invalid {
                id: synthetic(1),
                message: format!("Line {line_number} is {kind}; {shape}."),
            }];
        }
    };
    if items.is_empty() {
        return vec![Entry::Invalid {
            id: synthetic(1),
            message: format!("Line {line_number} has no calls; {shape}."),
        }];
    }
    items
        .into_iter()
        .enumerate()
        .map(|(index, item)| {
            // A caller matches answers by its own ids: a number is kept (as text), not replaced.
            let id = match item.get("id") {
                None | Some(Value::Null) => synthetic(index + 1),
                Some(Value::String(id)) => id.clone(),
                Some(Value::Number(id)) => id.to_string(),
                Some(_) => {
                    return Entry::Invalid {
                        id: synthetic(index + 1),
                        message: format!(
                            "Call {} on line {line_number} has an \"id\" that is not a string or a number.",
                            index + 1
                        ),
                    };
                }
            };
            let Some(name) = item.get("name").and_then(Value::as_str) else {
                return Entry::Invalid {
                    id,
                    message: format!("Call {} on line {line_number} has no \"name\"; {shape}.", index + 1),
                };
            };
            let call = match item.get("args") {
                None | Some(Value::Null) => ToolCall::new(id, name, json!({})),
                Some(Value::String(text)) => ToolCall::from_text(id, name, text.clone()),
                Some(args) => ToolCall::new(id, name, args.clone()),
            };
            Entry::Call(call)
        })
        .collect()
}

fn invalid_line(id: &str, message: &str) -> String {
    let meta = OutputMeta { rejected: true, error_kind: Some(ErrorKind::InvalidInput), ..OutputMeta::default() };
    to_json_line(&json!({"id": id, "tool": null, "is_error": true, "output": message, "meta": meta}))
}

fn to_json_line(value: &impl Serialize) -> String {
    serde_json::to_string(value)
        .unwrap_or_else(|err| json!({"is_error": true, "output": format!("cannot encode output: {err}")}).to_string())
}
