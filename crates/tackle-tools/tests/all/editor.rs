//! `str_replace_based_edit_tool` (docs/reference/tools.md#str_replace_based_edit_tool) on real files through the executor: every
//! message, every check in its order, the Trae bugs that must not come back, and the bytes
//! outside an edit left exactly as they were.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Ws, age};
use pretty_assertions::assert_eq;
use serde_json::json;

const TOOL: &str = "str_replace_based_edit_tool";

fn view(path: &str) -> serde_json::Value {
    json!({"command": "view", "path": path})
}

fn replace(path: &str, old: &str, new: &str) -> serde_json::Value {
    json!({"command": "str_replace", "path": path, "old_str": old, "new_str": new})
}

#[tokio::test]
async fn view_numbers_lines_like_cat_n_and_shows_tabs_and_no_cr() {
    let ws = Ws::new();
    ws.write("f.txt", "a\n\tb\r\nc");
    assert_eq!(
        ws.ok(TOOL, view("f.txt")).await,
        "Here's the result of running `cat -n` on f.txt:\n     1\ta\n     2\t\tb\n     3\tc\n"
    );
    // A final newline gives a last, empty numbered line (Trae's count).
    ws.write("g.txt", "x\ny\n");
    assert_eq!(
        ws.ok(TOOL, view("g.txt")).await,
        "Here's the result of running `cat -n` on g.txt:\n     1\tx\n     2\ty\n     3\t\n"
    );
    // Absolute paths inside the workspace work, and messages show the path as written.
    let absolute = ws.path("g.txt").display().to_string();
    assert!(
        ws.ok(TOOL, view(&absolute))
            .await
            .starts_with(&format!("Here's the result of running `cat -n` on {absolute}:\n"))
    );
}

#[tokio::test]
async fn view_range_selects_lines_and_reports_trae_errors() {
    let ws = Ws::new();
    ws.write("f.txt", "1\n2\n3\n4\n5");
    let ranged = |range: serde_json::Value| json!({"command": "view", "path": "f.txt", "view_range": range});
    assert_eq!(
        ws.ok(TOOL, ranged(json!([2, 3]))).await,
        "Here's the result of running `cat -n` on f.txt:\n     2\t2\n     3\t3\n"
    );
    assert_eq!(
        ws.ok(TOOL, ranged(json!([4, -1]))).await,
        "Here's the result of running `cat -n` on f.txt:\n     4\t4\n     5\t5\n"
    );
    assert_eq!(
        ws.ok(TOOL, ranged(json!(["5", "5"]))).await,
        "Here's the result of running `cat -n` on f.txt:\n     5\t5\n"
    );
    assert_eq!(ws.err(TOOL, ranged(json!([1]))).await, "Invalid `view_range`. It should be a list of two integers.");
    assert_eq!(
        ws.err(TOOL, ranged(json!([1, 2, 3]))).await,
        "Invalid `view_range`. It should be a list of two integers."
    );
    assert_eq!(
        ws.err(TOOL, ranged(json!([0, 2]))).await,
        "Invalid `view_range`: [0, 2]. Its first element `0` should be within the range of lines of the file: [1, 5]"
    );
    assert_eq!(
        ws.err(TOOL, ranged(json!([6, 7]))).await,
        "Invalid `view_range`: [6, 7]. Its first element `6` should be within the range of lines of the file: [1, 5]"
    );
    assert_eq!(
        ws.err(TOOL, ranged(json!([2, 9]))).await,
        "Invalid `view_range`: [2, 9]. Its second element `9` should be smaller than the number of lines in the file: `5`"
    );
    assert_eq!(
        ws.err(TOOL, ranged(json!([3, 2]))).await,
        "Invalid `view_range`: [3, 2]. Its second element `2` should be larger or equal than its first `3`"
    );
    let err = ws.err(TOOL, ranged(json!(["a", 2]))).await;
    assert!(err.contains("Parameter `view_range` should be a list of integers."), "{err}");
    let err = ws.err(TOOL, ranged(json!("1-2"))).await;
    assert!(err.contains("Parameter `view_range` should be a list of integers."), "{err}");
}

#[tokio::test]
async fn a_long_file_is_clipped_at_a_line_boundary_with_a_note() {
    let ws = Ws::new();
    let text: String = (1..=2000).map(|i| format!("line number {i:05} of a long file\n")).collect();
    ws.write("long.txt", &text);
    let out = ws.ok(TOOL, view("long.txt")).await;
    // 33 characters per line (with its newline): 484 lines fit in 16,000.
    assert!(out.contains("   484\tline number 00484 of a long file\n"), "{out}");
    assert!(!out.contains("00485"));
    assert!(
        out.ends_with(
            "<response clipped><NOTE>Showing lines 1-484 of 2001. Use view_range, or grep -n, to reach the rest.</NOTE>"
        ),
        "{}",
        &out[out.len() - 200..]
    );
    // One line longer than the cap is cut inside the line.
    ws.write("one.txt", "y".repeat(50_000));
    let out = ws.ok(TOOL, view("one.txt")).await;
    assert!(out.contains(&format!("     1\t{}\n<response clipped>", "y".repeat(16_000))));
    assert!(out.ends_with("Showing lines 1-1 of 1. Use view_range, or grep -n, to reach the rest.</NOTE>"));
}

#[tokio::test]
async fn view_of_a_directory_lists_two_levels_sorted_without_hidden_or_ignored() {
    let ws = Ws::new();
    std::process::Command::new("git").arg("init").arg("-q").arg(&ws.root).status().unwrap();
    ws.write(".gitignore", "target/\n*.log\n");
    ws.write("src/main.rs", "");
    ws.write("src/deep/er/x.rs", "");
    ws.write("my docs/read me.md", "");
    ws.write(".hidden/x", "");
    ws.write("target/debug/out", "");
    ws.write("build.log", "");
    ws.write("Cargo.toml", "");
    assert_eq!(
        ws.ok(TOOL, view(".")).await,
        "Here's the files and directories up to 2 levels deep in ., excluding hidden items:\nCargo.toml\nmy docs/\nmy docs/read me.md\nsrc/\nsrc/deep/\nsrc/main.rs\n"
    );
    assert_eq!(
        ws.err(TOOL, json!({"command": "view", "path": "src", "view_range": [1, 2]})).await,
        "The `view_range` parameter is not allowed when `path` points to a directory."
    );
}

#[tokio::test]
async fn a_huge_directory_listing_is_capped() {
    let ws = Ws::new();
    for i in 0..1_005 {
        ws.write(&format!("d/f{i:04}"), "");
    }
    let out = ws.ok(TOOL, view("d")).await;
    assert_eq!(out.lines().count(), 1 + 1_000 + 1);
    assert!(out.ends_with("f0999\n[... 5 more entries not shown]\n"), "{}", &out[out.len() - 80..]);
}

#[tokio::test]
async fn checks_run_in_the_documented_order() {
    let ws = Ws::new();
    ws.write("dir/file.txt", "x");
    assert_eq!(
        ws.err(TOOL, json!({"path": "x"})).await,
        "No command provided for the str_replace_based_edit_tool tool"
    );
    assert_eq!(
        ws.err(TOOL, json!({"command": "view"})).await,
        "No path provided for the str_replace_based_edit_tool tool"
    );
    // An unknown command fails validation before the (missing) path is looked at.
    let err = ws.err(TOOL, json!({"command": "delete", "path": "missing.txt"})).await;
    assert!(err.contains("command must be one of: view, create, str_replace, insert, undo_edit"), "{err}");
    let err = ws.err(TOOL, view("../escape.txt")).await;
    assert!(err.starts_with("Path ../escape.txt is outside the workspace ("), "{err}");
    assert_eq!(
        ws.err(TOOL, view("missing.txt")).await,
        "The path missing.txt does not exist. Please provide a valid path."
    );
    assert_eq!(
        ws.err(TOOL, replace("missing.txt", "a", "b")).await,
        "The path missing.txt does not exist. Please provide a valid path."
    );
    assert_eq!(
        ws.err(TOOL, json!({"command": "create", "path": "dir/file.txt", "file_text": "y"})).await,
        "File already exists at: dir/file.txt. Cannot overwrite files using command `create`. Use str_replace to change it, or write_file to replace it."
    );
    assert_eq!(
        ws.err(TOOL, replace("dir", "a", "b")).await,
        "The path dir is a directory and only the `view` command can be used on directories"
    );
    ws.write("bin.dat", b"\x89PNG\r\n\x1a\n\0\0\0");
    assert_eq!(ws.err(TOOL, view("bin.dat")).await, "bin.dat is a binary file; this tool only handles UTF-8 text");
    assert_eq!(
        ws.err(TOOL, replace("bin.dat", "PNG", "JPG")).await,
        "bin.dat is a binary file; this tool only handles UTF-8 text"
    );
    ws.write("latin1.txt", b"caf\xe9\n");
    assert_eq!(
        ws.err(TOOL, view("latin1.txt")).await,
        "latin1.txt is a binary file; this tool only handles UTF-8 text"
    );
    assert_eq!(ws.bytes("bin.dat"), b"\x89PNG\r\n\x1a\n\0\0\0");
}

#[tokio::test]
async fn create_writes_verbatim_with_parents_and_needs_file_text() {
    let ws = Ws::new();
    assert_eq!(
        ws.ok(TOOL, json!({"command": "create", "path": "a/b/new.py", "file_text": "x = 1\r\n\ty\n"})).await,
        "File created successfully at: a/b/new.py"
    );
    assert_eq!(ws.read("a/b/new.py"), "x = 1\r\n\ty\n");
    assert_eq!(
        ws.err(TOOL, json!({"command": "create", "path": "other.py"})).await,
        "Parameter `file_text` is required and must be a string for command: create"
    );
    assert!(!ws.exists("other.py"));
    assert_eq!(ws.names_in("a/b"), ["new.py"]);
}

#[tokio::test]
async fn str_replace_edits_exactly_the_span_and_shows_a_snippet() {
    let ws = Ws::new();
    let text: String = (1..=12).map(|i| format!("line {i}\n")).collect();
    ws.write("f.txt", &text);
    let out = ws.ok(TOOL, replace("f.txt", "line 6\n", "six\nand a half\n")).await;
    assert_eq!(
        out,
        "The file f.txt has been edited. Here's the result of running `cat -n` on a snippet of f.txt:\n     2\tline 2\n     3\tline 3\n     4\tline 4\n     5\tline 5\n     6\tsix\n     7\tand a half\n     8\tline 7\n     9\tline 8\n    10\tline 9\n    11\tline 10\n    12\tline 11\nReview the changes and make sure they are as expected. Edit the file again if necessary."
    );
    assert_eq!(ws.read("f.txt"), text.replace("line 6\n", "six\nand a half\n"));
    // Leaving new_str out deletes the match.
    ws.ok(TOOL, json!({"command": "str_replace", "path": "f.txt", "old_str": "and a half\n"})).await;
    assert_eq!(ws.read("f.txt"), text.replace("line 6\n", "six\n"));
    assert_eq!(ws.names_in(""), ["f.txt"]);
}

#[tokio::test]
async fn str_replace_argument_errors() {
    let ws = Ws::new();
    ws.write("f.txt", "alpha\nbeta\n");
    let required = "Parameter `old_str` is required and should be a non-empty string for command: str_replace";
    assert_eq!(ws.err(TOOL, json!({"command": "str_replace", "path": "f.txt"})).await, required);
    assert_eq!(ws.err(TOOL, replace("f.txt", "", "x")).await, required);
    assert_eq!(
        ws.err(TOOL, replace("f.txt", "beta", "beta")).await,
        "No replacement was performed: old_str and new_str are identical."
    );
    assert_eq!(ws.read("f.txt"), "alpha\nbeta\n");
}

#[tokio::test]
async fn a_missing_old_str_shows_the_most_similar_text() {
    let ws = Ws::new();
    ws.write("f.py", "def a():\n    return 1\n\ndef compute_total(items):\n    return sum(items)\n");
    assert_eq!(
        ws.err(TOOL, replace("f.py", "def compute_totals(items):\n  return sum(items)", "x")).await,
        "No replacement was performed, old_str `def compute_totals(items):\n  return sum(items)` did not appear verbatim in f.py.\nThe most similar text is at lines 4-5:\n     4\tdef compute_total(items):\n     5\t    return sum(items)"
    );
    assert_eq!(
        ws.err(TOOL, replace("f.py", "nothing like it at all, really", "x")).await,
        "No replacement was performed, old_str `nothing like it at all, really` did not appear verbatim in f.py."
    );
}

#[tokio::test]
async fn several_occurrences_list_every_start_line() {
    let ws = Ws::new();
    let mut text = String::from("a\nb\n");
    for i in 3..=20 {
        text.push_str(if i == 3 || i == 17 { "dup\nnext\n" } else { "other\n" });
    }
    ws.write("f.txt", &text);
    assert_eq!(
        ws.err(TOOL, replace("f.txt", "dup", "x")).await,
        "No replacement was performed. Multiple occurrences of old_str `dup` in lines [3, 18]. Please ensure it is unique"
    );
    // A multi-line old_str reports start lines too (Trae printed []).
    assert_eq!(
        ws.err(TOOL, replace("f.txt", "dup\nnext", "x")).await,
        "No replacement was performed. Multiple occurrences of old_str `dup\nnext` in lines [3, 18]. Please ensure it is unique"
    );
}

#[tokio::test]
async fn crlf_tabs_bom_and_a_missing_final_newline_survive() {
    let ws = Ws::new();
    ws.write("win.txt", "\u{feff}one\r\n\ttwo\r\nthree\r\nfour");
    // The model writes LF; the file keeps CRLF, its tabs, its BOM and its missing newline.
    ws.ok(TOOL, replace("win.txt", "\ttwo\nthree", "\t2\n3\n3.5")).await;
    assert_eq!(ws.read("win.txt"), "\u{feff}one\r\n\t2\r\n3\r\n3.5\r\nfour");
    // A mixed file stays byte-exact outside the edit.
    ws.write("mixed.txt", "a\r\nb\nc\r\nd\n");
    ws.ok(TOOL, replace("mixed.txt", "b\nc", "B\nC")).await;
    assert_eq!(ws.read("mixed.txt"), "a\r\nB\nC\r\nd\n");
    // View shows tabs as they are, so old_str copied from it matches (Trae expanded them).
    ws.write("tabs.go", "func f() {\n\treturn\n}\n");
    let shown = ws.ok(TOOL, view("tabs.go")).await;
    assert!(shown.contains("     2\t\treturn\n"), "{shown}");
    ws.ok(TOOL, replace("tabs.go", "\treturn", "\treturn nil")).await;
    assert_eq!(ws.read("tabs.go"), "func f() {\n\treturn nil\n}\n");
}

#[tokio::test]
async fn a_file_changed_since_viewed_must_be_viewed_again() {
    let ws = Ws::new();
    ws.write("f.txt", "v1\n");
    age(&ws.path("f.txt"));
    // Never viewed: editable, as in Trae.
    ws.ok(TOOL, replace("f.txt", "v1", "v2")).await;
    ws.ok(TOOL, view("f.txt")).await;
    ws.write("f.txt", "v3 from the user\n");
    let stale = "The file f.txt has been modified since you last viewed it. View it again before editing.";
    assert_eq!(ws.err(TOOL, replace("f.txt", "v3", "v4")).await, stale);
    assert_eq!(
        ws.err(TOOL, json!({"command": "insert", "path": "f.txt", "insert_line": 0, "new_str": "x"})).await,
        stale
    );
    ws.ok(TOOL, view("f.txt")).await;
    ws.ok(TOOL, replace("f.txt", "v3", "v4")).await;
    // A bare touch is not a change.
    age(&ws.path("f.txt"));
    ws.ok(TOOL, replace("f.txt", "v4", "v5")).await;
    assert_eq!(ws.read("f.txt"), "v5 from the user\n");
}

#[tokio::test]
async fn a_one_shot_session_skips_the_stale_check() {
    let ws = Ws::one_shot();
    ws.write("f.txt", "v1\n");
    age(&ws.path("f.txt"));
    ws.ok(TOOL, view("f.txt")).await;
    ws.write("f.txt", "v2\n");
    ws.ok(TOOL, replace("f.txt", "v2", "v3")).await;
    assert_eq!(ws.read("f.txt"), "v3\n");
}

#[tokio::test]
async fn insert_places_text_after_the_line_with_the_files_endings() {
    let ws = Ws::new();
    ws.write("f.txt", "a\nb\n");
    let insert = |path: &str, line: serde_json::Value, text: &str| json!({"command": "insert", "path": path, "insert_line": line, "new_str": text});
    let out = ws.ok(TOOL, insert("f.txt", json!(1), "x\ny")).await;
    assert_eq!(ws.read("f.txt"), "a\nx\ny\nb\n");
    assert_eq!(
        out,
        "The file f.txt has been edited. Here's the result of running `cat -n` on a snippet of the edited file:\n     1\ta\n     2\tx\n     3\ty\n     4\tb\n     5\t\nReview the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary."
    );
    ws.ok(TOOL, insert("f.txt", json!(0), "top")).await;
    assert_eq!(ws.read("f.txt"), "top\na\nx\ny\nb\n");
    // At n (the phantom line after the final newline): append, one final newline (Trae left a blank line).
    ws.write("end.txt", "a\nb\n");
    ws.ok(TOOL, insert("end.txt", json!(3), "END")).await;
    assert_eq!(ws.read("end.txt"), "a\nb\nEND\n");
    ws.ok(TOOL, insert("end.txt", json!(3), "MORE\n")).await;
    assert_eq!(ws.read("end.txt"), "a\nb\nEND\nMORE\n");
    // CRLF files get CRLF; a file without a final newline keeps having none.
    ws.write("win.txt", "a\r\nb");
    ws.ok(TOOL, insert("win.txt", json!(1), "x\ny")).await;
    assert_eq!(ws.read("win.txt"), "a\r\nx\r\ny\r\nb");
    ws.ok(TOOL, insert("win.txt", json!(4), "z")).await;
    assert_eq!(ws.read("win.txt"), "a\r\nx\r\ny\r\nb\r\nz");
    ws.write("empty.txt", "");
    ws.ok(TOOL, insert("empty.txt", json!(0), "first")).await;
    assert_eq!(ws.read("empty.txt"), "first\n");
}

#[tokio::test]
async fn insert_argument_errors() {
    let ws = Ws::new();
    ws.write("f.txt", "a\nb\n");
    assert_eq!(
        ws.err(TOOL, json!({"command": "insert", "path": "f.txt", "new_str": "x"})).await,
        "Parameter `insert_line` is required and should be integer for command: insert"
    );
    assert_eq!(
        ws.err(TOOL, json!({"command": "insert", "path": "f.txt", "insert_line": 1})).await,
        "Parameter `new_str` is required for command: insert"
    );
    for bad in [4, -1] {
        assert_eq!(
            ws.err(TOOL, json!({"command": "insert", "path": "f.txt", "insert_line": bad, "new_str": "x"})).await,
            format!(
                "Invalid `insert_line` parameter: {bad}. It should be within the range of lines of the file: [0, 3]"
            )
        );
    }
    let err = ws.err(TOOL, json!({"command": "insert", "path": "f.txt", "insert_line": "two", "new_str": "x"})).await;
    assert!(err.contains("insert_line should be integer"), "{err}");
    assert_eq!(ws.read("f.txt"), "a\nb\n");
}

#[tokio::test]
async fn undo_edit_reverts_each_edit_in_turn() {
    let ws = Ws::new();
    ws.write("f.txt", "one\n");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(ws.path("f.txt"), std::fs::Permissions::from_mode(0o640)).unwrap();
    ws.ok(TOOL, replace("f.txt", "one", "two")).await;
    ws.ok(TOOL, replace("f.txt", "two", "three")).await;
    let out = ws.ok(TOOL, json!({"command": "undo_edit", "path": "f.txt"})).await;
    assert_eq!(
        out,
        "Last edit to f.txt undone successfully. Here's the result of running `cat -n` on f.txt:\n     1\ttwo\n     2\t\n"
    );
    ws.ok(TOOL, json!({"command": "undo_edit", "path": "f.txt"})).await;
    assert_eq!(ws.read("f.txt"), "one\n");
    assert_eq!(std::fs::metadata(ws.path("f.txt")).unwrap().permissions().mode() & 0o777, 0o640);
    assert_eq!(
        ws.err(TOOL, json!({"command": "undo_edit", "path": "f.txt"})).await,
        "No edit history found for f.txt."
    );

    // Undoing a create removes the file.
    ws.ok(TOOL, json!({"command": "create", "path": "new.txt", "file_text": "x"})).await;
    assert_eq!(
        ws.ok(TOOL, json!({"command": "undo_edit", "path": "new.txt"})).await,
        "Last edit to new.txt undone successfully. The edit had created the file, so it was removed."
    );
    assert!(!ws.exists("new.txt"));
}

#[tokio::test]
async fn undo_refuses_when_the_file_changed_after_the_edit() {
    let ws = Ws::new();
    ws.write("f.txt", "one\n");
    ws.ok(TOOL, replace("f.txt", "one", "two")).await;
    ws.write("f.txt", "changed by hand\n");
    assert_eq!(
        ws.err(TOOL, json!({"command": "undo_edit", "path": "f.txt"})).await,
        "The file f.txt was changed after the last edit; undo would lose those changes. View it and edit it instead."
    );
    assert_eq!(ws.read("f.txt"), "changed by hand\n");
}

/// `str_replace`, `insert` and `json_edit_tool`'s in-place `set` keep only the span they
/// changed: the history of a 300 KB file holds bytes, and each undo puts back exactly what was
/// there, in turn.
#[tokio::test]
async fn span_edits_keep_only_the_span_and_undo_exactly() {
    let ws = Ws::new();
    let original: String = (0..5000).map(|i| format!("line {i:05} of the file\n")).collect();
    ws.write("big.txt", &original);
    ws.ok(TOOL, replace("big.txt", "line 02500 of", "LINE 2500, now longer, of")).await;
    ws.ok(TOOL, json!({"command": "insert", "path": "big.txt", "insert_line": 3, "new_str": "inserted"})).await;
    ws.ok(TOOL, replace("big.txt", "line 04999 of the file\n", "")).await;
    ws.write("d.json", "{\"a\": {\"b\": [1, 2, 3]}, \"pad\": \"".to_owned() + &"x".repeat(200_000) + "\"}\n");
    let json_before = ws.read("d.json");
    let out = ws
        .call(
            "json_edit_tool",
            json!({"operation": "set", "file_path": "d.json", "json_path": "$.a.b[1]", "value": {"k": "v"}}),
        )
        .await;
    assert!(!out.is_error, "{}", out.text_content());
    let ctx = ws.session.context("t", TOOL, tokio_util::sync::CancellationToken::new());
    let history = &tackle_tools::fs::files::file_state(&ctx).history;
    let kept = history.total_bytes();
    assert!(kept < 100, "the history keeps {kept} bytes for four span edits");

    ws.ok(TOOL, json!({"command": "undo_edit", "path": "d.json"})).await;
    assert_eq!(ws.read("d.json"), json_before);
    for _ in 0..3 {
        ws.ok(TOOL, json!({"command": "undo_edit", "path": "big.txt"})).await;
    }
    assert_eq!(ws.read("big.txt"), original);
}

/// Undoing a span needs the very bytes the edit left: a change that kept the file's size and
/// time (an in-place rewrite within the same clock tick) is still seen, and nothing is written.
#[tokio::test]
async fn a_span_undo_refuses_a_change_that_kept_size_and_time() {
    let ws = Ws::new();
    ws.write("f.txt", "alpha beta gamma\n");
    ws.ok(TOOL, replace("f.txt", "beta", "BETA")).await;
    let edited = std::fs::metadata(ws.path("f.txt")).unwrap().modified().unwrap();
    std::fs::write(ws.path("f.txt"), "alpha XXXX gamma\n").unwrap();
    let file = std::fs::File::options().write(true).open(ws.path("f.txt")).unwrap();
    file.set_modified(edited).unwrap();
    assert_eq!(
        ws.err(TOOL, json!({"command": "undo_edit", "path": "f.txt"})).await,
        "The file f.txt was changed after the last edit; undo would lose those changes. View it and edit it instead."
    );
    assert_eq!(ws.read("f.txt"), "alpha XXXX gamma\n");
}

#[tokio::test]
async fn the_path_policy_guards_every_command() {
    let ws = Ws::new();
    ws.write(".git/config", "[core]\n");
    let outside = ws.outside().join("x.txt");
    std::fs::write(&outside, "secret").unwrap();
    let out = ws.call(TOOL, view(outside.to_str().unwrap())).await;
    assert!(out.is_error && out.meta.rejected, "{out:?}");
    assert!(out.text_content().contains("is outside the workspace"));
    // Reading .git is fine; writing it is not.
    assert!(ws.ok(TOOL, view(".git/config")).await.contains("[core]"));
    let out = ws.call(TOOL, replace(".git/config", "core", "x")).await;
    assert!(out.meta.rejected);
    assert_eq!(
        out.text_content(),
        ".git/config is inside a protected directory (.git/); file tools cannot write there."
    );
    let out = ws.call(TOOL, json!({"command": "create", "path": "~/.bashrc", "file_text": "evil"})).await;
    assert!(out.meta.rejected && out.text_content().contains("is outside the workspace"), "{out:?}");
    let out = ws.call(TOOL, view("a\u{0}b")).await;
    assert!(out.meta.rejected && out.text_content().contains("NUL byte"), "{out:?}");
    // A symlink inside that points outside is refused; one that stays inside is followed.
    std::os::unix::fs::symlink(&outside, ws.path("link.txt")).unwrap();
    assert!(ws.call(TOOL, view("link.txt")).await.meta.rejected);
    ws.write("real.txt", "r\n");
    std::os::unix::fs::symlink("real.txt", ws.path("alias.txt")).unwrap();
    ws.ok(TOOL, replace("alias.txt", "r", "R")).await;
    assert_eq!(ws.read("real.txt"), "R\n");
    assert!(std::fs::symlink_metadata(ws.path("alias.txt")).unwrap().file_type().is_symlink());
}

#[tokio::test]
async fn a_huge_file_is_viewed_without_loading_it_and_refused_for_edits() {
    let ws = Ws::new();
    let path = ws.path("huge.log");
    {
        use std::io::Write as _;
        let mut file = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        let line = "0123456789".repeat(10) + "\n";
        for _ in 0..700_000 {
            file.write_all(line.as_bytes()).unwrap();
        }
    }
    let out = ws.ok(TOOL, view("huge.log")).await;
    assert!(
        out.ends_with("Showing lines 1-158 of 700001. Use view_range, or grep -n, to reach the rest.</NOTE>"),
        "{}",
        &out[out.len() - 120..]
    );
    let out = ws.ok(TOOL, json!({"command": "view", "path": "huge.log", "view_range": [699_999, 700_000]})).await;
    assert_eq!(out.lines().count(), 3);
    let err = ws.err(TOOL, replace("huge.log", "0123", "x")).await;
    assert!(err.starts_with("huge.log is 70700000 bytes; the file edit tools handle files up to 64 MiB."), "{err}");
}

#[tokio::test]
async fn the_approval_previews_create_str_replace_and_insert_as_diffs() {
    let mut ws = Ws::new();
    let approver = ws.asking();
    ws.write("f.txt", "one\ntwo\nthree\n");
    for args in [
        json!({"command": "create", "path": "new.txt", "file_text": "hello\n"}),
        replace("f.txt", "two", "TWO"),
        json!({"command": "insert", "path": "f.txt", "insert_line": 1, "new_str": "one and a half"}),
    ] {
        assert!(ws.call(TOOL, args).await.is_error);
    }
    assert_eq!(
        approver.take(),
        vec![
            Some("--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n".to_owned()),
            Some("--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n".to_owned()),
            Some("--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,4 @@\n one\n+one and a half\n two\n three\n".to_owned()),
        ]
    );
    assert!(!ws.exists("new.txt"));
    assert_eq!(ws.read("f.txt"), "one\ntwo\nthree\n");
}

#[tokio::test]
async fn an_editor_call_that_would_fail_previews_nothing() {
    let mut ws = Ws::new();
    let approver = ws.asking();
    ws.write("f.txt", "one\ntwo\ntwo\n");
    ws.write("bin.dat", b"\x00\x01\xfftwo\n");
    for args in [
        // Over an existing file, not there, twice there, a binary file, a line past the end.
        json!({"command": "create", "path": "f.txt", "file_text": "x"}),
        replace("f.txt", "absent", "x"),
        replace("f.txt", "two", "x"),
        replace("bin.dat", "two", "x"),
        json!({"command": "insert", "path": "f.txt", "insert_line": 99, "new_str": "x"}),
        json!({"command": "create", "path": "nothing.txt"}),
    ] {
        assert!(ws.call(TOOL, args).await.is_error);
    }
    assert_eq!(approver.take(), vec![None; 6]);
}
