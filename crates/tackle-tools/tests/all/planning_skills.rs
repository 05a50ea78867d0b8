//! Skills: discovery order (`.tackle/skills` before `.claude/skills` before the user's),
//! skipped folders with the reason (no frontmatter, bad YAML, a bad name, too large, a link
//! out of the workspace), and `load_skill`'s answer with the skill's other files.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::Ws;
use pretty_assertions::assert_eq;
use serde_json::json;
use tackle_tools::Skills;

fn skill(ws: &Ws, dir: &str, name: &str, description: &str, body: &str) {
    ws.write(&format!("{dir}/SKILL.md"), format!("---\nname: {name}\ndescription: {description}\n---\n\n{body}"));
}

#[tokio::test]
async fn skills_are_found_in_order_and_bad_ones_are_skipped_with_their_folder_named() {
    let ws = Ws::new();
    skill(&ws, ".claude/skills/release", "release", "Cut a release (claude copy)", "Claude's way.");
    skill(&ws, ".tackle/skills/release", "release", "Cut a release", "Tackle's way.");
    skill(&ws, ".claude/skills/pdf", "pdf", "Fill PDF forms", "Use pdftk.");
    ws.write(".claude/skills/plain/SKILL.md", "# No frontmatter\n");
    ws.write(".claude/skills/yaml/SKILL.md", "---\nname: [unclosed\ndescription: x\n---\n");
    skill(&ws, ".claude/skills/upper", "Upper_Case", "x", "");
    ws.write(
        ".claude/skills/huge/SKILL.md",
        format!("---\nname: huge\ndescription: x\n---\n{}", "x".repeat(256 * 1024)),
    );
    let outside = ws.outside();
    std::fs::create_dir_all(outside.join("evil")).unwrap();
    std::fs::write(outside.join("evil/SKILL.md"), "---\nname: evil\ndescription: x\n---\nsecret").unwrap();
    std::os::unix::fs::symlink(outside.join("evil"), ws.path(".claude/skills/evil")).unwrap();
    let user = ws.outside().join("user");
    std::fs::create_dir_all(user.join("skills/notes")).unwrap();
    std::fs::write(
        user.join("skills/notes/SKILL.md"),
        "---\nname: notes\ndescription: Keep notes\n---\nWrite them down.",
    )
    .unwrap();

    let found = Skills::discover(&ws.root, &[user.join("skills")], &Default::default());
    let names: Vec<(&str, &str)> = found.skills.iter().map(|s| (s.name.as_str(), s.description.as_str())).collect();
    assert_eq!(names, [("release", "Cut a release"), ("pdf", "Fill PDF forms"), ("notes", "Keep notes")]);
    let warnings = found.warnings.join("\n");
    for (folder, why) in [
        ("evil", "a link that leads outside"),
        ("huge", "larger than 256 KiB"),
        ("plain", "has no frontmatter"),
        ("upper", "the name 'Upper_Case' is not 1 to 64 lowercase letters"),
        ("yaml", "bad YAML frontmatter"),
    ] {
        assert!(
            found.warnings.iter().any(|w| w.contains(&format!(".claude/skills/{folder} skipped: ")) && w.contains(why)),
            "{folder}: {warnings}"
        );
    }
    assert_eq!(found.warnings.len(), 5, "{warnings}");
    assert_eq!(
        found.prompt_section().lines().skip(2).collect::<Vec<_>>(),
        ["- release: Cut a release", "- pdf: Fill PDF forms", "- notes: Keep notes"]
    );
}

#[tokio::test]
async fn load_skill_returns_the_body_and_lists_the_other_files() {
    let ws = Ws::new();
    skill(&ws, ".claude/skills/pdf", "pdf", "Fill PDF forms", "Read forms.md, then run scripts/fill.py.\n");
    ws.write(".claude/skills/pdf/forms.md", "fields");
    ws.write(".claude/skills/pdf/scripts/fill.py", "print()");
    let text = ws.ok("load_skill", json!({"name": "pdf"})).await;
    assert_eq!(
        text,
        "Skill \"pdf\" (directory .claude/skills/pdf):\n\nRead forms.md, then run scripts/fill.py.\n\n\
         Other files of this skill (read them relative to .claude/skills/pdf):\n- forms.md\n- scripts/fill.py"
    );
    // Claude Code's name and parameter aliases.
    assert_eq!(ws.ok("Skill", json!({"skill": "pdf"})).await, text);
    assert_eq!(ws.err("load_skill", json!({"name": "nope"})).await, "Unknown skill: nope. Available skills: pdf");
}

#[cfg(unix)]
#[tokio::test]
async fn a_linked_folder_in_a_skill_is_named_never_listed_through() {
    let ws = Ws::new();
    skill(&ws, ".claude/skills/pdf", "pdf", "Fill PDF forms", "Body.\n");
    let outside = ws.outside();
    std::fs::write(outside.join("id_rsa"), "secret").unwrap();
    std::os::unix::fs::symlink(&outside, ws.path(".claude/skills/pdf/keys")).unwrap();
    let text = ws.ok("load_skill", json!({"name": "pdf"})).await;
    assert!(text.ends_with("Other files of this skill (read them relative to .claude/skills/pdf):\n- keys"), "{text}");
    assert!(!text.contains("id_rsa"), "{text}");
}
