//! `tackle mcp add`, `list`, `get` and `remove` driving the real binary: both scopes round
//! trip (the user config keeps its comments, `.mcp.json` its other servers), a server added to
//! the project is the person's own consent and a changed one is not, a linked `.mcp.json` is
//! refused, a server that answers 401 "needs login", and bad input is refused before anything
//! is written.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Output;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::isolated;

fn fake_script() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tackle-mcp/tests/peers/fake_server.py")
        .canonicalize()
        .unwrap()
        .display()
        .to_string()
}

struct Setup {
    workspace: tempfile::TempDir,
    user: tempfile::TempDir,
}

impl Setup {
    fn new() -> Setup {
        Setup { workspace: tempfile::tempdir().unwrap(), user: tempfile::tempdir().unwrap() }
    }

    fn ws(&self) -> PathBuf {
        self.workspace.path().canonicalize().unwrap()
    }

    fn config_path(&self) -> PathBuf {
        self.user.path().join("config.toml")
    }

    fn run_as(&self, user: &Path, args: &[&str]) -> Output {
        isolated::tackle(self.workspace.path(), user, args).output().unwrap()
    }

    fn run(&self, args: &[&str]) -> Output {
        self.run_as(self.user.path(), args)
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    fn listed_as(&self, user: &Path) -> Vec<Value> {
        let out = self.run_as(user, &["mcp", "list", "--json"]);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice(&out.stdout).unwrap()
    }

    fn listed(&self) -> Vec<Value> {
        self.listed_as(self.user.path())
    }
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn the_user_scope_round_trips_and_keeps_the_config_as_written() {
    let setup = Setup::new();
    let before = "# my settings\n[tools]\n# a comment\n\n[mcp]\ndefer_threshold = 30 # inline\n";
    std::fs::write(setup.config_path(), before).unwrap();
    let script = fake_script();
    setup.ok(&["mcp", "add", "fake", "--env", "GREETING=a b=c", "--", "python3", "-u", &script]);
    let written = std::fs::read_to_string(setup.config_path()).unwrap();
    assert!(written.starts_with(before), "{written}");
    let listed = setup.listed();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(
        (&listed[0]["name"], &listed[0]["scope"], &listed[0]["transport"], &listed[0]["status"], &listed[0]["tools"]),
        (&json!("fake"), &json!("user"), &json!("stdio"), &json!("connected"), &json!(4))
    );
    assert_eq!(listed[0]["definition"]["env"], json!({"GREETING": "a b=c"}));
    let text = setup.ok(&["mcp", "list"]);
    assert_eq!(text, format!("fake: python3 -u {script} (user, stdio) - connected · 4 tools\n"));
    let got = setup.ok(&["mcp", "get", "fake"]);
    assert!(got.starts_with("fake\n  scope: user\n  transport: stdio\n"), "{got}");
    assert!(got.contains("  env: GREETING=a b=c\n  status: connected · 4 tools"), "{got}");
    // The same name again is refused, and the file is not touched.
    let again = setup.run(&["mcp", "add", "fake", "--", "true"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(stderr(&again).contains("already defined"), "{}", stderr(&again));
    assert_eq!(std::fs::read_to_string(setup.config_path()).unwrap(), written);
    setup.ok(&["mcp", "remove", "fake"]);
    assert_eq!(std::fs::read_to_string(setup.config_path()).unwrap(), before);
    let missing = setup.run(&["mcp", "get", "fake"]);
    assert_eq!(missing.status.code(), Some(1));
    assert_eq!(setup.listed(), Vec::<Value>::new());
}

#[test]
fn the_project_scope_round_trips_and_counts_as_the_adders_consent_only() {
    let setup = Setup::new();
    let ws = setup.ws();
    let before = json!({"note": "kept", "mcpServers": {"other": {"command": "their-server", "args": ["x"]}}});
    std::fs::write(ws.join(".mcp.json"), serde_json::to_string_pretty(&before).unwrap()).unwrap();
    let script = fake_script();
    setup.ok(&["mcp", "add", "--scope", "project", "fake", "--", "python3", "-u", &script]);
    let file: Value = serde_json::from_slice(&std::fs::read(ws.join(".mcp.json")).unwrap()).unwrap();
    assert_eq!(file["note"], "kept");
    assert_eq!(file["mcpServers"]["other"], before["mcpServers"]["other"]);
    assert_eq!(file["mcpServers"]["fake"], json!({"command": "python3", "args": ["-u", script]}));
    // Nothing was written to the user config.
    assert!(!setup.config_path().exists());
    let status = |listed: &[Value], name: &str| {
        listed.iter().find(|s| s["name"] == name).map(|s| s["status"].as_str().unwrap().to_owned())
    };
    let listed = setup.listed();
    assert_eq!(status(&listed, "fake").as_deref(), Some("connected"), "{listed:?}");
    assert_eq!(listed.iter().find(|s| s["name"] == "fake").unwrap()["scope"], "project");
    // The other server was not added by this person: listed, never started.
    assert_eq!(status(&listed, "other").as_deref(), Some("not_approved"));
    // Another person (another user config) has not consented to either.
    let stranger = tempfile::tempdir().unwrap();
    let theirs = setup.listed_as(stranger.path());
    assert_eq!(status(&theirs, "fake").as_deref(), Some("not_approved"));
    // The definition changed by hand (or by a pull) needs consent again.
    let mut changed = file.clone();
    changed["mcpServers"]["fake"]["args"] = json!(["-u", script, "--extra"]);
    std::fs::write(ws.join(".mcp.json"), changed.to_string()).unwrap();
    assert_eq!(status(&setup.listed(), "fake").as_deref(), Some("not_approved"));
    std::fs::write(ws.join(".mcp.json"), serde_json::to_vec_pretty(&file).unwrap()).unwrap();
    // The same name in both scopes: remove needs --scope.
    setup.ok(&["mcp", "add", "fake", "--", "true"]);
    let both = setup.run(&["mcp", "remove", "fake"]);
    assert_eq!(both.status.code(), Some(2), "{}", stderr(&both));
    assert!(stderr(&both).contains("--scope"), "{}", stderr(&both));
    setup.ok(&["mcp", "remove", "fake", "--scope", "user"]);
    setup.ok(&["mcp", "remove", "fake"]);
    let after: Value = serde_json::from_slice(&std::fs::read(ws.join(".mcp.json")).unwrap()).unwrap();
    assert_eq!(after, before);
    let gone = setup.run(&["mcp", "remove", "fake", "--scope", "project"]);
    assert_eq!(gone.status.code(), Some(1));
    assert!(stderr(&gone).contains("no MCP server named 'fake'"), "{}", stderr(&gone));
}

#[test]
fn a_linked_mcp_json_is_refused_and_its_target_untouched() {
    let setup = Setup::new();
    let ws = setup.ws();
    let outside = tempfile::tempdir().unwrap();
    for target in [outside.path().join("secret.json"), outside.path().join("absent.json")] {
        if target.ends_with("secret.json") {
            std::fs::write(&target, "{}").unwrap();
        }
        let _ = std::fs::remove_file(ws.join(".mcp.json"));
        std::os::unix::fs::symlink(&target, ws.join(".mcp.json")).unwrap();
        for args in [
            &["mcp", "add", "--scope", "project", "x", "--", "true"][..],
            &["mcp", "remove", "--scope", "project", "x"],
        ] {
            let out = setup.run(args);
            assert_eq!(out.status.code(), Some(1), "{args:?}");
            assert!(stderr(&out).contains(".mcp.json is a symlink"), "{}", stderr(&out));
        }
        assert!(std::fs::symlink_metadata(ws.join(".mcp.json")).unwrap().file_type().is_symlink());
        if target.ends_with("secret.json") {
            assert_eq!(std::fs::read_to_string(&target).unwrap(), "{}");
        } else {
            assert!(!target.exists());
        }
    }
}

#[test]
fn a_server_answering_401_needs_login_and_a_dead_one_failed() {
    let setup = Setup::new();
    // A server that asks every request for a bearer token.
    let script = r#"
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"')
        self.send_header("Content-Length", "0")
        self.end_headers()
    do_GET = do_POST
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
"#;
    let mut child = std::process::Command::new("python3")
        .args(["-c", script])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut line).unwrap();
    let url = format!("http://127.0.0.1:{}/mcp", line.trim());
    setup.ok(&["mcp", "add", "remote", "--url", &url, "--header", "X-Team: blue"]);
    // A port nothing listens on.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead_url = format!("http://127.0.0.1:{}/mcp", dead.local_addr().unwrap().port());
    drop(dead);
    setup.ok(&["mcp", "add", "dead", "--url", &dead_url]);
    let listed = setup.listed();
    let _ = child.kill();
    let _ = child.wait();
    let by_name = |name: &str| listed.iter().find(|s| s["name"] == name).unwrap().clone();
    assert_eq!(by_name("remote")["status"], "needs_login", "{listed:?}");
    assert_eq!(by_name("remote")["definition"]["headers"], json!({"X-Team": "blue"}));
    assert_eq!(by_name("dead")["status"], "failed");
    assert!(by_name("dead")["reason"].as_str().unwrap().contains("connection refused"), "{listed:?}");
}

#[test]
fn bad_input_is_refused_before_anything_is_written() {
    let setup = Setup::new();
    let cases: &[&[&str]] = &[
        &["mcp", "add", "x"],
        &["mcp", "add", "x", "--url", "http://127.0.0.1:1/mcp", "--", "cmd"],
        &["mcp", "add", "x", "--url", "file:///etc/passwd"],
        &["mcp", "add", "x", "--url", "http://"],
        &["mcp", "add", "x", "--url", "http://h/mcp", "--env", "K=V"],
        &["mcp", "add", "x", "--header", "K: V", "--", "cmd"],
        &["mcp", "add", "x", "--url", "http://h/mcp", "--header", "no-colon"],
        &["mcp", "add", "x", "--url", "http://h/mcp", "--header", "A: 1", "--header", "A: 2"],
        &["mcp", "add", "x", "--env", "=V", "--", "cmd"],
        &["mcp", "add", "a.b", "--", "cmd"],
        &["mcp", "add", "../x", "--", "cmd"],
        &["mcp", "add", "a\u{1b}b", "--", "cmd"],
        &["mcp", "add", "x", "--scope", "local", "--", "cmd"],
        &["mcp", "add", "--transport", "sse", "x", "http://h/sse"],
        &["mcp", "add", "--transport", "http", "x", "http://h/mcp", "extra"],
        &["mcp", "add", "--transport", "http", "x"],
        &["mcp", "add", "--transport", "stdio", "x", "--url", "http://h/mcp"],
    ];
    for args in cases {
        let out = setup.run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
    assert!(!setup.config_path().exists());
    assert!(!setup.ws().join(".mcp.json").exists());
    // Claude Code's spellings: `--transport http NAME URL`, and a command without `--` (its
    // own flags stay its own).
    setup.ok(&["mcp", "add", "--transport", "http", "-H", "X-A: 1", "web", "https://example.com/mcp"]);
    setup.ok(&["mcp", "add", "git", "uvx", "mcp-server-git", "--repository", "."]);
    assert_eq!(
        std::fs::read_to_string(setup.config_path()).unwrap(),
        "[mcp.servers.web]\ntype = \"http\"\nurl = \"https://example.com/mcp\"\n\n[mcp.servers.web.headers]\nX-A = \"1\"\n\n\
         [mcp.servers.git]\ncommand = \"uvx\"\nargs = [\"mcp-server-git\", \"--repository\", \".\"]\n"
    );
}

#[test]
fn a_hostile_mcp_json_cannot_draw_on_the_terminal_through_list_or_get() {
    let setup = Setup::new();
    let evil = "evil\u{1b}[2J\nfake: ok (user, stdio) - connected";
    let file = json!({"mcpServers": {evil: {"command": "true\u{1b}]0;title\u{7}", "env": {"K\u{1b}": "v\r"}}}});
    std::fs::write(setup.ws().join(".mcp.json"), file.to_string()).unwrap();
    let listed = setup.ok(&["mcp", "list"]);
    assert!(!listed.contains('\u{1b}') && !listed.contains('\u{7}'), "{listed:?}");
    assert_eq!(listed.lines().count(), 1, "{listed:?}");
    assert!(listed.contains("not approved"), "{listed}");
    let got = setup.ok(&["mcp", "get", evil]);
    assert!(!got.contains('\u{1b}') && !got.contains('\r') && !got.contains('\u{7}'), "{got:?}");
    assert!(got.starts_with("evil\\u{1b}[2J\\nfake"), "{got}");
}
