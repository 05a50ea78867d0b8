//! `load_skill` (docs/planning.md#skills): the instructions of one skill, found afresh at
//! each call (a skill written during the run is found), with the skill's other files listed
//! so the model can read the ones the instructions name. `Skill(name)` permission rules
//! match the skill's name (the tool's alias `Skill` and its specifier parameter `name`).

use schemars::JsonSchema;
use serde::Deserialize;
use tackle_core::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec};
use tackle_policy::config::user_dirs::UserDirs;

use super::skills::{Skills, load_body, other_files};
use crate::fs::blocking;

/// The wire name.
pub const NAME: &str = "load_skill";
/// The most other files listed.
const MAX_LISTED_FILES: usize = 50;

/// `load_skill`'s arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadSkillInput {
    /// The skill's name, as the system prompt lists it.
    pub name: String,
}

/// The `load_skill` tool.
#[derive(Debug, Default, Clone, Copy)]
pub struct LoadSkill;

impl Tool for LoadSkill {
    type Input = LoadSkillInput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            NAME,
            "Load a skill: the instructions for a particular kind of task, listed under Skills in the system \
             prompt. Call it before starting such a task and follow the instructions; files they mention are \
             read with read_file relative to the skill's directory.",
        )
        .title("Load a skill")
        .alias("Skill")
        .param_alias("skill_name", "name")
        .param_alias("skill", "name")
        .specifier_param("name")
        .read_only()
        .concurrency_safe()
        .idempotent()
    }

    async fn call(&self, input: LoadSkillInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        blocking(ctx, move |ctx| {
            let workspace = ctx.workspace();
            let hidden = (*ctx.state().get::<tackle_policy::permission::rules::ReadRules>()).clone();
            let skills = Skills::discover(workspace, &ctx.state().get::<UserDirs>().skills, &hidden);
            let Some(skill) = skills.get(&input.name) else {
                let names: Vec<&str> = skills.skills.iter().map(|s| s.name.as_str()).collect();
                let available = if names.is_empty() { "(none)".to_owned() } else { names.join(", ") };
                return Err(ToolError::NotFound(format!(
                    "Unknown skill: {}. Available skills: {available}",
                    input.name
                )));
            };
            let body = load_body(skill, workspace, &hidden)
                .map_err(|why| ToolError::Failed(format!("Skill {}: {why}", skill.name)))?;
            let dir = skill.dir.strip_prefix(workspace).unwrap_or(&skill.dir).display().to_string();
            let mut text = format!("Skill \"{}\" (directory {dir}):\n\n{}", skill.name, body.trim_end());
            let files = other_files(skill, workspace, MAX_LISTED_FILES);
            if !files.is_empty() {
                text.push_str(&format!("\n\nOther files of this skill (read them relative to {dir}):"));
                for file in &files {
                    text.push_str(&format!("\n- {file}"));
                }
            }
            Ok(ToolOutput::text(text))
        })
        .await
    }
}
