//! What a tool call yields: model-facing content, an error flag, an optional structured
//! payload (MCP `structuredContent`) and meta facts about the run.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ErrorKind;

/// One part of an output's content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    /// Text the model reads.
    Text {
        /// The text.
        text: String,
    },
    /// An image (base64 data), for providers that accept images in tool results.
    Image {
        /// The image's MIME type (`image/png`).
        mime_type: String,
        /// The image's bytes, base64-encoded.
        data: String,
    },
}

/// Facts about a call, each present when known (docs/reference/tools.md#outputs).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OutputMeta {
    /// Wall time of the call, from the start of its run to the final output (a refused call:
    /// its admission), not counting the time a person took to answer its approval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The exit code of a process the call ran, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// Whether the content was cut to fit the output budget.
    #[serde(default)]
    pub truncated: bool,
    /// Workspace-relative path of the file holding the full output, when it was cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spill_path: Option<String>,
    /// Argument paths the executor coerced (e.g. `"10"` → `10`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coerced: Vec<String>,
    /// The kind of error, for error outputs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<ErrorKind>,
    /// True when the call was refused before it ran (unknown tool, invalid arguments, a
    /// denial at admission, or a path-policy refusal the tool met before it changed
    /// anything). The command line maps this to exit code 2.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rejected: bool,
    /// For the person, never the model or a trajectory: the unified diff of what a file edit
    /// changed (executor/edits.rs).
    #[serde(skip)]
    pub diff: Option<String>,
}

/// The single answer to one tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// The id of the call this answers (filled in by the executor).
    pub call_id: String,
    /// Model-facing content.
    pub content: Vec<ContentPart>,
    /// Whether the call failed.
    pub is_error: bool,
    /// A JSON payload for programs (MCP `structuredContent`), when the tool has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured: Option<Value>,
    /// Facts about the run.
    pub meta: OutputMeta,
}

impl ToolOutput {
    /// A successful output with one text part.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            call_id: String::new(),
            content: vec![ContentPart::Text { text: text.into() }],
            is_error: false,
            structured: None,
            meta: OutputMeta::default(),
        }
    }

    /// A failed output with one text part (a tool that wants to return partial results with
    /// an error flag, such as a command that exited non-zero, uses this).
    pub fn error(text: impl Into<String>) -> Self {
        ToolOutput { is_error: true, ..ToolOutput::text(text) }
    }

    /// Adds a structured payload.
    pub fn with_structured(mut self, structured: Value) -> Self {
        self.structured = Some(structured);
        self
    }

    /// Records a process exit code.
    pub fn with_exit_code(mut self, code: i32) -> Self {
        self.meta.exit_code = Some(code);
        self
    }

    /// All text parts joined with newlines: the text a model would see.
    pub fn text_content(&self) -> String {
        let mut parts = self.content.iter().filter_map(|part| match part {
            ContentPart::Text { text } => Some(text.as_str()),
            ContentPart::Image { .. } => None,
        });
        let first = parts.next().unwrap_or_default().to_owned();
        parts.fold(first, |mut acc, part| {
            acc.push('\n');
            acc.push_str(part);
            acc
        })
    }
}
