//! Issue 25, point 11: with `[compat] claude = true` in the user config, the person's
//! `~/.claude/skills` and `~/.claude/agents` (`HOME` decides `~`) are read as Claude Code reads
//! them, by `tools list`, the system prompt, `load_skill` and `subagent`; without it, they are
//! not. A link in them that leads out of the directory is not followed (issue 24, point 2),
//! with a notice.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::json;
use tackle_testkit::{Expect, FakeLlm, Reply, Script, Turn};

use super::{command, stderr};

/// A temp `HOME` with Claude Code's user skill `x` and agent `y`, links out of both
/// directories, an empty user config directory and an empty workspace.
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path();
        let claude = base.join("home/.claude");
        std::fs::create_dir_all(claude.join("skills/x")).unwrap();
        std::fs::create_dir_all(claude.join("agents")).unwrap();
        std::fs::write(
            claude.join("skills/x/SKILL.md"),
            "---\nname: x\ndescription: The x skill\n---\nDo x carefully.\n",
        )
        .unwrap();
        std::fs::write(claude.join("agents/y.md"), "---\nname: y\ndescription: The y agent\n---\nYou are y.\n")
            .unwrap();
        // Outside the person's directories: a skill folder, a skill file and an agent file.
        std::fs::create_dir_all(base.join("outside/leak")).unwrap();
        std::fs::write(
            base.join("outside/leak/SKILL.md"),
            "---\nname: leak\ndescription: OUTSIDE-SKILL-SECRET\n---\nOUTSIDE-BODY\n",
        )
        .unwrap();
        std::fs::write(base.join("outside/agent.md"), "---\nname: leaky\ndescription: OUTSIDE-AGENT-SECRET\n---\nx\n")
            .unwrap();
        std::os::unix::fs::symlink(base.join("outside/leak"), claude.join("skills/leak")).unwrap();
        std::fs::create_dir_all(claude.join("skills/filelink")).unwrap();
        std::os::unix::fs::symlink(base.join("outside/leak/SKILL.md"), claude.join("skills/filelink/SKILL.md"))
            .unwrap();
        std::os::unix::fs::symlink(base.join("outside/agent.md"), claude.join("agents/leaky.md")).unwrap();
        std::fs::create_dir_all(base.join("config")).unwrap();
        std::fs::create_dir_all(base.join("ws")).unwrap();
        Home { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn compat(&self, on: bool) {
        std::fs::write(self.path("config/config.toml"), format!("[compat]\nclaude = {on}\n")).unwrap();
    }

    /// `tackle ARGS` in the workspace with this `HOME` and user config directory.
    async fn tackle(&self, args: &[&str]) -> Output {
        let workspace = self.path("ws");
        let home = self.path("home");
        let config = self.path("config");
        let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
        tokio::task::spawn_blocking(move || tackle_in(&workspace, &home, &config, &args)).await.unwrap()
    }
}

fn tackle_in(workspace: &Path, home: &Path, config: &Path, args: &[String]) -> Output {
    command(workspace)
        .env("HOME", home)
        .env("TACKLE_CONFIG_DIR", config)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_user_skills_and_agents_are_read_only_with_compat_and_never_through_a_link_out() {
    let home = Home::new();

    for off in [None, Some(false)] {
        if let Some(on) = off {
            home.compat(on);
        }
        let out = home.tackle(&["tools", "list"]).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let listed = String::from_utf8_lossy(&out.stdout);
        assert!(!listed.contains("The x skill") && !listed.contains("The y agent"), "{listed}");
        let out = home.tackle(&["tools", "call", "load_skill", r#"{"name": "x"}"#]).await;
        assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    }

    home.compat(true);
    let out = home.tackle(&["tools", "list"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains("\nSkills (load_skill NAME):\n  x  The x skill\n"), "{listed}");
    assert!(listed.contains("\nAgents (subagent_type):\n  y  The y agent\n"), "{listed}");
    assert!(!listed.contains("OUTSIDE"), "{listed}");
    let notices = stderr(&out);
    for link in ["leak/SKILL.md", "filelink/SKILL.md", "leaky.md"] {
        assert!(notices.contains(&format!("{link} is a link that leads outside")), "{link}: {notices}");
    }

    let out = home.tackle(&["tools", "call", "load_skill", r#"{"name": "x"}"#]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Do x carefully."));
    let out = home.tackle(&["tools", "call", "load_skill", r#"{"name": "leak"}"#]).await;
    assert_eq!(out.status.code(), Some(1));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("OUTSIDE"));

    // A scripted run: the system prompt lists the skill, load_skill returns it, and a subagent
    // of type y gets the definition's body as its system prompt.
    let server = FakeLlm::start(Script::new([
        Turn::reply(Reply::text("Loading.").call("c_skill", "load_skill", json!({"name": "x"})))
            .expect(Expect { system_contains: Some("- x: The x skill".into()), ..Expect::default() }),
        Turn::reply(Reply::text("Delegating.").call(
            "c_sub",
            "subagent",
            json!({"prompt": "do y", "subagent_type": "y", "description": "y's part"}),
        ))
        .expect(Expect::result("c_skill", "Do x carefully.")),
        Turn::reply(Reply::text("y did it."))
            .expect(Expect { system_contains: Some("You are y.".into()), ..Expect::default() }),
        Turn::reply(Reply::text("Done.").call("c_end", "task_done", json!({})))
            .expect(Expect::result("c_sub", "y did it.")),
    ]))
    .await;
    let base_url = server.openai_base_url();
    let out = home.tackle(&["run", "--model", "openai/fake", "--base-url", &base_url, "--yes", "do x"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    server.assert_clean();
    let sent: String = server.requests().iter().map(|request| request.body.to_string()).collect();
    assert!(!sent.contains("OUTSIDE"), "a file outside ~/.claude reached the model");
}
