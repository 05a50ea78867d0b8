//! Secrets stay secret in every sandbox mode, through the real binary (docs/configuration.md,
//! "Secrets"): no Tackle process keeps a stripped variable in its environment block, so a
//! command finds none in its own environment, in `/proc/$PPID/environ` or in any
//! `/proc/*/environ` it can read; `[env] passthrough` of the user config still hands one
//! over on purpose; MCP servers get one only when their definition names it; and `tackle run`
//! still authenticates with the key.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tackle_testkit::{FakeLlm, Protocol, Reply, Script, Turn};

use crate::support::isolated;

/// The secrets every test sets; each test's values carry a nonce of their own, so a test that
/// reads every `/proc/*/environ` cannot mistake another test's processes for a leak.
const SECRET_NAMES: [&str; 4] = ["OPENAI_API_KEY", "GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "MY_DB_PASSWORD"];

/// A command that reads every environment it can reach: its own, its parent's, and every
/// `/proc/*/environ` it may open (NULs made newlines), into the workspace file `out` (whole,
/// where a tool's output would be cut), then prints `probed`.
fn probe(out: &str) -> String {
    format!(
        "{{ env; tr '\\0' '\\n' < /proc/$PPID/environ; for f in /proc/[0-9]*/environ; do tr '\\0' '\\n' < $f; done; }} \
         > {out} 2>/dev/null; echo probed"
    )
}

struct Setup {
    workspace: tempfile::TempDir,
    user: tempfile::TempDir,
    secrets: Vec<(&'static str, String)>,
}

impl Setup {
    fn new(user_config: &str) -> Setup {
        let user = tempfile::tempdir().unwrap();
        let nonce = user.path().file_name().unwrap().to_string_lossy().trim_start_matches(".tmp").to_owned();
        let secrets = SECRET_NAMES.iter().map(|name| (*name, format!("{}-{nonce}", name.to_lowercase()))).collect();
        let setup = Setup { workspace: tempfile::tempdir().unwrap(), user, secrets };
        std::fs::write(setup.user.path().join("config.toml"), user_config).unwrap();
        setup
    }

    /// The secrets whose value appears in `output`.
    fn leaked(&self, output: &str) -> Vec<&'static str> {
        self.secrets.iter().filter(|(_, value)| output.contains(value.as_str())).map(|(name, _)| *name).collect()
    }

    fn secret(&self, name: &str) -> &str {
        &self.secrets.iter().find(|(known, _)| *known == name).unwrap().1
    }

    fn tackle(&self, args: &[&str]) -> Command {
        let mut command = isolated::tackle(self.workspace.path(), self.user.path(), args);
        command.envs(self.secrets.iter().map(|(name, value)| (name, value)));
        command
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

impl Setup {
    /// The workspace file a probe wrote, after checking the probe ran.
    fn probed(&self, name: &str) -> String {
        let seen = std::fs::read_to_string(self.workspace.path().join(name)).unwrap();
        assert!(seen.contains("PATH=") && seen.contains("TACKLE_SESSION_ID="), "the probe did not run: {seen}");
        seen
    }
}

#[test]
fn commands_find_no_secret_in_any_environment_under_bwrap_and_landlock() {
    for mode in ["bwrap", "landlock"] {
        let setup = Setup::new(&format!("[sandbox]\nmode = \"{mode}\"\n"));
        let out = setup
            .tackle(&["tools", "call", "bash", &json!({"command": probe("call.txt")}).to_string()])
            .output()
            .unwrap();
        assert_eq!((out.status.code(), text(&out.stdout)), (Some(0), "probed\n".to_owned()), "{}", text(&out.stderr));
        let seen = setup.probed("call.txt");
        assert_eq!(setup.leaked(&seen), Vec::<&str>::new(), "{mode}: {seen}");
        // Under Landlock (where the attack worked) a command of a root Tackle read the
        // parent's block, which holds the fd variable of the re-executed process, not the
        // secrets; now that such a command keeps no capability, it cannot read a root
        // process's block at all (docs/shell.md, the Landlock mode).
        // SAFETY: geteuid has no preconditions.
        if mode == "landlock" && unsafe { libc::geteuid() } == 0 {
            assert!(!seen.contains("TACKLE_SECRETS_FD="), "{seen}");
        }

        // A background job of a batch session.
        let batch = [
            json!({"name": "background_run", "args": {"command": probe("job.txt")}}),
            json!({"name": "job_output", "args": {"job_id": "job-1", "block": true}}),
        ]
        .map(|line| line.to_string())
        .join("\n");
        let mut child = setup
            .tackle(&["tools", "batch"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), batch.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{mode}: {}", text(&out.stderr));
        let last: Value = serde_json::from_str(text(&out.stdout).lines().last().unwrap()).unwrap();
        assert!(last["output"].as_str().unwrap().ends_with("probed"), "{last}");
        let seen = setup.probed("job.txt");
        assert_eq!(setup.leaked(&seen), Vec::<&str>::new(), "{mode}: {seen}");
    }
}

#[test]
fn passthrough_in_the_user_config_hands_one_secret_over() {
    let setup = Setup::new("[sandbox]\nmode = \"landlock\"\n[env]\npassthrough = [\"GITHUB_TOKEN\"]\n");
    let out = setup.tackle(&["tools", "call", "bash", &json!({"command": "env"}).to_string()]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(setup.leaked(&text(&out.stdout)), ["GITHUB_TOKEN"]);
    // A name in the user's [env] remove is kept out of Tackle's own block too.
    let setup = Setup::new("[sandbox]\nmode = \"landlock\"\n[env]\nremove = [\"DEPLOY_URL\"]\n");
    let command = json!({"command": format!("{}; echo [$DEPLOY_URL]", probe("seen.txt"))}).to_string();
    let url = format!("https://user:{}@host", setup.secret("MY_DB_PASSWORD"));
    let out = setup.tackle(&["tools", "call", "bash", &command]).env("DEPLOY_URL", &url).output().unwrap();
    assert_eq!(text(&out.stdout), "probed\n[]\n", "{}", text(&out.stderr));
    let seen = setup.probed("seen.txt");
    assert!(!seen.contains(&url), "{seen}");
}

#[test]
fn a_parent_that_passes_no_secrets_fd_is_a_clear_error_not_a_loop() {
    let setup = Setup::new("");
    let out = setup.tackle(&["tools", "list"]).env("TACKLE_SECRETS_FD", "0").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).starts_with(
            "tackle: TACKLE_SECRETS_FD does not name the secrets a Tackle process passed on (file descriptor 0 is "
        ),
        "{}",
        text(&out.stderr)
    );
    let out = setup.tackle(&["tools", "list"]).env("TACKLE_SECRETS_FD", "x").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

fn fake_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tackle-mcp/tests/peers/fake_server.py").canonicalize().unwrap()
}

#[test]
fn mcp_servers_get_a_secret_only_when_their_definition_names_it() {
    let setup = Setup::new("");
    let seen = setup.user.path().join("server-env.txt");
    let launch = format!("env > {}; exec python3 -u {}", seen.display(), fake_server().display());
    let server = json!({"command": "sh", "args": ["-c", launch], "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}});
    std::fs::write(setup.user.path().join("config.toml"), "").unwrap();
    std::fs::write(setup.workspace.path().join(".mcp.json"), json!({"mcpServers": {"fake": server}}).to_string())
        .unwrap();
    let out = setup.tackle(&["tools", "list", "--allow-project-mcp"]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("mcp__fake__echo"), "{}", text(&out.stderr));
    let environment = std::fs::read_to_string(&seen).unwrap();
    assert!(environment.contains("PATH="), "{environment}");
    assert_eq!(setup.leaked(&environment), ["GITHUB_TOKEN"]);
}

/// `tackle run` against the fake server, with bash and task_done, approving every call.
fn run_command(setup: &Setup, server: &FakeLlm) -> Command {
    let mut command = setup.tackle(&[
        "run",
        "probe the environment",
        "--model",
        "openai/fake",
        "--base-url",
        &server.base_url(Protocol::OpenAi),
        "--tools",
        "bash,task_done",
        "--permission-mode",
        "bypass",
        "--json",
    ]);
    command.env_remove("ANTHROPIC_API_KEY").env_remove("TACKLE_MODEL");
    command
}

#[tokio::test(flavor = "multi_thread")]
async fn tackle_run_still_authenticates_with_the_key_it_keeps_from_commands() {
    let script = Script::new([
        Turn::reply(Reply::text("Looking.").call("c1", "bash", json!({"command": probe("run.txt")}))),
        Turn::reply(Reply::text("Done.").call("c2", "task_done", json!({}))),
    ]);
    let server = FakeLlm::start(script).await;
    let setup = Setup::new("[sandbox]\nmode = \"landlock\"\n");
    let mut command = run_command(&setup, &server);
    let out: Output = tokio::task::spawn_blocking(move || command.output().unwrap()).await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    server.assert_clean();
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {}", setup.secret("OPENAI_API_KEY")).as_str())
        );
    }
    // The command ran, found no secret, and its answer went back to the model.
    let seen = setup.probed("run.txt");
    assert_eq!(setup.leaked(&seen), Vec::<&str>::new(), "{seen}");
    assert!(requests[1].body.to_string().contains("probed"));
}
