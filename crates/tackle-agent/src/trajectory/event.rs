//! The events of a trajectory as one typed enum, shared by the writer
//! ([`super::Trajectory`]), `replay --check` ([`super::check`]) and `replay` / `replay --rerun`
//! ([`crate::replay`]), so an event's name and fields are spelled in one place. The format on
//! disk is the one docs/agent.md documents ("Trajectory format"): one JSON object per line,
//! `seq`, `t`, `type` and `agent_id` first, then the event's fields in the order declared
//! here.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tackle_core::TodoItem;
use tackle_llm::{Message, Usage};

use crate::outcome::RunStatus;

/// One event of a run. Its `type` in the file is the variant's name in snake_case.
///
/// Reading back is lenient where nothing rests on a field: a field missing from a line reads
/// as empty, zero or false, so a hand-written or trimmed file still replays. The fields the
/// checks and the re-run rest on are required: `call_id`, the `id` of a response's call,
/// `status`, `decision` and `source`. A field of the wrong type is an error; a field this
/// version does not know is ignored; an event of a type it does not know reads as
/// [`TrajectoryEvent::Unknown`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
// Each field is a key of the file format, described with its event in
// docs/agent.md#trajectory-format; a doc line here would repeat its name.
#[allow(missing_docs)]
pub enum TrajectoryEvent {
    /// The run starts: what ran, where, with which tools and settings.
    SessionStart {
        #[serde(default)]
        tackle_version: String,
        #[serde(default)]
        task: String,
        /// The provider's name (`openai`, `anthropic`, or a configured one).
        #[serde(default)]
        provider: String,
        #[serde(default)]
        model: String,
        #[serde(default)]
        base_url: String,
        /// `native`, `markdown`, `xml` or `tool`.
        #[serde(default)]
        call_format: String,
        /// The session's tool names.
        #[serde(default)]
        tools: Vec<String>,
        #[serde(default)]
        permission_mode: String,
        /// The workspace directory (lossy UTF-8).
        #[serde(default)]
        workspace: String,
        #[serde(default)]
        max_steps: u32,
        /// The process sandbox in force (`none` when no shell tool is loaded).
        #[serde(default)]
        sandbox: String,
        #[serde(default)]
        session_id: String,
    },
    /// A model request is sent (one step).
    LlmRequest {
        #[serde(default)]
        step: u32,
        /// Messages in the history sent.
        #[serde(default)]
        message_count: usize,
        /// Native tool definitions sent (0 with a text call format).
        #[serde(default)]
        tools_sent: usize,
        /// The complete request body, with `--trajectory-full`.
        #[serde(skip_serializing_if = "Option::is_none")]
        request: Option<Value>,
    },
    /// A request failed and is tried again.
    LlmRetry {
        #[serde(default)]
        step: u32,
        #[serde(default)]
        attempt: u32,
        /// The provider error class (`rate_limit`, `server`, …).
        #[serde(default)]
        error_class: String,
        #[serde(default)]
        delay_ms: u64,
        #[serde(default)]
        message: String,
        /// The HTTP status, when the failure had one.
        #[serde(skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
    },
    /// The model's reply is complete.
    LlmResponse {
        #[serde(default)]
        step: u32,
        #[serde(default)]
        text: String,
        /// The calls taken from the reply (native, or parsed from the text).
        #[serde(default)]
        tool_calls: Vec<ResponseCall>,
        #[serde(default)]
        finish_reason: String,
        #[serde(default)]
        usage: Usage,
        #[serde(default)]
        duration_ms: u64,
        /// The model's reasoning, when it sent any.
        #[serde(skip_serializing_if = "Option::is_none")]
        thinking: Option<String>,
    },
    /// A call is about to be answered.
    ToolCall {
        #[serde(default)]
        step: u32,
        call_id: String,
        /// The tool's canonical name when the call resolved, else the name the model used.
        #[serde(default)]
        name: String,
        /// The arguments (the raw text as a string when they did not parse).
        #[serde(default)]
        args: Value,
        /// The call format it came in.
        #[serde(default)]
        format: String,
        /// Where a text-format call starts in the reply, in code points.
        #[serde(skip_serializing_if = "Option::is_none")]
        start: Option<usize>,
    },
    /// A permission decision about a call.
    Permission { call_id: String, decision: PermissionDecision, source: DecisionSource },
    /// A call's output, written the moment it exists.
    ToolOutput {
        #[serde(default)]
        step: u32,
        call_id: String,
        #[serde(default)]
        is_error: bool,
        /// The text content.
        #[serde(default)]
        content: String,
        #[serde(default)]
        meta: RecordedMeta,
        /// The tool's JSON payload, when it has one.
        #[serde(skip_serializing_if = "Option::is_none")]
        structured: Option<Value>,
        /// The images the output carried, each recorded here once (a `--trajectory-full`
        /// request body names them by their `sha256` instead of repeating them).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<RecordedImage>,
    },
    /// The session's todo list after a call of this step changed it (`todo_write`).
    Todos {
        #[serde(default)]
        step: u32,
        #[serde(default)]
        todos: Vec<TodoItem>,
    },
    /// A notification delivered to the model before a request.
    Notification {
        #[serde(default)]
        text: String,
    },
    /// What ended a run with `error`.
    Error {
        /// A provider error class, `refused`, `truncated`, `empty_reply`, `prompt_blocked` or
        /// `schema_mismatch`.
        #[serde(default)]
        kind: String,
        #[serde(default)]
        message: String,
    },
    /// The run ended.
    SessionEnd {
        status: RunStatus,
        #[serde(default)]
        steps: u32,
        /// The final answer, or what stopped the run.
        #[serde(default)]
        final_result: String,
        #[serde(default)]
        usage_total: Usage,
        #[serde(default)]
        duration_ms: u64,
    },
    /// The whole conversation so far (the task, replies, calls and results, and the
    /// conversation a continued run started from), written before each `session_end` so a
    /// later run can carry it on (`tackle run --continue`, `--resume`).
    Conversation {
        #[serde(default)]
        messages: Vec<Message>,
    },
    /// Another task in the same conversation (`tackle chat`, or [`crate::Agent::run`] again):
    /// it follows the previous task's `session_end`, and the events of its run follow it.
    Task {
        #[serde(default)]
        task: String,
    },
    /// An event of a type this version does not know (written by a newer Tackle). Read only:
    /// the writer never writes one, and the line's `type` is in [`Line::kind`].
    #[serde(other, skip_serializing)]
    Unknown,
}

/// A call as the reply carried it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResponseCall {
    /// The call's id (unique in the session).
    pub id: String,
    /// The tool's name as the model wrote it.
    #[serde(default)]
    pub name: String,
    /// The arguments as the model sent them.
    #[serde(default)]
    pub args: Value,
}

/// Facts about a call's run as the trajectory records them: the part of [`tackle_core::OutputMeta`]
/// a trajectory keeps, with `duration_ms` always written (`null` when the call did not run).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RecordedMeta {
    /// `null` for a call the loop answered without running it.
    #[serde(default)]
    pub duration_ms: Option<u64>,
    /// The output was cut to the output budget.
    #[serde(default)]
    pub truncated: bool,
    /// The exit code of a process the call ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Workspace-relative path of the file holding the full output, when it was cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spill_path: Option<String>,
}

/// An image a call's output carried, as the trajectory records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedImage {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub mime_type: String,
    /// The SHA-256 of `data` (the base64 text), in hex: how request bodies refer to it.
    pub sha256: String,
    /// The image, base64-encoded.
    pub data: String,
}

impl RecordedImage {
    /// Records an image part.
    pub fn new(mime_type: &str, data: &str) -> RecordedImage {
        RecordedImage { mime_type: mime_type.to_owned(), sha256: image_digest(data), data: data.to_owned() }
    }
}

/// The hex SHA-256 of an image's base64 text.
pub fn image_digest(data: &str) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(data.as_bytes()).iter().map(|byte| format!("{byte:02x}")).collect()
}

/// A request body as `--trajectory-full` records it: each image's base64 data (an Anthropic
/// `source.data`, an OpenAI `data:` URL) replaced by `sha256:HEX`, the digest under which the
/// `tool_output` event that returned it recorded it, so a run that keeps an image in its
/// history does not write it again with every request.
pub fn body_without_image_data(mut body: Value) -> Value {
    fn walk(value: &mut Value) {
        match value {
            Value::Object(map) => {
                let is_base64_source =
                    map.get("type").and_then(Value::as_str) == Some("base64") && map.get("media_type").is_some();
                for (key, field) in map.iter_mut() {
                    match field {
                        Value::String(text) if is_base64_source && key == "data" => {
                            *text = format!("sha256:{}", image_digest(text));
                        }
                        Value::String(text) if key == "url" && text.starts_with("data:image/") => {
                            if let Some((_, data)) = text.split_once(";base64,") {
                                *text = format!("sha256:{}", image_digest(data));
                            }
                        }
                        other => walk(other),
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut body);
    body
}

/// The prefix of an image's `data` in a recorded `conversation` event when the file already
/// holds that image (in a `tool_output` event or an earlier `conversation`): `sha256:HEX`.
pub const IMAGE_REFERENCE: &str = "sha256:";

/// `messages` as a `conversation` event records them: each tool result's image whose digest
/// is in `known` (already in the file) replaced by its reference, the others kept whole and
/// added to `known`.
pub fn conversation_with_references(
    messages: &[Message],
    known: &mut std::collections::HashSet<String>,
) -> Vec<Message> {
    let mut messages = messages.to_vec();
    for image in result_images(&mut messages) {
        if image.data.starts_with(IMAGE_REFERENCE) {
            continue;
        }
        let digest = image_digest(&image.data);
        if known.contains(&digest) {
            image.data = format!("{IMAGE_REFERENCE}{digest}");
        } else {
            known.insert(digest);
        }
    }
    messages
}

/// Puts back the data of each referenced image from `recorded` (digest → data); an image
/// whose data the file does not hold is dropped (the result's text, which names it, stays).
pub fn resolve_image_references(messages: &mut [Message], recorded: &std::collections::HashMap<String, String>) {
    for message in messages.iter_mut() {
        if let Message::User { parts } = message {
            for part in parts {
                if let tackle_llm::UserPart::ToolResult(result) = part {
                    result.images.retain_mut(|image| match image.data.strip_prefix(IMAGE_REFERENCE) {
                        None => true,
                        Some(digest) => match recorded.get(digest) {
                            Some(data) => {
                                image.data.clone_from(data);
                                true
                            }
                            None => false,
                        },
                    });
                }
            }
        }
    }
}

/// Every image of every tool result in `messages`.
pub fn result_images(messages: &mut [Message]) -> impl Iterator<Item = &mut tackle_llm::ImageData> {
    messages.iter_mut().flat_map(|message| match message {
        Message::User { parts } => parts
            .iter_mut()
            .flat_map(|part| match part {
                tackle_llm::UserPart::ToolResult(result) => result.images.iter_mut().collect::<Vec<_>>(),
                tackle_llm::UserPart::Text { .. } => Vec::new(),
            })
            .collect::<Vec<_>>(),
        Message::Assistant(_) => Vec::new(),
    })
}

/// What a permission check decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PermissionDecision {
    /// The call runs.
    Allow,
    /// The approver is asked.
    Ask,
    /// The call is refused.
    Deny,
}

/// Who decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionSource {
    /// The permission mode.
    Mode,
    /// A permission rule (not written yet: rules come with the permission-rules issue).
    Rule,
    /// A hook (not written yet: hooks are not built).
    Hook,
    /// The person, at a terminal.
    User,
    /// The approver without a person (non-interactive, `--yes`).
    Policy,
}

impl PermissionDecision {
    /// The name in the file.
    pub fn name(self) -> &'static str {
        match self {
            PermissionDecision::Allow => "allow",
            PermissionDecision::Ask => "ask",
            PermissionDecision::Deny => "deny",
        }
    }
}

impl DecisionSource {
    /// The name in the file.
    pub fn name(self) -> &'static str {
        match self {
            DecisionSource::Mode => "mode",
            DecisionSource::Rule => "rule",
            DecisionSource::Hook => "hook",
            DecisionSource::User => "user",
            DecisionSource::Policy => "policy",
        }
    }
}

impl TrajectoryEvent {
    /// The `tool_output` event of an answered call.
    pub fn tool_output(step: u32, output: &tackle_core::ToolOutput) -> TrajectoryEvent {
        TrajectoryEvent::ToolOutput {
            step,
            call_id: output.call_id.clone(),
            is_error: output.is_error,
            content: output.text_content(),
            meta: RecordedMeta {
                duration_ms: output.meta.duration_ms,
                truncated: output.meta.truncated,
                exit_code: output.meta.exit_code,
                spill_path: output.meta.spill_path.clone(),
            },
            structured: output.structured.clone(),
            images: output
                .content
                .iter()
                .filter_map(|part| match part {
                    tackle_core::ContentPart::Image { mime_type, data } => Some(RecordedImage::new(mime_type, data)),
                    tackle_core::ContentPart::Text { .. } => None,
                })
                .collect(),
        }
    }

    /// One line of the file, without its newline: `seq`, `t`, `type`, `agent_id`, then the
    /// event's fields.
    pub(crate) fn to_line(&self, seq: u64, t: &str, agent_id: &str) -> serde_json::Result<String> {
        let Value::Object(fields) = serde_json::to_value(self)? else {
            return Err(serde::ser::Error::custom("a trajectory event is not a JSON object"));
        };
        let mut line = Map::with_capacity(fields.len() + 3);
        line.insert("seq".into(), seq.into());
        line.insert("t".into(), t.into());
        for (key, value) in fields {
            let is_type = key == "type";
            line.insert(key, value);
            if is_type {
                line.insert("agent_id".into(), agent_id.into());
            }
        }
        serde_json::to_string(&line)
    }
}

/// One line of a trajectory, read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    /// The line's number in the run, from 0 (0 when the line has none).
    pub seq: u64,
    /// When it happened (RFC 3339 with milliseconds).
    pub t: String,
    /// `main`, or a subagent's or teammate's id.
    pub agent_id: String,
    /// The line's `type` as written: the only trace of an [`TrajectoryEvent::Unknown`] event.
    pub kind: String,
    /// The event.
    pub event: TrajectoryEvent,
}

/// A line that is not a trajectory event.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    /// The line is not JSON.
    #[error("not valid JSON: {0}")]
    Json(serde_json::Error),
    /// The object has no `type`.
    #[error("an event without a type")]
    NoType,
    /// A known event with a field of the wrong type.
    #[error("this {kind} event does not match the trajectory format: {source}")]
    Fields {
        /// The event's type.
        kind: String,
        /// What does not match.
        source: serde_json::Error,
    },
}

impl Line {
    /// Reads one line of a file.
    pub fn parse(text: &str) -> Result<Line, LineError> {
        Line::from_value(&serde_json::from_str(text).map_err(LineError::Json)?)
    }

    /// Reads a line already parsed as JSON.
    pub fn from_value(value: &Value) -> Result<Line, LineError> {
        let text = |key: &str| value.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
        let kind = text("type");
        if kind.is_empty() {
            return Err(LineError::NoType);
        }
        let event =
            TrajectoryEvent::deserialize(value).map_err(|source| LineError::Fields { kind: kind.clone(), source })?;
        Ok(Line {
            seq: value.get("seq").and_then(Value::as_u64).unwrap_or_default(),
            t: text("t"),
            agent_id: text("agent_id"),
            kind,
            event,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    /// Lines with every optional field present, as the writer writes them.
    const FULL: [&str; 5] = [
        r#"{"seq":1,"t":"2026-01-02T03:04:05.678Z","type":"llm_request","agent_id":"main","step":1,"message_count":1,"tools_sent":2,"request":{"model":"m","messages":[]}}"#,
        r#"{"seq":2,"t":"2026-01-02T03:04:05.678Z","type":"llm_retry","agent_id":"main","step":1,"attempt":2,"error_class":"server","delay_ms":500,"message":"HTTP 503","status":503}"#,
        r#"{"seq":3,"t":"2026-01-02T03:04:05.678Z","type":"llm_response","agent_id":"main","step":1,"text":"x","tool_calls":[],"finish_reason":"stop","usage":{"input_tokens":1,"output_tokens":2,"cache_read":3,"cache_write":4},"duration_ms":9,"thinking":"hm"}"#,
        r#"{"seq":4,"t":"2026-01-02T03:04:05.678Z","type":"tool_call","agent_id":"sub-1","step":2,"call_id":"c","name":"bash","args":"{not json","format":"tool","start":12}"#,
        r#"{"seq":5,"t":"2026-01-02T03:04:05.678Z","type":"tool_output","agent_id":"main","step":2,"call_id":"c","is_error":false,"content":"big","meta":{"duration_ms":4,"truncated":true,"exit_code":-1,"spill_path":".tackle/spill/c.txt"},"structured":{"rows":[1]}}"#,
    ];

    #[test]
    fn every_optional_field_round_trips_in_its_place() {
        for text in FULL {
            let line = Line::parse(text).unwrap();
            assert_eq!(line.event.to_line(line.seq, &line.t, &line.agent_id).unwrap(), text);
        }
    }

    #[test]
    fn a_file_of_version_0_1_0_reads_and_writes_back_byte_for_byte() {
        let fixture = include_str!("../../tests/fixtures/trajectory-0.1.0.jsonl");
        for text in fixture.lines() {
            let line = Line::parse(text).unwrap();
            assert!(!matches!(line.event, TrajectoryEvent::Unknown), "{text}");
            assert_eq!(line.event.to_line(line.seq, &line.t, &line.agent_id).unwrap(), text);
        }
    }

    #[test]
    fn a_newer_event_type_reads_as_unknown_and_is_never_written() {
        let line = Line::parse(r#"{"seq":7,"type":"plan_update","agent_id":"main","steps":["a"]}"#).unwrap();
        assert_eq!((line.kind.as_str(), &line.event), ("plan_update", &TrajectoryEvent::Unknown));
        assert!(TrajectoryEvent::Unknown.to_line(0, "t", "main").is_err());
    }

    #[test]
    fn bad_lines_say_what_is_wrong() {
        let cases = [
            ("{", "not valid JSON: EOF while parsing an object at line 1 column 1"),
            (r#"{"seq":0}"#, "an event without a type"),
            (r#"{"type":""}"#, "an event without a type"),
            (
                r#"{"type":"tool_output","content":"x"}"#,
                "this tool_output event does not match the trajectory format: missing field `call_id`",
            ),
            (
                r#"{"type":"llm_request","step":"one"}"#,
                "this llm_request event does not match the trajectory format: invalid type: string \"one\", expected u32",
            ),
            (
                r#"{"type":"permission","call_id":"c","decision":"maybe","source":"mode"}"#,
                "this permission event does not match the trajectory format: unknown variant `maybe`, expected one of `allow`, `ask`, `deny`",
            ),
        ];
        for (text, message) in cases {
            assert_eq!(Line::parse(text).unwrap_err().to_string(), message, "{text}");
        }
    }

    #[test]
    fn names_are_the_names_in_the_file() {
        use DecisionSource::{Hook, Mode, Policy, Rule, User};
        use PermissionDecision::{Allow, Ask, Deny};
        for decision in [Allow, Ask, Deny] {
            assert_eq!(serde_json::to_value(decision).unwrap(), decision.name());
        }
        for source in [Mode, Rule, Hook, User, Policy] {
            assert_eq!(serde_json::to_value(source).unwrap(), source.name());
        }
        for status in
            [RunStatus::Success, RunStatus::Incomplete, RunStatus::MaxSteps, RunStatus::Timeout, RunStatus::Budget]
                .into_iter()
                .chain([RunStatus::Interrupted, RunStatus::Error])
        {
            assert_eq!(serde_json::to_value(status).unwrap(), status.name());
        }
    }

    #[test]
    fn missing_fields_read_as_empty() {
        let line = Line::parse(r#"{"seq":1,"type":"tool_call","call_id":"a"}"#).unwrap();
        let expected = TrajectoryEvent::ToolCall {
            step: 0,
            call_id: "a".into(),
            name: String::new(),
            args: Value::Null,
            format: String::new(),
            start: None,
        };
        assert_eq!((line.seq, line.t.as_str(), line.agent_id.as_str(), &line.event), (1, "", "", &expected));
        assert_eq!(Line::parse(r#"{"type":"session_end","status":"max_steps"}"#).unwrap().event, {
            TrajectoryEvent::SessionEnd {
                status: RunStatus::MaxSteps,
                steps: 0,
                final_result: String::new(),
                usage_total: Usage::default(),
                duration_ms: 0,
            }
        });
    }
}
