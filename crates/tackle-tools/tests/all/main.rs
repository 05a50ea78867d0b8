//! The one integration-test binary of `tackle-tools`: each module was once its own
//! `tests/NAME.rs` binary; one binary links once (issue 26, point 7).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod shell_common;

mod apply_patch;
mod bash;
mod cc_file_tools;
mod deep_input;
mod editor;
mod file_tool_specs;
mod gptme_tools;
mod jobs;
mod json_edit;
mod notebooks;
mod patch_journal;
mod planning_skills;
mod planning_tasks;
mod planning_todos;
mod planning_tool_search;
mod read_media;
mod read_races;
mod schemas;
mod search;
mod shell_escapes;
mod str_replace_property;
mod strict_calls;
mod web;
