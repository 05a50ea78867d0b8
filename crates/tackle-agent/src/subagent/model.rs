//! Which model a child asks (docs/subagents.md#models): `inherit` (the parent's), a
//! `provider/model` string resolved as `--model` is, or one of Claude Code's aliases
//! (`sonnet`, `opus`, `haiku`) for Anthropic, mapped to a model id by
//! `[providers.anthropic.aliases]` or the defaults here.

use std::collections::BTreeMap;
use std::sync::Arc;

use tackle_llm::{ChatModel, LlmClient};
use tackle_policy::config::Config;

use crate::provider::{ProviderError, ProviderSettings, provider_config};

/// Why a child's model cannot be set up; the text ends the `subagent` tool's error.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// The definition's `model` is none of the accepted forms.
    #[error("model '{0}' is not inherit, PROVIDER/MODEL, or one of the Anthropic aliases sonnet, opus, haiku")]
    Unknown(String),
    /// A workspace definition asks for another provider than the parent's, without consent.
    #[error(
        "the workspace's agent definition asks for model {model}, of provider {provider}, but this session uses \
         {current}; a definition in the workspace may switch providers only once you consent to the workspace's \
         settings (or move it to the agents/ directory of your user configuration)"
    )]
    ProviderSwitch {
        /// The model asked for.
        model: String,
        /// Its provider.
        provider: String,
        /// The parent's provider.
        current: String,
    },
    /// The provider cannot be set up (its configuration, key or client).
    #[error(transparent)]
    Provider(#[from] ProviderError),
}

/// The model ids the Anthropic aliases stand for unless `[providers.anthropic.aliases]` says
/// otherwise.
pub const DEFAULT_ALIASES: [(&str, &str); 3] =
    [("sonnet", "claude-sonnet-4-5"), ("opus", "claude-opus-4-1"), ("haiku", "claude-haiku-4-5")];

/// The `provider/model` string `spec` stands for; `None` for `inherit` (or nothing).
pub fn model_string(spec: Option<&str>, config: &Config) -> Result<Option<String>, ModelError> {
    let Some(spec) = spec.map(str::trim).filter(|s| !s.is_empty() && *s != "inherit") else { return Ok(None) };
    if spec.contains('/') {
        return Ok(Some(spec.to_owned()));
    }
    if !DEFAULT_ALIASES.iter().any(|(alias, _)| *alias == spec) {
        return Err(ModelError::Unknown(spec.to_owned()));
    }
    let sections: BTreeMap<String, ProviderSettings> = config.section("providers").map_err(ProviderError::from)?;
    let configured = sections.get("anthropic").and_then(|s| s.aliases.get(spec)).cloned();
    let id = configured
        .or_else(|| DEFAULT_ALIASES.iter().find(|(alias, _)| *alias == spec).map(|(_, id)| (*id).to_owned()))
        .unwrap_or_default();
    Ok(Some(format!("anthropic/{id}")))
}

/// The model a child asks: `parent` for `inherit`, else a new client as `[providers]` sets it up.
/// A definition from the workspace (`untrusted`) may not switch to another provider than the
/// parent's unless the person consented to the workspace's settings: a cloned repository must
/// not send its content, with the user's key, to a provider the user did not choose.
pub fn choose(
    spec: Option<&str>,
    parent: &Arc<dyn ChatModel>,
    config: &Config,
    untrusted: bool,
) -> Result<Arc<dyn ChatModel>, ModelError> {
    let Some(model) = model_string(spec, config)? else { return Ok(Arc::clone(parent)) };
    let provider = model.split_once('/').map_or("", |(provider, _)| provider);
    let parent_info = parent.info();
    let current = parent_info.provider;
    if untrusted && !config.workspace_trusted && provider != current {
        return Err(ModelError::ProviderSwitch { model: model.clone(), provider: provider.to_owned(), current });
    }
    let env = |name: &str| tackle_policy::secrets::var(name);
    // The parent's provider is reached where the parent reaches it (`--base-url`, a local
    // proxy): a child must not send the conversation to the provider's public endpoint when
    // the person chose another one.
    let base_url = if provider == current { parent_info.base_url.as_deref() } else { None };
    let provider = provider_config(config, &model, base_url, &env)?;
    let client = LlmClient::new(provider).map_err(ProviderError::from)?;
    Ok(Arc::new(client))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_map_to_anthropic_ids_and_the_configuration_wins() {
        let none = Config::default();
        assert_eq!(model_string(None, &none).unwrap(), None);
        assert_eq!(model_string(Some("inherit"), &none).unwrap(), None);
        assert_eq!(model_string(Some("haiku"), &none).unwrap().as_deref(), Some("anthropic/claude-haiku-4-5"));
        assert_eq!(model_string(Some("openai/gpt-4.1"), &none).unwrap().as_deref(), Some("openai/gpt-4.1"));
        assert!(model_string(Some("gpt5"), &none).unwrap_err().to_string().contains("not inherit, PROVIDER/MODEL"));
        let table: toml::Table = "[providers.anthropic.aliases]\nopus = \"claude-opus-9\"".parse().unwrap();
        let config = Config::from_tables(table, toml::Table::new(), false);
        assert_eq!(model_string(Some("opus"), &config).unwrap().as_deref(), Some("anthropic/claude-opus-9"));
        assert_eq!(model_string(Some("sonnet"), &config).unwrap().as_deref(), Some("anthropic/claude-sonnet-4-5"));
    }

    #[test]
    fn another_model_of_the_parents_provider_is_asked_where_the_parent_asks() {
        let config = Config::default();
        let no_key = |_: &str| None;
        let local = provider_config(&config, "anthropic/claude-a", Some("http://127.0.0.1:9/v1"), &no_key).unwrap();
        let parent: Arc<dyn ChatModel> = Arc::new(LlmClient::new(local).unwrap());
        let parent_url = parent.info().base_url;
        assert!(parent_url.as_deref().is_some_and(|url| url.starts_with("http://127.0.0.1:9")), "{parent_url:?}");
        // From the workspace too: the same provider needs no consent, and keeps the endpoint.
        for untrusted in [false, true] {
            let child = choose(Some("haiku"), &parent, &config, untrusted).unwrap();
            assert_eq!(child.info().model, "claude-haiku-4-5");
            assert_eq!(child.info().base_url, parent_url, "untrusted: {untrusted}");
        }
    }
}
