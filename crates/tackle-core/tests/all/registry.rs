//! Toolsets, the allowlist grammar and name resolution.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use schemars::JsonSchema;
use serde::Deserialize;
use tackle_core::registry::AllowlistError;
use tackle_core::{Registry, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

#[derive(Debug, Deserialize, JsonSchema)]
struct Empty {}

struct Named(ToolSpec);

impl Tool for Named {
    type Input = Empty;

    fn spec(&self) -> ToolSpec {
        self.0.clone()
    }

    async fn call(&self, _input: Empty, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(self.0.name.clone()))
    }
}

fn registry() -> Registry {
    let mut registry = Registry::new();
    // The toolsets are their owners' to declare (the built-ins', and `mcp` for imports).
    registry.declare_toolsets(&["default", "trae", "bare", "codex", "mcp"]);
    let add = |registry: &mut Registry, toolsets: &[&str], spec: ToolSpec| {
        registry.register(toolsets, move || Named(spec.clone()));
    };
    add(&mut registry, &["default", "bare"], ToolSpec::new("bash", "shell").alias("Bash").destructive());
    add(&mut registry, &["default", "bare", "codex"], ToolSpec::new("read_file", "read").alias("Read").read_only());
    add(&mut registry, &["default"], ToolSpec::new("grep", "search").alias("Grep").read_only());
    add(&mut registry, &["trae"], ToolSpec::new("str_replace_based_edit_tool", "edit").destructive());
    add(&mut registry, &[], ToolSpec::new("json_edit_tool", "json"));
    add(&mut registry, &["default"], ToolSpec::new("ckg_like", "needs a grammar").unavailable("no grammar"));
    registry.register_dyn(&["default"], tackle_core::ToolSource::Mcp("git".into()), {
        let spec = ToolSpec::new("mcp__git__git_status", "status").read_only();
        std::sync::Arc::new(move || {
            std::sync::Arc::new(tackle_core::TypedTool::new(Named(spec.clone())))
                as std::sync::Arc<dyn tackle_core::DynTool>
        })
    });
    registry
}

fn names(list: &str) -> Vec<String> {
    registry().select(list, "default").unwrap().names
}

#[test]
fn toolsets_select_their_members_in_registry_order() {
    assert_eq!(names("default"), ["bash", "read_file", "grep", "mcp__git__git_status"]);
    assert_eq!(names("trae"), ["str_replace_based_edit_tool"]);
    assert_eq!(names("codex,trae"), ["read_file", "str_replace_based_edit_tool"]);
    assert_eq!(names(""), names("default"));
}

#[test]
fn all_includes_opt_in_built_ins_but_globs_do_not() {
    assert_eq!(names("all"), ["bash", "read_file", "grep", "str_replace_based_edit_tool", "json_edit_tool"]);
    assert_eq!(names("*"), ["bash", "read_file", "grep", "str_replace_based_edit_tool", "mcp__git__git_status"]);
    assert_eq!(names("trae,json_edit_tool"), ["str_replace_based_edit_tool", "json_edit_tool"]);
    assert_eq!(names("mcp__git__*"), ["mcp__git__git_status"]);
}

#[test]
fn hints_removals_aliases_and_normalized_names() {
    assert_eq!(names("hint:read-only"), ["read_file", "grep", "mcp__git__git_status"]);
    assert_eq!(names("hint:destructive"), ["bash", "str_replace_based_edit_tool"]);
    assert_eq!(names("default,-bash"), ["read_file", "grep", "mcp__git__git_status"]);
    assert_eq!(names("-bash,-mcp__*"), ["read_file", "grep"]);
    assert_eq!(names("Bash Read"), ["bash", "read_file"]);
    assert_eq!(names("READ_FILE,Str-Replace-Based-Edit-Tool"), ["read_file", "str_replace_based_edit_tool"]);
    assert_eq!(names("all,-hint:read-only"), ["bash", "str_replace_based_edit_tool", "json_edit_tool"]);
}

#[test]
fn unknown_names_are_errors_with_the_closest_match() {
    let err = registry().select("default,red_file", "default").unwrap_err();
    assert!(
        matches!(&err, AllowlistError::Unknown { entry, suggestion: Some(s), .. } if entry == "red_file" && s == "read_file"),
        "{err:?}"
    );
    assert_eq!(err.to_string(), "unknown tool or toolset 'red_file' in the tool list; did you mean 'read_file'?");
    let err = registry().select("zzzzzz", "default").unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown tool or toolset 'zzzzzz' in the tool list; run 'tackle tools list' to see the tools (toolsets: default, trae, bare, codex, mcp, all)"
    );
    let err = registry().select("hint:readonly-ish", "default").unwrap_err();
    assert!(err.to_string().contains("did you mean 'hint:read-only'"), "{err}");
    assert!(matches!(registry().select("[", "default"), Err(AllowlistError::InvalidGlob { .. })));
}

#[test]
fn unavailable_tools_are_warnings_not_errors() {
    let selection = registry().select("ckg_like,grep", "default").unwrap();
    assert_eq!(selection.names, ["grep"]);
    assert_eq!(selection.warnings, ["tool 'ckg_like' is unavailable: no grammar"]);
    let selection = registry().select("mcp__docs__*", "default").unwrap();
    assert_eq!(selection.warnings, ["'mcp__docs__*' matches no tool"]);
}

#[test]
fn a_tool_set_resolves_exact_alias_then_normalized() {
    let registry = registry();
    let tools = registry.instantiate(&registry.select("all", "all").unwrap());
    let resolve = |name: &str| tools.resolve(name).map(|h| h.spec().name.clone());
    assert_eq!(resolve("bash").as_deref(), Some("bash"));
    assert_eq!(resolve("Bash").as_deref(), Some("bash"));
    assert_eq!(resolve("BASH").as_deref(), Some("bash"));
    assert_eq!(resolve("Read-File").as_deref(), Some("read_file"));
    assert_eq!(resolve("Str_Replace_Based_Edit_Tool").as_deref(), Some("str_replace_based_edit_tool"));
    assert_eq!(resolve("nope"), None);
    assert_eq!(
        tools.not_found_message("nope"),
        "Tool 'nope' not found. Available tools: bash, read_file, grep, str_replace_based_edit_tool, json_edit_tool"
    );
}

#[test]
fn an_imported_tool_joins_every_toolset_but_all_and_the_closed_ones() {
    let mut registry = registry();
    assert_eq!(registry.import_toolsets(), ["default", "trae", "bare", "codex", "mcp"]);
    registry.declare_closed_toolsets(&["team"]);
    registry.register(&["default", "team"], || Named(ToolSpec::new("team_send", "send")));
    // `team` is a toolset an allowlist may name, but no imported tool joins it.
    assert!(registry.toolset_names().contains(&"team".to_owned()));
    assert_eq!(registry.import_toolsets(), ["default", "trae", "bare", "codex", "mcp"]);
    let selected = registry.select("-team", "default").unwrap().names;
    assert!(selected.contains(&"bash".to_owned()) && !selected.contains(&"team_send".to_owned()), "{selected:?}");
}
