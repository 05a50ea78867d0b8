//! A typed tool of your own beside Tackle's built-ins, run in one turn.
//!
//! `cargo run -p tackle --example custom_tool -- [WORKSPACE]` (default: the current
//! directory): counts the words of `README.md` with the `word_count` tool defined here and
//! reads its first lines with the built-in `read_file`, both in one turn.

use schemars::JsonSchema;
use serde::Deserialize;
use tackle::{SessionBuilder, Tool, ToolCall, ToolContext, ToolError, ToolOutput, ToolSpec};

/// The input of `word_count`.
#[derive(Deserialize, JsonSchema)]
struct WordCountInput {
    /// The file to count, relative to the workspace.
    path: String,
}

/// Counts the words of a file in the workspace.
struct WordCount;

impl Tool for WordCount {
    type Input = WordCountInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("word_count", "Count the words of a text file in the workspace.")
            .read_only()
            .concurrency_safe()
            .path_param("path", tackle::PathAccess::Read)
    }

    async fn call(&self, input: WordCountInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        // Every path goes through the session's path policy, as the built-in tools' do.
        let path = ctx.resolve_path(&input.path, tackle::Access::Read)?;
        let text = tokio::fs::read_to_string(&path)
            .await
            .map_err(|err| ToolError::Failed(format!("cannot read {}: {err}", input.path)))?;
        Ok(ToolOutput::text(format!("{} words in {}", text.split_whitespace().count(), input.path)))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let workspace = std::env::args().nth(1).unwrap_or_else(|| ".".to_owned());
    let session = SessionBuilder::new(workspace)
        .tools("read_file,glob,grep")
        .tool(WordCount)
        .on_notice(|line| eprintln!("notice: {line}"))
        .build()
        .await?;
    let calls = vec![
        ToolCall::new("1", "word_count", serde_json::json!({"path": "README.md"})),
        ToolCall::new("2", "read_file", serde_json::json!({"file_path": "README.md", "limit": 3})),
    ];
    let outputs = session.run_turn(calls).await;
    for output in &outputs {
        println!("[{}] {}{}", output.call_id, if output.is_error { "error: " } else { "" }, output.text_content());
    }
    session.close().await;
    if outputs.iter().any(|output| output.is_error) {
        std::process::exit(1);
    }
    Ok(())
}
