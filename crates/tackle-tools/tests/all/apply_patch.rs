//! `apply_patch` (docs/reference/tools.md#apply_patch) on real files: Codex's format and lenient parsing, the four
//! matching passes, all-or-nothing application (nothing written when any part fails, files
//! restored when a write fails partway), endings kept, history and ledger updated.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::Ws;
use pretty_assertions::assert_eq;
use serde_json::json;
use tackle_core::ErrorKind;

fn patch(body: &str) -> serde_json::Value {
    json!({"input": format!("*** Begin Patch\n{body}*** End Patch\n")})
}

#[tokio::test]
async fn adds_updates_deletes_and_moves() {
    let ws = Ws::new();
    ws.write("src/app.py", "import os\n\ndef main():\n    print('hi')\n    return 0\n");
    ws.write("old.txt", "bye\n");
    ws.write("src/util.py", "def helper():\n    pass\n");
    let out = ws
        .ok(
            "apply_patch",
            patch(
                "*** Add File: docs/new.md\n+# Title\n+\n+text\n*** Update File: src/app.py\n@@ def main():\n-    print('hi')\n+    print('hello')\n     return 0\n*** Delete File: old.txt\n*** Update File: src/util.py\n*** Move to: src/helpers.py\n@@\n def helper():\n-    pass\n+    return 1\n",
            ),
        )
        .await;
    assert_eq!(
        out,
        "Success. Updated the following files:\nA docs/new.md\nM src/app.py\nD old.txt\nM src/helpers.py (moved from src/util.py)"
    );
    assert_eq!(ws.read("docs/new.md"), "# Title\n\ntext\n");
    assert_eq!(ws.read("src/app.py"), "import os\n\ndef main():\n    print('hello')\n    return 0\n");
    assert!(!ws.exists("old.txt") && !ws.exists("src/util.py"));
    assert_eq!(ws.read("src/helpers.py"), "def helper():\n    return 1\n");
    assert_eq!(ws.names_in("src"), ["app.py", "helpers.py"]);
}

#[tokio::test]
async fn a_hunk_that_does_not_match_writes_nothing_at_all() {
    let ws = Ws::new();
    ws.write("a.txt", "one\ntwo\n");
    ws.write("b.txt", "three\n");
    let err = ws
        .err(
            "apply_patch",
            patch("*** Add File: c.txt\n+new\n*** Update File: a.txt\n-one\n+ONE\n*** Update File: b.txt\n@@\n-four\n+FOUR\n*** Delete File: a.txt\n"),
        )
        .await;
    assert_eq!(
        err,
        "apply_patch failed; no files were changed.\nb.txt: could not find the expected lines (hunk 1):\nfour"
    );
    assert_eq!(
        (ws.read("a.txt"), ws.read("b.txt"), ws.exists("c.txt")),
        ("one\ntwo\n".into(), "three\n".into(), false)
    );
    assert_eq!(ws.names_in(""), ["a.txt", "b.txt"]);
}

#[tokio::test]
async fn every_failed_check_is_reported_and_changes_nothing() {
    let ws = Ws::new();
    ws.write("a.txt", "a\n");
    ws.write("b.txt", "b\n");
    ws.write("bin.dat", b"\0\x01");
    let cases = [
        ("*** Add File: a.txt\n+x\n", "a.txt: the file already exists; use '*** Update File: a.txt' to change it"),
        ("*** Delete File: nope.txt\n", "nope.txt: the file does not exist"),
        ("*** Update File: nope.txt\n-a\n+b\n", "nope.txt: the file does not exist"),
        (
            "*** Update File: a.txt\n*** Move to: b.txt\n-a\n+z\n",
            "b.txt: cannot move a.txt there: the file already exists",
        ),
        ("*** Update File: bin.dat\n-x\n+y\n", "bin.dat: the file is binary; apply_patch only handles UTF-8 text"),
        ("*** Delete File: bin.dat\n", "bin.dat: the file is binary; apply_patch only handles UTF-8 text"),
        (
            "*** Update File: a.txt\n@@ class Missing\n-a\n+b\n",
            "a.txt: could not find the line 'class Missing' of hunk 1",
        ),
        ("*** Delete File: a.txt\n*** Delete File: a.txt\n", "a.txt: the file does not exist"),
    ];
    for (body, reason) in cases {
        assert_eq!(
            ws.err("apply_patch", patch(body)).await,
            format!("apply_patch failed; no files were changed.\n{reason}"),
            "{body}"
        );
    }
    // Path refusals come first, whatever the patch's order, as `{path}: {reason}`, and keep
    // the policy's kind.
    let outside = ws.call("apply_patch", patch("*** Delete File: missing.txt\n*** Add File: ../evil.txt\n+x\n")).await;
    assert_eq!(outside.meta.error_kind, Some(ErrorKind::Denied));
    assert_eq!(
        outside.text_content(),
        format!(
            "apply_patch failed; no files were changed.\n../evil.txt: Path ../evil.txt is outside the workspace ({}). \
             Use a path inside it; the user can allow another directory with [workspace] extra_roots in {}.",
            ws.root.display(),
            tackle_policy::config::user_config_shown()
        )
    );
    let moved_out =
        ws.err("apply_patch", patch("*** Update File: a.txt\n*** Move to: /etc/evil.txt\n@@\n-a\n+b\n")).await;
    assert!(
        moved_out
            .starts_with("apply_patch failed; no files were changed.\n/etc/evil.txt: Path /etc/evil.txt is outside"),
        "{moved_out}"
    );
    let protected =
        ws.err("apply_patch", patch("*** Add File: ok.txt\n+x\n*** Add File: .git/hooks/post-checkout\n+x\n")).await;
    assert_eq!(
        protected,
        "apply_patch failed; no files were changed.\n.git/hooks/post-checkout: .git/hooks/post-checkout is inside a \
         protected directory (.git/); file tools cannot write there."
    );
    assert_eq!(ws.names_in(""), ["a.txt", "b.txt", "bin.dat"]);
    assert_eq!(ws.read("a.txt"), "a\n");
}

#[tokio::test]
async fn parse_errors_name_the_line_and_lenient_forms_work() {
    let ws = Ws::new();
    ws.write("a.txt", "x\n");
    assert_eq!(
        ws.err("apply_patch", json!({"input": "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n"})).await,
        "Invalid patch: the first line must be '*** Begin Patch' (line 1)"
    );
    let heredoc = "apply_patch <<'EOF'\n*** Begin Patch\n  *** Update File: a.txt  \n-x\n+y\n*** End Patch\nEOF\n";
    ws.ok("apply_patch", json!({"patch": heredoc})).await;
    assert_eq!(ws.read("a.txt"), "y\n");
    let err = ws.err("apply_patch", json!({})).await;
    assert_eq!(err, "No input provided for the apply_patch tool");
}

#[tokio::test]
async fn matching_tolerates_whitespace_and_typography_in_order() {
    let ws = Ws::new();
    ws.write("ws.py", "def f():  \n    if x:\n        return “quoted” — dash\n");
    ws.ok(
        "apply_patch",
        patch(
            "*** Update File: ws.py\n def f():\n   if x:\n-        return \"quoted\" - dash\n+        return 'plain'\n",
        ),
    )
    .await;
    assert_eq!(ws.read("ws.py"), "def f():  \n    if x:\n        return 'plain'\n");
}

#[tokio::test]
async fn headers_pick_the_place_and_end_of_file_anchors() {
    let ws = Ws::new();
    ws.write("f.py", "class A:\n    def run(self):\n        pass\n\nclass B:\n    def run(self):\n        pass\n");
    ws.ok(
        "apply_patch",
        patch("*** Update File: f.py\n@@ class B:\n     def run(self):\n-        pass\n+        return 2\n"),
    )
    .await;
    assert_eq!(
        ws.read("f.py"),
        "class A:\n    def run(self):\n        pass\n\nclass B:\n    def run(self):\n        return 2\n"
    );
    ws.write("g.txt", "end\nmiddle\nend\n");
    ws.ok("apply_patch", patch("*** Update File: g.txt\n@@\n-end\n+END\n*** End of File\n")).await;
    assert_eq!(ws.read("g.txt"), "end\nmiddle\nEND\n");
    // Several hunks apply in order, each after the previous one.
    ws.write("h.txt", "x\ny\nx\ny\n");
    ws.ok("apply_patch", patch("*** Update File: h.txt\n@@\n-x\n+1\n@@\n-x\n+2\n")).await;
    assert_eq!(ws.read("h.txt"), "1\ny\n2\ny\n");
    // A hunk with only additions appends at the end.
    ws.ok("apply_patch", patch("*** Update File: h.txt\n@@\n+appended\n")).await;
    assert_eq!(ws.read("h.txt"), "1\ny\n2\ny\nappended\n");
}

#[tokio::test]
async fn line_endings_are_kept_and_a_final_newline_added() {
    let ws = Ws::new();
    ws.write("win.txt", "a\r\nb\r\nc\r\n");
    ws.ok("apply_patch", patch("*** Update File: win.txt\n a\n-b\n+B\n+B2\n c\n")).await;
    assert_eq!(ws.read("win.txt"), "a\r\nB\r\nB2\r\nc\r\n");
    ws.write("mixed.txt", "a\nb\r\nc\nd");
    ws.ok("apply_patch", patch("*** Update File: mixed.txt\n-c\n+C\n")).await;
    assert_eq!(ws.read("mixed.txt"), "a\nb\r\nC\nd\n");
}

#[tokio::test]
async fn history_and_ledger_are_updated_for_every_file() {
    let ws = Ws::new();
    ws.write("a.txt", "a\n");
    ws.ok("apply_patch", patch("*** Update File: a.txt\n-a\n+A\n*** Add File: n.txt\n+n\n")).await;
    // The session wrote these, so it may overwrite them without a read.
    ws.ok("write_file", json!({"file_path": "a.txt", "content": "AA\n"})).await;
    ws.ok("str_replace_based_edit_tool", json!({"command": "undo_edit", "path": "a.txt"})).await;
    ws.ok("str_replace_based_edit_tool", json!({"command": "undo_edit", "path": "a.txt"})).await;
    assert_eq!(ws.read("a.txt"), "a\n");
    ws.ok("str_replace_based_edit_tool", json!({"command": "undo_edit", "path": "n.txt"})).await;
    assert!(!ws.exists("n.txt"));
    ws.ok("apply_patch", patch("*** Delete File: a.txt\n")).await;
    ws.ok("str_replace_based_edit_tool", json!({"command": "undo_edit", "path": "a.txt"})).await;
    assert_eq!(ws.read("a.txt"), "a\n");
}

#[tokio::test]
async fn a_write_that_fails_partway_restores_the_files_already_written() {
    let ws = Ws::new();
    ws.write("a.txt", "a\n");
    std::fs::create_dir(ws.path("locked")).unwrap();
    // An immutable directory refuses new files even to root; skip where the file system
    // has no such attribute (tmpfs).
    let locked = std::process::Command::new("chattr").arg("+i").arg(ws.path("locked")).status();
    if !locked.is_ok_and(|s| s.success()) {
        eprintln!("chattr +i is not available here; the partial-failure path is not exercised");
        return;
    }
    let err = ws.err("apply_patch", patch("*** Update File: a.txt\n-a\n+A\n*** Add File: locked/new.txt\n+x\n")).await;
    std::process::Command::new("chattr").arg("-i").arg(ws.path("locked")).status().unwrap();
    assert!(err.starts_with("apply_patch failed; no files were changed.\nlocked/new.txt: "), "{err}");
    assert_eq!(ws.read("a.txt"), "a\n");
    // Nothing was renamed: staging failed first. The journal is gone.
    assert_eq!(ws.names_in(""), [".tackle", "a.txt", "locked"]);
    assert_eq!(ws.names_in(".tackle/journal"), Vec::<String>::new());
    assert_eq!(ws.names_in("locked"), Vec::<String>::new());
}

#[tokio::test]
async fn a_trailing_blank_context_line_may_be_absent_from_the_file() {
    let ws = Ws::new();
    ws.write("f.txt", "a\nb");
    ws.ok("apply_patch", patch("*** Update File: f.txt\n@@\n a\n-b\n+c\n\n")).await;
    assert_eq!(ws.read("f.txt"), "a\nc\n");
}

#[tokio::test]
async fn the_public_entry_point_applies_a_shell_heredoc() {
    let ws = Ws::new();
    ws.write("a.txt", "x\n");
    let command = "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.txt\n-x\n+y\n*** End Patch\nEOF";
    let patch = tackle_tools::fs::patch::patch_from_command(command).unwrap();
    let ctx = ws.session.context("call_sh", "bash", tokio_util::sync::CancellationToken::new());
    let output = tackle_tools::fs::patch::apply_patch(&ctx, patch).await.unwrap();
    assert_eq!(output.text_content(), "Success. Updated the following files:\nM a.txt");
    assert_eq!(ws.read("a.txt"), "y\n");
}

#[tokio::test]
async fn a_directory_is_not_a_file_to_patch() {
    let ws = Ws::new();
    std::fs::create_dir(ws.path("src")).unwrap();
    assert_eq!(
        ws.err("apply_patch", patch("*** Update File: src\n-a\n+b\n")).await,
        "apply_patch failed; no files were changed.\nsrc: the path is a directory"
    );
    assert_eq!(
        ws.err("apply_patch", patch("*** Delete File: src\n")).await,
        "apply_patch failed; no files were changed.\nsrc: the path is a directory"
    );
    assert!(ws.path("src").is_dir());
}

#[tokio::test]
async fn the_approval_previews_every_file_the_patch_touches_and_writes_nothing() {
    let mut ws = Ws::new();
    let approver = ws.asking();
    ws.write("src/app.py", "import os\n\ndef main():\n    print('hi')\n    return 0\n");
    ws.write("old.txt", "bye\n");
    ws.write("src/util.py", "def helper():\n    pass\n");
    let body = "*** Add File: docs/new.md\n+# Title\n*** Update File: src/app.py\n@@ def main():\n-    print('hi')\n+    print('hello')\n     return 0\n*** Delete File: old.txt\n*** Update File: src/util.py\n*** Move to: src/helpers.py\n@@\n def helper():\n-    pass\n+    return 1\n";
    assert!(ws.call("apply_patch", patch(body)).await.is_error);
    assert_eq!(
        approver.take(),
        vec![Some(
            "--- /dev/null\n+++ b/docs/new.md\n@@ -0,0 +1 @@\n+# Title\n\
             --- a/src/app.py\n+++ b/src/app.py\n@@ -1,5 +1,5 @@\n import os\n \n def main():\n-    print('hi')\n+    print('hello')\n     return 0\n\
             --- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n\
             --- a/src/util.py\n+++ b/src/helpers.py\n@@ -1,2 +1,2 @@\n def helper():\n-    pass\n+    return 1\n"
                .to_owned()
        )]
    );
    assert!(!ws.exists("docs/new.md") && ws.exists("old.txt") && ws.exists("src/util.py"));
    assert_eq!(ws.read("src/app.py"), "import os\n\ndef main():\n    print('hi')\n    return 0\n");
}

#[tokio::test]
async fn a_patch_that_cannot_apply_previews_nothing_and_a_huge_one_is_cut_with_a_count() {
    let mut ws = Ws::new();
    let approver = ws.asking();
    ws.write("a.txt", "one\n");
    ws.write("bin.dat", b"\x00\x01\xffbinary\n");
    // A hunk that does not match, a binary file, a file that is not there, text that is not a patch.
    for body in [
        "*** Update File: a.txt\n@@\n-four\n+FOUR\n",
        "*** Update File: bin.dat\n@@\n-binary\n+text\n",
        "*** Delete File: absent.txt\n",
    ] {
        assert!(ws.call("apply_patch", patch(body)).await.is_error);
    }
    assert!(ws.call("apply_patch", json!({"input": "rm -rf /"})).await.is_error);
    assert_eq!(approver.take(), vec![None, None, None, None]);

    let big: String = (0..5000).map(|i| format!("line {i}\n")).collect();
    ws.write("big.txt", &big);
    assert!(ws.call("apply_patch", patch("*** Delete File: big.txt\n")).await.is_error);
    let preview = approver.take().pop().flatten().unwrap();
    assert!(preview.starts_with("--- a/big.txt\n+++ /dev/null\n@@ -1,5000 +0,0 @@\n-line 0\n"), "{preview:.80}");
    assert!(preview.ends_with("[... 4603 more diff lines]\n"), "{}", &preview[preview.len() - 60..]);
    assert_eq!(ws.read("big.txt"), big);
}
