//! OAuth sign-in to remote MCP servers through the command line (docs/mcp.md#remote-servers-and-sign-in):
//! `tackle mcp login` / `logout` against the official Python SDK's OAuth support
//! (crates/tackle-cli/tests/peers/oauth_server.py), the token file's mode, a refresh after the
//! access token expires, the error that names `tackle mcp login` when no one can sign in,
//! consent before a workspace server's sign-in, a token that never goes to another server, an
//! authorization URL that is neither https nor loopback never opened, and
//! the token directory hidden from sandboxed commands (bubblewrap) but not under Landlock.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use crate::peers;
use crate::support::isolated;

/// The Python SDK's OAuth-protected server, running until dropped.
struct PyServer {
    child: Child,
    url: String,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl PyServer {
    fn start(python: &Path, access_ttl_s: u32) -> PyServer {
        PyServer::start_with(python, access_ttl_s, &[])
    }

    /// With a pre-registered client: `[client_id, client_secret, callback_port]`.
    fn start_with(python: &Path, access_ttl_s: u32, client: &[&str]) -> PyServer {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("server.log");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/oauth_server.py");
        let mut child = Command::new(python)
            .arg(script)
            .arg(access_ttl_s.to_string())
            .args(client)
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let url = line.trim().to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        PyServer { child, url, log, _dir: dir }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap()
    }
}

impl Drop for PyServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A workspace and a user config dir of its own.
struct Setup {
    workspace: tempfile::TempDir,
    user: tempfile::TempDir,
}

impl Setup {
    fn new(user_config: &str) -> Setup {
        let setup = Setup { workspace: tempfile::tempdir().unwrap(), user: tempfile::tempdir().unwrap() };
        std::fs::write(setup.user.path().join("config.toml"), user_config).unwrap();
        setup
    }

    fn run(&self, args: &[&str], browser: Option<&str>) -> Output {
        let mut command = isolated::tackle(self.workspace.path(), self.user.path(), args);
        match browser {
            Some(browser) => command.env("BROWSER", browser),
            None => command.env_remove("BROWSER"),
        };
        command.env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY").output().unwrap()
    }

    fn token_files(&self) -> Vec<PathBuf> {
        match std::fs::read_dir(self.user.path().join("mcp-oauth")) {
            Ok(entries) => entries.map(|entry| entry.unwrap().path()).collect(),
            Err(_) => Vec::new(),
        }
    }
}

const CURL: &str = "curl -sL -o /dev/null";

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn login_call_refresh_and_logout_with_the_python_sdk() {
    let python = require!(peers::python(), "the Python MCP SDK (.venv-mcp)");
    let server = PyServer::start(&python, 2);
    let setup = Setup::new(&format!("[mcp.servers.py]\nurl = \"{}\"\n", server.url));

    let out = setup.run(&["mcp", "login", "py"], Some(CURL));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("tackle: to sign in to MCP server py, open http://127.0.0.1:"), "{stderr}");
    assert!(stderr.contains("code_challenge_method=S256") && stderr.contains("resource=http%3A%2F%2F127.0.0.1"));
    let files = setup.token_files();
    assert_eq!(files.len(), 1, "one file per server URL");
    assert_eq!(std::fs::metadata(&files[0]).unwrap().permissions().mode() & 0o777, 0o600);
    let dir = setup.user.path().join("mcp-oauth");
    assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700);
    let stored = std::fs::read_to_string(&files[0]).unwrap();
    assert!(stored.contains(&server.url) && stored.contains("\"access_token\": \"at-"), "{stored}");
    assert!(!std::fs::read_dir(setup.workspace.path()).unwrap().any(|_| true), "nothing lands in the workspace");

    // Another process uses the stored token, with no browser and no terminal.
    let out = setup.run(&["tools", "call", "mcp__py__whoami", "{}"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "signed in");
    // After the access token expires, the refresh token gets a new one, without a sign-in.
    std::thread::sleep(Duration::from_millis(3000));
    let out = setup.run(&["tools", "call", "mcp__py__whoami", "{}"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "signed in");
    let log = server.log();
    assert_eq!(log.matches("refreshed").count(), 1, "{log}");
    assert_eq!(log.matches("authorized resource=").count(), 1, "one sign-in only: {log}");
    assert!(log.contains(&format!("authorized resource={}", server.url)), "RFC 8707 resource: {log}");
    assert_eq!(std::fs::metadata(&files[0]).unwrap().permissions().mode() & 0o777, 0o600, "the refresh kept the mode");

    let out = setup.run(&["mcp", "logout", "py"], None);
    assert_eq!(text(&out.stderr), "tackle: Signed out of MCP server py.\n");
    assert!(setup.token_files().is_empty());
    let out = setup.run(&["mcp", "logout", "py"], None);
    assert_eq!(text(&out.stderr), "tackle: MCP server py had no stored sign-in.\n");

    // Without a browser or a terminal, the session cannot sign in and says how to.
    let out = setup.run(&["tools", "call", "mcp__py__whoami", "{}"], None);
    assert_ne!(out.status.code(), Some(0));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("MCP server py needs sign-in (it answered 401): run `tackle mcp login py`"), "{stderr}");
}

#[test]
fn a_pre_registered_confidential_client_signs_in_and_refreshes_with_its_secret() {
    let python = require!(peers::python(), "the Python MCP SDK (.venv-mcp)");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port().to_string();
    let server = PyServer::start_with(&python, 2, &["tackle-pre", "pre-s3cret", &port]);
    let setup = Setup::new(&format!(
        "[mcp.servers.py]\nurl = \"{}\"\n[mcp.servers.py.oauth]\nclient_id = \"tackle-pre\"\n\
         client_secret = \"${{PY_SECRET}}\"\ncallback_port = {port}\n",
        server.url
    ));
    let run = |args: &[&str], browser: Option<&str>| {
        let mut command = isolated::tackle(setup.workspace.path(), setup.user.path(), args);
        command.env("PY_SECRET", "pre-s3cret").env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY");
        match browser {
            Some(browser) => command.env("BROWSER", browser),
            None => command.env_remove("BROWSER"),
        };
        command.output().unwrap()
    };
    let out = run(&["mcp", "login", "py"], Some(CURL));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains(&format!("redirect_uri=http%3A%2F%2F127.0.0.1%3A{port}%2Fcallback")));
    assert!(!server.log().contains("registered"), "no dynamic registration: {}", server.log());
    std::thread::sleep(Duration::from_millis(3000));
    let out = run(&["tools", "call", "mcp__py__whoami", "{}"], None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(server.log().contains("refreshed for tackle-pre"), "{}", server.log());
    let stored = std::fs::read_to_string(&setup.token_files()[0]).unwrap();
    assert!(!stored.contains("pre-s3cret"), "the secret stays in the config, not the token file");
}

#[test]
fn a_session_signs_in_by_itself_when_a_browser_is_there() {
    let python = require!(peers::python(), "the Python MCP SDK (.venv-mcp)");
    let server = PyServer::start(&python, 3600);
    let setup = Setup::new(&format!("[mcp.servers.py]\nurl = \"{}\"\n", server.url));
    let out = setup.run(&["tools", "call", "mcp__py__whoami", "{}"], Some(CURL));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "signed in");
    assert_eq!(setup.token_files().len(), 1);
    // The next session reuses the tokens: still one authorization.
    let out = setup.run(&["tools", "call", "mcp__py__whoami", "{}"], Some(CURL));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(server.log().matches("authorized resource=").count(), 1, "{}", server.log());
}

#[test]
fn a_workspace_server_needs_consent_before_any_sign_in() {
    let python = require!(peers::python(), "the Python MCP SDK (.venv-mcp)");
    let server = PyServer::start(&python, 3600);
    let setup = Setup::new("");
    let mcp_json = serde_json::json!({"mcpServers": {"py": {"type": "http", "url": server.url}}});
    std::fs::write(setup.workspace.path().join(".mcp.json"), mcp_json.to_string()).unwrap();
    let marker = setup.user.path().join("browser-ran");
    let browser = format!("touch {}", marker.display());
    let out = setup.run(&["mcp", "login", "py"], Some(&browser));
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("need your consent"), "{}", text(&out.stderr));
    std::thread::sleep(Duration::from_millis(200));
    assert!(!marker.exists(), "no browser was started");
    assert!(!server.log().contains("registered"), "the server was not asked anything: {}", server.log());
    // A session does not sign in to it either.
    let out = setup.run(&["tools", "call", "mcp__py__whoami", "{}"], Some(&browser));
    assert_ne!(out.status.code(), Some(0));
    assert!(!marker.exists() && setup.token_files().is_empty());
    // With consent it does.
    let out = setup.run(&["mcp", "login", "py", "--allow-project-mcp"], Some(CURL));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(setup.token_files().len(), 1);
}

/// A loopback server that answers 401 (without a challenge, as 2025-03-26 servers might) to
/// everything and records each request's head.
fn recording_server() -> (String, std::sync::mpsc::Receiver<String>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            let _ = tx.send(String::from_utf8_lossy(&head).to_lowercase());
            let _ = stream.write_all(b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        }
    });
    (url, rx)
}

#[test]
fn a_token_goes_only_to_the_server_it_was_issued_for() {
    let python = require!(peers::python(), "the Python MCP SDK (.venv-mcp)");
    let server = PyServer::start(&python, 3600);
    let setup = Setup::new(&format!("[mcp.servers.py]\nurl = \"{}\"\n", server.url));
    let out = setup.run(&["mcp", "login", "py"], Some(CURL));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The workspace redefines `py` to point elsewhere (consented): its requests carry no token.
    let (other, heads) = recording_server();
    let mcp_json = serde_json::json!({"mcpServers": {"py": {"type": "http", "url": other}}});
    std::fs::write(setup.workspace.path().join(".mcp.json"), mcp_json.to_string()).unwrap();
    let out = setup.run(&["tools", "call", "mcp__py__whoami", "{}", "--allow-project-mcp"], None);
    assert_ne!(out.status.code(), Some(0));
    let heads: Vec<String> = heads.try_iter().collect();
    assert!(!heads.is_empty());
    assert!(heads.iter().all(|head| !head.contains("authorization:")), "{heads:?}");
    assert!(text(&out.stderr).contains("run `tackle mcp login py`"), "{}", text(&out.stderr));
}

#[test]
fn the_token_directory_is_hidden_from_commands_under_bubblewrap_not_landlock() {
    // The config directory is reached through a link, outside /tmp (which bubblewrap replaces
    // anyway): the resolved path is what must be hidden.
    let outside = tempfile::tempdir_in("/var/tmp").unwrap();
    let real = outside.path().join("real-config");
    let tokens = real.join("mcp-oauth");
    std::fs::create_dir_all(&tokens).unwrap();
    std::fs::write(tokens.join("t.json"), "SECRET-TOKEN").unwrap();
    let link = outside.path().join("config-link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let read = serde_json::json!({"command": format!(
        "cat {}/t.json {}/mcp-oauth/t.json 2>&1; true", tokens.display(), link.display()
    )})
    .to_string();
    let run = |mode: &str| {
        std::fs::write(real.join("config.toml"), format!("[sandbox]\nmode = \"{mode}\"\n")).unwrap();
        let out = isolated::tackle(workspace.path(), &link, &["tools", "call", "bash", &read]).output().unwrap();
        (text(&out.stdout), text(&out.stderr))
    };
    let (stdout, stderr) = run("bwrap");
    if stderr.contains("is not available here") {
        assert!(std::env::var_os("TACKLE_REQUIRE_PEERS").is_none(), "bubblewrap is required: {stderr}");
        eprintln!("SKIPPED: bubblewrap is not usable here: {stderr}");
        return;
    }
    assert!(!stdout.contains("SECRET-TOKEN"), "bubblewrap hides the token directory: {stdout}");
    assert!(stdout.contains("No such file"), "{stdout}");
    // A workspace inside the config dir stays usable: then only the token directory is hidden.
    let inner = real.join("ws");
    std::fs::create_dir_all(&inner).unwrap();
    std::fs::write(inner.join("mine.txt"), "MINE").unwrap();
    let both =
        serde_json::json!({"command": format!("cat mine.txt {}/t.json 2>&1; true", tokens.display())}).to_string();
    let out = isolated::tackle(&inner, &link, &["tools", "call", "bash", &both]).output().unwrap();
    let inside = text(&out.stdout);
    assert!(inside.contains("MINE") && !inside.contains("SECRET-TOKEN"), "{inside}\n{}", text(&out.stderr));
    // Landlock cannot hide a path (docs/reference/safety.md says so): the file stays readable.
    let (stdout, stderr) = run("landlock");
    if stderr.contains("is not available here") {
        return;
    }
    assert!(stdout.contains("SECRET-TOKEN"), "{stdout}\n{stderr}");
}

/// A loopback MCP server whose authorization server sends the person to `authorize_at`:
/// protected-resource metadata, authorization-server metadata and registration, enough for
/// Tackle to build the authorization URL.
fn server_authorizing_at(authorize_at: &'static str) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let url = format!("{base}/mcp");
    let (base_in, url_in) = (base.clone(), url.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            let head = String::from_utf8_lossy(&head).to_string();
            let length: usize = head
                .lines()
                .find_map(|line| {
                    line.to_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse().unwrap_or(0))
                })
                .unwrap_or(0);
            let mut body = vec![0u8; length];
            let _ = stream.read_exact(&mut body);
            let target = head.split(' ').nth(1).unwrap_or("").to_owned();
            let json = |value: serde_json::Value| (200, value.to_string(), String::new());
            let (status, body, extra) = match target.as_str() {
                "/mcp" => (
                    401,
                    String::new(),
                    format!(
                        "www-authenticate: Bearer resource_metadata=\"{base_in}/.well-known/oauth-protected-resource/mcp\"\r\n"
                    ),
                ),
                "/.well-known/oauth-protected-resource/mcp" => {
                    json(serde_json::json!({"resource": url_in, "authorization_servers": [base_in]}))
                }
                "/.well-known/oauth-authorization-server" => json(serde_json::json!({
                    "issuer": base_in, "authorization_endpoint": authorize_at,
                    "token_endpoint": format!("{base_in}/token"), "registration_endpoint": format!("{base_in}/register"),
                    "response_types_supported": ["code"], "code_challenge_methods_supported": ["S256"],
                    "token_endpoint_auth_methods_supported": ["none"]
                })),
                "/register" => (
                    201,
                    serde_json::json!({"client_id": "c1", "redirect_uris": ["http://127.0.0.1/callback"]}).to_string(),
                    String::new(),
                ),
                _ => (404, String::new(), String::new()),
            };
            let reply = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(reply.as_bytes());
        }
    });
    url
}

#[test]
fn an_authorization_url_that_is_not_https_or_loopback_is_never_opened() {
    for hostile in ["http://auth.example.com/authorize", "file:///etc/passwd", "javascript:alert(1)"] {
        let url = server_authorizing_at(hostile);
        let setup = Setup::new(&format!("[mcp.servers.s]\nurl = \"{url}\"\n"));
        let marker = setup.user.path().join("browser-ran");
        let out = setup.run(&["mcp", "login", "s"], Some(&format!("touch {}", marker.display())));
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{hostile}: {stderr}");
        assert!(stderr.contains("neither https: nor http: to a loopback address"), "{hostile}: {stderr}");
        std::thread::sleep(Duration::from_millis(100));
        assert!(!marker.exists(), "{hostile}: the browser was started");
        assert!(setup.token_files().is_empty());
    }
    // The same server with an https authorization endpoint does reach the browser.
    let url = server_authorizing_at("https://auth.example.com/authorize");
    let setup = Setup::new(&format!("[mcp.servers.s]\nurl = \"{url}\"\n"));
    let marker = setup.user.path().join("browser-ran");
    let mut child = isolated::tackle(setup.workspace.path(), setup.user.path(), &["mcp", "login", "s"])
        .env("BROWSER", format!("touch {}", marker.display()))
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while !marker.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(marker.exists(), "an https authorization URL is opened");
}
