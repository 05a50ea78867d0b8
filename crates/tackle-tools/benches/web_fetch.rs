//! `web_fetch`'s target (issue 28): a 1 MB HTML page from a loopback server to Markdown
//! ≤ 30 ms, through the executor as a model's call runs (guard, connection, body, conversion).
//! Every iteration asks for a new URL, so the cache never answers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::http::header;
use axum::routing::get;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tackle_core::{Executor, Registry, SessionState, ToolCall, ToolSession, ToolSessionConfig};
use tackle_policy::permission::rule::RuleBase;
use tackle_policy::permission::rules::{RuleBook, RuleKind, SessionRules};
use tackle_tools::web::WebFetch;
use tokio_util::sync::CancellationToken;

/// About 1 MB of article-like HTML: headings, paragraphs with links and emphasis, lists, a
/// table, code, and the navigation and scripts a real page carries.
fn page() -> String {
    let mut html = String::from(
        "<!doctype html><html><head><title>Bench page</title><script>var x = 1;</script><style>p{}</style></head>\
         <body><nav><a href='/'>Home</a> <a href='/docs'>Docs</a></nav><main>",
    );
    let mut section = 0;
    while html.len() < 1_000_000 {
        section += 1;
        html.push_str(&format!(
            "<h2>Section {section}</h2><p>Some <b>bold</b> and <i>italic</i> text with <a \
             href='https://example.org/{section}'>a link</a> and <code>inline code</code>, long enough to be a \
             paragraph a person would write about something.</p><ul><li>one</li><li>two <a href='#x'>x</a></li>\
             <li>three</li></ul><table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>\
             <pre><code>fn main() {{ println!(\"{section}\"); }}</code></pre>"
        ));
    }
    html.push_str("</main><footer>footer</footer></body></html>");
    html
}

fn bench_web_fetch(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    let html: &'static str = Box::leak(page().into_boxed_str());
    let port = rt.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let app = Router::new()
            .route("/page", get(move || async move { ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], html) }))
            .route("/small", get(|| async { ([(header::CONTENT_TYPE, "text/html")], "<main><p>small</p></main>") }));
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        port
    });
    let dir = tempfile::tempdir().unwrap();
    let mut registry = Registry::new();
    registry.register(&[], WebFetch::default);
    let selection = registry.select("all", "all").unwrap();
    let book = RuleBook::default();
    let base = RuleBase { workspace: dir.path().into(), rule_dir: dir.path().into(), home: None };
    book.add(RuleKind::Allow, "WebFetch(domain:127.0.0.1)", &base, "bench").unwrap();
    let state = SessionState::default();
    state.insert(SessionRules(Some(Arc::new(book))));
    let session =
        ToolSession::with_state(ToolSessionConfig::new(dir.path().to_owned()), registry.instantiate(&selection), state);
    let executor = Executor::default();
    let counter = AtomicUsize::new(0);
    let fetch = || async {
        let n = counter.fetch_add(1, Ordering::Relaxed);
        let url = format!("http://127.0.0.1:{port}/page?n={n}");
        let output = executor
            .run(&session, ToolCall::new("b", "web_fetch", json!({ "url": url })), &CancellationToken::new())
            .await;
        assert!(!output.is_error, "{}", output.text_content());
        output
    };
    let first = rt.block_on(fetch()).text_content();
    assert!(first.contains("## Section 1") && first.contains("[a link](https://example.org/1)"), "{}", &first[..500]);
    assert!(html.len() >= 1_000_000);
    c.bench_function("web_fetch_1mb_html_loopback", |b| b.to_async(&rt).iter(fetch));
    // Its parts: the conversion alone, and a 1 KB page (the fixed cost of a call: the guard,
    // a client, the connection).
    c.bench_function("html_to_markdown_1mb", |b| b.iter(|| tackle_tools::web::markdown::html_to_markdown(html)));
    c.bench_function("web_fetch_1kb_html_loopback", |b| {
        b.to_async(&rt).iter(|| async {
            let n = counter.fetch_add(1, Ordering::Relaxed);
            let url = format!("http://127.0.0.1:{port}/small?n={n}");
            executor
                .run(&session, ToolCall::new("b", "web_fetch", json!({ "url": url })), &CancellationToken::new())
                .await
        });
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench_web_fetch
}
criterion_main!(benches);
