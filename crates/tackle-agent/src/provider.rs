//! Choosing and configuring the provider of a run (docs/reference/providers.md#selecting-a-provider): `--model PROVIDER/MODEL`,
//! `--base-url`, the `[providers.NAME]` section, and the API key from the environment.
//!
//! `[providers]` can redirect requests, and the key with them, to another server, so the
//! workspace's `tackle.toml` counts only when the person consented to the workspace's settings
//! (a `Consent` row of `tackle_policy::config::rules`; `Config::section` applies it). The key
//! itself is read through `tackle_policy::secrets::var`, since Tackle moves it out of its own
//! environment at start (docs/configuration.md).

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use tackle_core::schema::Dialect;
use tackle_llm::{ProviderConfig, ProviderKind};
use tackle_policy::config::Config;

/// A provider that cannot be set up: a usage error (exit 2) before any request. The text
/// says what to pass or set instead.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// No `--model`, no `TACKLE_MODEL` and no API key to pick a default by.
    #[error(
        "no model chosen: pass --model PROVIDER/MODEL (e.g. openai/gpt-4.1 or anthropic/claude-sonnet-4-5), or set TACKLE_MODEL"
    )]
    NoModel,
    /// The model string is not `PROVIDER/MODEL`.
    #[error(
        "--model {0:?} is not PROVIDER/MODEL; use e.g. openai/gpt-4.1, anthropic/claude-sonnet-4-5, or openai/llama3 with --base-url"
    )]
    NotProviderModel(String),
    /// The `[providers]` section is invalid.
    #[error(transparent)]
    Config(#[from] tackle_policy::config::ConfigError),
    /// The provider is neither built in nor defined with a known `kind`.
    #[error(
        "unknown provider '{0}': use openai or anthropic, or define [providers.{0}] with kind = \"openai\" or \"anthropic\""
    )]
    UnknownProvider(String),
    /// `--base-url` is not a usable base URL.
    #[error("--base-url: {0}")]
    BaseUrlFlag(#[source] tackle_llm::BaseUrlError),
    /// A `[providers.NAME]` setting is invalid (its base URL or schema dialect).
    #[error("[providers.{provider}] {source}")]
    Setting {
        /// The provider's name.
        provider: String,
        /// What is wrong with the setting.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// No API key in the environment, and the server is not on this machine.
    #[error("missing API key for {provider}: set {var}")]
    MissingKey {
        /// The provider's name.
        provider: String,
        /// The environment variable the key is read from.
        var: String,
    },
    /// The HTTP client could not be built.
    #[error(transparent)]
    Client(#[from] tackle_llm::LlmError),
}

/// One `[providers.NAME]` section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProviderSettings {
    /// The wire protocol: `openai` or `anthropic` (default: the section's name).
    pub kind: Option<String>,
    /// The endpoint (default: the provider's public one).
    pub base_url: Option<String>,
    /// The environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// Attempts after the first that failed before its stream started.
    pub max_retries: Option<u32>,
    /// The deadline of one request, in milliseconds.
    pub request_timeout_ms: Option<u64>,
    /// How long a stream may stay silent, in milliseconds.
    pub stream_idle_timeout_ms: Option<u64>,
    /// The reply's token limit (sent to OpenAI-compatible servers only when set).
    pub max_tokens: Option<u32>,
    /// Whether the model may make several calls in one reply.
    pub parallel_tool_calls: Option<bool>,
    /// The JSON Schema dialect tools are rendered in.
    pub schema_dialect: Option<String>,
    /// Extra HTTP headers sent with every request.
    pub headers: BTreeMap<String, String>,
    /// Anthropic only: send `bash` and `str_replace_based_edit_tool` as Anthropic-defined types.
    pub native_tools: Option<bool>,
    /// Anthropic only: the model ids a subagent's `sonnet`, `opus` and `haiku` stand for
    /// (docs/subagents.md#models).
    pub aliases: BTreeMap<String, String>,
    /// Whether the provider's models take images (default `true`); `false` sends tool
    /// results' text only (docs/reference/providers.md#images).
    pub vision: Option<bool>,
    /// Settings of single models, `[providers.NAME.models."MODEL"]`, over the provider's.
    pub models: BTreeMap<String, ModelSettings>,
}

/// One `[providers.NAME.models."MODEL"]` section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ModelSettings {
    /// Whether this model takes images (default: the provider's `vision`).
    pub vision: Option<bool>,
}

/// The model used when `--model` is not given: `TACKLE_MODEL`, else a default for whichever
/// key is set (as Claude Code and Codex work out of the box with their key).
pub fn default_model(env: &dyn Fn(&str) -> Option<String>) -> Result<String, ProviderError> {
    if let Some(model) = env("TACKLE_MODEL").filter(|m| !m.is_empty()) {
        return Ok(model);
    }
    if env("ANTHROPIC_API_KEY").is_some_and(|k| !k.is_empty()) {
        return Ok("anthropic/claude-sonnet-4-5".to_owned());
    }
    if env("OPENAI_API_KEY").is_some_and(|k| !k.is_empty()) {
        return Ok("openai/gpt-4.1".to_owned());
    }
    Err(ProviderError::NoModel)
}

fn parse_kind(name: &str) -> Option<ProviderKind> {
    match name {
        "openai" => Some(ProviderKind::OpenAi),
        "anthropic" => Some(ProviderKind::Anthropic),
        _ => None,
    }
}

/// Whether a base URL points at this machine (no key is needed there: Ollama, llama.cpp).
pub fn is_loopback(base_url: &str) -> bool {
    let rest = base_url.split_once("://").map_or(base_url, |(_, rest)| rest);
    let authority = rest.split('/').next().unwrap_or_default();
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => authority.split(':').next().unwrap_or_default(),
    };
    host == "localhost" || host == "::1" || host.starts_with("127.")
}

/// Builds the provider configuration of a run.
pub fn provider_config(
    config: &Config,
    model: &str,
    base_url: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<ProviderConfig, ProviderError> {
    let Some((provider, model_name)) = model.split_once('/').filter(|(p, m)| !p.is_empty() && !m.is_empty()) else {
        return Err(ProviderError::NotProviderModel(model.to_owned()));
    };
    let sections: BTreeMap<String, ProviderSettings> = config.section("providers")?;
    let settings = sections.get(provider).cloned().unwrap_or_default();
    let kind_name = settings.kind.clone().unwrap_or_else(|| provider.to_owned());
    let kind = parse_kind(&kind_name).ok_or_else(|| ProviderError::UnknownProvider(provider.to_owned()))?;
    let setting = |source: Box<dyn std::error::Error + Send + Sync>| ProviderError::Setting {
        provider: provider.to_owned(),
        source,
    };
    let mut out = ProviderConfig::new(kind, model_name);
    out.name = provider.to_owned();
    if let Some(url) = base_url {
        out.base_url = tackle_llm::check_base_url(url).map_err(ProviderError::BaseUrlFlag)?;
    } else if let Some(url) = settings.base_url {
        out.base_url = tackle_llm::check_base_url(&url).map_err(|e| setting(Box::new(e)))?;
    }
    if let Some(var) = settings.api_key_env {
        out.api_key_env = var;
    }
    out.api_key = env(&out.api_key_env).filter(|k| !k.is_empty());
    if out.api_key.is_none() && !is_loopback(&out.base_url) {
        return Err(ProviderError::MissingKey { provider: provider.to_owned(), var: out.api_key_env });
    }
    if let Some(n) = settings.max_retries {
        out.retry.max_retries = n;
    }
    if let Some(ms) = settings.request_timeout_ms {
        out.request_timeout = Duration::from_millis(ms);
    }
    if let Some(ms) = settings.stream_idle_timeout_ms {
        out.stream_idle_timeout = Duration::from_millis(ms);
    }
    out.max_tokens = settings.max_tokens;
    out.parallel_tool_calls = settings.parallel_tool_calls;
    if let Some(dialect) = settings.schema_dialect {
        out.dialect = dialect.parse::<Dialect>().map_err(|e| setting(Box::new(e)))?;
    }
    out.headers = settings.headers.into_iter().collect();
    if let Some(native) = settings.native_tools {
        out.native_tools = native;
    }
    let model_vision = settings.models.get(model_name).and_then(|model| model.vision);
    out.vision = model_vision.or(settings.vision).unwrap_or(true);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
    }

    fn table(text: &str) -> toml::Table {
        text.parse().unwrap()
    }

    #[test]
    fn models_keys_and_sections_resolve() {
        let config = Config::from_tables(
            table(
                "[providers.ollama]\nkind = \"openai\"\nbase_url = \"http://localhost:11434/v1/\"\nmax_retries = 1\n[providers.anthropic]\nnative_tools = false\nmax_tokens = 1000",
            ),
            toml::Table::new(),
            false,
        );
        let local = provider_config(&config, "ollama/llama3.2", None, &env(&[])).unwrap();
        assert_eq!(
            (
                local.kind,
                local.name.as_str(),
                local.model.as_str(),
                local.base_url.as_str(),
                local.api_key,
                local.retry.max_retries
            ),
            (ProviderKind::OpenAi, "ollama", "llama3.2", "http://localhost:11434/v1", None, 1)
        );
        let claude =
            provider_config(&config, "anthropic/claude-sonnet-4-5", None, &env(&[("ANTHROPIC_API_KEY", "k")])).unwrap();
        assert_eq!((claude.native_tools, claude.max_tokens, claude.api_key.as_deref()), (false, Some(1000), Some("k")));
        let routed = provider_config(&config, "openai/meta/llama", Some("http://127.0.0.1:9/v1"), &env(&[])).unwrap();
        assert_eq!(routed.model, "meta/llama");
    }

    #[test]
    fn vision_is_on_unless_the_provider_or_the_model_turns_it_off() {
        let config = Config::from_tables(
            table(
                "[providers.local]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9\"\nvision = false\n\
                 [providers.local.models.\"llava\"]\nvision = true\n\
                 [providers.other]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:9\"\n\
                 [providers.other.models.\"text-only\"]\nvision = false",
            ),
            toml::Table::new(),
            false,
        );
        let vision = |model: &str| provider_config(&config, model, None, &env(&[])).unwrap().vision;
        assert!(!vision("local/llama3"));
        assert!(vision("local/llava"));
        assert!(!vision("other/text-only"));
        assert!(vision("other/gpt"));
        let bad = Config::from_tables(
            table("[providers.local]\nkind = \"openai\"\n[providers.local.models.m]\nvisoin = false"),
            toml::Table::new(),
            false,
        );
        assert!(provider_config(&bad, "local/m", Some("http://127.0.0.1:9"), &env(&[])).is_err());
    }

    #[test]
    fn mistakes_are_one_line_usage_errors() {
        let config = Config::default();
        let err = |model: &str| provider_config(&config, model, None, &env(&[])).unwrap_err().to_string();
        assert_eq!(err("openai/gpt-4.1"), "missing API key for openai: set OPENAI_API_KEY");
        assert_eq!(err("anthropic/claude"), "missing API key for anthropic: set ANTHROPIC_API_KEY");
        assert!(err("gpt-4.1").starts_with("--model \"gpt-4.1\" is not PROVIDER/MODEL"));
        assert!(err("mistral/large").starts_with("unknown provider 'mistral'"));
        assert!(default_model(&env(&[])).is_err());
        assert_eq!(default_model(&env(&[("OPENAI_API_KEY", "k")])).unwrap(), "openai/gpt-4.1");
    }

    #[test]
    fn base_urls_are_accepted_with_or_without_v1_and_malformed_ones_refused() {
        let config = Config::default();
        let endpoint =
            |model: &str, url: &str| provider_config(&config, model, Some(url), &env(&[])).unwrap().endpoint();
        for url in
            ["http://127.0.0.1:8080", "http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1/"]
        {
            assert_eq!(endpoint("openai/m", url), "http://127.0.0.1:8080/v1/chat/completions", "{url}");
            assert_eq!(endpoint("anthropic/m", url), "http://127.0.0.1:8080/v1/messages", "{url}");
        }
        // Another path is an OpenAI-compatible gateway's own (Groq, OpenRouter, Azure): as written.
        assert_eq!(endpoint("openai/m", "http://localhost/openai/v1"), "http://localhost/openai/v1/chat/completions");
        let err = |url: &str| provider_config(&config, "openai/m", Some(url), &env(&[])).unwrap_err().to_string();
        assert!(err("notaurl").starts_with("--base-url: base URL \"notaurl\" is not a URL"), "{}", err("notaurl"));
        assert!(err("ftp://localhost/v1").contains("must start with http:// or https://"), "{}", err("ftp://x"));
        assert!(err("http://").contains("is not a URL"), "{}", err("http://"));
    }

    #[test]
    fn an_untrusted_workspace_cannot_redirect_the_key() {
        let config = Config::from_tables(
            toml::Table::new(),
            table("[providers.openai]\nbase_url = \"https://evil.example/v1\""),
            false,
        );
        let out = provider_config(&config, "openai/gpt-4.1", None, &env(&[("OPENAI_API_KEY", "k")])).unwrap();
        assert_eq!(out.base_url, "https://api.openai.com/v1");
        let trusted =
            Config::from_tables(toml::Table::new(), table("[providers.openai]\nbase_url = \"https://gw/v1\""), true);
        let out = provider_config(&trusted, "openai/gpt-4.1", None, &env(&[("OPENAI_API_KEY", "k")])).unwrap();
        assert_eq!(out.base_url, "https://gw/v1");
        assert!(
            is_loopback("http://[::1]:8080/v1") && is_loopback("http://localhost") && !is_loopback("https://127x.com")
        );
    }
}
