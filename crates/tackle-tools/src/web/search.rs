//! `web_search` (Claude Code's `WebSearch`, docs/reference/tools.md#web_search): a query sent
//! to the search backend the user config's `[web]` section names (a SearXNG instance's JSON
//! API, Brave Search or Tavily), results shown as title, URL and snippet, one block each,
//! filtered by `allowed_domains` / `blocked_domains`. Without a backend the tool is
//! registered unavailable, and `tackle tools list` says why. The backend is the person's
//! choice, so the address guard of `web_fetch` does not apply to it; `[web]` is never taken
//! from a workspace's config (tackle-policy's config/rules.rs).

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tackle_core::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec};
use url::Url;

/// The wire name.
pub const NAME: &str = "web_search";
/// The most results shown.
const MAX_RESULTS: usize = 10;
/// The time for one search.
const TIMEOUT: Duration = Duration::from_secs(20);
/// Brave Search's web search endpoint (api-dashboard.search.brave.com documents it).
const BRAVE_URL: &str = "https://api.search.brave.com/res/v1/web/search";
/// Tavily's search endpoint (docs.tavily.com documents it).
const TAVILY_URL: &str = "https://api.tavily.com/search";

/// Why `web_search` is absent when no backend is configured.
pub const NOT_CONFIGURED: &str = "no search backend is configured: set [web] search = \"searxng\" (with searxng_url) \
                                  or \"brave\" / \"tavily\" (with api_key_env) in the user config";

/// The user config's `[web]` section.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebSection {
    /// `searxng`, `brave` or `tavily`.
    pub search: Option<String>,
    /// The SearXNG instance (its base URL; `/search` is added).
    pub searxng_url: Option<String>,
    /// The environment variable holding the Brave or Tavily API key.
    pub api_key_env: Option<String>,
    /// Another endpoint for Brave or Tavily (a proxy of the person's, a test server).
    pub api_url: Option<String>,
}

/// A configured search backend.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchBackend {
    /// A SearXNG instance: GET `{base}/search?q=...&format=json`.
    Searxng {
        /// The instance's base URL.
        base: Url,
    },
    /// Brave Search: GET with `X-Subscription-Token`.
    Brave {
        /// The endpoint.
        endpoint: Url,
        /// The variable holding the key.
        key_env: String,
    },
    /// Tavily: POST JSON with a bearer key.
    Tavily {
        /// The endpoint.
        endpoint: Url,
        /// The variable holding the key.
        key_env: String,
    },
}

impl WebSection {
    /// The backend the section names, `None` when it names none; the error says what is wrong.
    pub fn backend(&self) -> Result<Option<SearchBackend>, String> {
        let parse = |key: &str, text: &str| {
            let url = Url::parse(text).map_err(|err| format!("[web] {key} = {text:?} is not a URL: {err}"))?;
            match url.scheme() {
                "http" | "https" => Ok(url),
                other => Err(format!("[web] {key} must be an http or https URL, not {other}:")),
            }
        };
        let key_env = |name: &str| {
            self.api_key_env
                .clone()
                .ok_or_else(|| format!("[web] search = \"{name}\" needs api_key_env, the variable holding the API key"))
        };
        let endpoint = |default: &str| parse("api_url", self.api_url.as_deref().unwrap_or(default));
        Ok(Some(match self.search.as_deref() {
            None => return Ok(None),
            Some("searxng") => {
                let Some(base) = &self.searxng_url else {
                    return Err("[web] search = \"searxng\" needs searxng_url, the instance's URL".to_owned());
                };
                SearchBackend::Searxng { base: parse("searxng_url", base)? }
            }
            Some("brave") => SearchBackend::Brave { endpoint: endpoint(BRAVE_URL)?, key_env: key_env("brave")? },
            Some("tavily") => SearchBackend::Tavily { endpoint: endpoint(TAVILY_URL)?, key_env: key_env("tavily")? },
            Some(other) => return Err(format!("[web] search = {other:?}: the backends are searxng, brave and tavily")),
        }))
    }
}

/// `web_search`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebSearchInput {
    /// What to search for.
    pub query: String,
    /// Only results from these domains (and their subdomains).
    pub allowed_domains: Option<Vec<String>>,
    /// No results from these domains (and their subdomains).
    pub blocked_domains: Option<Vec<String>>,
}

/// The `web_search` tool; unavailable without a backend.
#[derive(Debug, Default, Clone)]
pub struct WebSearch {
    backend: Option<Arc<SearchBackend>>,
    /// Why there is no backend, when the section names one wrongly.
    misconfigured: Option<String>,
}

impl WebSearch {
    /// The tool searching with `backend`.
    pub fn new(backend: SearchBackend) -> Self {
        WebSearch { backend: Some(Arc::new(backend)), misconfigured: None }
    }

    /// The tool as the user config's `[web]` section makes it: unavailable, with the reason,
    /// when the section names no backend or names one wrongly.
    pub fn from_section(section: &WebSection) -> Self {
        match section.backend() {
            Ok(Some(backend)) => WebSearch::new(backend),
            Ok(None) => WebSearch::default(),
            Err(why) => WebSearch { backend: None, misconfigured: Some(why) },
        }
    }
}

impl Tool for WebSearch {
    type Input = WebSearchInput;

    fn spec(&self) -> ToolSpec {
        let spec = ToolSpec::new(
            NAME,
            "Search the web and return results (title, URL and a snippet each). `allowed_domains` keeps only \
             results from those domains, `blocked_domains` drops results from them. Fetch a result with web_fetch \
             to read it.",
        )
        .title("Search the web")
        .alias("WebSearch")
        .read_only()
        .open_world()
        .concurrency_safe();
        match (&self.backend, &self.misconfigured) {
            (Some(_), _) => spec,
            (None, Some(why)) => spec.unavailable(why.clone()),
            (None, None) => spec.unavailable(NOT_CONFIGURED),
        }
    }

    async fn call(&self, input: WebSearchInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let Some(backend) = &self.backend else { return Err(ToolError::Failed(NOT_CONFIGURED.to_owned())) };
        let query = input.query.trim();
        if query.is_empty() {
            return Err(ToolError::InvalidInput("query is empty: say what to search for".to_owned()));
        }
        let allowed = domains(input.allowed_domains.as_deref());
        let blocked = domains(input.blocked_domains.as_deref());
        let search = search(backend, query, &allowed, &blocked);
        let results = tokio::select! {
            results = tokio::time::timeout(TIMEOUT, search) => results.unwrap_or_else(|_| Err(ToolError::Timeout(
                format!("the search backend did not answer within {}s", TIMEOUT.as_secs())
            ))),
            () = ctx.cancel_token().cancelled() => Err(ToolError::Cancelled("the search was cancelled".to_owned())),
        }?;
        let kept: Vec<SearchResult> =
            results.into_iter().filter(|r| admitted(&r.url, &allowed, &blocked)).take(MAX_RESULTS).collect();
        Ok(ToolOutput::text(render(query, &kept)))
    }
}

/// One result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchResult {
    /// The page's title.
    pub title: String,
    /// Its URL.
    pub url: String,
    /// The backend's snippet.
    pub snippet: String,
}

fn domains(list: Option<&[String]>) -> Vec<String> {
    list.unwrap_or_default()
        .iter()
        .map(|d| d.trim().trim_start_matches("*.").trim_end_matches('.').to_ascii_lowercase())
        .filter(|d| !d.is_empty())
        .collect()
}

/// Whether a result's URL passes the filters: its host is one of `allowed` or below one
/// (when any is given), and neither one of `blocked` nor below one.
fn admitted(url: &str, allowed: &[String], blocked: &[String]) -> bool {
    let Some(host) = tackle_policy::permission::domain::url_host(url) else { return false };
    let within = |domain: &String| {
        host == *domain || host.strip_suffix(domain.as_str()).is_some_and(|label| label.ends_with('.'))
    };
    (allowed.is_empty() || allowed.iter().any(within)) && !blocked.iter().any(within)
}

fn render(query: &str, results: &[SearchResult]) -> String {
    if results.is_empty() {
        return format!("No results for \"{query}\".");
    }
    let mut out = format!("Results for \"{query}\":\n");
    for (n, result) in results.iter().enumerate() {
        let snippet = result.snippet.split_whitespace().collect::<Vec<_>>().join(" ");
        let title = result.title.split_whitespace().collect::<Vec<_>>().join(" ");
        let _ = write!(out, "\n{}. {title}\n   {}\n", n + 1, result.url);
        if !snippet.is_empty() {
            let _ = writeln!(out, "   {snippet}");
        }
    }
    out
}

async fn search(
    backend: &SearchBackend,
    query: &str,
    allowed: &[String],
    blocked: &[String],
) -> Result<Vec<SearchResult>, ToolError> {
    super::ensure_tls_provider();
    let client = reqwest::Client::builder()
        .user_agent(concat!("tackle/", env!("CARGO_PKG_VERSION"), " (web_search)"))
        .build()
        .map_err(|err| ToolError::Internal(format!("cannot start the HTTP client: {err}")))?;
    let key = |name: &str| {
        std::env::var(name).map_err(|_| {
            ToolError::Failed(format!("the search backend's API key variable {name} is not set in the environment"))
        })
    };
    let count = MAX_RESULTS.to_string();
    let (request, name, list_path, snippet_key): (_, _, &[&str], _) = match backend {
        SearchBackend::Searxng { base } => {
            let mut endpoint = base.clone();
            let path = format!("{}/search", endpoint.path().trim_end_matches('/'));
            endpoint.set_path(&path);
            endpoint.query_pairs_mut().append_pair("q", query).append_pair("format", "json");
            (client.get(endpoint), "SearXNG", &["results"], "content")
        }
        SearchBackend::Brave { endpoint, key_env } => {
            let mut endpoint = endpoint.clone();
            endpoint.query_pairs_mut().append_pair("q", query).append_pair("count", &count);
            (
                client.get(endpoint).header("Accept", "application/json").header("X-Subscription-Token", key(key_env)?),
                "Brave Search",
                &["web", "results"],
                "description",
            )
        }
        SearchBackend::Tavily { endpoint, key_env } => {
            let mut body = json!({ "query": query, "max_results": MAX_RESULTS });
            if !allowed.is_empty() {
                body["include_domains"] = json!(allowed);
            }
            if !blocked.is_empty() {
                body["exclude_domains"] = json!(blocked);
            }
            (client.post(endpoint.clone()).bearer_auth(key(key_env)?).json(&body), "Tavily", &["results"], "content")
        }
    };
    let response = request.send().await.map_err(|err| ToolError::Failed(format!("{name} cannot be reached: {err}")))?;
    let status = response.status();
    let bytes = response.bytes().await.map_err(|err| ToolError::Failed(format!("reading {name}'s answer: {err}")))?;
    if !status.is_success() {
        let text = String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned();
        return Err(ToolError::Failed(format!("{name} answered {status}: {}", text.trim())));
    }
    parse_results(&bytes, list_path, snippet_key).map_err(|why| ToolError::Failed(format!("{name}'s answer {why}")))
}

/// The results at `list_path` of a backend's JSON answer; the error says what is wrong.
pub fn parse_results(bytes: &[u8], list_path: &[&str], snippet_key: &str) -> Result<Vec<SearchResult>, String> {
    let answer: Value = serde_json::from_slice(bytes).map_err(|err| format!("is not JSON: {err}"))?;
    let mut list = &answer;
    for key in list_path {
        list = match list.get(key) {
            Some(value) => value,
            // Brave leaves `web` out when nothing was found.
            None if list.is_object() && *key == "web" => return Ok(Vec::new()),
            None => return Err(format!("has no \"{}\" list", list_path.join("."))),
        };
    }
    let items = list.as_array().ok_or_else(|| format!("has a \"{}\" that is not a list", list_path.join(".")))?;
    let text = |item: &Value, key: &str| item.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
    Ok(items
        .iter()
        .filter_map(|item| {
            let url = text(item, "url");
            (!url.is_empty()).then(|| SearchResult {
                title: text(item, "title"),
                url,
                snippet: strip_tags(&text(item, snippet_key)),
            })
        })
        .collect())
}

/// A snippet without the `<strong>` highlighting Brave puts in.
fn strip_tags(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(toml: &str) -> WebSection {
        toml::from_str(toml).unwrap()
    }

    #[test]
    fn the_section_names_a_backend_or_says_what_is_missing() {
        assert_eq!(section("").backend(), Ok(None));
        assert!(matches!(
            section("search = 'searxng'\nsearxng_url = 'http://127.0.0.1:8888'").backend(),
            Ok(Some(SearchBackend::Searxng { .. }))
        ));
        assert!(matches!(
            section("search = 'brave'\napi_key_env = 'BRAVE_API_KEY'").backend(),
            Ok(Some(SearchBackend::Brave { key_env, .. })) if key_env == "BRAVE_API_KEY"
        ));
        for (toml, why) in [
            ("search = 'searxng'", "needs searxng_url"),
            ("search = 'searxng'\nsearxng_url = 'file:///x'", "http or https"),
            ("search = 'tavily'", "needs api_key_env"),
            ("search = 'google'", "searxng, brave and tavily"),
        ] {
            let err = section(toml).backend().unwrap_err();
            assert!(err.contains(why), "{toml}: {err}");
        }
        assert!(toml::from_str::<WebSection>("serch = 'brave'").is_err());
    }

    #[test]
    fn results_are_filtered_by_domain_and_subdomain() {
        let allowed = domains(Some(&["Docs.rs".to_owned()]));
        assert!(admitted("https://docs.rs/serde", &allowed, &[]));
        assert!(admitted("https://www.docs.rs/", &allowed, &[]));
        assert!(!admitted("https://evildocs.rs/", &allowed, &[]));
        assert!(!admitted("https://docs.rs.evil.com/", &allowed, &[]));
        let blocked = domains(Some(&["*.spam.com".to_owned()]));
        assert!(!admitted("https://a.spam.com/", &[], &blocked));
        assert!(!admitted("https://spam.com/", &[], &blocked));
        assert!(admitted("https://spam.co/", &[], &blocked));
        assert!(!admitted("javascript:alert(1)", &[], &[]));
    }

    #[test]
    fn malformed_answers_are_named() {
        assert!(parse_results(b"<html>", &["results"], "content").unwrap_err().contains("not JSON"));
        assert!(parse_results(b"{}", &["results"], "content").unwrap_err().contains("no \"results\" list"));
        assert!(parse_results(b"{\"results\": 3}", &["results"], "content").unwrap_err().contains("not a list"));
        assert_eq!(parse_results(b"{\"query\": \"x\"}", &["web", "results"], "description"), Ok(Vec::new()));
        let parsed = parse_results(
            br#"{"web": {"results": [{"title": "T", "url": "https://a.com/", "description": "a <strong>b</strong>"}, {"title": "no url"}, 7]}}"#,
            &["web", "results"],
            "description",
        )
        .unwrap();
        assert_eq!(
            parsed,
            vec![SearchResult { title: "T".into(), url: "https://a.com/".into(), snippet: "a b".into() }]
        );
    }
}
