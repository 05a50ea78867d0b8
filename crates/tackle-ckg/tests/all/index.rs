//! The index on real files in temp dirs: build, incremental refresh, the walk's rules, the
//! limits, and every bad input of issue 17 (old schema, corrupt or planted database, two
//! indexers, symlink loops, non-UTF-8 names, a large tree with bounded memory).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use tackle_ckg::{Category, CkgError, Index, IndexOptions, Within};

struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Tree {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap().join("repo");
        std::fs::create_dir(&root).unwrap();
        Tree { _dir: dir, root }
    }

    /// Writes a file dated in the past, so it is not "racy" (changed within the stat
    /// tolerance of the index) and a refresh with nothing changed reads nothing.
    fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        age(&path);
    }

    fn index(&self) -> Index {
        Index::open(&self.root, IndexOptions::default()).unwrap()
    }

    fn db(&self) -> PathBuf {
        self.root.join(".tackle/ckg/index.db")
    }
}

/// Dates a file back a day.
fn age(path: &Path) {
    let day_ago = std::time::SystemTime::now() - Duration::from_secs(86_400);
    std::fs::File::options().write(true).open(path).unwrap().set_modified(day_ago).unwrap();
}

fn refresh(index: &mut Index) -> tackle_ckg::RefreshReport {
    index.refresh(&mut |_, _| {}, &|| false).unwrap()
}

fn functions(index: &Index, name: &str) -> Vec<String> {
    index.definitions(name, Category::Function, &Within::root()).unwrap().into_iter().map(|d| d.file).collect()
}

#[test]
fn a_build_indexes_every_language_and_a_second_refresh_reads_nothing() {
    let tree = Tree::new();
    tree.write("a.py", "def py_fn():\n    pass\n");
    tree.write("src/b.rs", "fn rs_fn() {}\n");
    tree.write("c.js", "function js_fn() {}\n");
    tree.write("d.ts", "function ts_fn() {}\n");
    tree.write("e.tsx", "function tsx_fn() { return <a/> }\n");
    tree.write("f.go", "package f\nfunc go_fn() {}\n");
    tree.write("G.java", "class G { void java_m() {} }\n");
    tree.write("h.c", "int c_fn(void) { return 0; }\n");
    tree.write("i.cpp", "int cpp_fn() { return 0; }\n");
    // Headers: C, unless they read as C++.
    tree.write("j.h", "struct c_header { int x; };\nint c_decl(void);\n");
    tree.write("k.h", "namespace n {\nclass CppHeader {\n public:\n  int m() { return 0; }\n};\n}\n");
    tree.write("notes.txt", "def not_code(): pass\n");
    let mut index = tree.index();
    let report = refresh(&mut index);
    assert_eq!(report.extracted, 11, "{report:?}");
    for name in ["py_fn", "rs_fn", "js_fn", "ts_fn", "tsx_fn", "go_fn", "c_fn", "cpp_fn"] {
        assert_eq!(functions(&index, name).len(), 1, "{name}");
    }
    assert_eq!(index.definitions("java_m", Category::Method, &Within::root()).unwrap().len(), 1);
    let stats = index.stats().unwrap();
    assert_eq!(stats.files, 11);
    assert_eq!(stats.languages.len(), 9, "{stats:?}");
    assert_eq!((stats.languages["c"], stats.languages["cpp"]), (2, 2), "{stats:?}");
    let header = index.definitions("CppHeader", Category::Class, &Within::root()).unwrap();
    assert_eq!(header.len(), 1);
    assert_eq!(header[0].qualified, "n::CppHeader", "read as C++, namespace and all");
    assert_eq!(index.definitions("m", Category::Method, &Within::root()).unwrap().len(), 1);
    assert!(tree.db().is_file());

    let again = refresh(&mut index);
    assert_eq!((again.extracted, again.unchanged, again.removed), (0, 0, 0), "{again:?}");
}

#[test]
fn a_refresh_sees_edits_additions_and_deletions_and_rereads_only_those() {
    let tree = Tree::new();
    tree.write("a.py", "def one():\n    pass\n");
    tree.write("b.py", "def two():\n    pass\n");
    tree.write("c.py", "def three():\n    pass\n");
    let mut index = tree.index();
    refresh(&mut index);
    tree.write("a.py", "def one_renamed():\n    pass\n");
    std::fs::remove_file(tree.root.join("b.py")).unwrap();
    tree.write("d.py", "def four():\n    pass\n");
    let report = refresh(&mut index);
    assert_eq!((report.extracted, report.removed), (2, 1), "{report:?}");
    assert!(functions(&index, "one").is_empty());
    assert_eq!(functions(&index, "one_renamed"), ["a.py"]);
    assert!(functions(&index, "two").is_empty());
    assert_eq!(functions(&index, "four"), ["d.py"]);
    assert_eq!(functions(&index, "three"), ["c.py"]);
}

#[test]
fn a_touch_rehashes_without_extracting_and_a_same_size_edit_in_the_same_tick_is_seen() {
    let tree = Tree::new();
    let path = tree.root.join("a.py");
    // Not aged: written, indexed and rewritten (same size) within a few milliseconds, so
    // size, mtime and ctime usually all look the same (timestamps are coarse). The file was
    // stamped within the racy window, so the refresh re-hashes it anyway.
    std::fs::write(&path, "def aaa():\n    pass\n").unwrap();
    let mut index = tree.index();
    refresh(&mut index);
    std::fs::write(&path, "def bbb():\n    pass\n").unwrap();
    refresh(&mut index);
    assert_eq!(functions(&index, "bbb"), ["a.py"]);
    assert!(functions(&index, "aaa").is_empty());
    // A touch: re-hashed, same content, nothing extracted.
    age(&path);
    let report = refresh(&mut index);
    assert_eq!((report.extracted, report.unchanged), (0, 1), "{report:?}");
    // Once the file is out of the racy window, an unchanged stat means no read at all.
    let report = refresh(&mut index);
    assert_eq!((report.extracted, report.unchanged), (0, 0), "{report:?}");
}

#[test]
fn refresh_files_reindexes_just_the_named_files() {
    let tree = Tree::new();
    tree.write("a.py", "def alpha():\n    pass\n");
    tree.write("b.py", "def beta():\n    pass\n");
    let mut index = tree.index();
    refresh(&mut index);
    tree.write("a.py", "def alpha2():\n    pass\n");
    tree.write("b.py", "def beta2():\n    pass\n");
    tree.write("c.py", "def gamma():\n    pass\n");
    let report = index
        .refresh_files(&[tree.root.join("a.py"), tree.root.join("c.py"), PathBuf::from("/elsewhere/x.py")])
        .unwrap();
    assert_eq!(report.extracted, 2, "{report:?}");
    assert_eq!(functions(&index, "alpha2"), ["a.py"]);
    assert_eq!(functions(&index, "gamma"), ["c.py"]);
    assert_eq!(functions(&index, "beta"), ["b.py"], "b.py was not named, so it is not read");
    std::fs::remove_file(tree.root.join("a.py")).unwrap();
    assert_eq!(index.refresh_files(&[tree.root.join("a.py")]).unwrap().removed, 1);
}

#[test]
fn the_walk_honours_gitignore_and_skips_hidden_entries_below_the_root_only() {
    let dir = tempfile::tempdir().unwrap();
    // Trae indexed nothing under a hidden ancestor: the root here sits in one.
    let root = dir.path().canonicalize().unwrap().join(".cache/project");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let write = |rel: &str, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(".gitignore", "build/\n*.gen.py\n");
    write("src/kept.py", "def kept():\n    pass\n");
    write("build/out.py", "def ignored_dir():\n    pass\n");
    write("src/x.gen.py", "def ignored_glob():\n    pass\n");
    write(".hidden/h.py", "def hidden_dir():\n    pass\n");
    write("src/.h.py", "def hidden_file():\n    pass\n");
    let mut index = Index::open(&root, IndexOptions::default()).unwrap();
    refresh(&mut index);
    assert_eq!(functions(&index, "kept"), ["src/kept.py"]);
    for name in ["ignored_dir", "ignored_glob", "hidden_dir", "hidden_file"] {
        assert!(functions(&index, name).is_empty(), "{name}");
    }
}

#[test]
fn large_and_binary_files_are_skipped_and_counted() {
    let tree = Tree::new();
    tree.write("big.py", format!("def big():\n    pass\n{}", "# filler\n".repeat(300_000)));
    tree.write("bin.py", b"def binary():\n    pass\n\0\0\0");
    tree.write("ok.py", "def ok():\n    pass\n");
    let mut index = tree.index();
    let report = refresh(&mut index);
    assert_eq!((report.extracted, report.skipped), (1, 2), "{report:?}");
    let stats = index.stats().unwrap();
    assert_eq!(stats.skipped.get("too_large"), Some(&1), "{stats:?}");
    assert_eq!(stats.skipped.get("binary"), Some(&1), "{stats:?}");
    assert!(functions(&index, "big").is_empty() && functions(&index, "binary").is_empty());
    // Skipped files are not read again while they do not change.
    assert_eq!(refresh(&mut index).skipped, 0);
}

#[test]
fn a_pathological_file_is_stopped_by_the_time_limit_and_the_rest_is_indexed() {
    let tree = Tree::new();
    // One flat error node of a million children: tree-sitter's query cursor needs hours for
    // it (quadratic), without yielding a single match.
    tree.write("hostile.py", "(".repeat(1_000_000));
    for i in 0..8 {
        tree.write(&format!("ok{i}.py"), format!("def quick{i}():\n    pass\n"));
    }
    let options = IndexOptions { file_time: Duration::from_millis(300), ..IndexOptions::default() };
    let mut index = Index::open(&tree.root, options).unwrap();
    let report = refresh(&mut index);
    assert_eq!((report.extracted, report.skipped), (8, 1), "{report:?}");
    let stats = index.stats().unwrap();
    assert_eq!(stats.skipped.get("timeout"), Some(&1), "{stats:?}");
    assert_eq!(functions(&index, "quick7"), ["ok7.py"]);
    // It is not tried again until it changes.
    assert_eq!(refresh(&mut index).skipped, 0);
}

#[test]
fn symlinks_are_never_followed_so_loops_and_escapes_are_harmless() {
    let tree = Tree::new();
    let outside = tree.root.parent().unwrap().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("secret.py"), "def secret():\n    pass\n").unwrap();
    tree.write("a/real.py", "def real():\n    pass\n");
    std::os::unix::fs::symlink(&tree.root, tree.root.join("a/loop")).unwrap();
    std::os::unix::fs::symlink("../a", tree.root.join("a/up")).unwrap();
    std::os::unix::fs::symlink(&outside, tree.root.join("escape")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.py"), tree.root.join("link.py")).unwrap();
    let mut index = tree.index();
    refresh(&mut index);
    assert_eq!(functions(&index, "real"), ["a/real.py"]);
    assert!(functions(&index, "secret").is_empty());
    assert_eq!(index.stats().unwrap().symlinks, 4);
}

#[test]
fn non_utf8_file_names_are_indexed_and_shown_lossily() {
    let tree = Tree::new();
    let name = std::ffi::OsStr::from_bytes(b"caf\xe9.py");
    std::fs::write(tree.root.join(name), "def latin():\n    pass\n").unwrap();
    let mut index = tree.index();
    refresh(&mut index);
    let found = index.definitions("latin", Category::Function, &Within::root()).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].file, "caf\u{fffd}.py");
    let mut found = found;
    index.add_bodies(&mut found);
    assert_eq!(found[0].body.as_deref(), Some("def latin():\n    pass"));
    std::fs::remove_file(tree.root.join(name)).unwrap();
    assert_eq!(refresh(&mut index).removed, 1);
}

#[test]
fn an_index_of_an_older_schema_is_rebuilt() {
    let tree = Tree::new();
    tree.write("a.py", "def kept():\n    pass\n");
    std::fs::create_dir_all(tree.db().parent().unwrap()).unwrap();
    let old = rusqlite::Connection::open(tree.db()).unwrap();
    old.execute_batch(
        "CREATE TABLE functions(name TEXT, file_path TEXT); INSERT INTO functions VALUES ('stale', 'x.py');",
    )
    .unwrap();
    drop(old);
    let mut index = tree.index();
    assert!(index.take_warnings().is_empty(), "an old schema is rebuilt quietly");
    refresh(&mut index);
    assert_eq!(functions(&index, "kept"), ["a.py"]);
    let tables: i64 = rusqlite::Connection::open(tree.db())
        .unwrap()
        .query_row("SELECT COUNT(*) FROM sqlite_schema WHERE name = 'functions'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(tables, 0);
}

#[test]
fn a_planted_trigger_makes_the_schema_foreign_so_the_index_is_rebuilt() {
    let tree = Tree::new();
    tree.write("a.py", "def real():\n    pass\n");
    let mut index = tree.index();
    refresh(&mut index);
    drop(index);
    let conn = rusqlite::Connection::open(tree.db()).unwrap();
    conn.execute_batch("CREATE TRIGGER evil AFTER INSERT ON files BEGIN DELETE FROM symbols; END;").unwrap();
    drop(conn);
    let mut index = tree.index();
    refresh(&mut index);
    assert_eq!(functions(&index, "real"), ["a.py"]);
    let triggers: i64 = rusqlite::Connection::open(tree.db())
        .unwrap()
        .query_row("SELECT COUNT(*) FROM sqlite_schema WHERE type = 'trigger'", [], |r| r.get(0))
        .unwrap();
    assert_eq!(triggers, 0);
}

#[test]
fn a_corrupt_index_is_rebuilt_with_a_warning() {
    let tree = Tree::new();
    tree.write("a.py", "def real():\n    pass\n");
    std::fs::create_dir_all(tree.db().parent().unwrap()).unwrap();
    std::fs::write(tree.db(), b"this is not an SQLite database, just text long enough to be a header").unwrap();
    let mut index = tree.index();
    let warnings = index.take_warnings();
    assert!(warnings.iter().any(|w| w.contains("was corrupt") && w.contains("rebuilt")), "{warnings:?}");
    refresh(&mut index);
    assert_eq!(functions(&index, "real"), ["a.py"]);

    // Damaged pages inside a real index: quick_check finds them on open.
    drop(index);
    let mut bytes = std::fs::read(tree.db()).unwrap();
    let _ = std::fs::remove_file(tree.root.join(".tackle/ckg/index.db-wal"));
    let page = 4096;
    for byte in bytes.iter_mut().skip(page).take(page * 2) {
        *byte = 0x5a;
    }
    std::fs::write(tree.db(), bytes).unwrap();
    let options = IndexOptions { quick_check: true, ..IndexOptions::default() };
    let mut index = Index::open(&tree.root, options).unwrap();
    let warnings = index.take_warnings();
    assert!(warnings.iter().any(|w| w.contains("was corrupt")), "{warnings:?}");
    refresh(&mut index);
    assert_eq!(functions(&index, "real"), ["a.py"]);
}

#[test]
fn planted_symlinks_in_the_index_directory_are_removed_or_refused() {
    let tree = Tree::new();
    tree.write("a.py", "def real():\n    pass\n");
    let victim = tree.root.parent().unwrap().join("victim.txt");
    std::fs::write(&victim, "precious").unwrap();
    let ckg = tree.root.join(".tackle/ckg");
    std::fs::create_dir_all(&ckg).unwrap();
    for name in ["index.db", "index.db-wal", "index.db-shm", "index.lock"] {
        std::os::unix::fs::symlink(&victim, ckg.join(name)).unwrap();
    }
    let mut index = tree.index();
    assert!(!index.take_warnings().is_empty());
    refresh(&mut index);
    assert_eq!(functions(&index, "real"), ["a.py"]);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    assert!(!std::fs::symlink_metadata(ckg.join("index.db")).unwrap().file_type().is_symlink());

    // A symlinked index directory is refused outright.
    let other = Tree::new();
    std::fs::create_dir(other.root.join(".tackle")).unwrap();
    std::os::unix::fs::symlink(tree.root.parent().unwrap(), other.root.join(".tackle/ckg")).unwrap();
    let err = Index::open(&other.root, IndexOptions::default()).unwrap_err();
    assert!(matches!(err, CkgError::Unusable(ref m) if m.contains("will not follow")), "{err}");
}

/// Holds the indexer lock from another process for `millis` (the test binary itself, running
/// [`helper_hold_lock`]); returns once the lock is held.
fn hold_lock(tree: &Tree, millis: u64) -> std::process::Child {
    use std::io::BufRead as _;
    std::fs::create_dir_all(tree.root.join(".tackle/ckg")).unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "index::helper_hold_lock", "--ignored", "--nocapture"])
        .env("CKG_HELPER_LOCK", tree.root.join(".tackle/ckg/index.lock"))
        .env("CKG_HELPER_MILLIS", millis.to_string())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    assert!(lines.any(|line| line.unwrap().contains("locked")), "the other process never took the lock");
    child
}

/// The child side of [`hold_lock`].
#[test]
#[ignore = "run by other tests as a second process"]
fn helper_hold_lock() {
    let (Ok(path), Ok(millis)) = (std::env::var("CKG_HELPER_LOCK"), std::env::var("CKG_HELPER_MILLIS")) else { return };
    let _lock = tackle_ckg::store::IndexLock::acquire(Path::new(&path), Duration::ZERO).unwrap();
    println!("locked");
    std::thread::sleep(Duration::from_millis(millis.parse().unwrap()));
}

#[test]
fn a_second_indexer_waits_for_the_first_then_gives_up_with_a_clear_message() {
    let tree = Tree::new();
    tree.write("a.py", "def first():\n    pass\n");
    let mut index =
        Index::open(&tree.root, IndexOptions { lock_wait: Duration::from_millis(300), ..IndexOptions::default() })
            .unwrap();
    let mut holder = hold_lock(&tree, 20_000);
    let err = index.refresh(&mut |_, _| {}, &|| false).unwrap_err();
    assert_eq!(err.to_string(), "The code index is busy (another tackle is indexing); try again.");
    holder.kill().unwrap();
    holder.wait().unwrap();

    // A holder that finishes within the wait: the refresh waits, then runs.
    let mut holder = hold_lock(&tree, 300);
    let mut patient =
        Index::open(&tree.root, IndexOptions { lock_wait: Duration::from_secs(10), ..IndexOptions::default() })
            .unwrap();
    refresh(&mut patient);
    assert_eq!(functions(&patient, "first"), ["a.py"]);
    holder.wait().unwrap();
}

#[test]
fn a_query_with_nothing_changed_takes_no_lock() {
    let tree = Tree::new();
    tree.write("a.py", "def first():\n    pass\n");
    let mut index =
        Index::open(&tree.root, IndexOptions { lock_wait: Duration::ZERO, ..IndexOptions::default() }).unwrap();
    refresh(&mut index);
    std::thread::sleep(Duration::from_millis(2_100)); // past the racy window
    refresh(&mut index);
    let mut holder = hold_lock(&tree, 20_000);
    // Nothing changed: the refresh succeeds although another process holds the lock.
    let report = refresh(&mut index);
    assert_eq!((report.extracted, report.removed), (0, 0), "{report:?}");
    assert_eq!(functions(&index, "first"), ["a.py"]);
    // The control: a changed file does need the lock, so the same refresh now finds it busy.
    tree.write("a.py", "def second():\n    pass\n");
    let busy = index.refresh(&mut |_, _| {}, &|| false);
    assert!(matches!(busy, Err(tackle_ckg::error::CkgError::Busy)), "{busy:?}");
    holder.kill().unwrap();
    holder.wait().unwrap();
}

#[test]
fn sub_folders_narrow_queries_and_paths_are_relative_to_them() {
    let tree = Tree::new();
    tree.write("pkg/a.py", "def shared():\n    pass\n");
    tree.write("other/b.py", "def shared():\n    pass\n");
    let mut index = tree.index();
    refresh(&mut index);
    let within = Within::folder(b"pkg");
    let found = index.definitions("shared", Category::Function, &within).unwrap();
    assert_eq!(found.iter().map(|d| d.file.as_str()).collect::<Vec<_>>(), ["a.py"]);
    assert_eq!(functions(&index, "shared"), ["other/b.py", "pkg/a.py"]);
}

/// The child side of [`two_processes_indexing_at_once_both_succeed_and_nothing_corrupts`].
#[test]
#[ignore = "run by another test as a second process"]
fn helper_index_process() {
    let Ok(root) = std::env::var("CKG_HELPER_ROOT") else { return };
    let mut index = Index::open(Path::new(&root), IndexOptions::default()).unwrap();
    refresh(&mut index);
    let found = index.definitions("f_0", Category::Function, &Within::root()).unwrap();
    assert_eq!(found.len(), 1);
}

#[test]
fn two_processes_indexing_at_once_both_succeed_and_nothing_corrupts() {
    let tree = Tree::new();
    for i in 0..400 {
        tree.write(&format!("m{}/f{i}.py", i % 20), format!("def f_{i}():\n    return f_{}()\n", (i + 1) % 400));
    }
    let spawn = || {
        Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "index::helper_index_process", "--ignored", "--nocapture"])
            .env("CKG_HELPER_ROOT", &tree.root)
            .spawn()
            .unwrap()
    };
    let (mut one, mut two) = (spawn(), spawn());
    assert!(one.wait().unwrap().success());
    assert!(two.wait().unwrap().success());
    let mut index = Index::open(&tree.root, IndexOptions { quick_check: true, ..IndexOptions::default() }).unwrap();
    assert!(index.take_warnings().is_empty());
    assert_eq!(refresh(&mut index).extracted, 0, "the two processes left a complete index");
    let stats = index.stats().unwrap();
    assert_eq!((stats.files, stats.symbols), (400, 400), "{stats:?}");
}
