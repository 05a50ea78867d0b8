//! `web_fetch` and `web_search` through the real binary (docs/reference/tools.md#web_fetch):
//! the address guard and the `--allow 'WebFetch(domain:…)'` rule that lifts it, the page as
//! Markdown, `web_search` absent and explained in `tools list` until the user config names a
//! backend, a workspace's `[web]` ignored, and both tools in every schema dialect.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Output;

use serde_json::{Value, json};

use crate::support::isolated;

const PAGE: &str = "<html><head><title>Local page</title></head><body><nav>menu</nav><main><h2>Hello</h2>\
                    <p>A <a href=\"https://example.org/\">link</a>.</p></main></body></html>";

/// A one-thread HTTP server on 127.0.0.1: `/search` answers as SearXNG, anything else is PAGE.
fn serve() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                match stream.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buf[..n]),
                }
            }
            let head = String::from_utf8_lossy(&request);
            let (kind, body) = if head.starts_with("GET /search?") && head.contains("format=json") {
                let results = json!({"results": [
                    {"title": "Rust", "url": "https://www.rust-lang.org/", "content": "A language"},
                    {"title": "Blocked", "url": "https://blocked.example/", "content": "no"}
                ]});
                ("application/json", results.to_string())
            } else {
                ("text/html; charset=utf-8", PAGE.to_owned())
            };
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    port
}

struct Setup {
    _root: tempfile::TempDir,
    workspace: PathBuf,
    user: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let root = tempfile::tempdir().unwrap();
        let base = root.path().canonicalize().unwrap();
        let (workspace, user) = (base.join("ws"), base.join("user"));
        std::fs::create_dir(&workspace).unwrap();
        std::fs::create_dir(&user).unwrap();
        Setup { _root: root, workspace, user }
    }

    fn run(&self, args: &[&str]) -> Output {
        isolated::tackle(&self.workspace, &self.user, args).output().unwrap()
    }

    /// `run` with consent to the workspace's settings.
    fn run_trusted(&self, args: &[&str]) -> Output {
        isolated::tackle(&self.workspace, &self.user, args).env("TACKLE_TRUST_WORKSPACE", "1").output().unwrap()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn web_fetch_reaches_loopback_only_with_a_rule_naming_it() {
    let port = serve();
    let setup = Setup::new();
    let url = format!("http://127.0.0.1:{port}/page");
    let args = json!({"url": url, "prompt": "greeting?"}).to_string();
    let refused = setup.run(&["tools", "call", "web_fetch", &args]);
    assert!(!refused.status.success());
    let out = text(&refused.stdout) + &text(&refused.stderr);
    assert!(out.contains("127.0.0.1 is a loopback address") && out.contains("WebFetch(domain:127.0.0.1)"), "{out}");
    assert!(!out.contains("Hello"), "{out}");

    let allowed = setup.run(&["tools", "call", "WebFetch", &args, "--allow", "WebFetch(domain:127.0.0.1)"]);
    let out = text(&allowed.stdout);
    assert!(allowed.status.success(), "{out}{}", text(&allowed.stderr));
    assert!(out.contains("## Prompt: greeting?"), "{out}");
    assert!(out.contains("# Local page") && out.contains("## Hello"), "{out}");
    assert!(out.contains("[link](https://example.org/)") && !out.contains("menu"), "{out}");

    // A deny rule for the host wins over the allow rule, before anything is sent.
    let denied = setup.run(&[
        "tools",
        "call",
        "web_fetch",
        &args,
        "--allow",
        "WebFetch(domain:127.0.0.1)",
        "--deny",
        "WebFetch(domain:127.0.0.1)",
    ]);
    assert!(!denied.status.success());
    let out = text(&denied.stdout) + &text(&denied.stderr);
    assert!(
        out.contains("Permission to use web_fetch with 127.0.0.1 has been denied by rule WebFetch(domain:127.0.0.1)"),
        "{out}"
    );
}

#[test]
fn web_search_is_absent_and_explained_until_the_user_config_names_a_backend() {
    let port = serve();
    let setup = Setup::new();
    let listed = text(&setup.run(&["tools", "list"]).stdout);
    assert!(listed.lines().any(|l| l.starts_with("web_fetch ")), "{listed}");
    assert!(!listed.lines().any(|l| l.starts_with("web_search ")), "{listed}");
    let unavailable = listed.split("\nUnavailable:\n").nth(1).unwrap_or_else(|| panic!("{listed}"));
    assert!(unavailable.contains("web_search") && unavailable.contains("[web] search"), "{listed}");

    // A workspace's [web] is never taken, trusted or not.
    let web = format!("[web]\nsearch = \"searxng\"\nsearxng_url = \"http://127.0.0.1:{port}\"\n");
    std::fs::write(setup.workspace.join("tackle.toml"), &web).unwrap();
    let listed = setup.run_trusted(&["tools", "list"]);
    let (stdout, stderr) = (text(&listed.stdout), text(&listed.stderr));
    assert!(!stdout.lines().any(|l| l.starts_with("web_search ")), "{stdout}");
    assert!(stderr.contains("tackle: ignoring web from the workspace's tackle.toml"), "{stderr}");
    let called = setup.run_trusted(&["tools", "call", "web_search", r#"{"query": "rust"}"#]);
    assert!(!called.status.success(), "{}", text(&called.stdout));

    // The user's config names it: listed, and it answers from the backend, filtered.
    std::fs::remove_file(setup.workspace.join("tackle.toml")).unwrap();
    std::fs::write(setup.user.join("config.toml"), &web).unwrap();
    let listed = text(&setup.run(&["tools", "list"]).stdout);
    assert!(listed.lines().any(|l| l.starts_with("web_search ")), "{listed}");
    assert!(!listed.contains("Unavailable:"), "{listed}");
    let args = json!({"query": "rust", "blocked_domains": ["blocked.example"]}).to_string();
    let called = setup.run(&["tools", "call", "WebSearch", &args]);
    let out = text(&called.stdout);
    assert!(called.status.success(), "{out}{}", text(&called.stderr));
    assert!(out.contains("1. Rust\n   https://www.rust-lang.org/\n   A language"), "{out}");
    assert!(!out.contains("Blocked"), "{out}");
}

#[test]
fn the_web_tools_have_a_schema_in_every_dialect() {
    let setup = Setup::new();
    std::fs::write(setup.user.join("config.toml"), "[web]\nsearch = \"brave\"\napi_key_env = \"BRAVE_API_KEY\"\n")
        .unwrap();
    for dialect in ["openai", "openai-strict", "anthropic", "gemini", "mcp"] {
        let out = setup.run(&["tools", "schema", "--dialect", dialect, "--tools", "web_fetch,web_search"]);
        assert!(out.status.success(), "{dialect}: {}", text(&out.stderr));
        let schema: Value = serde_json::from_slice(&out.stdout).unwrap();
        let shown = schema.to_string();
        for needle in
            ["web_fetch", "web_search", "\"url\"", "\"prompt\"", "\"query\"", "allowed_domains", "blocked_domains"]
        {
            assert!(shown.contains(needle), "{dialect} lacks {needle}: {shown}");
        }
    }
}
