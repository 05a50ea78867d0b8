//! Results back to the model in a text format (docs/reference/formats.md#results-back-to-the-model): every output of one assistant
//! message goes in one user message, in call order.

use serde_json::json;

use super::call::fence_for;
use crate::call::TextFormat;
use crate::xml::text;

/// One call's outcome, as the result message shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallResult<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// The call id.
    pub id: &'a str,
    /// Whether the output is an error.
    pub is_error: bool,
    /// The model-facing output text (`ToolOutput::text_content`).
    pub output: &'a str,
}

/// The user message answering a message's calls; `results` are in call order (the markdown
/// form numbers them from 1).
pub fn render_results(format: TextFormat, results: &[CallResult<'_>]) -> String {
    let rendered: Vec<String> = results.iter().enumerate().map(|(i, r)| render_one(format, i + 1, r)).collect();
    rendered.join(if format == TextFormat::Markdown { "\n\n" } else { "\n" })
}

fn render_one(format: TextFormat, n: usize, result: &CallResult<'_>) -> String {
    match format {
        TextFormat::Markdown => {
            let fence = fence_for(result.output);
            let error = if result.is_error { " — error" } else { "" };
            format!("Result of {} (call {n}){error}:\n{fence}output\n{}\n{fence}", result.tool, result.output)
        }
        TextFormat::Xml => {
            let output = if text::needs_cdata(result.output, &[b"</tool-result>"]) {
                text::cdata(result.output)
            } else {
                result.output.to_owned()
            };
            format!(
                "<tool-result name=\"{}\" id=\"{}\" status=\"{}\">{output}</tool-result>",
                text::escape_attr(result.tool),
                text::escape_attr(result.id),
                if result.is_error { "error" } else { "ok" }
            )
        }
        TextFormat::Tool => {
            let body = json!({"tool": result.tool, "is_error": result.is_error, "output": result.output});
            format!("@result({}): {body}", result.id)
        }
    }
}
