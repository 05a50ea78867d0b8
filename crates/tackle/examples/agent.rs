//! An agent on an OpenAI-compatible endpoint (Ollama, vLLM, llama.cpp, OpenRouter, or a test
//! server), working in a workspace with the default tools.
//!
//! `cargo run -p tackle --example agent -- --base-url http://127.0.0.1:11434/v1 --model qwen2.5-coder "TASK" [WORKSPACE]`
//!
//! The key, if the endpoint needs one, comes from `OPENAI_API_KEY`. Edits are allowed
//! (`accept-edits`); anything else that would ask is denied, since nobody is there to answer.

use tackle::{Agent, PermissionMode, SessionBuilder};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (mut base_url, mut model, mut rest) = (None, "gpt-4.1".to_owned(), Vec::new());
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--base-url" => base_url = args.next(),
            "--model" => model = args.next().unwrap_or(model),
            _ => rest.push(arg),
        }
    }
    let task = rest.first().cloned().ok_or("usage: agent --base-url URL --model MODEL \"TASK\" [WORKSPACE]")?;
    let workspace = rest.get(1).cloned().unwrap_or_else(|| ".".to_owned());

    let model = tackle::llm::openai(&model, base_url.as_deref())?;
    let session = SessionBuilder::new(workspace).permission_mode(PermissionMode::AcceptEdits).build().await?;
    let mut agent = Agent::builder(model, session).max_steps(20).build()?;
    let outcome = agent.run(&task).await;
    println!("{} after {} steps: {}", outcome.status.name(), outcome.steps, outcome.final_result);
    agent.close().await;
    std::process::exit(if outcome.status == tackle::RunStatus::Success { 0 } else { 1 });
}
