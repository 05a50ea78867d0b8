//! `web_fetch` and `web_search` against a real HTTP server on 127.0.0.1 (an axum router in the
//! test): pages as Markdown, other text, charsets, binary bodies, a 50 MB page cut at the cap,
//! a slow page, redirects (same host followed and re-checked, capped; another host reported;
//! a private target refused with every Location trick), the address guard and the allow rule
//! that lifts it, the cache; a fake SearXNG, Brave and Tavily for `web_search`, with domain
//! filters and malformed answers.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tackle_core::{Executor, Registry, SessionState, ToolCall, ToolOutput, ToolSession, ToolSessionConfig};
use tackle_policy::permission::rule::RuleBase;
use tackle_policy::permission::rules::{RuleBook, RuleKind, SessionRules};
use tackle_tools::web::fetch::{MAX_REDIRECTS, WebSettings};
use tackle_tools::web::{SearchBackend, WebFetch, WebSearch};
use tokio_util::sync::CancellationToken;

#[derive(Default)]
struct Counters {
    counted: AtomicUsize,
    big_sent: AtomicUsize,
}

const BIG: usize = 50 * 1024 * 1024;

fn html(body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

fn redirect(to: String) -> Response {
    (StatusCode::FOUND, [(header::LOCATION, to)]).into_response()
}

async fn big(State(counters): State<Arc<Counters>>) -> Response {
    let chunk = Bytes::from(vec![b'a'; 64 * 1024]);
    let stream = futures::stream::unfold(0usize, move |sent| {
        let (chunk, counters) = (chunk.clone(), Arc::clone(&counters));
        async move {
            if sent >= BIG {
                return None;
            }
            counters.big_sent.store(sent + chunk.len(), Ordering::SeqCst);
            Some((Ok::<_, std::io::Error>(chunk.clone()), sent + chunk.len()))
        }
    });
    ([(header::CONTENT_TYPE, "text/plain")], Body::from_stream(stream)).into_response()
}

async fn searxng(RawQuery(query): RawQuery) -> Response {
    let query = query.unwrap_or_default();
    if !query.contains("format=json") || !query.contains("q=rust+web") {
        return (StatusCode::BAD_REQUEST, format!("unexpected query {query}")).into_response();
    }
    axum::Json(json!({
        "query": "rust web",
        "results": [
            {"title": "Docs", "url": "https://docs.rs/reqwest", "content": "An HTTP client"},
            {"title": "Sub", "url": "https://www.docs.rs/x", "content": "sub  domain\n snippet"},
            {"title": "Spam", "url": "https://spam.example/", "content": "buy"},
            {"title": "Look-alike", "url": "https://docs.rs.spam.example/", "content": "fake"},
            {"title": "No URL"}
        ]
    }))
    .into_response()
}

async fn brave(headers: HeaderMap, RawQuery(query): RawQuery) -> Response {
    if headers.get("x-subscription-token").and_then(|v| v.to_str().ok()) != Some("brave-key") {
        return (StatusCode::UNAUTHORIZED, "bad token").into_response();
    }
    let query = query.unwrap_or_default();
    assert!(query.contains("q=rust") && query.contains("count=10"), "{query}");
    axum::Json(json!({"web": {"results": [
        {"title": "Brave hit", "url": "https://brave.example/a", "description": "with <strong>bold</strong>"}
    ]}}))
    .into_response()
}

async fn tavily(headers: HeaderMap, axum::Json(body): axum::Json<Value>) -> Response {
    if headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()) != Some("Bearer tavily-key") {
        return (StatusCode::UNAUTHORIZED, "bad key").into_response();
    }
    assert_eq!(body["query"], "rust");
    assert_eq!(body["exclude_domains"], json!(["spam.example"]));
    axum::Json(json!({"results": [
        {"title": "Tavily hit", "url": "https://tavily.example/", "content": "found", "score": 0.9},
        {"title": "Spam", "url": "https://spam.example/", "content": "ignored the filter", "score": 0.1}
    ]}))
    .into_response()
}

struct Server {
    port: u16,
    counters: Arc<Counters>,
}

impl Server {
    async fn start() -> Server {
        let counters = Arc::new(Counters::default());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let app = Router::new()
            .route(
                "/page",
                get(|| async {
                    html(
                        "<html><head><title>Test page</title><script>steal()</script><style>.x{}</style></head>\
                         <body><nav><a href='/'>Menu</a></nav><main><h1>Main heading</h1><p>See <a \
                         href='https://example.org/doc'>the doc</a>.</p></main><footer>Footer</footer></body></html>",
                    )
                }),
            )
            .route("/plain", get(|| async { ([(header::CONTENT_TYPE, "text/plain")], "<b>not html</b>\nline two") }))
            .route(
                "/latin1",
                get(|| async {
                    ([(header::CONTENT_TYPE, "text/html; charset=ISO-8859-1")], &b"<p>caf\xe9 cr\xe8me</p>"[..])
                }),
            )
            .route(
                "/binary",
                get(|| async { ([(header::CONTENT_TYPE, "image/png")], &b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0"[..]) }),
            )
            .route("/untyped-binary", get(|| async { Body::from(&b"\x7fELF\x02\x01\x01\0\0\0\0\0"[..]) }))
            .route("/big", get(big))
            .route(
                "/slow",
                get(|| async {
                    tokio::time::sleep(Duration::from_secs(20)).await;
                    "late"
                }),
            )
            .route(
                "/counted",
                get(|State(counters): State<Arc<Counters>>| async move {
                    let n = counters.counted.fetch_add(1, Ordering::SeqCst) + 1;
                    ([(header::CONTENT_TYPE, "text/plain")], format!("visit {n}"))
                }),
            )
            .route(
                "/hop/{n}",
                get(move |axum::extract::Path(n): axum::extract::Path<usize>| async move {
                    if n == 0 { redirect("/page".to_owned()) } else { redirect(format!("/hop/{}", n - 1)) }
                }),
            )
            .route("/loop", get(|| async { redirect("/loop".to_owned()) }))
            .route(
                "/to",
                get(|RawQuery(q): RawQuery| async move {
                    let target = q.unwrap_or_default();
                    redirect(url_decode(&target))
                }),
            )
            .route("/search", get(searxng))
            .route("/bad/search", get(|| async { "<html>not json</html>" }))
            .route("/wrong/search", get(|| async { axum::Json(json!({"answers": []})) }))
            .route("/brave", get(brave))
            .route("/tavily", post(tavily))
            .with_state(Arc::clone(&counters));
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Server { port, counters }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

fn url_decode(text: &str) -> String {
    url::form_urlencoded::parse(format!("u={text}").as_bytes()).next().map(|(_, v)| v.into_owned()).unwrap_or_default()
}

fn url_encode(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

/// A session with the web tools, `rules` allowed, and short limits.
struct Web {
    session: ToolSession,
    executor: Executor,
    _dir: tempfile::TempDir,
}

impl Web {
    fn new(allow: &[&str], backend: Option<SearchBackend>) -> Web {
        // Long enough for ten redirects of a debug build on a loaded machine.
        Web::with(allow, backend, Duration::from_secs(20))
    }

    fn with(allow: &[&str], backend: Option<SearchBackend>, timeout: Duration) -> Web {
        let dir = tempfile::tempdir().unwrap();
        let mut registry = Registry::new();
        registry.register(&[], WebFetch::default);
        if let Some(backend) = backend {
            registry.register(&[], move || WebSearch::new(backend.clone()));
        }
        let selection = registry.select("all", "all").unwrap();
        let book = RuleBook::default();
        let base = RuleBase { workspace: dir.path().into(), rule_dir: dir.path().into(), home: None };
        for rule in allow {
            book.add(RuleKind::Allow, rule, &base, "test").unwrap();
        }
        let state = SessionState::default();
        state.insert(SessionRules(Some(Arc::new(book))));
        state.insert(WebSettings { connect_timeout: Duration::from_secs(2), timeout, max_body_bytes: 1024 * 1024 });
        let config = ToolSessionConfig::new(dir.path().to_owned());
        let session = ToolSession::with_state(config, registry.instantiate(&selection), state);
        Web { session, executor: Executor::default(), _dir: dir }
    }

    async fn call(&self, tool: &str, args: Value) -> ToolOutput {
        self.executor.run(&self.session, ToolCall::new("c1", tool, args), &CancellationToken::new()).await
    }

    async fn fetch(&self, url: &str) -> (bool, String) {
        let output = self.call("web_fetch", json!({ "url": url })).await;
        (output.is_error, output.text_content())
    }

    async fn ok(&self, url: &str) -> String {
        let (error, text) = self.fetch(url).await;
        assert!(!error, "{url}: {text}");
        text
    }

    async fn err(&self, url: &str) -> String {
        let (error, text) = self.fetch(url).await;
        assert!(error, "{url} should fail: {text}");
        text
    }
}

const LOCAL: &str = "WebFetch(domain:127.0.0.1)";

#[tokio::test]
async fn loopback_is_refused_without_an_allow_rule_naming_it() {
    let server = Server::start().await;
    let web = Web::new(&[], None);
    for url in [
        server.url("/page"),
        format!("http://2130706433:{}/page", server.port),
        format!("http://0177.0.0.1:{}/page", server.port),
        format!("http://localhost:{}/page", server.port),
        format!("http://[::ffff:127.0.0.1]:{}/page", server.port),
    ] {
        let text = web.err(&url).await;
        assert!(text.contains("loopback") && text.contains("WebFetch(domain:"), "{url}: {text}");
    }
    // A rule for the whole tool, or for another host, does not name this one.
    let other = Web::new(&["WebFetch", "WebFetch(domain:localhost)"], None);
    assert!(other.err(&server.url("/page")).await.contains("loopback"));
    // Named by the rule in any spelling of the same address.
    let allowed = Web::new(&[LOCAL], None);
    assert!(allowed.ok(&format!("http://2130706433:{}/page", server.port)).await.contains("# Main heading"));
}

#[tokio::test]
async fn an_html_page_becomes_markdown_of_its_main_content() {
    let server = Server::start().await;
    let web = Web::new(&[LOCAL], None);
    let output = web.call("web_fetch", json!({"url": server.url("/page"), "prompt": "What does  it say?"})).await;
    let text = output.text_content();
    assert!(!output.is_error, "{text}");
    assert!(text.starts_with("## Prompt: What does it say?\n"), "{text}");
    assert!(text.contains(&format!("URL: {}", server.url("/page"))), "{text}");
    assert!(text.contains("Content-Type: text/html"), "{text}");
    assert!(text.contains("# Test page"), "{text}");
    assert!(text.contains("# Main heading"), "{text}");
    assert!(text.contains("[the doc](https://example.org/doc)"), "{text}");
    for gone in ["steal", ".x{}", "Menu", "Footer"] {
        assert!(!text.contains(gone), "{gone}: {text}");
    }
    // Other text as it is.
    let plain = web.ok(&server.url("/plain")).await;
    assert!(plain.ends_with("<b>not html</b>\nline two"), "{plain}");
}

#[tokio::test]
async fn a_page_in_another_charset_is_decoded_and_binary_is_refused() {
    let server = Server::start().await;
    let web = Web::new(&[LOCAL], None);
    let latin = web.ok(&server.url("/latin1")).await;
    assert!(latin.contains("café crème"), "{latin}");
    assert!(latin.contains("decoded from windows-1252"), "{latin}");
    let binary = web.err(&server.url("/binary")).await;
    assert!(binary.contains("image/png") && binary.contains("not text"), "{binary}");
    assert!(!binary.contains("IHDR"), "{binary}");
    let untyped = web.err(&server.url("/untyped-binary")).await;
    assert!(untyped.contains("binary data"), "{untyped}");
}

#[tokio::test]
async fn a_50_mb_page_is_cut_at_the_cap_without_being_read_whole() {
    let server = Server::start().await;
    let web = Web::new(&[LOCAL], None);
    let text = web.ok(&server.url("/big")).await;
    assert!(text.contains("only its first 1048576 bytes were read"), "{}", &text[..300]);
    // The executor's budget cut the text further (spilled); what matters is what was sent:
    // the server stopped long before 50 MB, as the client stopped reading.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let sent = server.counters.big_sent.load(Ordering::SeqCst);
    assert!(sent < BIG / 2, "the server sent {sent} bytes");
}

#[tokio::test]
async fn a_slow_page_ends_with_a_timeout() {
    let server = Server::start().await;
    let web = Web::with(&[LOCAL], None, Duration::from_secs(2));
    let started = std::time::Instant::now();
    let text = web.err(&server.url("/slow")).await;
    assert!(text.contains("did not answer within 2s"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(6), "{:?}", started.elapsed());
}

#[tokio::test]
async fn same_host_redirects_are_followed_up_to_the_cap() {
    let server = Server::start().await;
    let web = Web::new(&[LOCAL], None);
    let text = web.ok(&server.url(&format!("/hop/{}", MAX_REDIRECTS - 1))).await;
    assert!(text.contains(&format!("URL: {}", server.url("/page"))), "{text}");
    assert!(text.contains("# Main heading"), "{text}");
    let too_many = web.err(&server.url(&format!("/hop/{}", MAX_REDIRECTS + 1))).await;
    assert!(too_many.contains(&format!("more than {MAX_REDIRECTS} times")), "{too_many}");
    assert!(web.err(&server.url("/loop")).await.contains("redirected more than"));
}

#[tokio::test]
async fn a_redirect_to_another_host_is_reported_and_one_to_a_refused_address_is_named() {
    let server = Server::start().await;
    let web = Web::new(&[LOCAL], None);
    // Another host, even at the same address and allowed too: reported, not followed, so the
    // model asks for it and the rules for that host decide.
    let other = format!("http://localhost:{}/page", server.port);
    let to_other = server.url(&format!("/to?{}", url_encode(&other)));
    let both = Web::new(&[LOCAL, "WebFetch(domain:localhost)"], None);
    let text = both.ok(&to_other).await;
    assert!(text.contains(&format!("redirected to another host: {other}")), "{text}");
    assert!(!text.contains("Main heading"), "{text}");
    // Without the rule for it, the guard names why it would be refused.
    let text = web.err(&to_other).await;
    assert!(text.contains("which was not followed: localhost is a loopback address"), "{text}");
    // Private and metadata targets, in every spelling a Location can take.
    for (location, shown) in [
        ("http://10.0.0.1/admin", "10.0.0.1"),
        ("//169.254.169.254/latest/meta-data/", "169.254.169.254"),
        ("/\\192.168.1.1/", "192.168.1.1"),
        ("http://0x0a000001/", "10.0.0.1"),
        ("http://[fd00:ec2::254]/", "fd00:ec2::254"),
        ("http://127.0.0.1@10.0.0.1/", "user name or password"),
        ("file:///etc/passwd", "not file:"),
    ] {
        let text = web.err(&server.url(&format!("/to?{}", url_encode(location)))).await;
        assert!(text.contains("which was not followed") && text.contains(shown), "{location}: {text}");
    }
}

#[tokio::test]
async fn a_page_is_fetched_once_in_15_minutes() {
    let server = Server::start().await;
    let web = Web::new(&[LOCAL], None);
    let first = web.ok(&server.url("/counted")).await;
    let second = web.ok(&server.url("/counted")).await;
    assert!(first.ends_with("visit 1"), "{first}");
    assert_eq!(first, second);
    assert_eq!(server.counters.counted.load(Ordering::SeqCst), 1);
    // Another session has its own cache.
    let fresh = Web::new(&[LOCAL], None);
    assert!(fresh.ok(&server.url("/counted")).await.ends_with("visit 2"));
}

#[tokio::test]
async fn bad_urls_are_refused_before_anything_is_sent() {
    let web = Web::new(&[LOCAL], None);
    for (url, why) in [
        ("file:///etc/passwd", "not file:"),
        ("gopher://127.0.0.1/", "not gopher:"),
        ("data:text/html,<h1>x</h1>", "not data:"),
        ("http://user:pw@127.0.0.1/", "user name or password"),
        ("127.0.0.1/page", "not a valid URL"),
        ("http://[fe80::1%25lo]/", "not a valid URL"),
    ] {
        let text = web.err(url).await;
        assert!(text.contains(why), "{url}: {text}");
    }
}

fn searxng_at(server: &Server, path: &str) -> SearchBackend {
    SearchBackend::Searxng { base: url::Url::parse(&server.url(path)).unwrap() }
}

#[tokio::test]
async fn web_search_shows_searxng_results_filtered_by_domain() {
    let server = Server::start().await;
    let web = Web::new(&[], Some(searxng_at(&server, "/")));
    let all = web.call("web_search", json!({"query": "rust web"})).await.text_content();
    assert!(all.contains("1. Docs\n   https://docs.rs/reqwest\n   An HTTP client"), "{all}");
    assert!(all.contains("2. Sub\n   https://www.docs.rs/x\n   sub domain snippet"), "{all}");
    assert!(!all.contains("No URL"), "{all}");
    let allowed = web.call("web_search", json!({"query": "rust web", "allowed_domains": ["docs.rs"]})).await;
    let allowed = allowed.text_content();
    assert!(allowed.contains("docs.rs/reqwest") && allowed.contains("www.docs.rs"), "{allowed}");
    assert!(!allowed.contains("spam.example"), "{allowed}");
    let blocked = web.call("web_search", json!({"query": "rust web", "blocked_domains": ["spam.example"]})).await;
    let blocked = blocked.text_content();
    assert!(!blocked.contains("Spam") && !blocked.contains("Look-alike"), "{blocked}");
    assert!(blocked.contains("Docs"), "{blocked}");
    let none = web.call("web_search", json!({"query": "rust web", "allowed_domains": ["nowhere.example"]})).await;
    assert_eq!(none.text_content(), "No results for \"rust web\".");
}

#[tokio::test]
async fn malformed_search_answers_are_named() {
    let server = Server::start().await;
    for (path, why) in [("/bad", "is not JSON"), ("/wrong", "has no \"results\" list"), ("/missing", "404")] {
        let web = Web::new(&[], Some(searxng_at(&server, path)));
        let output = web.call("web_search", json!({"query": "x"})).await;
        assert!(output.is_error, "{path}");
        assert!(output.text_content().contains(why), "{path}: {}", output.text_content());
    }
}

#[tokio::test]
async fn brave_and_tavily_are_asked_in_their_own_shapes() {
    let server = Server::start().await;
    let brave_env = "TACKLE_TEST_BRAVE_KEY_WEB";
    let tavily_env = "TACKLE_TEST_TAVILY_KEY_WEB";
    let missing = Web::new(
        &[],
        Some(SearchBackend::Brave {
            endpoint: url::Url::parse(&server.url("/brave")).unwrap(),
            key_env: "TACKLE_TEST_UNSET_KEY".into(),
        }),
    );
    let text = missing.call("web_search", json!({"query": "rust"})).await.text_content();
    assert!(text.contains("TACKLE_TEST_UNSET_KEY is not set"), "{text}");
    // SAFETY: set once, before any thread reads them, and only read by this test.
    unsafe {
        std::env::set_var(brave_env, "brave-key");
        std::env::set_var(tavily_env, "tavily-key");
    }
    let brave = Web::new(
        &[],
        Some(SearchBackend::Brave {
            endpoint: url::Url::parse(&server.url("/brave")).unwrap(),
            key_env: brave_env.into(),
        }),
    );
    let text = brave.call("web_search", json!({"query": "rust"})).await.text_content();
    assert!(text.contains("1. Brave hit\n   https://brave.example/a\n   with bold"), "{text}");
    let tavily = Web::new(
        &[],
        Some(SearchBackend::Tavily {
            endpoint: url::Url::parse(&server.url("/tavily")).unwrap(),
            key_env: tavily_env.into(),
        }),
    );
    let output = tavily.call("web_search", json!({"query": "rust", "blocked_domains": ["spam.example"]})).await;
    let text = output.text_content();
    assert!(!output.is_error, "{text}");
    assert!(text.contains("1. Tavily hit") && !text.contains("Spam"), "{text}");
}

#[tokio::test]
async fn a_proxy_from_the_environment_is_used() {
    // A proxy on 127.0.0.1 that answers every request itself, naming the URL it was asked for.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy = listener.local_addr().unwrap().port();
    let app = Router::new().fallback(|uri: axum::http::Uri| async move {
        ([(header::CONTENT_TYPE, "text/plain")], format!("proxied {uri}"))
    });
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    // SAFETY: this test runs in its own process under nextest, and no other thread reads the
    // environment while it is changed.
    unsafe {
        for name in ["NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "http_proxy"] {
            std::env::remove_var(name);
        }
        std::env::set_var("HTTP_PROXY", format!("http://127.0.0.1:{proxy}"));
    }
    // Nothing listens on port 9 of 127.0.0.1: only the proxy can answer. The guard still
    // judges the target (its allow rule is needed), not the proxy.
    let web = Web::new(&[LOCAL], None);
    let text = web.ok("http://127.0.0.1:9/through").await;
    assert!(text.ends_with("proxied http://127.0.0.1:9/through"), "{text}");
    let guarded = Web::new(&[], None);
    assert!(guarded.err("http://127.0.0.1:9/through").await.contains("loopback"));
}
