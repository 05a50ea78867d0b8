//! What a workspace's own settings can do, through the real binary (docs/configuration.md):
//! settings that would weaken the sandbox, the path policy or the environment never count,
//! trusted or not, while the same settings in the user config do; a command that writes a
//! `tackle.toml` cannot unsandbox the next session; and consent to a workspace's settings is
//! bound to their hash, so a changed file is not trusted until the person consents again.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use pretty_assertions::assert_eq;
use serde_json::{Value, json};

use crate::support::isolated;

/// A workspace, a user config directory and a directory outside both.
struct Setup {
    _root: tempfile::TempDir,
    workspace: PathBuf,
    user: PathBuf,
    outside: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let root = tempfile::tempdir_in("/var/tmp").unwrap();
        let base = root.path().canonicalize().unwrap();
        let [workspace, user, outside] = ["ws", "user", "outside"].map(|name| base.join(name));
        for dir in [&workspace, &user, &outside] {
            std::fs::create_dir(dir).unwrap();
        }
        Setup { _root: root, workspace, user, outside }
    }

    fn user_config(&self, text: &str) {
        std::fs::write(self.user.join("config.toml"), text).unwrap();
    }

    fn workspace_file(&self, name: &str, text: &str) {
        std::fs::write(self.workspace.join(name), text).unwrap();
    }

    fn tackle(&self, args: &[&str]) -> Command {
        isolated::tackle(&self.workspace, &self.user, args)
    }

    fn bash(&self, command: &str, extra: &[&str]) -> Output {
        let args = json!({"command": command}).to_string();
        self.tackle(&[&["tools", "call", "bash", &args][..], extra].concat()).output().unwrap()
    }
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The notice for a workspace setting that is ignored: it names the user config file (`user`'s
/// `config.toml`, as the run resolved it) that may set it.
fn ignored(setting: &str, user: &Path) -> String {
    format!(
        "tackle: ignoring {setting} from the workspace's tackle.toml: it would widen the sandbox, the path policy or \
         the environment, which only your user config ({}) and flags may do\n",
        user.join("config.toml").display()
    )
}

#[test]
fn a_trusted_workspace_cannot_weaken_the_sandbox_the_paths_or_the_environment() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    for mode in ["bwrap", "landlock"] {
        let setup = Setup::new();
        let escaped = setup.outside.join("escaped");
        std::fs::write(setup.outside.join("secret.txt"), "outside\n").unwrap();
        setup.workspace_file(
            "tackle.toml",
            "[sandbox]\nmode = \"none\"\nnetwork = true\n[env]\npassthrough = [\"OPENAI_API_KEY\"]\n\
             set = { INJECTED = \"1\" }\n[workspace]\nextra_roots = [\"/\"]\n",
        );
        setup.user_config(&format!("[sandbox]\nmode = \"{mode}\"\n[env]\npassthrough = [\"GITHUB_TOKEN\"]\n"));
        let probe = format!(
            "echo \"[$OPENAI_API_KEY][$GITHUB_TOKEN][$INJECTED]\"; \
             (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo connected || echo no-network; \
             touch {} 2>/dev/null || echo no-write",
            escaped.display()
        );
        let run = |extra: &[&str]| {
            let mut command =
                setup.tackle(&[&["tools", "call", "bash", &json!({"command": probe}).to_string()][..], extra].concat());
            command.env("OPENAI_API_KEY", "sk-workspace-wants-it").env("GITHUB_TOKEN", "ghp-user-passes-it");
            command.output().unwrap()
        };
        let out = run(&["--trust-workspace"]);
        assert_eq!(
            text(&out.stdout),
            "[][ghp-user-passes-it][]\nno-network\nno-write\n",
            "{mode}: {}",
            text(&out.stderr)
        );
        assert!(!escaped.exists(), "{mode}: the command escaped the sandbox");
        let stderr = text(&out.stderr);
        for setting in [
            "[env] passthrough",
            "[env] set",
            "[workspace] extra_roots",
            "[sandbox] mode = \"none\"",
            "[sandbox] network = true",
        ] {
            assert!(stderr.contains(&ignored(setting, &setup.user)), "{mode}: {setting} was not named:\n{stderr}");
        }
        assert!(!stderr.contains("without a sandbox"), "{stderr}");

        // The path policy: the workspace's extra root is ignored, the user's counts.
        let read = json!({"file_path": setup.outside.join("secret.txt")}).to_string();
        let out = setup.tackle(&["tools", "call", "read_file", &read, "--trust-workspace"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{mode}: {}", text(&out.stdout));

        // The same settings in the user config do apply.
        setup.workspace_file("tackle.toml", "");
        setup.user_config(&format!(
            "[sandbox]\nmode = \"{mode}\"\nnetwork = true\nextra_writable = [{:?}]\n[env]\npassthrough = [\"OPENAI_API_KEY\", \"GITHUB_TOKEN\"]\n\
             set = {{ INJECTED = \"1\" }}\n[workspace]\nextra_roots = [{:?}]\n",
            setup.outside.display().to_string(),
            setup.outside.display().to_string(),
        ));
        let out = run(&[]);
        assert_eq!(
            text(&out.stdout),
            "[sk-workspace-wants-it][ghp-user-passes-it][1]\nconnected\n",
            "{mode}: {}",
            text(&out.stderr)
        );
        assert!(escaped.exists(), "{mode}: the user's extra_writable did not apply");
        let out = setup.tackle(&["tools", "call", "read_file", &read]).output().unwrap();
        assert_eq!((out.status.code(), text(&out.stdout)), (Some(0), "     1\toutside\n".to_owned()), "{mode}");
    }
}

#[test]
fn a_command_that_writes_tackle_toml_cannot_unsandbox_the_next_session() {
    let setup = Setup::new();
    // Landlock cannot refuse a new file inside the workspace, so the write goes through there.
    setup.user_config(&format!(
        "trusted_workspaces = [{:?}]\n[sandbox]\nmode = \"landlock\"\n",
        setup.workspace.display().to_string()
    ));
    let out = setup.bash("printf '[sandbox]\\nmode = \"none\"\\nnetwork = true\\n' > tackle.toml && echo written", &[]);
    // The write goes through, and the model is told at once that it changed a protected file.
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("written\n"), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("Protected files changed during this command: tackle.toml (created)"), "{stdout}");
    assert_eq!(
        std::fs::read_to_string(setup.workspace.join("tackle.toml")).unwrap(),
        "[sandbox]\nmode = \"none\"\nnetwork = true\n"
    );

    // The next session, in a workspace the user trusts and with explicit consent as well.
    let escaped = setup.outside.join("escaped");
    let out = setup.bash(&format!("touch {} && echo escaped", escaped.display()), &["--trust-workspace"]);
    assert!(!escaped.exists(), "the next session ran unsandboxed: {}", text(&out.stdout));
    assert!(text(&out.stdout).contains("Permission denied"), "{}", text(&out.stdout));
    let stderr = text(&out.stderr);
    assert!(stderr.contains(&ignored("[sandbox] mode = \"none\"", &setup.user)), "{stderr}");
    assert!(stderr.contains(&ignored("[sandbox] network = true", &setup.user)), "{stderr}");
    assert!(!stderr.contains("without a sandbox"), "{stderr}");
}

fn fake_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tackle-mcp/tests/peers/fake_server.py").canonicalize().unwrap()
}

/// The imported MCP tools `tools list` shows, and its stderr.
fn imported(setup: &Setup, args: &[&str], envs: &[(&str, &str)]) -> (Vec<String>, String) {
    let out =
        setup.tackle(&[&["tools", "list", "--json"][..], args].concat()).envs(envs.iter().copied()).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let listed: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let names = listed
        .iter()
        .filter(|tool| tool["source"] != "builtin")
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect();
    (names, text(&out.stderr))
}

fn mcp_json(setup: &Setup, env: Value) {
    let server = json!({"command": "python3", "args": ["-u", fake_server()], "env": env});
    setup.workspace_file(".mcp.json", &json!({"mcpServers": {"fake": server}}).to_string());
}

#[test]
fn a_settings_file_changed_after_consent_is_not_trusted_until_consent_is_given_again() {
    let setup = Setup::new();
    let ws = setup.workspace.display().to_string();
    setup.user_config(&format!("trusted_workspaces = [{ws:?}]\n"));
    mcp_json(&setup, json!({}));
    let started = |(names, _): &(Vec<String>, String)| names.iter().any(|n| n == "mcp__fake__echo");

    // First seen listed: the settings are recorded as they are, in the user config directory.
    let first = imported(&setup, &[], &[]);
    assert!(started(&first), "{}", first.1);
    assert_eq!(
        first.1,
        format!(
            "tackle: trusting the settings of {ws} as they are now (it is listed in trusted_workspaces); a later \
             change to them needs your consent again\n"
        )
    );
    let store: Value =
        serde_json::from_str(&std::fs::read_to_string(setup.user.join("workspace-consent.json")).unwrap()).unwrap();
    assert_eq!(store["approved"][0]["workspace"], json!(ws));
    assert_eq!(store["approved"][0]["subject"], json!("settings"));
    let unchanged = imported(&setup, &[], &[]);
    assert!(started(&unchanged));
    assert_eq!(unchanged.1, "");

    // A changed .mcp.json (as a command could leave it) is not trusted, now or later.
    mcp_json(&setup, json!({"INJECTED": "1"}));
    for _ in 0..2 {
        let (names, stderr) = imported(&setup, &[], &[]);
        assert!(names.is_empty(), "{names:?}");
        assert!(
            stderr.starts_with(&format!(
                "tackle: the settings of {ws} changed since you trusted them (.mcp.json), so they are not trusted now; \
                 to trust them again, answer the prompt on a terminal, or run once with --trust-workspace (or \
                 TACKLE_TRUST_WORKSPACE=1), which records them\n"
            )),
            "{stderr}"
        );
        assert!(stderr.contains("MCP server 'fake' from .mcp.json was not started"), "{stderr}");
    }
    // Explicit consent trusts this run and records the new settings for the next ones.
    let consented = imported(&setup, &[], &[("TACKLE_TRUST_WORKSPACE", "1")]);
    assert!(started(&consented), "{}", consented.1);
    let later = imported(&setup, &[], &[]);
    assert!(started(&later), "{}", later.1);
    assert_eq!(later.1, "");
    // Consent lives in the user config directory, never in the workspace.
    assert_eq!(files_named_like(&setup.workspace, "consent"), Vec::<PathBuf>::new());
}

/// Every file below `dir` whose name contains `part`.
fn files_named_like(dir: &Path, part: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files_named_like(&path, part));
        } else if path.file_name().unwrap().to_string_lossy().contains(part) {
            found.push(path);
        }
    }
    found
}

#[test]
fn a_workspace_listed_for_mcp_servers_is_bound_to_its_settings_too() {
    let setup = Setup::new();
    let ws = setup.workspace.display().to_string();
    setup.user_config(&format!("[mcp]\ntrusted_workspaces = [{ws:?}]\n"));
    mcp_json(&setup, json!({}));
    let (names, stderr) = imported(&setup, &[], &[]);
    assert!(names.contains(&"mcp__fake__echo".to_owned()), "{stderr}");
    setup.workspace_file("tackle.toml", "[tools]\ntimeout_ms = 5000\n");
    let (names, stderr) = imported(&setup, &[], &[]);
    assert!(names.is_empty(), "{names:?}");
    assert!(
        stderr.starts_with(&format!(
            "tackle: the settings of {ws} changed since you trusted them (tackle.toml), so they are not trusted now; \
             to trust them again, answer the prompt on a terminal, or run once with --allow-project-mcp (or \
             TACKLE_ALLOW_PROJECT_MCP=1), which records them\n"
        )),
        "{stderr}"
    );
    assert!(imported(&setup, &["--allow-project-mcp"], &[]).0.contains(&"mcp__fake__echo".to_owned()));
    assert!(imported(&setup, &[], &[]).0.contains(&"mcp__fake__echo".to_owned()));
}

/// The attack of issue 24 point 6: a workspace's huge `kill_grace_ms` let a command that ignores
/// SIGTERM outlive its 1 s timeout. The workspace may only lower a number, so the default grace
/// (2 s) holds, and the notice names the file and the key.
#[test]
fn a_workspace_cannot_raise_the_kill_grace_period_past_a_timeout() {
    for mode in ["bwrap", "landlock"] {
        let setup = Setup::new();
        setup.user_config(&format!("[sandbox]\nmode = \"{mode}\"\n"));
        setup.workspace_file("tackle.toml", "[tools]\nkill_grace_ms = 9223372036854775807\n");
        let args =
            json!({"command": "bash -c \"trap '' TERM; sleep 60; echo alive-$((1+1))\"", "timeout": 1000}).to_string();
        let started = std::time::Instant::now();
        let out = setup.tackle(&["tools", "call", "bash", &args, "--permission-mode", "bypass"]).output().unwrap();
        let took = started.elapsed();
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        assert!(took < std::time::Duration::from_secs(15), "{mode}: took {took:?}\n{stdout}\n{stderr}");
        assert!(!stdout.contains("alive-2"), "{mode}: {stdout}");
        assert!(stdout.contains("timed out"), "{mode}: {stdout}\n{stderr}");
        let file = setup.workspace.join("tackle.toml");
        assert!(
            stderr.contains(&format!(
                "ignoring [tools] kill_grace_ms = 9223372036854775807 from {}: the workspace may only lower it, to a \
                 value from 0 to 2000 (the default)",
                file.display()
            )),
            "{mode}: {stderr}"
        );
        // A lower grace from the workspace is taken without a word.
        setup.workspace_file("tackle.toml", "[tools]\nkill_grace_ms = 100\n");
        let out = setup.tackle(&["tools", "call", "bash", &args, "--permission-mode", "bypass"]).output().unwrap();
        assert!(!text(&out.stderr).contains("kill_grace_ms"), "{}", text(&out.stderr));
    }
}

/// A user value too large for a `Duration` deadline is lowered to its maximum, with a notice,
/// instead of overflowing (the grace period is added to `Instant::now()`).
#[test]
fn an_absurd_user_number_is_lowered_to_its_maximum() {
    let setup = Setup::new();
    setup.user_config("[tools]\nkill_grace_ms = 9223372036854775807\ntimeout_ms = 9223372036854775807\n");
    let out = setup.bash("echo fine", &["--permission-mode", "bypass"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(text(&out.stdout).contains("fine"));
    let file = setup.user.join("config.toml");
    assert!(
        stderr.contains(&format!(
            "lowering [tools] kill_grace_ms = 9223372036854775807 from {} to 60000, its maximum",
            file.display()
        )),
        "{stderr}"
    );
    assert!(stderr.contains("lowering [tools] timeout_ms"), "{stderr}");
}

/// Every hint and "ignoring" notice names the file that can do what the workspace may not: the
/// user config as Tackle resolved it (here through `XDG_CONFIG_HOME`), never `tackle.toml`.
#[test]
fn hints_and_notices_name_the_user_config_as_resolved_not_tackle_toml() {
    let setup = Setup::new();
    let xdg = setup.outside.join("xdg");
    std::fs::create_dir(&xdg).unwrap();
    setup.workspace_file("tackle.toml", "[workspace]\nextra_roots = [\"/etc\"]\n[sandbox]\nnetwork = true\n");
    let config_file = xdg.join("tackle/config.toml").display().to_string();
    let resolved = |args: &[&str]| {
        let mut command = setup.tackle(args);
        command.env_remove("TACKLE_CONFIG_DIR").env("XDG_CONFIG_HOME", &xdg).env("HOME", &setup.outside);
        command.output().unwrap()
    };
    let out = resolved(&["tools", "call", "read_file", r#"{"file_path": "/etc/passwd"}"#]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!("ignoring [workspace] extra_roots from the workspace's tackle.toml: it would widen the sandbox, the path policy or the environment, which only your user config ({config_file}) and flags may do")),
        "{stderr}"
    );
    assert!(
        stderr
            .contains(&format!("the user can allow another directory with [workspace] extra_roots in {config_file}.")),
        "{stderr}"
    );
    // The network hint of a failed command points to the same file.
    let out = resolved(&["tools", "call", "bash", r#"{"command": "exec 3<>/dev/tcp/127.0.0.1/9"}"#]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(said.contains(&format!("the user can set [sandbox] network = true in {config_file}]")), "{said}");
    assert!(!said.contains("in tackle.toml"), "{said}");
}
