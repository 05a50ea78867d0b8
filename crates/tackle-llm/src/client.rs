//! The provider client: builds each attempt's request, streams or reads the response, and
//! retries as docs/reference/providers.md#errors-retries-and-timeouts says. Calls are returned only once the assistant message is
//! complete, so a retried stream can never repeat a tool call.

use std::time::Duration;

use futures::StreamExt as _;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::{Value, json};
use tackle_core::ToolSpec;
use tackle_core::schema::{Dialect, render_tool, strict_schema};

use crate::conversation::{ChatRequest, Completion, LlmEvent};
use crate::error::{ErrorClass, LlmError, classify_status, provider_message};
use crate::retry::{RetryPolicy, server_delay, should_retry};
use crate::sse::{self, SseError};
use crate::{anthropic, openai};

/// The wire protocol of a provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProviderKind {
    /// OpenAI Chat Completions (and every compatible server).
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
}

impl ProviderKind {
    /// The provider name in `--model PROVIDER/MODEL`.
    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "openai",
            ProviderKind::Anthropic => "anthropic",
        }
    }

    /// The environment variable holding the key by default.
    pub fn default_key_env(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "OPENAI_API_KEY",
            ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
        }
    }

    /// The public endpoint.
    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::OpenAi => "https://api.openai.com/v1",
            ProviderKind::Anthropic => "https://api.anthropic.com",
        }
    }

    /// The schema dialect tools are shown in by default.
    pub fn default_dialect(self) -> Dialect {
        match self {
            ProviderKind::OpenAi => Dialect::OpenAi,
            ProviderKind::Anthropic => Dialect::Anthropic,
        }
    }
}

/// Everything a client needs to talk to one provider.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    /// The configured provider name (`openai`, `anthropic`, or a `[providers.NAME]`).
    pub name: String,
    pub model: String,
    /// The base URL without a trailing slash.
    pub base_url: String,
    pub api_key: Option<String>,
    /// Where the key comes from (named in authentication errors).
    pub api_key_env: String,
    /// Extra headers (Azure's `api-key`, OpenRouter's referer).
    pub headers: Vec<(String, String)>,
    pub retry: RetryPolicy,
    pub connect_timeout: Duration,
    /// The whole non-streaming request.
    pub request_timeout: Duration,
    /// The longest wait for the next bytes of a stream (pings count).
    pub stream_idle_timeout: Duration,
    pub max_tokens: Option<u32>,
    pub parallel_tool_calls: Option<bool>,
    pub dialect: Dialect,
    /// Send `bash` and `str_replace_based_edit_tool` as Anthropic-defined tool types.
    pub native_tools: bool,
    /// The model takes images (`vision = false` in the provider's or model's settings
    /// turns this off: tool results' images are then not sent).
    pub vision: bool,
    /// Stream responses (`--no-stream` turns this off).
    pub stream: bool,
}

impl ProviderConfig {
    /// The defaults of docs/reference/providers.md#selecting-a-provider and #errors-retries-and-timeouts for `kind` and `model`.
    pub fn new(kind: ProviderKind, model: impl Into<String>) -> Self {
        ProviderConfig {
            kind,
            name: kind.name().to_owned(),
            model: model.into(),
            base_url: kind.default_base_url().to_owned(),
            api_key: None,
            api_key_env: kind.default_key_env().to_owned(),
            headers: Vec::new(),
            retry: RetryPolicy::default(),
            connect_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(600),
            stream_idle_timeout: Duration::from_secs(120),
            max_tokens: None,
            parallel_tool_calls: None,
            dialect: kind.default_dialect(),
            native_tools: kind == ProviderKind::Anthropic,
            vision: true,
            stream: true,
        }
    }

    /// The endpoint requests go to. The base URL may be written with or without the `/v1`
    /// suffix for either provider (docs/reference/providers.md#selecting-a-provider): an
    /// OpenAI-compatible base with no path gets `/v1` (one with another path, such as Azure's
    /// deployments, is used as written), and an Anthropic base ending in `/v1` loses it.
    /// A base written as the whole endpoint (`…/v1/chat/completions`, `…/v1/messages`, as
    /// providers' docs show it) is understood as its base, not doubled.
    pub fn endpoint(&self) -> String {
        let base = self.base_url.trim_end_matches('/');
        let base = match self.kind {
            ProviderKind::OpenAi => base.strip_suffix("/chat/completions"),
            ProviderKind::Anthropic => base.strip_suffix("/messages"),
        }
        .unwrap_or(base);
        match self.kind {
            ProviderKind::OpenAi if url_path_is_empty(base) => format!("{base}/v1/chat/completions"),
            ProviderKind::OpenAi => format!("{base}/chat/completions"),
            ProviderKind::Anthropic => format!("{}/v1/messages", base.strip_suffix("/v1").unwrap_or(base)),
        }
    }
}

/// Whether `url` (`scheme://authority[/path]`) has no path.
fn url_path_is_empty(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    !rest.contains('/')
}

/// A base URL [`check_base_url`] refuses; the text says what is wrong and what a valid one
/// looks like.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BaseUrlError {
    /// Not a URL at all.
    #[error("base URL {url:?} is not a URL ({source}); {BASE_URL_EXAMPLE}")]
    NotAUrl {
        /// The URL as given.
        url: String,
        /// The parser's error.
        source: <reqwest::Url as std::str::FromStr>::Err,
    },
    /// Neither `http` nor `https`.
    #[error("base URL {0:?} must start with http:// or https://; {BASE_URL_EXAMPLE}")]
    Scheme(String),
    /// No host.
    #[error("base URL {0:?} has no host; {BASE_URL_EXAMPLE}")]
    NoHost(String),
    /// A query or a fragment.
    #[error("base URL {0:?} must not have a query or fragment; {BASE_URL_EXAMPLE}")]
    QueryOrFragment(String),
}

const BASE_URL_EXAMPLE: &str = "e.g. http://localhost:11434/v1 or https://api.anthropic.com";

/// `url` checked as a provider's base URL: `http` or `https` with a host, returned without a
/// trailing slash.
pub fn check_base_url(url: &str) -> Result<String, BaseUrlError> {
    let parsed =
        reqwest::Url::parse(url.trim()).map_err(|source| BaseUrlError::NotAUrl { url: url.to_owned(), source })?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(BaseUrlError::Scheme(url.to_owned()));
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err(BaseUrlError::NoHost(url.to_owned()));
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(BaseUrlError::QueryOrFragment(url.to_owned()));
    }
    Ok(url.trim().trim_end_matches('/').to_owned())
}

/// Tool definitions rendered for one provider.
#[derive(Debug, Clone, Default)]
pub struct RenderedTools {
    pub tools: Vec<Value>,
    /// For `openai-strict`: per tool, the parameters advertised as JSON text (the session
    /// decodes them back, `ToolSession::set_json_text_params`).
    pub json_text_params: Vec<(String, Vec<Vec<String>>)>,
}

/// A client for one provider and model.
#[derive(Debug, Clone)]
pub struct LlmClient {
    config: ProviderConfig,
    http: reqwest::Client,
}

/// How one attempt failed.
struct AttemptError {
    error: LlmError,
    /// The stream had delivered at least one event.
    started: bool,
}

impl From<LlmError> for AttemptError {
    fn from(error: LlmError) -> Self {
        AttemptError { error, started: false }
    }
}

impl LlmClient {
    /// A client; fails only if the HTTP stack cannot start or a header is invalid.
    pub fn new(config: ProviderConfig) -> Result<Self, LlmError> {
        // reqwest is built without a default crypto provider (ring builds faster); install it.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let mut headers = HeaderMap::new();
        for (name, value) in &config.headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|e| LlmError::new(ErrorClass::BadRequest, format!("invalid header name {name:?}: {e}")))?;
            let value = HeaderValue::from_str(value)
                .map_err(|e| LlmError::new(ErrorClass::BadRequest, format!("invalid value for header {name}: {e}")))?;
            headers.insert(name, value);
        }
        let http = reqwest::Client::builder()
            .connect_timeout(config.connect_timeout)
            .tcp_nodelay(true)
            .default_headers(headers)
            .user_agent(concat!("tackle/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| LlmError::new(ErrorClass::Transport, format!("cannot start the HTTP client: {e}")))?;
        Ok(LlmClient { config, http })
    }

    /// Streams responses (`true`, the default) or asks for whole ones (`--no-stream`).
    pub fn streaming(mut self, stream: bool) -> Self {
        self.config.stream = stream;
        self
    }

    /// The provider settings.
    pub fn config(&self) -> &ProviderConfig {
        &self.config
    }

    /// Renders tool definitions for this provider: its dialect, and for Anthropic the
    /// provider-defined tool types of docs/reference/providers.md#schemas-sent-to-providers.
    pub fn render_tools<'a>(&self, specs: impl IntoIterator<Item = &'a ToolSpec>) -> RenderedTools {
        let mut rendered = RenderedTools::default();
        for spec in specs {
            if self.config.kind == ProviderKind::Anthropic
                && self.config.native_tools
                && let Some(native) = anthropic_native_tool(&spec.name)
            {
                rendered.tools.push(native);
                continue;
            }
            if self.config.dialect == Dialect::OpenAiStrict {
                let (schema, _) = tackle_core::schema::sanitize(spec.input_schema.clone());
                let paths = strict_schema(&schema).json_text_params;
                if !paths.is_empty() {
                    rendered.json_text_params.push((spec.name.clone(), paths));
                }
            }
            rendered.tools.push(render_tool(spec, self.config.dialect));
        }
        rendered
    }

    /// Sends one request and returns the complete assistant message, retrying as the policy
    /// allows. Text and reasoning are reported through `sink` as they arrive.
    pub async fn complete(
        &self,
        request: &ChatRequest<'_>,
        sink: &mut (dyn FnMut(LlmEvent) + Send),
    ) -> Result<Completion, LlmError> {
        let policy = self.config.retry;
        let mut attempt = 0u32;
        let mut early_failures = 0u32;
        let mut stream_failures = 0u32;
        loop {
            attempt += 1;
            let error = match self.attempt(request, sink).await {
                Ok(completion) => return Ok(completion),
                Err(AttemptError { error, started }) => {
                    let budget_left = if started {
                        stream_failures += 1;
                        stream_failures <= policy.stream_retries
                    } else {
                        early_failures += 1;
                        let limit = if error.unreachable {
                            policy.max_retries.min(crate::retry::MAX_CONNECT_RETRIES)
                        } else {
                            policy.max_retries
                        };
                        early_failures <= limit
                    };
                    if !error.is_retryable() || !budget_left {
                        return Err(self.final_error(error, attempt));
                    }
                    if started {
                        sink(LlmEvent::Restart);
                    }
                    error
                }
            };
            let Some(delay) = policy.delay(attempt, error.retry_after) else {
                return Err(self.final_error(error, attempt));
            };
            sink(LlmEvent::Retry {
                attempt,
                error_class: error.class,
                status: error.status,
                delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                message: error.message.clone(),
            });
            tokio::time::sleep(delay).await;
        }
    }

    /// The JSON body a request is sent with (`--trajectory-full` records it). A model
    /// without vision gets no images, only the text of the results that had them.
    pub fn request_body(&self, request: &ChatRequest<'_>) -> Value {
        let stripped = if self.config.vision { None } else { crate::conversation::without_images(request.messages) };
        let stripped_request;
        let request = match &stripped {
            Some(messages) => {
                stripped_request = ChatRequest { messages, ..*request };
                &stripped_request
            }
            None => request,
        };
        let stream = self.config.stream;
        match self.config.kind {
            ProviderKind::OpenAi => {
                let options = openai::BodyOptions {
                    max_tokens: self.config.max_tokens,
                    parallel_tool_calls: self.config.parallel_tool_calls,
                };
                openai::request_body(&self.config.model, request, options, stream)
            }
            ProviderKind::Anthropic => {
                let max_tokens = self.config.max_tokens.unwrap_or(anthropic::DEFAULT_MAX_TOKENS);
                anthropic::request_body(&self.config.model, request, max_tokens, stream)
            }
        }
    }

    async fn attempt(
        &self,
        request: &ChatRequest<'_>,
        sink: &mut (dyn FnMut(LlmEvent) + Send),
    ) -> Result<Completion, AttemptError> {
        let stream = self.config.stream;
        let body = self.request_body(request);
        let mut builder = self.http.post(self.config.endpoint()).json(&body);
        builder = match (self.config.kind, &self.config.api_key) {
            (ProviderKind::OpenAi, Some(key)) => builder.bearer_auth(key),
            (ProviderKind::Anthropic, Some(key)) => builder.header("x-api-key", key),
            (_, None) => builder,
        };
        if self.config.kind == ProviderKind::Anthropic {
            builder = builder.header("anthropic-version", anthropic::API_VERSION);
        }
        if !stream {
            builder = builder.timeout(self.config.request_timeout);
        }
        let send = builder.send();
        let response = if stream {
            // Until the headers arrive, the idle timeout bounds the wait too.
            match tokio::time::timeout(self.config.stream_idle_timeout, send).await {
                Ok(result) => result.map_err(|e| self.transport_error(&e))?,
                Err(_) => return Err(self.idle_timeout().into()),
            }
        } else {
            send.await.map_err(|e| self.transport_error(&e))?
        };
        let status = response.status();
        if !status.is_success() {
            let headers = response.headers().clone();
            let text = response.text().await.unwrap_or_default();
            return Err(self.status_error(status.as_u16(), &headers, &text).into());
        }
        let is_sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if stream && is_sse {
            return self.read_stream(response, sink).await;
        }
        // A server that ignores `stream: true` answers with one JSON document.
        let text = response.text().await.map_err(|e| self.transport_error(&e))?;
        let value: Value = serde_json::from_str(&text).map_err(|e| {
            LlmError::new(ErrorClass::Transport, format!("the response is not JSON ({e}): {}", provider_message(&text)))
        })?;
        let completion = match self.config.kind {
            ProviderKind::OpenAi => openai::parse_response(&value)?,
            ProviderKind::Anthropic => anthropic::parse_response(&value)?,
        };
        if !completion.message.text.is_empty() {
            sink(LlmEvent::Text(completion.message.text.clone()));
        }
        Ok(completion)
    }

    async fn read_stream(
        &self,
        response: reqwest::Response,
        sink: &mut (dyn FnMut(LlmEvent) + Send),
    ) -> Result<Completion, AttemptError> {
        let mut events = sse::events(response.bytes_stream(), self.config.stream_idle_timeout);
        let mut openai = openai::StreamAssembler::default();
        let mut anthropic = anthropic::StreamAssembler::default();
        let mut started = false;
        let fail = |error: LlmError, started: bool| AttemptError { error, started };
        loop {
            let event = match events.next().await {
                Some(Ok(event)) => event,
                None => {
                    // The connection closed without the end marker: complete only if the
                    // provider had already said why it stopped.
                    let complete = match self.config.kind {
                        ProviderKind::OpenAi => openai.is_complete(),
                        ProviderKind::Anthropic => anthropic.is_complete(),
                    };
                    if !complete {
                        let message = format!(
                            "the stream from {} ended before the response was complete (connection closed)",
                            self.config.name
                        );
                        return Err(fail(LlmError::new(ErrorClass::Transport, message), started));
                    }
                    break;
                }
                Some(Err(SseError::Read(e))) => return Err(fail(self.transport_error(&e), started)),
                Some(Err(SseError::Idle(_))) => return Err(fail(self.idle_timeout(), started)),
                Some(Err(other)) => return Err(fail(LlmError::new(ErrorClass::Transport, other.to_string()), started)),
            };
            started = true;
            let done = match (self.config.kind, event.event.as_deref()) {
                (ProviderKind::Anthropic, Some("error")) if !event.data.contains("\"type\"") => {
                    Err(LlmError::new(ErrorClass::Server, provider_message(&event.data)))
                }
                (ProviderKind::OpenAi, _) => openai.feed(&event.data, sink),
                (ProviderKind::Anthropic, _) => anthropic.feed(&event.data, sink),
            }
            .map_err(|e| fail(e, true))?;
            if done {
                break;
            }
        }
        Ok(match self.config.kind {
            ProviderKind::OpenAi => openai.into_completion(true),
            ProviderKind::Anthropic => anthropic.into_completion(true),
        })
    }

    fn status_error(&self, status: u16, headers: &HeaderMap, body: &str) -> LlmError {
        LlmError {
            class: classify_status(status, body),
            status: Some(status),
            message: provider_message(body),
            retry_after: server_delay(headers),
            should_retry: should_retry(headers),
            unreachable: false,
        }
    }

    fn transport_error(&self, error: &reqwest::Error) -> LlmError {
        let class = if error.is_timeout() { ErrorClass::Timeout } else { ErrorClass::Transport };
        let mut detail = error.to_string();
        let mut source = std::error::Error::source(error);
        while let Some(inner) = source {
            detail.push_str(": ");
            detail.push_str(&inner.to_string());
            source = inner.source();
        }
        LlmError { unreachable: error.is_connect() && !error.is_timeout(), ..LlmError::new(class, detail) }
    }

    fn idle_timeout(&self) -> LlmError {
        LlmError::new(
            ErrorClass::Timeout,
            format!("no data within {} s (stream_idle_timeout_ms)", self.config.stream_idle_timeout.as_secs_f64()),
        )
    }

    /// The message the person reads once no more attempts will be made.
    fn final_error(&self, error: LlmError, attempts: u32) -> LlmError {
        let provider = &self.config.name;
        let tries = if attempts > 1 { format!(" after {attempts} attempts") } else { String::new() };
        let status = error.status.map(|s| format!(" (HTTP {s})")).unwrap_or_default();
        let waited =
            error.retry_after.map(|d| format!("; the last Retry-After was {} s", d.as_secs_f64())).unwrap_or_default();
        let detail = &error.message;
        let message = match error.class {
            ErrorClass::Auth => format!("authentication failed for {provider}: check {}", self.config.api_key_env),
            ErrorClass::RateLimit => format!(
                "rate limited by {provider}{status}{tries}{waited}: {detail}. Wait and run again, or raise [providers.{provider}] max_retries."
            ),
            ErrorClass::Overloaded => {
                format!("{provider} is overloaded{status}{tries}{waited}: {detail}. Try again in a few minutes.")
            }
            ErrorClass::Server => format!(
                "{provider} had a server error{status}{tries} at {}: {detail}. Try again later.",
                self.config.endpoint()
            ),
            ErrorClass::Timeout => format!(
                "{provider} did not answer in time{tries}: {detail}. Check the endpoint {} or raise the timeouts in [providers.{provider}].",
                self.config.base_url
            ),
            ErrorClass::Transport if error.unreachable => format!(
                "nothing answers at {}{tries}: {detail}. Check --base-url (or [providers.{provider}] base_url) and \
                 that the server is running.",
                self.config.endpoint()
            ),
            ErrorClass::Transport => format!(
                "cannot talk to {provider} at {}{tries}: {detail}. Check --base-url and the network.",
                self.config.endpoint()
            ),
            ErrorClass::ContextLength => format!(
                "the conversation is too long for {}'s context window: {detail}. Start a new run with a narrower task.",
                self.config.model
            ),
            ErrorClass::BadRequest => {
                format!("{provider} rejected the request{status} at {}: {detail}", self.config.endpoint())
            }
        };
        LlmError { message, ..error }
    }
}

/// Anthropic's own definition of a tool Claude models are trained on (docs/reference/providers.md#schemas-sent-to-providers).
fn anthropic_native_tool(name: &str) -> Option<Value> {
    match name {
        "bash" => Some(json!({"type": "bash_20250124", "name": "bash"})),
        "str_replace_based_edit_tool" => {
            Some(json!({"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}))
        }
        _ => None,
    }
}
