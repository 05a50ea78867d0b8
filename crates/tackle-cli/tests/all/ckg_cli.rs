//! `tackle ckg` through the real binary: every command's text and JSON, the index in
//! `DIR/.tackle/ckg/index.db`, two indexing processes at once, the progress bar on a
//! terminal, and a tree of 200,000 files indexed in bounded memory.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use pretty_assertions::assert_eq;
use serde_json::Value;

fn tackle(dir: &Path) -> Command {
    let mut command = Command::cargo_bin("tackle").unwrap();
    command.current_dir(dir).env("TACKLE_CONFIG_DIR", dir.join(".no-user-config"));
    command
}

fn run(dir: &Path, args: &[&str]) -> Output {
    let output = tackle(dir).args(args).output().unwrap();
    assert!(output.status.success(), "tackle {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    output
}

fn text(dir: &Path, args: &[&str]) -> String {
    String::from_utf8(run(dir, args).stdout).unwrap().trim_end().to_owned()
}

fn json(dir: &Path, args: &[&str]) -> Value {
    let mut args = args.to_vec();
    args.push("--json");
    serde_json::from_slice(&run(dir, &args).stdout).unwrap()
}

fn tree() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("repo");
    std::fs::create_dir(&root).unwrap();
    let write = |rel: &str, content: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    };
    write(
        "lib/shapes.py",
        "class Shape:\n    def area(self):\n        return 0\n\n\ndef make():\n    return Shape()\n",
    );
    write("app.py", "from lib.shapes import make\n\ndef main():\n    make()\n");
    write("big.py", &format!("def big():\n    pass\n{}", "#\n".repeat(1_100_000)));
    (dir, root)
}

#[test]
fn index_then_every_query_in_text_and_json() {
    let (_dir, root) = tree();
    let out = text(&root, &["ckg", "index"]);
    assert!(
        out.starts_with(&format!(
            "Indexed {}: 2 files, 4 symbols, 3 references; skipped 1 files (1 too large) and 0 symlinks; 2 extracted",
            root.display()
        )),
        "{out}"
    );
    assert!(root.join(".tackle/ckg/index.db").is_file());

    assert_eq!(
        text(&root, &["ckg", "search", "function", "make"]),
        "Found 1 function named make:\n1. lib/shapes.py:6-7"
    );
    assert_eq!(
        text(&root, &["ckg", "search", "function", "make", "--body"]),
        "Found 1 function named make:\n1. lib/shapes.py:6-7\ndef make():\n    return Shape()"
    );
    assert_eq!(
        text(&root, &["ckg", "search", "class", "Shape"]),
        "Found 1 class named Shape:\n1. lib/shapes.py:1-3\nMethods:\n- def area(self)"
    );
    assert_eq!(
        text(&root, &["ckg", "search", "method", "area"]),
        "Found 1 class method named area:\n1. lib/shapes.py:2-3 within class Shape"
    );
    assert_eq!(text(&root, &["ckg", "search", "any", "mak"]), "function lib.shapes.make lib/shapes.py:6-7");
    assert_eq!(text(&root, &["ckg", "refs", "make"]), "Found 1 reference to make:\napp.py:4 in app.main (call)");
    assert_eq!(
        text(&root, &["ckg", "outline", "lib/shapes.py"]),
        "lib/shapes.py\n1-3 class class Shape\n  2-3 method def area(self)\n6-7 function def make()"
    );
    let map = text(&root, &["ckg", "map"]);
    assert_eq!(map, "lib/shapes.py:\n│ class Shape\n│   def area(self)\n│ def make()\napp.py:\n│ def main()");
    assert_eq!(text(&root, &["ckg", "map", "lib"]).lines().next(), Some("shapes.py:"));

    let found = json(&root, &["ckg", "search", "function", "make"]);
    assert_eq!(found["definitions"][0]["file"], "lib/shapes.py");
    assert_eq!(found["definitions"][0]["qualified"], "lib.shapes.make");
    assert!(found["timing"]["query_ms"].as_f64().unwrap() >= 0.0);
    let refs = json(&root, &["ckg", "refs", "make"]);
    assert_eq!(refs["total"], 1);
    assert_eq!(refs["references"][0]["enclosing"], "app.main");
    let stats = json(&root, &["ckg", "stats"]);
    assert_eq!((stats["files"].as_u64(), stats["symbols"].as_u64()), (Some(2), Some(4)));
    assert_eq!(stats["skipped"]["too_large"], 1);
    let indexed = json(&root, &["ckg", "index"]);
    assert_eq!(indexed["refresh"]["extracted"], 0, "nothing changed: {indexed}");
    assert_eq!(json(&root, &["ckg", "outline", "app.py"])["definitions"][0]["definition"]["name"], "main");
}

#[test]
fn queries_refresh_first_and_errors_go_to_stderr() {
    let (_dir, root) = tree();
    run(&root, &["ckg", "index"]);
    std::fs::write(root.join("app.py"), "def renamed():\n    pass\n").unwrap();
    assert_eq!(
        text(&root, &["ckg", "search", "function", "renamed"]),
        "Found 1 function named renamed:\n1. app.py:1-2"
    );
    let out = tackle(&root).args(["ckg", "outline", "missing.py"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.py"));
    std::fs::write(root.join("notes.txt"), "x").unwrap();
    let out = tackle(&root).args(["ckg", "outline", "notes.txt"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not in a supported language"), "{out:?}");
}

#[test]
fn two_indexing_processes_at_once_both_succeed_and_agree() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    for i in 0..1_500 {
        let path = root.join(format!("pkg{}/m{i}.py", i % 30));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, format!("def f{i}():\n    return f{}()\n", (i + 1) % 1_500)).unwrap();
    }
    let spawn = || {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("tackle"))
            .args(["ckg", "index", "--json"])
            .current_dir(&root)
            .env("TACKLE_CONFIG_DIR", root.join(".no-user-config"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (one, two) = (spawn(), spawn());
    let (one, two) = (one.wait_with_output().unwrap(), two.wait_with_output().unwrap());
    assert!(one.status.success() && two.status.success(), "{one:?} {two:?}");
    let reports: Vec<Value> = [one, two].iter().map(|o| serde_json::from_slice(&o.stdout).unwrap()).collect();
    let extracted: Vec<u64> = reports.iter().map(|r| r["refresh"]["extracted"].as_u64().unwrap()).collect();
    // One indexed everything; the other waited for the lock, then found nothing to do.
    assert_eq!(extracted.iter().sum::<u64>(), 1_500, "{extracted:?}");
    for report in &reports {
        assert_eq!(
            (report["stats"]["files"].as_u64(), report["stats"]["symbols"].as_u64()),
            (Some(1_500), Some(1_500))
        );
    }
}

#[test]
fn indexing_on_a_terminal_shows_a_progress_bar() {
    let (_dir, root) = tree();
    for i in 0..1_000 {
        std::fs::write(root.join(format!("f{i}.py")), format!("def g{i}():\n    pass\n")).unwrap();
    }
    // `script` runs the command on a pseudo-terminal.
    let binary = assert_cmd::cargo::cargo_bin("tackle");
    let output = std::process::Command::new("script")
        .args(["-qfec", &format!("{} ckg index", binary.display()), "/dev/null"])
        .current_dir(&root)
        .env("TACKLE_CONFIG_DIR", root.join(".no-user-config"))
        .output()
        .expect("script (util-linux) runs a command on a terminal");
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{shown}");
    assert!(shown.contains("indexing") && shown.contains("/1003 files"), "{shown}");
    assert!(shown.contains("Indexed"), "{shown}");
}

/// Peak memory of the largest child waited for, in KiB.
fn children_peak_kib() -> i64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a whole rusage into the pointer it is given.
    assert_eq!(unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, usage.as_mut_ptr()) }, 0);
    // SAFETY: initialised by the successful call above.
    unsafe { usage.assume_init() }.ru_maxrss
}

#[test]
fn two_hundred_thousand_files_are_indexed_in_bounded_memory() {
    const FILES: usize = 200_000;
    // In memory where there is a tmpfs: 200,000 files would take 800 MB of disk blocks.
    let dir = tempfile::tempdir_in("/dev/shm").or_else(|_| tempfile::tempdir()).unwrap();
    let root = dir.path().canonicalize().unwrap();
    for i in 0..FILES {
        let folder = root.join(format!("d{}/e{}", i / 10_000, (i / 100) % 100));
        if i % 100 == 0 {
            std::fs::create_dir_all(&folder).unwrap();
        }
        std::fs::write(folder.join(format!("f{i}.py")), format!("def f{i}(): pass\n")).unwrap();
    }
    let report = json(&root, &["ckg", "index"]);
    assert_eq!(report["stats"]["files"].as_u64(), Some(FILES as u64), "{report}");
    assert_eq!(report["stats"]["symbols"].as_u64(), Some(FILES as u64));
    let peak_mib = children_peak_kib() / 1024;
    // Rows stream into the transaction (SQLite spills to its journal); what stays in memory
    // is one stat per file for the comparison with the index.
    assert!(peak_mib < 300, "peak memory {peak_mib} MiB");
    // A second run only stats: nothing is read.
    let again = json(&root, &["ckg", "index"]);
    assert_eq!(again["refresh"]["extracted"], 0);
    eprintln!("200,000 files: peak {peak_mib} MiB, first index {} s", report["seconds"]);
}
