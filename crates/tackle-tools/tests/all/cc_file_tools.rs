//! Claude Code-style `read_file`, `write_file` and `edit_file` (docs/reference/tools.md#read_file) on real files:
//! every message, the read requirement and stale check (enforced in sessions, skipped in a
//! one-shot call), and the bytes outside an edit kept exactly.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Ws, age};
use pretty_assertions::assert_eq;
use serde_json::json;

fn read(path: &str) -> serde_json::Value {
    json!({"file_path": path})
}

fn edit(path: &str, old: &str, new: &str) -> serde_json::Value {
    json!({"file_path": path, "old_string": old, "new_string": new})
}

#[tokio::test]
async fn read_file_numbers_lines_and_pages_with_offset_and_limit() {
    let ws = Ws::new();
    ws.write("f.txt", "one\n\ttwo\r\nthree\n");
    assert_eq!(ws.ok("read_file", read("f.txt")).await, "     1\tone\n     2\t\ttwo\n     3\tthree");
    assert_eq!(
        ws.ok("Read", json!({"file_path": "f.txt", "offset": 2, "limit": 1})).await,
        "     2\t\ttwo\n(Showing lines 2-2 of 3. Use offset=3 to continue.)"
    );
    assert_eq!(ws.ok("read_file", json!({"file_path": "f.txt", "offset": "3"})).await, "     3\tthree");
    assert_eq!(
        ws.err("read_file", json!({"file_path": "f.txt", "offset": 4})).await,
        "offset 4 is past the end of the file (3 lines)"
    );
    let err = ws.err("read_file", json!({"file_path": "f.txt", "offset": 0})).await;
    assert!(err.contains("offset must be >= 1"), "{err}");
    ws.write("g.txt", "no final newline");
    assert_eq!(ws.ok("read_file", read("g.txt")).await, "     1\tno final newline");
}

#[tokio::test]
async fn read_file_cuts_long_lines_and_keeps_its_output_under_50k() {
    let ws = Ws::new();
    ws.write("wide.txt", format!("{}\nshort\n", "w".repeat(2500)));
    assert_eq!(
        ws.ok("read_file", read("wide.txt")).await,
        format!("     1\t{}… [line truncated, 2500 chars]\n     2\tshort", "w".repeat(2000))
    );
    let many: String = (0..2000).map(|i| format!("{i:04} {}\n", "x".repeat(95))).collect();
    ws.write("many.txt", &many);
    let out = ws.ok("read_file", read("many.txt")).await;
    // 108 characters per numbered line with its newline: 462 whole lines fit in 50,000.
    assert!(out.chars().count() <= 50_000);
    assert!(
        out.ends_with("\n(Showing lines 1-462 of 2000. Use offset=463 to continue.)"),
        "{}",
        &out[out.len() - 100..]
    );
    let output = ws.call("read_file", read("many.txt")).await;
    assert!(!output.meta.truncated && output.meta.spill_path.is_none());
}

#[tokio::test]
async fn read_file_errors_say_what_to_do() {
    let ws = Ws::new();
    ws.write("src/Main.rs", "fn main() {}\n");
    ws.write("empty.txt", "");
    assert_eq!(
        ws.err("read_file", read("src/main.rs")).await,
        "File does not exist: src/main.rs. Did you mean src/Main.rs?"
    );
    assert_eq!(
        ws.err("read_file", read("src/Mian.rs")).await,
        "File does not exist: src/Mian.rs. Did you mean src/Main.rs?"
    );
    assert_eq!(ws.err("read_file", read("nothing/here.rs")).await, "File does not exist: nothing/here.rs");
    assert_eq!(ws.err("read_file", read("src")).await, "src is a directory. Use glob, or bash ls, to list it.");
    assert_eq!(ws.ok("read_file", read("empty.txt")).await, "(the file exists but is empty)");
    ws.write("big.txt", "y".repeat(300 * 1024));
    assert_eq!(
        ws.err("read_file", read("big.txt")).await,
        "File content (300.0 KiB) exceeds maximum allowed size (256 KiB). Use offset and limit to read part of it, or grep to search it."
    );
    assert!(
        ws.ok("read_file", json!({"file_path": "big.txt", "limit": 1}))
            .await
            .ends_with("… [line truncated, 307200 chars]")
    );
    ws.write("data.bin", b"\x7fELF\x02\x01\0\0");
    assert_eq!(
        ws.err("read_file", read("data.bin")).await,
        "data.bin is a binary file; this tool only handles UTF-8 text"
    );
    // A PNG signature makes it an image (docs/reference/tools.md#images): a cut one says so.
    ws.write("img.png", b"\x89PNG\r\n\x1a\n\0\0");
    assert_eq!(
        ws.err("read_file", read("img.png")).await,
        "img.png: the file starts like an image (image/png) but its header cannot be read: unexpected end of file"
    );
    let out = ws.call("read_file", read("/dev/zero")).await;
    assert!(out.meta.rejected, "{out:?}");
    assert_eq!(out.text_content(), "Reading /dev/zero is blocked (device path).");
    assert_eq!(ws.err("read_file", json!({})).await, "No file_path provided for the read_file tool");
}

#[tokio::test]
async fn a_gigabyte_file_is_read_in_part_without_loading_it() {
    let ws = Ws::new();
    let path = ws.path("huge.txt");
    let file = std::fs::File::create(&path).unwrap();
    // 1 GiB: a text head, then a sparse tail of NUL bytes (valid UTF-8, past the sniffed head).
    std::io::Write::write_all(&mut &file, "first line\nsecond line\n".repeat(1000).as_bytes()).unwrap();
    file.set_len(1 << 30).unwrap();
    let err = ws.err("read_file", read("huge.txt")).await;
    assert!(err.starts_with("File content (1.0 GiB) exceeds maximum allowed size"), "{err}");
    assert_eq!(
        ws.ok("read_file", json!({"file_path": "huge.txt", "offset": 2, "limit": 2})).await,
        "     2\tsecond line\n     3\tfirst line\n(Showing lines 2-3 of 2001. Use offset=4 to continue.)"
    );
    let out = ws.ok("str_replace_based_edit_tool", json!({"command": "view", "path": "huge.txt"})).await;
    assert!(
        out.ends_with("Showing lines 1-1391 of 2001. Use view_range, or grep -n, to reach the rest.</NOTE>"),
        "{}",
        &out[out.len() - 100..]
    );
}

#[tokio::test]
async fn write_file_creates_and_overwrites_only_what_was_read() {
    let ws = Ws::new();
    assert_eq!(
        ws.ok("write_file", json!({"file_path": "new/dir/a.txt", "content": "hello\n"})).await,
        "File created successfully at: new/dir/a.txt"
    );
    assert_eq!(ws.read("new/dir/a.txt"), "hello\n");
    // Writing what the session itself wrote needs no read.
    ws.ok("write_file", json!({"file_path": "new/dir/a.txt", "content": "again\n"})).await;
    ws.write("old.txt", "original\n");
    assert_eq!(
        ws.err("Write", json!({"file_path": "old.txt", "content": "x"})).await,
        "File has not been read yet. Read it first before writing to it."
    );
    ws.ok("read_file", read("old.txt")).await;
    age(&ws.path("old.txt"));
    ws.write("old.txt", "changed by a linter\n");
    assert_eq!(
        ws.err("write_file", json!({"file_path": "old.txt", "content": "x"})).await,
        "File has been modified since read, either by the user or by a linter. Read it again before attempting to write it."
    );
    ws.ok("read_file", read("old.txt")).await;
    assert_eq!(
        ws.ok("write_file", json!({"file_path": "old.txt", "content": "a\nb\nc"})).await,
        "The file old.txt has been overwritten (3 lines)."
    );
    assert_eq!(ws.read("old.txt"), "a\nb\nc");
    let err = ws.err("write_file", json!({"file_path": "new", "content": "x"})).await;
    assert_eq!(err, "new is a directory. Give the path of a file.");
}

#[tokio::test]
async fn write_file_keeps_crlf_and_permissions_and_is_undoable() {
    use std::os::unix::fs::PermissionsExt as _;
    let ws = Ws::new();
    ws.write("run.bat", "@echo off\r\necho hi\r\n");
    std::fs::set_permissions(ws.path("run.bat"), std::fs::Permissions::from_mode(0o755)).unwrap();
    ws.ok("read_file", read("run.bat")).await;
    ws.ok("write_file", json!({"file_path": "run.bat", "content": "@echo on\necho bye\n"})).await;
    assert_eq!(ws.read("run.bat"), "@echo on\r\necho bye\r\n");
    assert_eq!(std::fs::metadata(ws.path("run.bat")).unwrap().permissions().mode() & 0o777, 0o755);
    ws.ok("str_replace_based_edit_tool", json!({"command": "undo_edit", "path": "run.bat"})).await;
    assert_eq!(ws.read("run.bat"), "@echo off\r\necho hi\r\n");
    assert_eq!(ws.names_in(""), ["run.bat"]);
}

#[tokio::test]
async fn a_one_shot_call_needs_no_earlier_read() {
    let ws = Ws::one_shot();
    ws.write("old.txt", "original\n");
    ws.ok("write_file", json!({"file_path": "old.txt", "content": "replaced\n"})).await;
    ws.ok("edit_file", edit("old.txt", "replaced", "edited")).await;
    assert_eq!(ws.read("old.txt"), "edited\n");
}

#[tokio::test]
async fn edit_file_replaces_one_occurrence_and_shows_a_snippet() {
    let ws = Ws::new();
    ws.write("f.rs", "fn a() {\n    1\n}\nfn b() {\n    2\n}\n");
    ws.ok("read_file", read("f.rs")).await;
    assert_eq!(
        ws.ok("Edit", edit("f.rs", "    2\n", "    20\n    21\n")).await,
        "The file f.rs has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n     1\tfn a() {\n     2\t    1\n     3\t}\n     4\tfn b() {\n     5\t    20\n     6\t    21\n     7\t}\n     8\t"
    );
    assert_eq!(ws.read("f.rs"), "fn a() {\n    1\n}\nfn b() {\n    20\n    21\n}\n");
}

#[tokio::test]
async fn edit_file_many_matches_replace_all_and_crlf() {
    let ws = Ws::new();
    ws.write("f.txt", "x = 1\r\ny = x\r\nz = x\r\n");
    ws.ok("read_file", read("f.txt")).await;
    assert_eq!(
        ws.err("edit_file", edit("f.txt", "x", "w")).await,
        "Found 3 matches of the string to replace, but replace_all is false. To replace all occurrences, set replace_all to true. To replace only one occurrence, please provide more context to uniquely identify the instance.\nMatches start at lines [1, 2, 3]."
    );
    let out = ws
        .ok("edit_file", json!({"file_path": "f.txt", "old_string": "x", "new_string": "w", "replace_all": true}))
        .await;
    assert!(out.starts_with("The file f.txt has been updated. All 3 occurrences were replaced.\n"), "{out}");
    assert_eq!(ws.read("f.txt"), "w = 1\r\ny = w\r\nz = w\r\n");
    // An LF old_string matches CRLF lines and the new text takes CRLF.
    ws.ok("edit_file", edit("f.txt", "y = w\nz = w", "y = 2\nz = 3")).await;
    assert_eq!(ws.read("f.txt"), "w = 1\r\ny = 2\r\nz = 3\r\n");
    // Overlapping occurrences are ambiguous too.
    ws.write("aaa.txt", "aaa");
    ws.ok("read_file", read("aaa.txt")).await;
    let err = ws.err("edit_file", edit("aaa.txt", "aa", "b")).await;
    assert!(err.starts_with("Found 2 matches of the string to replace"), "{err}");
    ws.ok("edit_file", json!({"file_path": "aaa.txt", "old_string": "aa", "new_string": "b", "replace_all": true}))
        .await;
    assert_eq!(ws.read("aaa.txt"), "ba");
}

#[tokio::test]
async fn edit_file_errors() {
    let ws = Ws::new();
    ws.write("f.py", "def total(items):\n    return sum(items)\n");
    assert_eq!(
        ws.err("edit_file", edit("f.py", "same", "same")).await,
        "No changes to make: old_string and new_string are exactly the same."
    );
    assert_eq!(
        ws.err("edit_file", edit("f.py", "total", "sum")).await,
        "File has not been read yet. Read it first before writing to it."
    );
    ws.ok("read_file", read("f.py")).await;
    assert_eq!(
        ws.err("edit_file", edit("f.py", "def total(items):\n  return sum(items)", "x")).await,
        "String to replace not found in file.\nThe most similar text is at lines 1-2 of f.py:\n     1\tdef total(items):\n     2\t    return sum(items)\n(differs only in whitespace)"
    );
    assert_eq!(
        ws.err("edit_file", edit("f.py", "", "x")).await,
        "old_string is empty but f.py already exists; use write_file to replace it."
    );
    assert_eq!(ws.err("edit_file", edit("missing.py", "a", "b")).await, "File does not exist: missing.py");
    // An empty old_string on a missing file creates it, no read needed.
    assert_eq!(ws.ok("edit_file", edit("made.py", "", "print(1)\n")).await, "File created successfully at: made.py");
    assert_eq!(ws.read("made.py"), "print(1)\n");
    ws.write("bin.dat", b"\0\x01\x02");
    ws.ok("read_file", read("f.py")).await;
    assert_eq!(
        ws.err("edit_file", edit("bin.dat", "a", "b")).await,
        "bin.dat is a binary file; this tool only handles UTF-8 text"
    );
    assert_eq!(ws.read("f.py"), "def total(items):\n    return sum(items)\n");
    let out = ws.call("edit_file", edit("tackle.toml", "", "[workspace]\nextra_roots = [\"/\"]\n")).await;
    assert!(out.meta.rejected);
    assert_eq!(
        out.text_content(),
        "tackle.toml is inside a protected directory (tackle.toml); file tools cannot write there."
    );
}

#[tokio::test]
async fn edit_file_on_a_directory_says_so() {
    let ws = Ws::new();
    std::fs::create_dir(ws.path("src")).unwrap();
    assert_eq!(ws.err("edit_file", edit("src", "a", "b")).await, "src is a directory. Give the path of a file.");
}

/// With `.git` a symlink to `gitstore/` (or a `gitdir:` file), `gitstore/config` is what a host
/// `git` reads: `edit_file` and `write_file` refuse it as they refuse `.git/config`, and a host
/// `git status` afterwards runs nothing planted (issue 24 point 7).
#[tokio::test]
async fn file_tools_refuse_the_real_git_directory() {
    for pointer in ["symlink", "gitdir file"] {
        let ws = Ws::new();
        let git =
            |args: &[&str]| std::process::Command::new("git").args(args).current_dir(ws.path("")).output().unwrap();
        assert!(git(&["init", "-q"]).status.success());
        std::fs::rename(ws.path(".git"), ws.path("gitstore")).unwrap();
        match pointer {
            "symlink" => std::os::unix::fs::symlink("gitstore", ws.path(".git")).unwrap(),
            _ => ws.write(".git", "gitdir: gitstore\n"),
        }
        let config = ws.read("gitstore/config");
        let planted = "[core]\n\tfsmonitor = \"touch pwned; false\"\n";
        for (tool, args) in [
            ("edit_file", edit("gitstore/config", "[core]", planted)),
            ("write_file", json!({"file_path": "gitstore/config", "content": planted})),
            ("write_file", json!({"file_path": "gitstore/hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"})),
            ("edit_file", edit("gitstore/hooks/post-checkout", "", "#!/bin/sh\ntouch pwned\n")),
        ] {
            let out = ws.call(tool, args).await;
            assert!(out.meta.rejected, "{pointer}: {tool}: {}", out.text_content());
            assert!(
                out.text_content().contains("(gitstore/, the git directory .git leads to); file tools cannot write"),
                "{pointer}: {}",
                out.text_content()
            );
        }
        assert_eq!(ws.read("gitstore/config"), config, "{pointer}");
        assert!(!ws.exists("gitstore/hooks/pre-commit"), "{pointer}");
        assert!(git(&["status", "--short"]).status.success(), "{pointer}");
        assert!(!ws.exists("pwned"), "{pointer}");
        // Work outside it goes on.
        ws.ok("write_file", json!({"file_path": "notes.txt", "content": "ok\n"})).await;
    }
}
