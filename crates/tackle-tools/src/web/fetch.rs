//! `web_fetch` (Claude Code's `WebFetch`, docs/reference/tools.md#web_fetch): GET one http(s)
//! URL and show the page as Markdown (HTML) or as it is (other text). Every hop passes the
//! address guard ([`super::guard`]) and connects to the addresses the guard checked;
//! redirects are followed by hand, at most [`MAX_REDIRECTS`], and only on the same host (a
//! redirect elsewhere is reported with its target, so the model asks for it and the person's
//! rules for that host decide). The body is read up to [`WebSettings::max_body_bytes`], the
//! call ends after [`WebSettings::timeout`], and a page is cached for 15 minutes
//! ([`super::cache`]). Without a model to summarise the page for the `prompt`, the prompt is
//! shown as a heading above the page.

use std::fmt::Write as _;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_core::{InterruptBehavior, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};
use tackle_policy::permission::rules::SessionRules;
use url::Url;

use super::body::{Kind, charset_param, decode, kind, looks_binary};
use super::cache::{CachedPage, PageCache};
use super::guard::{self, Checked, Refusal};
use super::markdown::html_to_markdown;

/// The wire name.
pub const NAME: &str = "web_fetch";
/// The most redirects followed for one call.
pub const MAX_REDIRECTS: usize = 10;

/// How `web_fetch` reaches pages (the session state holds it; tests shorten it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WebSettings {
    /// The time to connect to a host.
    pub connect_timeout: Duration,
    /// The time for the whole call, redirects and body included.
    pub timeout: Duration,
    /// The most bytes of a body read; the rest is never read.
    pub max_body_bytes: usize,
}

impl Default for WebSettings {
    fn default() -> Self {
        WebSettings {
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(30),
            max_body_bytes: 10 * 1024 * 1024,
        }
    }
}

/// `web_fetch`'s arguments.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WebFetchInput {
    /// The http or https URL to fetch.
    pub url: String,
    /// What you want to know from the page (shown above it).
    pub prompt: Option<String>,
}

/// The `web_fetch` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct WebFetch;

impl Tool for WebFetch {
    type Input = WebFetchInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            NAME,
            "Fetch a web page (http or https URL) and return its content: HTML as Markdown (the main content, \
             links kept), other text as it is. Redirects on the same host are followed; a redirect to another host \
             is reported with its target (fetch that URL to follow it). Pages on the local machine or network are \
             refused unless the user allows their host. Results are cached for 15 minutes. `prompt` says what you \
             want from the page.",
        )
        .title("Fetch web page")
        .alias("WebFetch")
        .open_world()
        .concurrency_safe()
        .url_param("url")
        .interrupt(InterruptBehavior::Cancel)
    }

    async fn call(&self, input: WebFetchInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let settings = ctx.state().existing::<WebSettings>().map(|s| *s).unwrap_or_default();
        let cache = ctx.state().get::<PageCache>();
        let mut text = String::new();
        if let Some(prompt) = input.prompt.as_deref().map(str::trim).filter(|p| !p.is_empty()) {
            let prompt = prompt.split_whitespace().collect::<Vec<_>>().join(" ");
            let _ = writeln!(text, "## Prompt: {prompt}\n\n(No model summarised the page; it follows in full.)\n");
        }
        let asked = guard::parse(&input.url).map_err(refused)?;
        if let Some(page) = cache.get(asked.as_str()) {
            text.push_str(&page.text);
            return Ok(ToolOutput::text(text));
        }
        let fetch = fetch(asked.clone(), settings, ctx);
        let outcome = tokio::select! {
            outcome = tokio::time::timeout(settings.timeout, fetch) => outcome.unwrap_or_else(|_| {
                Err(ToolError::Timeout(format!(
                    "{asked} did not answer within {}s; nothing was fetched (try again later or another URL)",
                    settings.timeout.as_secs_f64()
                )))
            }),
            () = ctx.cancel_token().cancelled() => Err(ToolError::Cancelled("the fetch was cancelled".to_owned())),
        }?;
        match outcome {
            Fetched::Page(page) => {
                text.push_str(&page.text);
                cache.put(asked.as_str(), page);
            }
            Fetched::Elsewhere { from, to } => {
                let _ = write!(
                    text,
                    "{from} redirected to another host: {to}\nIt was not followed. To fetch it, call web_fetch with \
                     that URL."
                );
            }
        }
        Ok(ToolOutput::text(text))
    }
}

fn refused(refusal: Refusal) -> ToolError {
    match refusal {
        Refusal::Invalid(..) | Refusal::Scheme(_) | Refusal::Credentials(_) => {
            ToolError::InvalidInput(refusal.to_string())
        }
        Refusal::Address { .. } => ToolError::Denied(refusal.to_string()),
        Refusal::Resolve { .. } => ToolError::Failed(refusal.to_string()),
    }
}

enum Fetched {
    Page(CachedPage),
    Elsewhere { from: Url, to: Url },
}

/// Fetches `url`, following same-host redirects, each hop through the guard.
async fn fetch(url: Url, settings: WebSettings, ctx: &ToolContext) -> Result<Fetched, ToolError> {
    let rules = ctx.state().get::<SessionRules>();
    let spec = WebFetch.spec();
    let exempt = |host: &str| rules.0.as_ref().is_some_and(|book| book.allow_naming_host(&spec, host).is_some());
    let mut current = url;
    let mut hops = 0;
    loop {
        let checked = guard::check(current.clone(), exempt).await.map_err(refused)?;
        let response = get(&checked, settings).await?;
        let status = response.status();
        if status.is_redirection()
            && let Some(location) = response.headers().get(reqwest::header::LOCATION)
        {
            let location = location
                .to_str()
                .map_err(|_| ToolError::Failed(format!("{current} redirected to a Location that is not text")))?;
            let next = current
                .join(location)
                .map_err(|err| ToolError::Failed(format!("{current} redirected to '{location}', not a URL: {err}")))?;
            let next_host = tackle_policy::permission::domain::host_of(&next);
            if !matches!(next.scheme(), "http" | "https") || next_host.as_deref() != Some(checked.host.as_str()) {
                // Another host (or scheme): the model asks for it by name, and the person's
                // rules and the guard judge it then; a refused target is named as such.
                if let Err(refusal) = guard::check(next.clone(), exempt).await {
                    return Err(ToolError::Denied(format!(
                        "{current} redirected to {next}, which was not followed: {refusal}"
                    )));
                }
                return Ok(Fetched::Elsewhere { from: current, to: next });
            }
            hops += 1;
            if hops > MAX_REDIRECTS {
                return Err(ToolError::Failed(format!(
                    "{current} redirected more than {MAX_REDIRECTS} times; the last target was {next}"
                )));
            }
            current = next;
            continue;
        }
        return read_page(current, response, settings).await.map(Fetched::Page);
    }
}

/// One GET of a checked URL, connecting only to the addresses the guard checked (a proxy
/// from the environment, when one applies, is used instead: it resolves the host itself).
async fn get(checked: &Checked, settings: WebSettings) -> Result<reqwest::Response, ToolError> {
    super::ensure_tls_provider();
    let mut builder = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(settings.connect_timeout)
        .user_agent(concat!("tackle/", env!("CARGO_PKG_VERSION"), " (web_fetch)"));
    if !checked.addresses.is_empty() {
        builder = builder.resolve_to_addrs(&checked.host, &checked.addresses);
        // The URL's own spelling too (`localhost.` keeps its dot there), so no spelling of the
        // host reaches the system resolver again.
        if let Some(raw) = checked.url.host_str()
            && raw != checked.host
        {
            builder = builder.resolve_to_addrs(raw, &checked.addresses);
        }
    }
    let client = builder.build().map_err(|err| ToolError::Internal(format!("cannot start the HTTP client: {err}")))?;
    client
        .get(checked.url.clone())
        .header(reqwest::header::ACCEPT, "text/html, text/markdown;q=0.9, text/plain;q=0.8, */*;q=0.5")
        .send()
        .await
        .map_err(|err| ToolError::Failed(format!("fetching {}: {}", checked.url, error_chain(&err))))
}

/// The error with its causes (reqwest's own message names only the outermost).
fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let _ = write!(text, ": {cause}");
        source = cause.source();
    }
    text
}

/// The page of a final (non-redirect) response.
async fn read_page(url: Url, mut response: reqwest::Response, settings: WebSettings) -> Result<CachedPage, ToolError> {
    let status = response.status();
    let content_type =
        response.headers().get(reqwest::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).map(str::to_owned);
    let (media, mut kind) = kind(content_type.as_deref());
    if kind == Kind::Binary {
        let size = response.content_length().map(|n| format!(", {n} bytes")).unwrap_or_default();
        return Err(ToolError::Failed(format!(
            "{url} is {media}{size}, not text: web_fetch shows text pages only (HTML, plain text, JSON, XML…)"
        )));
    }
    let mut body = Vec::new();
    let mut cut = false;
    while let Some(chunk) =
        response.chunk().await.map_err(|err| ToolError::Failed(format!("reading {url}: {}", error_chain(&err))))?
    {
        let room = settings.max_body_bytes - body.len();
        if chunk.len() >= room {
            body.extend_from_slice(&chunk[..room]);
            cut = chunk.len() > room || response.content_length().is_none_or(|n| n as usize > body.len());
            break;
        }
        body.extend_from_slice(&chunk);
    }
    drop(response);
    if kind == Kind::Unknown {
        if looks_binary(&body) {
            return Err(ToolError::Failed(format!(
                "{url} sent binary data without a Content-Type ({} bytes read): web_fetch shows text pages only",
                body.len()
            )));
        }
        kind = if body.iter().take(1024).any(|&b| b == b'<')
            && String::from_utf8_lossy(&body[..body.len().min(1024)]).to_ascii_lowercase().contains("<html")
        {
            Kind::Html
        } else {
            Kind::Text
        };
    }
    let html = kind == Kind::Html;
    let charset = charset_param(content_type.as_deref());
    let (decoded, encoding) = decode(&body, charset.as_deref(), html);
    let mut text = String::new();
    let _ = write!(text, "URL: {url}\nStatus: {status}");
    if !media.is_empty() {
        let _ = write!(text, "\nContent-Type: {media}");
    }
    if encoding != "UTF-8" {
        let _ = write!(text, " (decoded from {encoding})");
    }
    if cut {
        let _ = write!(
            text,
            "\nThe page is larger than {} bytes: only its first {} bytes were read.",
            settings.max_body_bytes,
            body.len()
        );
    }
    text.push_str("\n\n");
    if html {
        let page = tokio::task::spawn_blocking(move || html_to_markdown(&decoded))
            .await
            .map_err(|err| ToolError::Internal(format!("converting the page: {err}")))?;
        if let Some(title) = page.title {
            let _ = write!(text, "# {title}\n\n");
        }
        text.push_str(&page.markdown);
    } else {
        text.push_str(&decoded);
    }
    Ok(CachedPage { final_url: url.to_string(), text })
}
