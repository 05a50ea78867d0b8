//! The model side: the provider-neutral conversation and the [`ChatModel`] trait of
//! `tackle-llm`, and constructors for the built-in providers.
//!
//! ```no_run
//! # fn demo() -> Result<(), tackle::llm::ProviderError> {
//! // A local OpenAI-compatible server (Ollama, vLLM, llama.cpp): no key needed on loopback.
//! let local = tackle::llm::from_model_string("openai/qwen2.5-coder", Some("http://127.0.0.1:11434/v1"))?;
//! // A hosted model: the key comes from ANTHROPIC_API_KEY.
//! let claude = tackle::llm::anthropic("claude-sonnet-4-5", None)?;
//! # Ok(()) }
//! ```

pub use tackle_agent::provider::{ProviderError, default_model};
pub use tackle_llm::{
    AssistantMessage, ChatModel, ChatRequest, Completion, ErrorClass, FinishReason, ImageData, LlmClient, LlmError,
    LlmEvent, Message, ModelInfo, NativeCall, Price, Pricing, PricingError, ProviderConfig, ProviderKind,
    RenderedTools, RetryPolicy, ToolResult, Usage, UserPart,
};

use tackle_policy::config::Config;

/// An OpenAI Chat Completions client (or any compatible server at `base_url`), with the key
/// from `OPENAI_API_KEY`.
pub fn openai(model: &str, base_url: Option<&str>) -> Result<LlmClient, ProviderError> {
    from_model_string(&format!("openai/{model}"), base_url)
}

/// An Anthropic Messages client, with the key from `ANTHROPIC_API_KEY`.
pub fn anthropic(model: &str, base_url: Option<&str>) -> Result<LlmClient, ProviderError> {
    from_model_string(&format!("anthropic/{model}"), base_url)
}

/// A client for `PROVIDER/MODEL` (`openai/gpt-4.1`, `anthropic/claude-sonnet-4-5`), with the
/// providers' defaults and the key from the provider's environment variable.
pub fn from_model_string(model: &str, base_url: Option<&str>) -> Result<LlmClient, ProviderError> {
    from_config(&Config::default(), model, base_url)
}

/// A client for `PROVIDER/MODEL` as the configuration's `[providers]` sections set it up
/// (what `tackle run --model` does).
pub fn from_config(config: &Config, model: &str, base_url: Option<&str>) -> Result<LlmClient, ProviderError> {
    // API keys are read from the environment, or from where Tackle moved them at start so that
    // no command can read them from its environment block (`tackle_policy::secrets`).
    let env = |name: &str| tackle_policy::secrets::var(name);
    let provider = tackle_agent::provider::provider_config(config, model, base_url, &env)?;
    Ok(LlmClient::new(provider)?)
}
