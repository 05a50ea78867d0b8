//! [`ChatModel`]: the small trait the agent loop talks to, over the provider-neutral
//! conversation of this crate. [`crate::LlmClient`] implements it for OpenAI-compatible and
//! Anthropic servers; an embedder implements it to plug in a provider of their own (or a
//! scripted one), and the loop, the trajectory and the tools stay the same.

use serde_json::Value;
use tackle_core::schema::{Dialect, render_tool};
use tackle_core::{BoxFuture, ToolSpec};

use crate::client::RenderedTools;
use crate::conversation::{ChatRequest, Completion, LlmEvent};
use crate::error::LlmError;

/// Who answers, as recorded in trajectories.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelInfo {
    /// The provider's name (`openai`, `anthropic`, a `[providers.NAME]` section, or the
    /// embedder's own).
    pub provider: String,
    /// The model id.
    pub model: String,
    /// The endpoint, when there is one.
    pub base_url: Option<String>,
}

/// A model the agent loop can ask for the next assistant message.
pub trait ChatModel: Send + Sync {
    /// Who answers.
    fn info(&self) -> ModelInfo;

    /// The tool definitions to send with each request (default: OpenAI function tools).
    fn render_tools(&self, specs: &[&ToolSpec]) -> RenderedTools {
        RenderedTools {
            tools: specs.iter().map(|spec| render_tool(spec, Dialect::OpenAi)).collect(),
            json_text_params: Vec::new(),
        }
    }

    /// Sends one request and returns the complete assistant message. Text and reasoning
    /// are reported through `sink` as they arrive; a failed attempt that will be retried is
    /// reported as [`LlmEvent::Retry`].
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest<'a>,
        sink: &'a mut (dyn FnMut(LlmEvent) + Send),
    ) -> BoxFuture<'a, Result<Completion, LlmError>>;

    /// The body a request is sent with, for `--trajectory-full` (default: none).
    fn request_body(&self, _request: &ChatRequest<'_>) -> Option<Value> {
        None
    }
}

/// The built-in providers: OpenAI-compatible servers and Anthropic.
impl ChatModel for crate::client::LlmClient {
    fn info(&self) -> ModelInfo {
        let config = self.config();
        ModelInfo {
            provider: config.name.clone(),
            model: config.model.clone(),
            base_url: Some(config.base_url.clone()),
        }
    }

    fn render_tools(&self, specs: &[&ToolSpec]) -> RenderedTools {
        crate::client::LlmClient::render_tools(self, specs.iter().copied())
    }

    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest<'a>,
        sink: &'a mut (dyn FnMut(LlmEvent) + Send),
    ) -> BoxFuture<'a, Result<Completion, LlmError>> {
        Box::pin(crate::client::LlmClient::complete(self, request, sink))
    }

    fn request_body(&self, request: &ChatRequest<'_>) -> Option<Value> {
        Some(crate::client::LlmClient::request_body(self, request))
    }
}
