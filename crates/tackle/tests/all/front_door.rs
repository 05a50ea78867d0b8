//! What the front door gained so that the command line needs nothing below it (issue 26,
//! point 1): killing a session's processes from outside it, and the skills and agent
//! definitions a template offers, with the session's `Read(...)` deny rules applied.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;
use tackle::{Config, PermissionMode, RuleFlags, SessionBuilder};

use crate::session::processes_of;

async fn wait_until_gone(id: &str) -> Vec<u32> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !processes_of(id).is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    processes_of(id)
}

#[tokio::test]
async fn kill_processes_ends_the_shell_and_its_jobs_while_the_session_lives() {
    let dir = tempfile::tempdir().unwrap();
    let session = SessionBuilder::new(dir.path())
        .config(Config::default())
        .tools("bash,background_run")
        .permission_mode(PermissionMode::Bypass)
        .build()
        .await
        .unwrap();
    let id = session.session().id().to_owned();
    // Nothing ran yet: the switch has nothing to kill, and the session is unharmed.
    session.kill_processes();
    let shell = session.call("bash", json!({"command": "echo started"})).await;
    assert!(!shell.is_error, "{}", shell.text_content());
    let job = session.call("background_run", json!({"command": "exec sleep 300"})).await;
    assert!(!job.is_error, "{}", job.text_content());
    assert!(processes_of(&id).len() >= 2, "the shell and the job run: {:?}", processes_of(&id));
    // A switch kept apart from the session (as a Ctrl-C handler keeps it) kills them all.
    let switch = session.kill_switch();
    std::thread::spawn(move || switch.kill_processes()).join().unwrap();
    assert_eq!(wait_until_gone(&id).await, Vec::<u32>::new(), "processes outlived kill_processes");
    session.close().await;
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[tokio::test]
async fn a_template_offers_the_skills_and_agents_its_read_rules_do_not_hide() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".tackle/skills/open/SKILL.md", "---\nname: open\ndescription: Shown\n---\nBody.\n");
    write(root, ".tackle/skills/secret/SKILL.md", "---\nname: secret\ndescription: Hidden\n---\nBody.\n");
    write(root, ".tackle/agents/reviewer.md", "---\nname: reviewer\ndescription: Reviews\n---\nReview.\n");
    write(root, ".tackle/agents/private.md", "---\nname: private\ndescription: Hidden\n---\nNo.\n");
    write(root, ".tackle/agents/broken.md", "---\nname: [\n---\nBroken.\n");
    let rules = RuleFlags {
        deny: vec!["Read(./.tackle/skills/secret/**)".into(), "Read(./.tackle/agents/private.md)".into()],
        ..RuleFlags::default()
    };
    let template = SessionBuilder::new(root)
        .config(Config::default())
        .tools("load_skill,subagent")
        .rules(rules)
        .build_template()
        .await
        .unwrap();
    let workspace = template.workspace().to_path_buf();
    let skills = template.skills();
    let mine: Vec<&str> =
        skills.skills.iter().filter(|s| s.dir.starts_with(&workspace)).map(|s| s.name.as_str()).collect();
    assert_eq!(mine, ["open"], "a skill the Read rules hide is not offered: {skills:?}");
    let agents = template.agent_definitions();
    let names: Vec<&str> = agents.agents.iter().map(|a| a.name.as_str()).collect();
    assert!(names.contains(&"reviewer"), "{names:?}");
    assert!(!names.contains(&"private"), "a definition the Read rules hide is not offered: {names:?}");
    assert!(agents.warnings.iter().any(|w| w.contains("broken.md")), "{:?}", agents.warnings);
    template.close().await;
}
