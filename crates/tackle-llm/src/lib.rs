//! Tackle's LLM provider clients (docs/reference/providers.md#selecting-a-provider): OpenAI Chat Completions and every
//! compatible server, and Anthropic Messages; streaming SSE or whole responses; tool-call
//! assembly; retries with backoff, jitter and `Retry-After`; classified errors.
//!
//! Providers know no tool: they receive tool definitions already rendered (from
//! `tackle_core::ToolSpec` through the schema dialects) and return calls as name + JSON text.
//! The loop in `tackle-agent` turns those into `tackle_core::ToolCall`s.

pub mod anthropic;
mod client;
mod conversation;
mod error;
mod model;
pub mod openai;
mod pricing;
pub mod retry;
pub mod sse;

pub use client::{BaseUrlError, LlmClient, ProviderConfig, ProviderKind, RenderedTools, check_base_url};
pub use conversation::{
    AssistantMessage, ChatRequest, Completion, FinishReason, ImageData, LlmEvent, Message, NativeCall, ToolResult,
    Usage, UserPart, without_images,
};
pub use error::{ErrorClass, LlmError, classify_status, provider_message};
pub use model::{ChatModel, ModelInfo};
pub use pricing::{Price, Pricing, PricingError};
pub use retry::RetryPolicy;
