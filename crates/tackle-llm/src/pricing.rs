//! What a model's tokens cost: the prices `tackle run --max-cost` and the `--json` result's
//! `cost_usd` use when the provider does not report a cost itself (OpenRouter does,
//! `usage.cost`). Built-in entries cover the common hosted models; the user config's
//! `[pricing."MODEL"]` tables add or replace entries (docs/reference/cli.md#limits-and-budgets).

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::Usage;

/// A model's prices, in US dollars per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Input tokens not read from or written to the prompt cache.
    pub input: f64,
    /// Output tokens (reasoning included).
    pub output: f64,
    /// Input tokens read from the prompt cache (default: the input price).
    #[serde(default)]
    pub cache_read: Option<f64>,
    /// Input tokens written to the prompt cache (default: the input price).
    #[serde(default)]
    pub cache_write: Option<f64>,
}

impl Price {
    const fn of(input: f64, output: f64, cache_read: f64, cache_write: f64) -> Price {
        Price { input, output, cache_read: Some(cache_read), cache_write: Some(cache_write) }
    }

    /// The cost of `usage` in US dollars. `usage.input_tokens` counts every input token,
    /// cached or not (the convention [`Usage`] keeps on both wires).
    pub fn cost(&self, usage: &Usage) -> f64 {
        let read = usage.cache_read.unwrap_or(0);
        let write = usage.cache_write.unwrap_or(0);
        let plain = usage.input_tokens.saturating_sub(read + write);
        let per_token = |tokens: u64, per_million: f64| tokens as f64 * per_million / 1_000_000.0;
        per_token(plain, self.input)
            + per_token(read, self.cache_read.unwrap_or(self.input))
            + per_token(write, self.cache_write.unwrap_or(self.input))
            + per_token(usage.output_tokens, self.output)
    }

    /// Whether every price is a finite number, zero or more.
    fn is_valid(&self) -> bool {
        [Some(self.input), Some(self.output), self.cache_read, self.cache_write]
            .into_iter()
            .flatten()
            .all(|p| p.is_finite() && p >= 0.0)
    }
}

/// The built-in prices (US dollars per million tokens: input, output, cache read, cache
/// write), from the providers' published price lists; the user config overrides any of them.
const BUILT_IN: &[(&str, Price)] = &[
    ("gpt-5", Price::of(1.25, 10.0, 0.125, 1.25)),
    ("gpt-5-mini", Price::of(0.25, 2.0, 0.025, 0.25)),
    ("gpt-5-nano", Price::of(0.05, 0.40, 0.005, 0.05)),
    ("gpt-4.1", Price::of(2.0, 8.0, 0.50, 2.0)),
    ("gpt-4.1-mini", Price::of(0.40, 1.60, 0.10, 0.40)),
    ("gpt-4.1-nano", Price::of(0.10, 0.40, 0.025, 0.10)),
    ("gpt-4o", Price::of(2.50, 10.0, 1.25, 2.50)),
    ("gpt-4o-mini", Price::of(0.15, 0.60, 0.075, 0.15)),
    ("o3", Price::of(2.0, 8.0, 0.50, 2.0)),
    ("o4-mini", Price::of(1.10, 4.40, 0.275, 1.10)),
    ("claude-opus-4-5", Price::of(5.0, 25.0, 0.50, 6.25)),
    ("claude-opus-4-1", Price::of(15.0, 75.0, 1.50, 18.75)),
    ("claude-opus-4", Price::of(15.0, 75.0, 1.50, 18.75)),
    ("claude-sonnet-4-5", Price::of(3.0, 15.0, 0.30, 3.75)),
    ("claude-sonnet-4", Price::of(3.0, 15.0, 0.30, 3.75)),
    ("claude-3-7-sonnet", Price::of(3.0, 15.0, 0.30, 3.75)),
    ("claude-haiku-4-5", Price::of(1.0, 5.0, 0.10, 1.25)),
    ("claude-3-5-haiku", Price::of(0.80, 4.0, 0.08, 1.0)),
];

/// The price table: the built-in entries under the user config's `[pricing]`.
#[derive(Debug, Clone, Default)]
pub struct Pricing {
    configured: BTreeMap<String, Price>,
}

/// A `[pricing]` entry that cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("[pricing.\"{model}\"]: {reason}")]
pub struct PricingError {
    /// The model the entry is for.
    pub model: String,
    /// What is wrong with it.
    pub reason: String,
}

impl Pricing {
    /// The table with the user config's `[pricing]` section (model name →
    /// `{ input, output, cache_read?, cache_write? }`, as JSON values) over the built-in entries.
    pub fn from_section(section: Option<&serde_json::Map<String, serde_json::Value>>) -> Result<Pricing, PricingError> {
        let mut configured = BTreeMap::new();
        for (model, value) in section.into_iter().flatten() {
            let fail = |reason: String| PricingError { model: model.clone(), reason };
            let price = Price::deserialize(value.clone()).map_err(|err| {
                fail(format!("{err}; write input and output (and optionally cache_read, cache_write) in US dollars per million tokens"))
            })?;
            if !price.is_valid() {
                return Err(fail("prices must be numbers of zero or more".to_owned()));
            }
            configured.insert(model.clone(), price);
        }
        Ok(Pricing { configured })
    }

    /// The price of `model`, if known: an entry of that exact name, else of the name without a
    /// provider prefix (`openai/gpt-4o`) or a date or `-latest` suffix
    /// (`claude-sonnet-4-5-20250929`, `gpt-4o-2024-08-06`). Configured entries come first.
    pub fn price(&self, model: &str) -> Option<Price> {
        let lookup = |name: &str| {
            self.configured
                .get(name)
                .copied()
                .or_else(|| BUILT_IN.iter().find(|(known, _)| *known == name).map(|(_, price)| *price))
        };
        let bare = model.rsplit_once('/').map_or(model, |(_, name)| name);
        [model, bare, without_version_suffix(bare)].into_iter().find_map(lookup)
    }
}

/// `name` without a trailing `-latest`, `-YYYYMMDD` or `-YYYY-MM-DD`.
fn without_version_suffix(name: &str) -> &str {
    if let Some(base) = name.strip_suffix("-latest") {
        return base;
    }
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some((base, date)) = name.rsplit_once('-')
        && date.len() == 8
        && digits(date)
    {
        return base;
    }
    // -YYYY-MM-DD: three dash-separated numeric parts at the end.
    let parts: Vec<&str> = name.rsplitn(4, '-').collect();
    if let [day, month, year, base] = parts.as_slice()
        && (day.len(), month.len(), year.len()) == (2, 2, 4)
        && digits(day)
        && digits(month)
        && digits(year)
    {
        return base;
    }
    name
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64, read: Option<u64>, write: Option<u64>) -> Usage {
        Usage { input_tokens: input, output_tokens: output, cache_read: read, cache_write: write, cost: None }
    }

    #[test]
    fn names_with_dates_prefixes_and_latest_find_their_model() {
        let pricing = Pricing::default();
        let sonnet = pricing.price("claude-sonnet-4-5").unwrap();
        assert_eq!(pricing.price("claude-sonnet-4-5-20250929"), Some(sonnet));
        assert_eq!(pricing.price("anthropic/claude-sonnet-4-5"), Some(sonnet));
        assert_eq!(pricing.price("gpt-4o-2024-08-06"), pricing.price("gpt-4o"));
        assert_eq!(pricing.price("claude-3-5-haiku-latest"), pricing.price("claude-3-5-haiku"));
        // The mini model is its own entry, never the larger model's price.
        assert_ne!(pricing.price("gpt-4o-mini"), pricing.price("gpt-4o"));
        assert_eq!(pricing.price("gpt-4o-mini").unwrap().input, 0.15);
        assert_eq!(pricing.price("my-local-model"), None);
        assert_eq!(pricing.price("gpt-4o-extra"), None, "no prefix matching beyond a date or -latest");
        assert_eq!(pricing.price(""), None);
    }

    #[test]
    fn cost_counts_cached_input_at_its_own_price() {
        let price = Price::of(3.0, 15.0, 0.30, 3.75);
        // 1M input of which 400k cache reads and 100k cache writes, 100k output.
        let cost = price.cost(&usage(1_000_000, 100_000, Some(400_000), Some(100_000)));
        let expected = 0.5 * 3.0 + 0.4 * 0.30 + 0.1 * 3.75 + 0.1 * 15.0;
        assert!((cost - expected).abs() < 1e-9, "{cost} vs {expected}");
        // Cache figures larger than the input (a confused server) do not underflow.
        assert!(price.cost(&usage(10, 0, Some(100), None)) >= 0.0);
        // No cache prices: cached tokens cost what input costs.
        let plain = Price { input: 1.0, output: 2.0, cache_read: None, cache_write: None };
        assert!((plain.cost(&usage(1_000_000, 0, Some(500_000), None)) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn the_user_config_adds_and_replaces_entries() {
        let section = serde_json::json!({
            "my-local-model": {"input": 0.0, "output": 0.0},
            "gpt-4o": {"input": 1.0, "output": 2.0, "cache_read": 0.5},
        });
        let pricing = Pricing::from_section(section.as_object()).unwrap();
        assert_eq!(pricing.price("my-local-model").unwrap().output, 0.0);
        assert_eq!(pricing.price("gpt-4o-2024-08-06").unwrap().input, 1.0);
    }

    #[test]
    fn malformed_entries_are_named() {
        use serde_json::json;
        for (entry, expect) in [
            (json!({"input": 1.0}), "missing field `output`"),
            (json!({"input": "cheap", "output": 1.0}), "invalid type"),
            (json!({"input": -1.0, "output": 1.0}), "zero or more"),
            (json!({"input": null, "output": 1.0}), "invalid type"),
            (json!({"input": 1.0, "output": 1.0, "free": true}), "unknown field"),
            (json!(3), "invalid type"),
        ] {
            let section = json!({ "m": entry });
            let err = Pricing::from_section(section.as_object()).unwrap_err().to_string();
            assert!(err.contains("[pricing.\"m\"]") && err.contains(expect), "{entry}: {err}");
        }
    }
}
