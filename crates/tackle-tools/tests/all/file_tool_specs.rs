//! What the file and search tools declare about themselves (docs/reference/tools.md#tool-index, docs/reference/safety.md#permission-modes):
//! annotations, path parameters, file edits, output budgets, and the read-only and
//! concurrency-safe answers that depend on the input — the permission modes and the
//! scheduler act on these.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tackle_core::spec::{PathAccess, PathParam};

fn tools() -> tackle_core::ToolSet {
    let registry = tackle_tools::builtin_registry();
    registry.instantiate(&registry.select("all", "all").unwrap())
}

/// (read_only, concurrency_safe) of one prepared call.
fn traits(tools: &tackle_core::ToolSet, name: &str, args: Value) -> (bool, bool) {
    let prepared = tools.resolve(name).unwrap().tool.prepare(&args).unwrap();
    (prepared.read_only, prepared.concurrency_safe)
}

#[test]
fn read_only_and_concurrency_follow_the_input() {
    let tools = tools();
    let editor =
        |command: &str| traits(&tools, "str_replace_based_edit_tool", json!({"command": command, "path": "x"}));
    assert_eq!(editor("view"), (true, true));
    for command in ["create", "str_replace", "insert", "undo_edit"] {
        assert_eq!(editor(command), (false, false), "{command}");
    }
    let json_op = |operation: &str| traits(&tools, "json_edit_tool", json!({"operation": operation, "file_path": "x"}));
    assert_eq!(json_op("view"), (true, true));
    for operation in ["set", "add", "remove"] {
        assert_eq!(json_op(operation), (false, false), "{operation}");
    }
    assert_eq!(traits(&tools, "read_file", json!({"file_path": "x"})), (true, true));
    assert_eq!(traits(&tools, "glob", json!({"pattern": "*"})), (true, true));
    assert_eq!(traits(&tools, "grep", json!({"pattern": "x"})), (true, true));
    assert_eq!(traits(&tools, "write_file", json!({"file_path": "x", "content": ""})), (false, false));
    assert_eq!(
        traits(&tools, "edit_file", json!({"file_path": "x", "old_string": "a", "new_string": "b"})),
        (false, false)
    );
    assert_eq!(traits(&tools, "apply_patch", json!({"input": ""})), (false, false));
}

#[test]
fn annotations_paths_and_budgets() {
    let tools = tools();
    let spec = |name: &str| tools.resolve(name).unwrap().spec().clone();
    let path = |name: &str, access| vec![PathParam { name: name.to_owned(), access }];
    // (name, read_only, destructive, idempotent, edits_files, manages_output_budget, path params)
    let expected = [
        ("str_replace_based_edit_tool", false, true, false, true, false, path("path", PathAccess::Write)),
        ("read_file", true, false, true, false, true, path("file_path", PathAccess::Read)),
        ("write_file", false, true, true, true, false, path("file_path", PathAccess::Write)),
        ("edit_file", false, true, false, true, false, path("file_path", PathAccess::Write)),
        ("notebook_edit", false, true, false, true, false, path("notebook_path", PathAccess::Write)),
        ("apply_patch", false, true, false, true, false, vec![]),
        ("glob", true, false, true, false, false, path("path", PathAccess::Read)),
        ("grep", true, false, true, false, false, path("path", PathAccess::Read)),
        ("json_edit_tool", false, true, false, true, false, path("file_path", PathAccess::Write)),
    ];
    for (name, read_only, destructive, idempotent, edits, budget, paths) in expected {
        let spec = spec(name);
        let got = (
            spec.annotations.read_only,
            spec.annotations.destructive,
            spec.annotations.idempotent,
            spec.edits_files,
            spec.manages_output_budget,
            spec.path_params.clone(),
            spec.annotations.open_world,
        );
        assert_eq!(got, (read_only, destructive, idempotent, edits, budget, paths, false), "{name}");
    }
    // Codex-trained models sometimes call the parameter `patch`.
    assert_eq!(spec("apply_patch").param_aliases[0].alias, "patch");
}

#[test]
fn only_the_documented_parameters_are_required() {
    let tools = tools();
    let required = |name: &str| tools.resolve(name).unwrap().spec().required_params().join(",");
    // Trae's schema helper marked every parameter required; only these are.
    assert_eq!(required("str_replace_based_edit_tool"), "command,path");
    assert_eq!(required("read_file"), "file_path");
    assert_eq!(required("write_file"), "file_path,content");
    assert_eq!(required("edit_file"), "file_path,old_string,new_string");
    assert_eq!(required("apply_patch"), "input");
    assert_eq!(required("glob"), "pattern");
    assert_eq!(required("grep"), "pattern");
    assert_eq!(required("json_edit_tool"), "operation,file_path");
}
