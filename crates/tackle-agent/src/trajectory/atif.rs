//! The Agent Trajectory Interchange Format (ATIF, Harbor's RFC 0001) of a trajectory, for
//! `tackle replay --format atif`: Harbor's viewer and its SFT and RL pipelines read ATIF, so
//! this is how they read Tackle's runs. Each agent of the file (the main agent, each subagent
//! and teammate by its `agent_id`) becomes one ATIF trajectory; a child is embedded in the
//! trajectory of the agent whose call started it and referenced from that call's result. The
//! mapping, and what it leaves out, is documented in docs/agent.md ("ATIF export").

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Map, Value, json};
use tackle_llm::Usage;

use super::event::{Line, RecordedMeta, TrajectoryEvent};
use super::read::{ReadError, read_numbered};

/// The ATIF version written: the first with every field the export uses (`trajectory_id`,
/// `llm_call_count`, the `extra` of tool calls and results).
pub const ATIF_VERSION: &str = "ATIF-v1.7";

/// The agent's name in `agent.name`.
const AGENT_NAME: &str = "tackle";

/// The main agent's `agent_id` (also of lines written without one).
const MAIN: &str = "main";

/// How deep children are embedded in each other: far deeper than a run nests
/// (`crate::lineage::MAX_DEPTH`), shallow enough that a hostile file of agents nested a
/// million deep cannot exhaust the stack. A child deeper than this is embedded in the main
/// trajectory, unreferenced.
const MAX_NESTING: usize = 16;

/// How many unknown event types are named (a hostile file could hold a million).
const MAX_UNKNOWN_NAMED: usize = 32;

/// A trajectory as ATIF.
#[derive(Debug, Clone, PartialEq)]
pub struct AtifExport {
    /// The ATIF document: the main agent's trajectory, its children embedded.
    pub document: Value,
    /// The types of events this version does not know (from a newer Tackle), each once, the
    /// first 32: they are left out, and the document's `notes` say so.
    pub unknown: Vec<String>,
}

/// Why a trajectory has no ATIF form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AtifError {
    /// A line breaks a rule the mapping rests on.
    #[error("line {line}: {message}")]
    Line {
        /// The 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// No line starts the main agent's run.
    #[error("no session_start of the main agent")]
    NoMainAgent,
}

/// A trajectory file that cannot be exported.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The file cannot be read, or a line is no event of the format.
    #[error(transparent)]
    Read(#[from] ReadError),
    /// The events have no ATIF form.
    #[error("{path}: {source}")]
    Invalid {
        /// The trajectory.
        path: PathBuf,
        /// Why.
        source: AtifError,
    },
}

/// Reads the trajectory at `path` and converts it ([`to_atif`]).
pub fn export_file(path: &Path) -> Result<AtifExport, ExportError> {
    let lines = read_numbered(path)?;
    to_atif(&lines).map_err(|source| ExportError::Invalid { path: path.to_owned(), source })
}

/// Converts a trajectory's events, each with its line number, to ATIF.
///
/// Refused, naming the line: an event of an agent before that agent's `session_start`, a
/// second `session_start` of one agent, a second `tool_call` with one `call_id`, and a
/// `permission` or `tool_output` whose call has no earlier `tool_call` or reply. A run cut
/// short (no `session_end`, calls without an output) converts: what was recorded is there.
pub fn to_atif(lines: &[(usize, Line)]) -> Result<AtifExport, AtifError> {
    let parents = parents(lines);
    let mut parts: Vec<Part> = Vec::new();
    let mut positions: HashMap<&str, usize> = HashMap::new();
    let mut unknown: Vec<String> = Vec::new();
    for (number, line) in lines {
        // Left out before anything else: an agent with only such events has no trajectory.
        if matches!(line.event, TrajectoryEvent::Unknown) {
            if !unknown.contains(&line.kind) && unknown.len() < MAX_UNKNOWN_NAMED {
                unknown.push(line.kind.clone());
            }
            continue;
        }
        let agent = agent_of(line);
        let position = *positions.entry(agent).or_insert_with(|| {
            parts.push(Part::new(agent));
            parts.len() - 1
        });
        let fail = |message: String| AtifError::Line { line: *number, message };
        let part = &mut parts[position];
        match (&line.event, part.start.is_some()) {
            (TrajectoryEvent::SessionStart { .. }, true) => {
                return Err(fail(format!("a second session_start of {agent}")));
            }
            (TrajectoryEvent::SessionStart { .. }, false) => {}
            (_, false) => return Err(fail(format!("{} of {agent} before its session_start", line.kind))),
            _ => {}
        }
        part.take(line, &parents).map_err(fail)?;
    }
    let mut children: HashMap<String, Vec<String>> = HashMap::new();
    for part in &parts {
        if part.agent_id != MAIN {
            let parent = parents.get(&part.agent_id).map_or(MAIN, String::as_str);
            children.entry(parent.to_owned()).or_default().push(part.agent_id.clone());
        }
    }
    let mut by_id: HashMap<String, Part> = parts.into_iter().map(|part| (part.agent_id.clone(), part)).collect();
    let main = by_id.remove(MAIN).ok_or(AtifError::NoMainAgent)?;
    let mut document = main.finish(&mut by_id, &children);
    let mut notes = vec!["Converted from a Tackle trajectory by `tackle replay --format atif`.".to_owned()];
    if !document.subagent_trajectories.is_empty() {
        notes.push(
            "Each subagent or teammate is embedded in subagent_trajectories of the agent that started it; \
             final_metrics totals include the embedded trajectories' usage."
                .to_owned(),
        );
    }
    if !unknown.is_empty() {
        notes.push(format!("Left out: events of types this version of Tackle does not know ({}).", unknown.join(", ")));
    }
    document.notes = Some(notes.join(" "));
    let document = serde_json::to_value(&document).unwrap_or(Value::Null);
    Ok(AtifExport { document, unknown })
}

/// `main` for a line without an `agent_id`, else its `agent_id`.
fn agent_of(line: &Line) -> &str {
    if line.agent_id.is_empty() { MAIN } else { &line.agent_id }
}

/// The agent that started each child: the agent whose `tool_output` first names the child in
/// `structured.agent_id` (what `subagent` and `team_spawn` answer), when the child is an agent
/// of the file that started after it (so the links form a tree whatever the file says) and at
/// most [`MAX_NESTING`] deep.
fn parents(lines: &[(usize, Line)]) -> HashMap<String, String> {
    let mut started: HashMap<&str, usize> = HashMap::new();
    for (number, line) in lines {
        if matches!(line.event, TrajectoryEvent::SessionStart { .. }) {
            started.entry(agent_of(line)).or_insert(*number);
        }
    }
    let mut parents = HashMap::new();
    for (_, line) in lines {
        let TrajectoryEvent::ToolOutput { structured: Some(structured), .. } = &line.event else { continue };
        let Some(child) = structured.get("agent_id").and_then(Value::as_str) else { continue };
        let parent = agent_of(line);
        let in_order = matches!((started.get(parent), started.get(child)), (Some(p), Some(c)) if p < c);
        if child != MAIN && in_order && !parents.contains_key(child) {
            parents.insert(child.to_owned(), parent.to_owned());
        }
    }
    // In starting order, a parent's depth is known before its children's.
    let mut order: Vec<(&str, usize)> = started.into_iter().collect();
    order.sort_by_key(|(_, line)| *line);
    let mut depths: HashMap<&str, usize> = HashMap::new();
    for (agent, _) in order {
        let depth = match parents.get(agent) {
            Some(parent) => depths.get(parent.as_str()).map_or(1, |d| d + 1),
            None => 0,
        };
        if depth > MAX_NESTING {
            parents.remove(agent);
            depths.insert(agent, 1);
        } else {
            depths.insert(agent, depth);
        }
    }
    parents
}

/// What `session_start` says about an agent.
struct Start {
    tackle_version: String,
    provider: String,
    model: String,
    session_id: String,
    extra: Map<String, Value>,
}

/// One agent's part of the file, as it is read.
struct Part {
    agent_id: String,
    start: Option<Start>,
    steps: Vec<Step>,
    /// Each call's step and place in it, by call id.
    calls: HashMap<String, (usize, usize)>,
    /// The call ids that had a `tool_call` event.
    recorded: HashSet<String>,
    /// The call ids that had a `tool_output` event.
    answered: HashSet<String>,
    /// Retries of the request in flight.
    retries: u32,
    /// The first complete request body (`--trajectory-full`): the system prompt and tools.
    request: Option<Value>,
    /// Each run's end (`session_end`, with the `error` before it).
    runs: Vec<Value>,
    error: Option<Value>,
    /// The children referenced from this part's results so far.
    referenced: HashSet<String>,
}

impl Part {
    fn new(agent_id: &str) -> Part {
        Part {
            agent_id: agent_id.to_owned(),
            start: None,
            steps: Vec::new(),
            calls: HashMap::new(),
            recorded: HashSet::new(),
            answered: HashSet::new(),
            retries: 0,
            request: None,
            runs: Vec::new(),
            error: None,
            referenced: HashSet::new(),
        }
    }

    /// Takes one event of this agent (after its `session_start`, or that).
    fn take(&mut self, line: &Line, parents: &HashMap<String, String>) -> Result<(), String> {
        let t = timestamp(&line.t);
        match &line.event {
            TrajectoryEvent::SessionStart {
                tackle_version,
                task,
                provider,
                model,
                base_url,
                call_format,
                tools,
                permission_mode,
                workspace,
                max_steps,
                sandbox,
                session_id,
            } => {
                let mut extra = Map::new();
                extra.insert("agent_id".into(), self.agent_id.clone().into());
                for (key, value) in [
                    ("provider", provider),
                    ("base_url", base_url),
                    ("call_format", call_format),
                    ("permission_mode", permission_mode),
                    ("sandbox", sandbox),
                    ("workspace", workspace),
                ] {
                    if !value.is_empty() {
                        extra.insert(key.into(), value.clone().into());
                    }
                }
                extra.insert("max_steps".into(), (*max_steps).into());
                extra.insert("tools".into(), tools.clone().into());
                self.start = Some(Start {
                    tackle_version: tackle_version.clone(),
                    provider: provider.clone(),
                    model: model.clone(),
                    session_id: session_id.clone(),
                    extra,
                });
                self.steps.push(Step::new(Source::User, t, task.clone()));
            }
            TrajectoryEvent::Task { task } => self.steps.push(Step::new(Source::User, t, task.clone())),
            TrajectoryEvent::Notification { text } => self.steps.push(Step::new(Source::System, t, text.clone())),
            TrajectoryEvent::LlmRequest { request, .. } => {
                self.retries = 0;
                if self.request.is_none() {
                    self.request.clone_from(request);
                }
            }
            TrajectoryEvent::LlmRetry { .. } => self.retries += 1,
            TrajectoryEvent::LlmResponse { step, text, tool_calls, finish_reason, usage, duration_ms, thinking } => {
                let mut agent_step = Step::new(Source::Agent, t, text.clone());
                agent_step.reasoning_content.clone_from(thinking);
                agent_step.llm_call_count = Some(1);
                let mut metrics = Metrics::of(usage);
                metrics.extra.insert("duration_ms".into(), (*duration_ms).into());
                if self.retries > 0 {
                    metrics.extra.insert("retries".into(), self.retries.into());
                }
                agent_step.metrics = Some(metrics);
                agent_step.extra.insert("tackle_step".into(), (*step).into());
                if !finish_reason.is_empty() {
                    agent_step.extra.insert("finish_reason".into(), finish_reason.clone().into());
                }
                let index = self.steps.len();
                for call in tool_calls {
                    self.calls.insert(call.id.clone(), (index, agent_step.tool_calls.len()));
                    agent_step.tool_calls.push(ToolCall::new(&call.id, &call.name, &call.args));
                }
                self.steps.push(agent_step);
            }
            TrajectoryEvent::ToolCall { step, call_id, name, args, format, .. } => {
                if !self.recorded.insert(call_id.clone()) {
                    return Err(format!("a second tool_call with call_id {call_id}"));
                }
                let (index, place) = match self.calls.get(call_id) {
                    Some(&found) => found,
                    None => {
                        // A call no reply announced (a hand-written file): it joins the latest
                        // agent step, or one of its own.
                        if self.steps.last().is_none_or(|last| last.source != Source::Agent) {
                            let mut own = Step::new(Source::Agent, t, String::new());
                            own.extra.insert("tackle_step".into(), (*step).into());
                            self.steps.push(own);
                        }
                        let index = self.steps.len() - 1;
                        let calls = &mut self.steps[index].tool_calls;
                        calls.push(ToolCall::new(call_id, name, args));
                        self.calls.insert(call_id.clone(), (index, calls.len() - 1));
                        (index, calls.len() - 1)
                    }
                };
                let call = &mut self.steps[index].tool_calls[place];
                if !format.is_empty() {
                    call.extra.insert("format".into(), format.clone().into());
                }
                if !name.is_empty() && *name != call.function_name {
                    call.extra.insert("tool".into(), name.clone().into());
                }
            }
            TrajectoryEvent::Permission { call_id, decision, source } => {
                let &(index, place) = self
                    .calls
                    .get(call_id)
                    .ok_or_else(|| format!("permission for call_id {call_id} has no earlier call"))?;
                let permission = json!({"decision": decision.name(), "source": source.name()});
                self.steps[index].tool_calls[place].extra.insert("permission".into(), permission);
            }
            TrajectoryEvent::ToolOutput { call_id, is_error, content, meta, structured, .. } => {
                let &(index, place) = self
                    .calls
                    .get(call_id)
                    .ok_or_else(|| format!("tool_output for call_id {call_id} has no earlier tool_call"))?;
                if !self.answered.insert(call_id.clone()) {
                    return Err(format!("a second tool_output for call_id {call_id}"));
                }
                let mut result = ObservationResult {
                    source_call_id: call_id.clone(),
                    content: content.clone(),
                    subagent_trajectory_ref: Vec::new(),
                    extra: output_extra(*is_error, meta, structured.as_ref()),
                };
                let child = structured.as_ref().and_then(|s| s.get("agent_id")).and_then(Value::as_str);
                // Only the child's parent refers to it, once.
                let started = |child: &&str| parents.get(*child) == Some(&self.agent_id);
                if let Some(child) = child.filter(started)
                    && self.referenced.insert(child.to_owned())
                {
                    // The rest of what the call answered about the child (its type, a
                    // teammate's name, `background`).
                    let mut extra = structured.clone().and_then(object).unwrap_or_default();
                    extra.remove("agent_id");
                    result.subagent_trajectory_ref.push(SubagentRef { trajectory_id: child.to_owned(), extra });
                }
                self.steps[index].results.push((place, result));
            }
            TrajectoryEvent::Todos { todos, .. } => {
                if let Some(last) = self.steps.iter_mut().rev().find(|s| s.source == Source::Agent) {
                    last.extra.insert("todos".into(), serde_json::to_value(todos).unwrap_or_default());
                }
            }
            TrajectoryEvent::Error { kind, message } => self.error = Some(json!({"kind": kind, "message": message})),
            TrajectoryEvent::SessionEnd { status, steps, final_result, duration_ms, .. } => {
                let mut run = json!({
                    "status": status.name(), "steps": steps, "final_result": final_result, "duration_ms": duration_ms,
                });
                if let (Some(error), Some(run)) = (self.error.take(), run.as_object_mut()) {
                    run.insert("error".into(), error);
                }
                self.runs.push(run);
            }
            TrajectoryEvent::Conversation { .. } | TrajectoryEvent::Unknown => {}
        }
        Ok(())
    }

    /// The ATIF trajectory of this part, its children (from `parts`) embedded.
    fn finish(self, parts: &mut HashMap<String, Part>, children: &HashMap<String, Vec<String>>) -> Document {
        let mut embedded = Vec::new();
        for child in children.get(&self.agent_id).into_iter().flatten() {
            if let Some(part) = parts.remove(child) {
                embedded.push(part.finish(parts, children));
            }
        }
        let start = self.start.unwrap_or_else(|| Start {
            tackle_version: String::new(),
            provider: String::new(),
            model: String::new(),
            session_id: String::new(),
            extra: Map::new(),
        });
        let mut steps = Vec::with_capacity(self.steps.len() + 1);
        if let Some(system) = self.request.as_ref().and_then(system_prompt) {
            let first_time = self.steps.first().and_then(|s| s.timestamp.clone());
            steps.push(Step::new(Source::System, first_time, system));
        }
        steps.extend(self.steps);
        for (index, step) in steps.iter_mut().enumerate() {
            step.step_id = index + 1;
            let mut results = std::mem::take(&mut step.results);
            results.sort_by_key(|(place, _)| *place);
            if !results.is_empty() {
                step.observation = Some(Observation { results: results.into_iter().map(|(_, r)| r).collect() });
            }
        }
        let final_metrics = FinalMetrics::of(&steps, &embedded);
        let model_name = match (start.provider.as_str(), start.model.as_str()) {
            (_, "") => None,
            ("", model) => Some(model.to_owned()),
            (provider, model) => Some(format!("{provider}/{model}")),
        };
        let mut extra = Map::new();
        if !self.runs.is_empty() {
            extra.insert("runs".into(), self.runs.into());
        }
        Document {
            schema_version: ATIF_VERSION,
            session_id: Some(start.session_id).filter(|s| !s.is_empty()),
            trajectory_id: self.agent_id,
            agent: Agent {
                name: AGENT_NAME,
                version: if start.tackle_version.is_empty() { "unknown".to_owned() } else { start.tackle_version },
                model_name,
                tool_definitions: self.request.as_ref().and_then(tool_definitions),
                extra: start.extra,
            },
            steps,
            notes: None,
            final_metrics,
            extra,
            subagent_trajectories: embedded,
        }
    }
}

/// A result's `extra`: whether it is an error, and what the trajectory knows about the run.
fn output_extra(is_error: bool, meta: &RecordedMeta, structured: Option<&Value>) -> Map<String, Value> {
    let mut extra = Map::new();
    extra.insert("is_error".into(), is_error.into());
    if let Some(ms) = meta.duration_ms {
        extra.insert("duration_ms".into(), ms.into());
    }
    if meta.truncated {
        extra.insert("truncated".into(), true.into());
    }
    if let Some(code) = meta.exit_code {
        extra.insert("exit_code".into(), code.into());
    }
    if let Some(path) = &meta.spill_path {
        extra.insert("spill_path".into(), path.clone().into());
    }
    if let Some(structured) = structured {
        extra.insert("structured".into(), structured.clone());
    }
    extra
}

fn object(value: Value) -> Option<Map<String, Value>> {
    match value {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// The system prompt of a recorded request body: OpenAI's leading `system` message, or
/// Anthropic's `system` (a string, or text blocks).
fn system_prompt(request: &Value) -> Option<String> {
    let openai = request
        .get("messages")
        .and_then(|m| m.get(0))
        .filter(|first| first.get("role").and_then(Value::as_str) == Some("system"))
        .and_then(|first| first.get("content"));
    let content = openai.or_else(|| request.get("system"))?;
    let text = match content {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => {
            blocks.iter().filter_map(|b| b.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
        }
        _ => return None,
    };
    Some(text).filter(|t| !t.is_empty())
}

/// The tool definitions of a recorded request body in OpenAI's function-calling form (what
/// ATIF asks for): OpenAI's as they are, Anthropic's `input_schema` as `parameters`.
fn tool_definitions(request: &Value) -> Option<Vec<Value>> {
    let tools = request.get("tools")?.as_array()?;
    let definitions: Vec<Value> = tools
        .iter()
        .filter_map(|tool| {
            if tool.get("function").is_some() {
                return Some(tool.clone());
            }
            let name = tool.get("name")?;
            let mut function =
                json!({"name": name, "parameters": tool.get("input_schema").cloned().unwrap_or(json!({}))});
            if let (Some(description), Some(function)) = (tool.get("description"), function.as_object_mut()) {
                function.insert("description".into(), description.clone());
            }
            Some(json!({"type": "function", "function": function}))
        })
        .collect();
    Some(definitions).filter(|d| !d.is_empty())
}

/// `t` when it is an RFC 3339 time with a zone, upper-case `T` and `Z` (what the writer
/// writes), which ISO 8601 readers take (Python's `fromisoformat`, which Harbor's validator
/// uses, refuses a lower-case `z`); anything else is left out rather than exported as a time
/// it is not.
fn timestamp(t: &str) -> Option<String> {
    let bytes = t.as_bytes();
    let digits = |range: std::ops::Range<usize>| -> Option<u32> {
        let part = t.get(range)?;
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        part.parse().ok()
    };
    let year = digits(0..4)?;
    let (month, day) = (digits(5..7)?, digits(8..10)?);
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    let separators = [(4, b'-'), (7, b'-'), (13, b':'), (16, b':')];
    if !separators.iter().all(|&(at, want)| bytes.get(at) == Some(&want)) || bytes.get(10) != Some(&b'T') {
        return None;
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    if day == 0 || day > days || hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let mut rest = &t[19..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let count = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if count == 0 || count > 6 {
            return None;
        }
        rest = &fraction[count..];
    }
    let zone_ok = match rest.as_bytes() {
        [b'Z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => {
            [h1, h2, m1, m2].iter().all(|b| b.is_ascii_digit())
                && (h1 - b'0') * 10 + (h2 - b'0') < 24
                && (m1 - b'0') * 10 + (m2 - b'0') < 60
        }
        _ => false,
    };
    zone_ok.then(|| t.to_owned())
}

/// ATIF's trajectory object (the fields the export writes).
#[derive(Serialize)]
struct Document {
    schema_version: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    session_id: Option<String>,
    trajectory_id: String,
    agent: Agent,
    steps: Vec<Step>,
    #[serde(skip_serializing_if = "Option::is_none")]
    notes: Option<String>,
    final_metrics: FinalMetrics,
    #[serde(skip_serializing_if = "Map::is_empty")]
    extra: Map<String, Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    subagent_trajectories: Vec<Document>,
}

#[derive(Serialize)]
struct Agent {
    name: &'static str,
    version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    model_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tool_definitions: Option<Vec<Value>>,
    #[serde(skip_serializing_if = "Map::is_empty")]
    extra: Map<String, Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum Source {
    System,
    User,
    Agent,
}

#[derive(Serialize)]
struct Step {
    step_id: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    timestamp: Option<String>,
    source: Source,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<ToolCall>,
    #[serde(skip_serializing_if = "Option::is_none")]
    observation: Option<Observation>,
    #[serde(skip_serializing_if = "Option::is_none")]
    metrics: Option<Metrics>,
    #[serde(skip_serializing_if = "Option::is_none")]
    llm_call_count: Option<u32>,
    #[serde(skip_serializing_if = "Map::is_empty")]
    extra: Map<String, Value>,
    /// The results so far, each with its call's place in `tool_calls` (they are written in
    /// finishing order; the observation lists them in call order).
    #[serde(skip)]
    results: Vec<(usize, ObservationResult)>,
}

impl Step {
    fn new(source: Source, timestamp: Option<String>, message: String) -> Step {
        Step {
            step_id: 0,
            timestamp,
            source,
            message,
            reasoning_content: None,
            tool_calls: Vec::new(),
            observation: None,
            metrics: None,
            llm_call_count: None,
            extra: Map::new(),
            results: Vec::new(),
        }
    }
}

#[derive(Serialize)]
struct ToolCall {
    tool_call_id: String,
    function_name: String,
    arguments: Map<String, Value>,
    #[serde(skip_serializing_if = "Map::is_empty")]
    extra: Map<String, Value>,
}

impl ToolCall {
    /// A call as the model made it. Arguments that are no JSON object (text that did not
    /// parse) are kept in `extra.raw_arguments`, the arguments left empty.
    fn new(id: &str, name: &str, args: &Value) -> ToolCall {
        let mut extra = Map::new();
        let arguments = match args {
            Value::Object(map) => map.clone(),
            Value::Null => Map::new(),
            other => {
                extra.insert("raw_arguments".into(), other.clone());
                Map::new()
            }
        };
        ToolCall { tool_call_id: id.to_owned(), function_name: name.to_owned(), arguments, extra }
    }
}

#[derive(Serialize)]
struct Observation {
    results: Vec<ObservationResult>,
}

#[derive(Serialize)]
struct ObservationResult {
    source_call_id: String,
    content: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    subagent_trajectory_ref: Vec<SubagentRef>,
    #[serde(skip_serializing_if = "Map::is_empty")]
    extra: Map<String, Value>,
}

#[derive(Serialize)]
struct SubagentRef {
    trajectory_id: String,
    #[serde(skip_serializing_if = "Map::is_empty")]
    extra: Map<String, Value>,
}

#[derive(Serialize)]
struct Metrics {
    prompt_tokens: u64,
    completion_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    cached_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cost_usd: Option<f64>,
    #[serde(skip_serializing_if = "Map::is_empty")]
    extra: Map<String, Value>,
}

impl Metrics {
    /// One response's usage. ATIF's `prompt_tokens` counts every input token, cached ones
    /// included, as Tackle's `input_tokens` does on both wires (`tackle_llm::Usage`).
    fn of(usage: &Usage) -> Metrics {
        let prompt_tokens = usage.input_tokens;
        let mut extra = Map::new();
        if let Some(write) = usage.cache_write {
            extra.insert("cache_write_tokens".into(), write.into());
        }
        Metrics {
            prompt_tokens,
            completion_tokens: usage.output_tokens,
            cached_tokens: usage.cache_read,
            cost_usd: usage.cost,
            extra,
        }
    }
}

#[derive(Serialize)]
struct FinalMetrics {
    total_prompt_tokens: u64,
    total_completion_tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    total_cached_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    total_cost_usd: Option<f64>,
    total_steps: usize,
    /// Whether some response of this trajectory or an embedded one reported no price (then
    /// `total_cost_usd` would be a part of the cost, and is left out).
    #[serde(skip)]
    unpriced: bool,
}

impl FinalMetrics {
    /// The totals of `steps` and of the embedded trajectories; `total_steps` counts `steps`.
    fn of(steps: &[Step], embedded: &[Document]) -> FinalMetrics {
        let mut totals = FinalMetrics {
            total_prompt_tokens: 0,
            total_completion_tokens: 0,
            total_cached_tokens: None,
            total_cost_usd: None,
            total_steps: steps.len(),
            unpriced: false,
        };
        let own = steps
            .iter()
            .filter_map(|s| s.metrics.as_ref())
            .map(|m| (m.prompt_tokens, m.completion_tokens, m.cached_tokens, m.cost_usd, m.cost_usd.is_none()));
        let children = embedded.iter().map(|d| &d.final_metrics).map(|f| {
            (f.total_prompt_tokens, f.total_completion_tokens, f.total_cached_tokens, f.total_cost_usd, f.unpriced)
        });
        for (prompt, completion, cached, cost, unpriced) in own.chain(children) {
            totals.total_prompt_tokens += prompt;
            totals.total_completion_tokens += completion;
            if let Some(cached) = cached {
                *totals.total_cached_tokens.get_or_insert(0) += cached;
            }
            if let Some(cost) = cost {
                *totals.total_cost_usd.get_or_insert(0.0) += cost;
            }
            totals.unpriced |= unpriced;
        }
        if totals.unpriced {
            totals.total_cost_usd = None;
        }
        totals
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const T: &str = "2026-01-02T03:04:05.678Z";

    /// Numbered lines of `events` (`[agent, type, fields]`), with `seq` and `t` filled in.
    fn lines(events: &[(&str, &str, Value)]) -> Vec<(usize, Line)> {
        events
            .iter()
            .enumerate()
            .map(|(index, (agent, kind, fields))| {
                let mut line = json!({"seq": index, "t": T, "type": kind, "agent_id": agent});
                line.as_object_mut().unwrap().extend(fields.as_object().cloned().unwrap_or_default());
                (index + 1, Line::from_value(&line).unwrap())
            })
            .collect()
    }

    fn start(task: &str, provider: &str, session: &str) -> Value {
        json!({"tackle_version": "0.1.0", "task": task, "provider": provider, "model": "m", "tools": ["read_file"],
               "call_format": "native", "session_id": session})
    }

    fn response(step: u32, text: &str, calls: Value, usage: Value) -> Value {
        json!({"step": step, "text": text, "tool_calls": calls, "finish_reason": "tool_calls", "usage": usage, "duration_ms": 7})
    }

    fn call(step: u32, id: &str, name: &str) -> Value {
        json!({"step": step, "call_id": id, "name": name, "args": {}, "format": "native"})
    }

    fn output(id: &str, content: &str, is_error: bool, structured: Option<Value>) -> Value {
        let mut output =
            json!({"step": 1, "call_id": id, "content": content, "is_error": is_error, "meta": {"duration_ms": 3}});
        if let Some(structured) = structured {
            output["structured"] = structured;
        }
        output
    }

    fn end(status: &str) -> Value {
        json!({"status": status, "steps": 1, "final_result": "done", "duration_ms": 9})
    }

    fn export(events: &[(&str, &str, Value)]) -> Value {
        to_atif(&lines(events)).unwrap().document
    }

    #[test]
    fn a_run_with_calls_an_error_usage_and_a_subagent_maps_step_by_step() {
        let sub = json!({"agent_id": "agent-1", "subagent_type": "explore"});
        let document = export(&[
            ("main", "session_start", start("read it", "openai", "s-main")),
            ("main", "llm_request", json!({"step": 1})),
            ("main", "llm_retry", json!({"step": 1, "attempt": 1, "error_class": "server"})),
            (
                "main",
                "llm_response",
                json!({"step": 1, "text": "Reading.", "thinking": "hm", "finish_reason": "tool_calls", "duration_ms": 7,
                       "usage": {"input_tokens": 100, "output_tokens": 20, "cache_read": 40, "cost": 0.5},
                       "tool_calls": [{"id": "c1", "name": "Read", "args": {"file_path": "a"}},
                                      {"id": "c2", "name": "subagent", "args": {"prompt": "p"}}]}),
            ),
            (
                "main",
                "tool_call",
                json!({"step": 1, "call_id": "c1", "name": "read_file", "args": {"file_path": "a"}, "format": "native"}),
            ),
            ("main", "tool_call", call(1, "c2", "subagent")),
            ("main", "permission", json!({"call_id": "c1", "decision": "deny", "source": "mode"})),
            ("agent-1", "session_start", start("p", "openai", "s-child")),
            ("agent-1", "llm_request", json!({"step": 1})),
            (
                "agent-1",
                "llm_response",
                response(1, "Child done.", json!([]), json!({"input_tokens": 10, "output_tokens": 1, "cost": 0.25})),
            ),
            ("agent-1", "session_end", end("success")),
            // Outputs in finishing order; the observation keeps call order.
            ("main", "tool_output", output("c2", "Child done.", false, Some(sub))),
            ("main", "tool_output", output("c1", "Denied.", true, None)),
            ("main", "error", json!({"kind": "server", "message": "down"})),
            ("main", "session_end", end("error")),
        ]);
        assert_eq!(document["schema_version"], "ATIF-v1.7");
        assert_eq!((&document["session_id"], &document["trajectory_id"]), (&json!("s-main"), &json!("main")));
        assert_eq!(
            (&document["agent"]["name"], &document["agent"]["version"], &document["agent"]["model_name"]),
            (&json!("tackle"), &json!("0.1.0"), &json!("openai/m"))
        );
        let steps = document["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0], json!({"step_id": 1, "timestamp": T, "source": "user", "message": "read it"}));
        let agent = &steps[1];
        assert_eq!(
            (&agent["step_id"], &agent["source"], &agent["message"]),
            (&json!(2), &json!("agent"), &json!("Reading."))
        );
        assert_eq!(agent["reasoning_content"], "hm");
        assert_eq!(agent["llm_call_count"], 1);
        assert_eq!(
            agent["metrics"],
            json!({"prompt_tokens": 100, "completion_tokens": 20, "cached_tokens": 40, "cost_usd": 0.5,
                   "extra": {"duration_ms": 7, "retries": 1}})
        );
        // The call as the model made it; the tool it resolved to and the decision beside it.
        assert_eq!(
            agent["tool_calls"][0],
            json!({"tool_call_id": "c1", "function_name": "Read", "arguments": {"file_path": "a"},
                   "extra": {"format": "native", "tool": "read_file", "permission": {"decision": "deny", "source": "mode"}}})
        );
        let results = agent["observation"]["results"].as_array().unwrap();
        assert_eq!(
            results[0],
            json!({"source_call_id": "c1", "content": "Denied.", "extra": {"is_error": true, "duration_ms": 3}})
        );
        assert_eq!(results[1]["source_call_id"], "c2");
        assert_eq!(
            results[1]["subagent_trajectory_ref"],
            json!([{"trajectory_id": "agent-1", "extra": {"subagent_type": "explore"}}])
        );
        let child = &document["subagent_trajectories"][0];
        assert_eq!((&child["trajectory_id"], &child["session_id"]), (&json!("agent-1"), &json!("s-child")));
        assert_eq!(child["steps"][1]["message"], "Child done.");
        assert_eq!(
            child["final_metrics"],
            json!({"total_prompt_tokens": 10, "total_completion_tokens": 1, "total_cost_usd": 0.25, "total_steps": 2})
        );
        // The parent's totals include the child's.
        assert_eq!(
            document["final_metrics"],
            json!({"total_prompt_tokens": 110, "total_completion_tokens": 21, "total_cached_tokens": 40, "total_cost_usd": 0.75, "total_steps": 2})
        );
        assert_eq!(
            document["extra"]["runs"],
            json!([{"status": "error", "steps": 1, "final_result": "done", "duration_ms": 9, "error": {"kind": "server", "message": "down"}}])
        );
        assert!(document["notes"].as_str().unwrap().contains("include the embedded trajectories' usage"));
    }

    #[test]
    fn prompt_tokens_are_the_input_tokens_cached_ones_included() {
        // Usage's input_tokens holds the cached tokens on both wires (Anthropic's are added up
        // when the response is read), so they are never added twice.
        let usage = json!({"input_tokens": 135, "output_tokens": 2, "cache_read": 100, "cache_write": 30});
        let document = export(&[
            ("main", "session_start", start("t", "anthropic", "s")),
            ("main", "llm_response", response(1, "a", json!([]), usage)),
            (
                "main",
                "llm_response",
                response(2, "b", json!([]), json!({"input_tokens": 7, "output_tokens": 1, "cost": 0.1})),
            ),
        ]);
        assert_eq!(
            document["steps"][1]["metrics"],
            json!({"prompt_tokens": 135, "completion_tokens": 2, "cached_tokens": 100, "extra": {"duration_ms": 7, "cache_write_tokens": 30}})
        );
        // One response has no price: a total of the others would pass for the whole cost.
        assert_eq!(
            document["final_metrics"],
            json!({"total_prompt_tokens": 142, "total_completion_tokens": 3, "total_cached_tokens": 100, "total_steps": 3})
        );
        let openai = export(&[
            ("main", "session_start", start("t", "openai", "s")),
            (
                "main",
                "llm_response",
                response(1, "a", json!([]), json!({"input_tokens": 50, "output_tokens": 2, "cache_read": 40})),
            ),
        ]);
        assert_eq!(
            (&openai["steps"][1]["metrics"]["prompt_tokens"], &openai["steps"][1]["metrics"]["cached_tokens"]),
            (&json!(50), &json!(40))
        );
    }

    #[test]
    fn lines_the_mapping_cannot_stand_on_are_refused_with_their_number() {
        let s = || ("main", "session_start", start("t", "openai", "s"));
        type Events = Vec<(&'static str, &'static str, Value)>;
        let cases: Vec<(Events, AtifError)> = vec![
            (
                vec![("main", "llm_request", json!({"step": 1}))],
                line_error(1, "llm_request of main before its session_start"),
            ),
            (vec![s(), s()], line_error(2, "a second session_start of main")),
            (
                vec![s(), ("agent-1", "tool_call", call(1, "c", "x"))],
                line_error(2, "tool_call of agent-1 before its session_start"),
            ),
            (
                vec![s(), ("main", "tool_output", output("zz", "x", false, None))],
                line_error(2, "tool_output for call_id zz has no earlier tool_call"),
            ),
            (
                vec![s(), ("main", "permission", json!({"call_id": "zz", "decision": "allow", "source": "mode"}))],
                line_error(2, "permission for call_id zz has no earlier call"),
            ),
            (
                vec![s(), ("main", "tool_call", call(1, "c", "x")), ("main", "tool_call", call(1, "c", "x"))],
                line_error(3, "a second tool_call with call_id c"),
            ),
            (
                vec![
                    s(),
                    ("main", "tool_call", call(1, "c", "x")),
                    ("main", "tool_output", output("c", "a", false, None)),
                    ("main", "tool_output", output("c", "b", false, None)),
                ],
                line_error(4, "a second tool_output for call_id c"),
            ),
            (vec![("agent-1", "session_start", start("t", "openai", "s"))], AtifError::NoMainAgent),
            (vec![], AtifError::NoMainAgent),
        ];
        for (events, expected) in cases {
            assert_eq!(to_atif(&lines(&events)).unwrap_err(), expected);
        }
    }

    fn line_error(line: usize, message: &str) -> AtifError {
        AtifError::Line { line, message: message.to_owned() }
    }

    #[test]
    fn a_child_is_referenced_once_and_only_by_the_agent_that_started_it_before_it() {
        let names = |id: &str| Some(json!({"agent_id": id}));
        let document = export(&[
            ("main", "session_start", start("t", "openai", "s")),
            ("agent-1", "session_start", start("a", "openai", "s1")),
            ("agent-2", "session_start", start("b", "openai", "s2")),
            // agent-1 started agent-2 (nested); a later result naming it again adds no reference.
            ("agent-1", "tool_call", call(1, "x1", "subagent")),
            ("agent-1", "tool_output", output("x1", "", false, names("agent-2"))),
            ("agent-1", "tool_call", call(1, "x2", "job_output")),
            ("agent-1", "tool_output", output("x2", "", false, names("agent-2"))),
            // Hostile or odd: naming itself, the main agent, an agent started before it, or none.
            ("agent-2", "tool_call", call(1, "y1", "x")),
            ("agent-2", "tool_output", output("y1", "", false, names("agent-1"))),
            ("agent-2", "tool_call", call(1, "y2", "x")),
            ("agent-2", "tool_output", output("y2", "", false, names("agent-2"))),
            ("main", "tool_call", call(1, "m1", "x")),
            ("main", "tool_output", output("m1", "", false, names("main"))),
            ("main", "tool_call", call(1, "m2", "x")),
            ("main", "tool_output", output("m2", "", false, names("agent-9"))),
        ]);
        let refs = |doc: &Value| -> Vec<Value> {
            doc["steps"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|s| s["observation"]["results"].as_array().cloned().unwrap_or_default())
                .filter_map(|r| r.get("subagent_trajectory_ref").cloned())
                .collect()
        };
        // agent-1 named by no one: embedded in the main trajectory, unreferenced.
        assert_eq!(refs(&document), Vec::<Value>::new());
        let embedded: Vec<&Value> = document["subagent_trajectories"].as_array().unwrap().iter().collect();
        assert_eq!(embedded.iter().map(|d| d["trajectory_id"].clone()).collect::<Vec<_>>(), [json!("agent-1")]);
        assert_eq!(refs(embedded[0]), [json!([{"trajectory_id": "agent-2"}])]);
        let nested = &embedded[0]["subagent_trajectories"][0];
        assert_eq!(nested["trajectory_id"], "agent-2");
        assert_eq!(refs(nested), Vec::<Value>::new());
    }

    #[test]
    fn a_background_child_named_before_it_starts_is_still_referenced() {
        let document = export(&[
            ("main", "session_start", start("t", "openai", "s")),
            ("main", "tool_call", call(1, "b1", "subagent")),
            (
                "main",
                "tool_output",
                output("b1", "started", false, Some(json!({"agent_id": "agent-1", "background": true}))),
            ),
            ("agent-1", "session_start", start("bg", "openai", "s1")),
        ]);
        let reference = &document["steps"][1]["observation"]["results"][0]["subagent_trajectory_ref"];
        assert_eq!(reference, &json!([{"trajectory_id": "agent-1", "extra": {"background": true}}]));
        assert_eq!(document["subagent_trajectories"][0]["steps"][0]["message"], "bg");
    }

    #[test]
    fn children_nest_at_most_max_nesting_deep() {
        // A chain of agents, each started by the one before: a hostile file's shape.
        let count = MAX_NESTING + 5;
        let mut events = vec![("main".to_owned(), "session_start", start("t", "openai", "s"))];
        let id = |n: usize| if n == 0 { MAIN.to_owned() } else { format!("agent-{n}") };
        for n in 1..=count {
            events.push((id(n), "session_start", start("t", "openai", "s")));
            events.push((id(n - 1), "tool_call", call(1, &format!("c{n}"), "subagent")));
            events.push((
                id(n - 1),
                "tool_output",
                output(&format!("c{n}"), "", false, Some(json!({"agent_id": id(n)}))),
            ));
        }
        let borrowed: Vec<(&str, &str, Value)> = events.iter().map(|(a, k, v)| (a.as_str(), *k, v.clone())).collect();
        let document = export(&borrowed);
        let mut chain = Vec::new();
        let mut at = &document;
        while let Some(child) = at["subagent_trajectories"].as_array().and_then(|c| c.first()) {
            chain.push(child["trajectory_id"].as_str().unwrap().to_owned());
            at = child;
        }
        assert_eq!(chain, (1..=MAX_NESTING).map(id).collect::<Vec<_>>());
        // The one past the limit moved up to the main trajectory, unreferenced; the chain goes
        // on under it.
        let top: Vec<&Value> =
            document["subagent_trajectories"].as_array().unwrap().iter().map(|d| &d["trajectory_id"]).collect();
        assert_eq!(top, [&json!("agent-1"), &json!(id(MAX_NESTING + 1))]);
        assert_eq!(at["steps"][1]["observation"]["results"][0].get("subagent_trajectory_ref"), None);
    }

    #[test]
    fn a_teammate_s_later_tasks_and_notifications_are_steps_of_its_own() {
        let document = export(&[
            ("main", "session_start", start("lead", "openai", "s")),
            ("main", "tool_call", call(1, "m1", "team_spawn")),
            ("agent-1", "session_start", start("first", "openai", "s1")),
            (
                "main",
                "tool_output",
                output("m1", "Teammate ann started.", false, Some(json!({"name": "ann", "agent_id": "agent-1"}))),
            ),
            ("agent-1", "session_end", end("success")),
            ("agent-1", "task", json!({"task": "second"})),
            ("agent-1", "notification", json!({"text": "<notifications>x</notifications>"})),
            ("agent-1", "session_end", end("success")),
        ]);
        let child = &document["subagent_trajectories"][0];
        let steps: Vec<(&Value, &Value)> =
            child["steps"].as_array().unwrap().iter().map(|s| (&s["source"], &s["message"])).collect();
        assert_eq!(
            steps,
            [
                (&json!("user"), &json!("first")),
                (&json!("user"), &json!("second")),
                (&json!("system"), &json!("<notifications>x</notifications>"))
            ]
        );
        assert_eq!(child["extra"]["runs"].as_array().unwrap().len(), 2);
        let reference = &document["steps"][1]["observation"]["results"][0]["subagent_trajectory_ref"];
        assert_eq!(reference, &json!([{"trajectory_id": "agent-1", "extra": {"name": "ann"}}]));
    }

    #[test]
    fn a_run_cut_short_converts_and_unknown_events_are_left_out_and_named() {
        let export = to_atif(&lines(&[
            ("main", "session_start", start("t", "openai", "s")),
            ("main", "plan_update", json!({"plan": []})),
            // An agent of a newer version's events only: no trajectory of its own.
            ("agent-7", "plan_update", json!({})),
            (
                "main",
                "llm_response",
                response(
                    1,
                    "",
                    json!([{"id": "c", "name": "bash", "args": "{not json"}]),
                    json!({"input_tokens": 1, "output_tokens": 1}),
                ),
            ),
            ("main", "tool_call", json!({"step": 1, "call_id": "c", "name": "bash", "args": "{not json"})),
            ("main", "plan_update", json!({"plan": []})),
        ]))
        .unwrap();
        assert_eq!(export.unknown, ["plan_update"]);
        let document = export.document;
        assert!(document["notes"].as_str().unwrap().contains("(plan_update)"), "{}", document["notes"]);
        let step = &document["steps"][1];
        assert_eq!(step["tool_calls"][0]["arguments"], json!({}));
        assert_eq!(step["tool_calls"][0]["extra"]["raw_arguments"], "{not json");
        assert!(step.get("observation").is_none());
        assert!(document["extra"].get("runs").is_none());
        assert!(document.get("subagent_trajectories").is_none(), "{document}");
    }

    #[test]
    fn a_full_request_gives_the_system_prompt_and_the_tool_definitions() {
        let openai = json!({"messages": [{"role": "system", "content": "You are Tackle."}, {"role": "user", "content": "t"}],
            "tools": [{"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}}]});
        let anthropic = json!({"system": [{"type": "text", "text": "You are Tackle."}], "messages": [],
            "tools": [{"name": "read_file", "description": "Reads.", "input_schema": {"type": "object"}}]});
        for (body, definition) in [
            (openai, json!({"type": "function", "function": {"name": "read_file", "parameters": {"type": "object"}}})),
            (
                anthropic,
                json!({"type": "function", "function": {"name": "read_file", "description": "Reads.", "parameters": {"type": "object"}}}),
            ),
        ] {
            let document = export(&[
                ("main", "session_start", start("t", "openai", "s")),
                ("main", "llm_request", json!({"step": 1, "request": body})),
            ]);
            assert_eq!(
                document["steps"][0],
                json!({"step_id": 1, "timestamp": T, "source": "system", "message": "You are Tackle."})
            );
            assert_eq!(document["steps"][1]["source"], "user");
            assert_eq!(document["agent"]["tool_definitions"], json!([definition]));
        }
        let plain = export(&[
            ("main", "session_start", start("t", "openai", "s")),
            ("main", "llm_request", json!({"step": 1})),
        ]);
        assert_eq!(plain["steps"].as_array().unwrap().len(), 1);
        assert!(plain["agent"].get("tool_definitions").is_none());
    }

    #[test]
    fn only_rfc_3339_times_become_timestamps() {
        for good in
            ["2026-01-02T03:04:05.678Z", "2024-02-29T23:59:59Z", "2026-01-02T03:04:05+05:30", "2026-01-02T03:04:05.1Z"]
        {
            assert_eq!(timestamp(good).as_deref(), Some(good));
        }
        for bad in [
            "",
            "x",
            "2026-01-02",
            "2026-01-02T03:04:05",
            "2025-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-01-02T24:00:00Z",
            "2026-01-02T03:04:05.Z",
            "2026-01-02t03:04:05.1z",
            "2026-01-02T03:04:05.1234567Z",
            "2026-01-02T03:04:05+25:00",
            "2026-01-02T03:04:05Zjunk",
            "２０２６-01-02T03:04:05Z",
        ] {
            assert_eq!(timestamp(bad), None, "{bad}");
        }
    }
}
