//! `glob` and `grep` (docs/reference/tools.md#glob) on a real git repository: the same files and the same
//! lines as the real `rg` with the same options (ignore files, hidden entries, binary files,
//! BOMs, globs, types, context, multiline), plus the paging, ordering and every message.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use common::Ws;
use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tackle_core::ErrorKind;

/// A repository that exercises ripgrep's filters.
fn corpus() -> Ws {
    let ws = Ws::new();
    assert!(std::process::Command::new("git").args(["init", "-q"]).arg(&ws.root).status().unwrap().success());
    ws.write(".gitignore", "target/\n*.log\n/build\nnode_modules/\n");
    ws.write(".ignore", "ignored-by-dot-ignore.txt\n");
    ws.write(".rgignore", "ignored-by-rgignore.txt\n");
    ws.write("src/main.rs", "fn main() {\n    // TODO: start\n    println!(\"needle\");\n}\n");
    ws.write("src/lib.rs", "pub fn needle() -> u32 {\n    42\n}\n// todo lower case\n");
    ws.write("src/deep/nested/mod.rs", "const NEEDLE: &str = \"needle\";\n");
    ws.write("src/app.py", "def needle():\n    return 'needle'\n\n\nclass Needle:\n    pass\n");
    ws.write("web/index.ts", "export const needle = 1;\r\nexport const other = 2;\r\n");
    ws.write("web/view.tsx", "<div>needle</div>\n");
    ws.write("docs/guide.md", "# Guide\n\nFind the needle here.\nAnd another needle.\n");
    ws.write("docs/notes.txt", "line one\nneedle in notes\nline three\nline four\nneedle again\n");
    ws.write("target/debug/out.rs", "needle in build output\n");
    ws.write("build/gen.rs", "needle generated\n");
    ws.write("node_modules/pkg/index.js", "module.exports = 'needle';\n");
    ws.write("sub/build/kept.rs", "needle not ignored: /build is anchored\n");
    ws.write("app.log", "needle in a log\n");
    ws.write("sub/.gitignore", "!keep.log\n");
    ws.write("sub/keep.log", "needle kept by negation\n");
    ws.write("ignored-by-dot-ignore.txt", "needle\n");
    ws.write("ignored-by-rgignore.txt", "needle\n");
    ws.write(".hidden/secret.rs", "needle hidden\n");
    ws.write(".env", "NEEDLE=1\n");
    ws.write("data.bin", b"needle\0\x01\x02binary");
    ws.write("bom.txt", "\u{feff}needle after a BOM\n");
    ws.write("spaced name.md", "a needle in a spaced name\n");
    ws.write("empty.txt", "");
    std::os::unix::fs::symlink(ws.path("docs"), ws.path("docs-link")).unwrap();
    ws
}

/// Runs the real `rg` in the workspace with no user configuration.
fn rg(root: &Path, args: &[&str]) -> Vec<String> {
    let out = std::process::Command::new("rg")
        .args(args)
        .current_dir(root)
        .env_remove("RIPGREP_CONFIG_PATH")
        .output()
        .expect("rg is installed by scripts/install-test-deps.sh");
    assert!(
        out.status.code() == Some(0) || out.status.code() == Some(1),
        "rg {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().lines().map(|l| l.trim_end_matches('\r').to_owned()).collect()
}

async fn grep(ws: &Ws, args: Value) -> Value {
    let output = ws.call("grep", args.clone()).await;
    assert!(!output.is_error, "grep {args}: {}", output.text_content());
    output.structured.unwrap()
}

fn strings(value: &Value) -> Vec<String> {
    value.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_owned()).collect()
}

fn set(items: Vec<String>) -> BTreeSet<String> {
    items.into_iter().collect()
}

#[tokio::test]
async fn grep_searches_the_same_files_as_rg() {
    let ws = corpus();
    let cases: &[(&[&str], Value)] = &[
        (&["-l", "needle"], json!({"pattern": "needle"})),
        (&["-l", "-i", "needle"], json!({"pattern": "needle", "-i": true})),
        (&["-l", "-g", "*.rs", "needle"], json!({"pattern": "needle", "glob": "*.rs"})),
        (&["-l", "-g", "**/*.{ts,tsx}", "needle"], json!({"pattern": "needle", "glob": "**/*.{ts,tsx}"})),
        (&["-l", "-g", "!*.md", "needle"], json!({"pattern": "needle", "glob": "!*.md"})),
        (&["-l", "-t", "py", "needle"], json!({"pattern": "needle", "type": "py"})),
        (&["-l", "-t", "rust", "-i", "todo"], json!({"pattern": "todo", "type": "rust", "-i": true})),
        (&["-l", "needle", "src"], json!({"pattern": "needle", "path": "src"})),
        (&["-l", "needle", ".hidden"], json!({"pattern": "needle", "path": ".hidden"})),
        (&["-l", "-U", "--multiline-dotall", "needle.*pass"], json!({"pattern": "needle.*pass", "multiline": true})),
    ];
    for (rg_args, args) in cases {
        let mut args = args.clone();
        args["head_limit"] = json!(0);
        let ours = grep(&ws, args.clone()).await;
        assert_eq!(set(strings(&ours["filenames"])), set(rg(&ws.root, rg_args)), "{args}");
        assert!(!strings(&ours["filenames"]).is_empty(), "{args}");
    }
}

#[tokio::test]
async fn grep_content_and_counts_are_rgs_in_path_order() {
    let ws = corpus();
    let cases: &[(&[&str], Value)] = &[
        (&["-n", "--sort", "path", "needle"], json!({"pattern": "needle"})),
        (&["-n", "--sort", "path", "-C", "1", "needle"], json!({"pattern": "needle", "-C": 1})),
        // -A and -B win over -C for their side (ripgrep 13 let -C win; 14 and Claude Code agree with us).
        (&["-n", "--sort", "path", "-A", "2", "needle"], json!({"pattern": "needle", "-C": 1, "-A": 2, "-B": 0})),
        (&["--sort", "path", "-i", "todo"], json!({"pattern": "todo", "-i": true, "-n": false})),
        (
            &["-n", "--sort", "path", "-U", "--multiline-dotall", "needle\\(\\):.*?return"],
            json!({"pattern": "needle\\(\\):.*?return", "multiline": true}),
        ),
        (&["-n", "--sort", "path", "^\\s+\\d+$"], json!({"pattern": "^\\s+\\d+$"})),
    ];
    for (rg_args, args) in cases {
        let mut args = args.clone();
        args["output_mode"] = json!("content");
        args["head_limit"] = json!(0);
        let ours = grep(&ws, args.clone()).await;
        let content: Vec<String> = ours["content"].as_str().unwrap().lines().map(str::to_owned).collect();
        assert_eq!(content, rg(&ws.root, rg_args), "{args}");
    }
    let counts = grep(&ws, json!({"pattern": "needle", "output_mode": "count", "head_limit": 0})).await;
    let output = ws.ok("grep", json!({"pattern": "needle", "output_mode": "count", "head_limit": 0})).await;
    let mut lines: Vec<String> = output.lines().map(str::to_owned).collect();
    let summary = lines.pop().unwrap();
    assert_eq!(lines, rg(&ws.root, &["-c", "--sort", "path", "needle"]));
    let total: u64 = lines.iter().map(|l| l.rsplit(':').next().unwrap().parse::<u64>().unwrap()).sum();
    assert_eq!(summary, format!("Found {total} matches across {} files", lines.len()));
    assert_eq!(counts["num_matches"], json!(total));
}

#[tokio::test]
async fn grep_pages_orders_and_reports() {
    let ws = Ws::new();
    for (i, age) in [(1, 300), (2, 100), (3, 200)] {
        ws.write(&format!("f{i}.txt"), "hit\nhit\n");
        let file = std::fs::File::options().write(true).open(ws.path(&format!("f{i}.txt"))).unwrap();
        file.set_modified(std::time::SystemTime::now() - std::time::Duration::from_secs(age)).unwrap();
    }
    // Files: newest first.
    assert_eq!(ws.ok("grep", json!({"pattern": "hit"})).await, "Found 3 files\nf2.txt\nf3.txt\nf1.txt");
    assert_eq!(
        ws.ok("grep", json!({"pattern": "hit", "head_limit": 1, "offset": 1})).await,
        "Found 3 files\nf3.txt\n(Showing 1 of 3 entries from offset 1. Use offset=2 for more.)"
    );
    assert_eq!(
        ws.ok("grep", json!({"pattern": "hit", "output_mode": "content", "head_limit": 3})).await,
        "f1.txt:1:hit\nf1.txt:2:hit\nf2.txt:1:hit\n(Showing 3 of 6 entries from offset 0. Use offset=3 for more.)"
    );
    assert_eq!(
        ws.ok("grep", json!({"pattern": "hit", "output_mode": "count"})).await,
        "f1.txt:2\nf2.txt:2\nf3.txt:2\nFound 6 matches across 3 files"
    );
    let out = ws.call("grep", json!({"pattern": "hit", "output_mode": "content", "head_limit": 2, "offset": 4})).await;
    assert_eq!(
        out.structured.unwrap(),
        json!({"mode": "content", "filenames": ["f1.txt", "f2.txt", "f3.txt"], "num_files": 3, "content": "f3.txt:1:hit\nf3.txt:2:hit", "num_matches": 6, "applied_limit": 2, "applied_offset": 4})
    );
    assert_eq!(ws.ok("grep", json!({"pattern": "absent"})).await, "No matches found");
    // A file path searches that file only; lines over 2,000 characters are cut.
    ws.write("wide.txt", format!("hit{}\n", "x".repeat(3000)));
    let out = ws.ok("grep", json!({"pattern": "hit", "path": "wide.txt", "output_mode": "content"})).await;
    assert_eq!(out, format!("wide.txt:1:hit{}… [line truncated]", "x".repeat(1997)));
}

#[tokio::test]
async fn grep_errors_are_clear() {
    let ws = corpus();
    let err = ws.err("grep", json!({"pattern": "(unclosed"})).await;
    assert!(err.starts_with("Invalid regex: "), "{err}");
    assert!(!err.contains('\n'), "{err}");
    assert_eq!(ws.err("grep", json!({"pattern": "x", "type": "cobol"})).await, "Unknown file type: cobol");
    let err = ws.err("grep", json!({"pattern": "x", "glob": "src/[z"})).await;
    assert!(err.starts_with("Invalid glob pattern 'src/[z': "), "{err}");
    assert_eq!(ws.err("grep", json!({"pattern": "x", "path": "nowhere"})).await, "Path does not exist: nowhere");
    let err = ws.err("grep", json!({"pattern": "x", "output_mode": "lines"})).await;
    assert!(err.contains("output_mode must be one of: content, files_with_matches, count"), "{err}");
    let out = ws.call("grep", json!({"pattern": "x", "path": "/etc"})).await;
    assert!(out.meta.rejected && out.text_content().contains("is outside the workspace"));
    assert_eq!(ws.err("Grep", json!({})).await, "No pattern provided for the grep tool");
}

#[tokio::test]
async fn glob_lists_the_same_files_as_rg_files() {
    let ws = corpus();
    // (rg's -g also whitelists ignored files and directories its glob matches, so patterns
    // such as **/* or **/*.log are compared below against the ignore rules instead.)
    for (pattern, rg_glob) in [
        ("**/*.rs", "**/*.rs"),
        ("**/*.{ts,tsx}", "**/*.{ts,tsx}"),
        ("src/**/*.rs", "src/**/*.rs"),
        ("**/*.md", "**/*.md"),
        // A literal leading directory is walked through, not jumped to: ignored, hidden
        // and symlinked ones are skipped as at any depth.
        ("build/*", "build/*"),
        ("sub/build/*", "sub/build/*"),
        ("target/**/*.rs", "target/**/*.rs"),
        ("node_modules/**/*.js", "node_modules/**/*.js"),
        ("docs-link/*", "docs-link/*"),
        ("src/deep/nested/*.rs", "src/deep/nested/*.rs"),
    ] {
        let out = ws.call("glob", json!({"pattern": pattern})).await;
        assert!(!out.is_error, "{}", out.text_content());
        let ours = strings(&out.structured.unwrap()["filenames"]);
        assert_eq!(set(ours), set(rg(&ws.root, &["--files", "-g", rg_glob])), "{pattern}");
    }
    // Ignored files stay ignored whatever the pattern; a negation in a nested .gitignore
    // brings one back; every file rg would search is listed by **/*.
    assert_eq!(ws.ok("glob", json!({"pattern": "**/*.log"})).await, "sub/keep.log");
    let everything = strings(&ws.call("glob", json!({"pattern": "**/*"})).await.structured.unwrap()["filenames"]);
    assert_eq!(set(everything), set(rg(&ws.root, &["--files"])));
    // `*` stays in one component: *.rs is the top level only.
    ws.write("top.rs", "");
    assert_eq!(ws.ok("glob", json!({"pattern": "*.rs"})).await, "top.rs");
    // A hidden component in the pattern walks hidden entries, never .git.
    assert_eq!(ws.ok("glob", json!({"pattern": ".hidden/*.rs"})).await, ".hidden/secret.rs");
    assert_eq!(ws.ok("glob", json!({"pattern": "**/.env"})).await, ".env");
    assert_eq!(ws.ok("glob", json!({"pattern": "**/HEAD"})).await, "No files found");
    for pattern in [".git/*", ".git/**", ".git/**/*", "./.git/HEAD"] {
        assert_eq!(ws.ok("glob", json!({"pattern": pattern})).await, "No files found", "{pattern}");
    }
    assert_eq!(ws.ok("glob", json!({"pattern": "sub/build/*"})).await, "sub/build/kept.rs");
    assert_eq!(ws.ok("glob", json!({"pattern": "*.md", "path": "docs"})).await, "docs/guide.md");
    let absolute = format!("{}/src/*.py", ws.root.display());
    assert_eq!(ws.ok("glob", json!({"pattern": absolute})).await, "src/app.py");
}

/// A tree where the kinds of ignore file disagree, a nested repository, a linked worktree
/// and hidden files a rule brings back: Tackle reads the ignore files itself (never through
/// the walker), and must still decide exactly as `rg` does.
fn precedence_corpus() -> Ws {
    let ws = Ws::new();
    let git = |dir: &Path, args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t", "-C"])
            .arg(dir)
            .args(args)
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    };
    git(&ws.root, &["init", "-q"]);
    ws.write(".gitignore", "*.log\n*.tmp\n");
    ws.write(".git/info/exclude", "*.excluded\n");
    // .rgignore beats .ignore beats .gitignore beats info/exclude, whatever the depth.
    ws.write(".rgignore", "!rg-kept.log\nby-rg.txt\n");
    ws.write(".ignore", "!ignore-kept.tmp\n!.shown\n");
    ws.write("sub/.ignore", "!by-rg.txt\n");
    ws.write("sub/.gitignore", "!*.excluded\n");
    for name in ["a.log", "rg-kept.log", "a.tmp", "ignore-kept.tmp", "a.excluded", "by-rg.txt", ".shown", ".dot.rs"] {
        ws.write(name, "needle\n");
    }
    for name in ["by-rg.txt", "b.excluded", "b.log", "plain.rs"] {
        ws.write(&format!("sub/{name}"), "needle\n");
    }
    // A nested repository: the outer .gitignore and exclude stop at its root; .ignore does not.
    git(&ws.root, &["init", "-q", "nested"]);
    ws.write("nested/.gitignore", "*.rs\n");
    for name in ["inner.log", "inner.rs", "inner.excluded", "ignore-kept.tmp", "by-rg.txt"] {
        ws.write(&format!("nested/{name}"), "needle\n");
    }
    // A linked worktree: its `.git` is a file, and the main repository's info/exclude applies.
    git(&ws.root, &["init", "-q", "main"]);
    ws.write("main/.git/info/exclude", "*.wt-excluded\n");
    git(&ws.path("main"), &["commit", "-q", "--allow-empty", "-m", "first"]);
    git(&ws.path("main"), &["worktree", "add", "-q", "../wt"]);
    for name in ["a.wt-excluded", "a.txt"] {
        ws.write(&format!("wt/{name}"), "needle\n");
    }
    ws
}

#[tokio::test]
async fn ignore_files_decide_as_in_rg() {
    let ws = precedence_corpus();
    let everything = strings(&ws.call("glob", json!({"pattern": "**/*"})).await.structured.unwrap()["filenames"]);
    let expected = set(rg(&ws.root, &["--files"]));
    assert_eq!(set(everything), expected);
    // The corpus really exercises each rule.
    for listed in ["rg-kept.log", "ignore-kept.tmp", ".shown", "sub/b.excluded", "nested/inner.log", "wt/a.txt"] {
        assert!(expected.contains(listed), "{listed}: {expected:?}");
    }
    for left_out in
        ["a.log", "a.tmp", "a.excluded", "by-rg.txt", "sub/by-rg.txt", "nested/inner.rs", "wt/a.wt-excluded"]
    {
        assert!(!expected.contains(left_out), "{left_out}: {expected:?}");
    }
    let cases: &[(&[&str], Value)] = &[
        (&["-l", "needle"], json!({"pattern": "needle"})),
        (&["-l", "-g", "*.log", "needle"], json!({"pattern": "needle", "glob": "*.log"})),
        (&["-l", "-g", ".dot.rs", "needle"], json!({"pattern": "needle", "glob": ".dot.rs"})),
        (&["-l", "-t", "rust", "needle"], json!({"pattern": "needle", "type": "rust"})),
        (&["-l", "needle", "sub"], json!({"pattern": "needle", "path": "sub"})),
        (&["-l", "needle", "nested"], json!({"pattern": "needle", "path": "nested"})),
        (&["-l", "needle", "wt"], json!({"pattern": "needle", "path": "wt"})),
    ];
    for (rg_args, args) in cases {
        let mut args = args.clone();
        args["head_limit"] = json!(0);
        let ours = grep(&ws, args.clone()).await;
        assert_eq!(set(strings(&ours["filenames"])), set(rg(&ws.root, rg_args)), "{args}");
    }
    // view of a directory leaves out the same files (and every hidden one).
    let view = ws.ok("str_replace_based_edit_tool", json!({"command": "view", "path": "sub"})).await;
    let listed: Vec<&str> = view.lines().skip(1).collect();
    assert_eq!(listed, ["b.excluded", "plain.rs"]);
}

#[tokio::test]
async fn glob_sorts_newest_first_caps_and_reports() {
    let ws = Ws::new();
    for i in 0..105 {
        ws.write(&format!("d/f{i:03}.txt"), "");
        let file = std::fs::File::options().write(true).open(ws.path(&format!("d/f{i:03}.txt"))).unwrap();
        file.set_modified(std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000 + i)).unwrap();
    }
    let out = ws.call("glob", json!({"pattern": "**/*.txt"})).await;
    let text = out.text_content();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 101);
    assert_eq!((lines[0], lines[99]), ("d/f104.txt", "d/f005.txt"));
    assert_eq!(lines[100], "(Results are truncated. Consider using a more specific path or pattern.)");
    assert_eq!(out.structured.unwrap()["truncated"], json!(true));
    assert_eq!(ws.ok("glob", json!({"pattern": "**/*.none"})).await, "No files found");
    assert_eq!(ws.err("glob", json!({"pattern": "*", "path": "missing"})).await, "Directory does not exist: missing");
    assert_eq!(
        ws.err("glob", json!({"pattern": "*", "path": "d/f000.txt"})).await,
        "Directory does not exist: d/f000.txt"
    );
    let err = ws.err("glob", json!({"pattern": "src/[z"})).await;
    assert!(err.starts_with("Invalid glob pattern 'src/[z': "), "{err}");
    assert_eq!(ws.err("Glob", json!({})).await, "No pattern provided for the glob tool");
}

#[tokio::test]
async fn glob_never_lists_files_outside_the_workspace() {
    let ws = Ws::new();
    let outside = ws.outside();
    std::fs::write(outside.join("secret.txt"), "x").unwrap();
    std::os::unix::fs::symlink(&outside, ws.path("outlink")).unwrap();
    ws.write("dir/a.txt", "");
    ws.write("sub/b.txt", "");
    std::os::unix::fs::symlink(ws.path("dir"), ws.path("inlink")).unwrap();
    let root = ws.root.display().to_string();
    let refused = |shown: &str| {
        format!(
            "Path {shown} is outside the workspace ({root}). Use a path inside it; the user can allow another \
             directory with [workspace] extra_roots in {}.",
            tackle_policy::config::user_config_shown()
        )
    };
    let absolute = format!("{root}/../outside/*");
    for (pattern, shown) in [
        ("../outside/*", "../outside"),
        ("../*", ".."),
        ("../../*", "../.."),
        ("../**/*.txt", ".."),
        ("dir/../../outside/*", "dir/../../outside"),
        ("*/../../outside/*", "*/../../outside"),
        (absolute.as_str(), "../outside"),
    ] {
        let out = ws.call("glob", json!({"pattern": pattern})).await;
        assert_eq!(out.meta.error_kind, Some(ErrorKind::Denied), "{pattern}: {}", out.text_content());
        assert_eq!(out.text_content(), refused(shown), "{pattern}");
    }
    let out = ws.call("glob", json!({"pattern": "../*", "path": "sub"})).await;
    assert!(out.is_error && !out.text_content().contains("secret"), "{}", out.text_content());
    assert_eq!(
        ws.err("glob", json!({"pattern": "../../outside/*", "path": "sub"})).await,
        refused("sub/../../outside")
    );
    // A `..` that stays inside the workspace could never match either (walked paths hold
    // none); the message says how to search what was meant.
    assert_eq!(
        ws.err("glob", json!({"pattern": "../dir/*.txt", "path": "sub"})).await,
        "The glob pattern ../dir/*.txt contains '..'; glob lists only files below `path`. To search sub/../dir, set \
         path to dir and the pattern to *.txt."
    );
    assert_eq!(
        ws.err("glob", json!({"pattern": "dir/../sub/*"})).await,
        "The glob pattern dir/../sub/* contains '..'; glob lists only files below `path`. To search dir/../sub, set \
         path to sub and the pattern to *."
    );
    // Symlinked directories are not followed, whether they lead out or stay inside (as rg).
    for pattern in ["outlink/*", "outlink/**", "inlink/*", "**/secret.txt", "**/*"] {
        let out = ws.ok("glob", json!({"pattern": pattern})).await;
        assert!(!out.contains("secret") && !out.contains("inlink"), "{pattern}: {out}");
        let listed: Vec<&str> = out.lines().filter(|l| *l != "No files found").collect();
        assert_eq!(
            set(listed.iter().map(|l| (*l).to_owned()).collect()),
            set(rg(&ws.root, &["--files", "-g", pattern]))
        );
    }
    let out = ws.call("glob", json!({"pattern": "*", "path": "outlink"})).await;
    assert!(out.is_error && out.meta.rejected, "{}", out.text_content());
}
