//! Hostile nesting into every parser the file tools hand a model's input to (JSONPath, JSON
//! documents, patches, globs, regexes), through the tools as a model calls them: each answer
//! is an answer (a clear error past the bounds of docs/architecture.md, "Bounded input"), and
//! the process survives; a stack overflow would abort the test binary. Tools run on tokio's
//! 2 MiB blocking threads, as in `tackle tools call` and `mcp serve`. `TACKLE_FUZZ_CASES`
//! runs the properties longer.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::Ws;
use proptest::prelude::*;
use serde_json::{Value, json};

fn cases() -> u32 {
    std::env::var("TACKLE_FUZZ_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(48)
}

fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(future)
}

fn json_edit(path: &str) -> Value {
    json!({"operation": "view", "file_path": "f.json", "json_path": path})
}

/// The three JSONPaths that overflowed the stack (exit 134) before the bounds.
fn attack_paths() -> [String; 3] {
    [
        format!("$[?{}@.a{}]", "(".repeat(1000), ")".repeat(1000)),
        format!("${}.a{}", "[?@".repeat(600), "]".repeat(600)),
        format!("$[?{}@.a{} == 1]", "length(".repeat(100_000), ")".repeat(100_000)),
    ]
}

#[tokio::test]
async fn the_jsonpath_attacks_get_a_clear_error_and_change_nothing() {
    let ws = Ws::new();
    ws.write("f.json", "{\"a\": 1}\n");
    let [parens, filters, calls] = attack_paths();
    for (path, expected) in [
        (&parens, "nests brackets and parentheses 1001 levels deep; json_edit_tool accepts at most 32"),
        (&filters, "nests brackets and parentheses 600 levels deep"),
        (&calls, "bytes long; json_edit_tool accepts at most 4096"),
    ] {
        for operation in ["view", "set", "remove"] {
            let args = json!({"operation": operation, "file_path": "f.json", "json_path": path, "value": 2});
            let message = ws.err("json_edit_tool", args).await;
            assert!(message.contains(expected), "{operation}: {message}");
        }
    }
    // Five nested filters are few bytes and levels, but parse time doubles with each one.
    let message = ws.err("json_edit_tool", json_edit(&format!("${}.a{}", "[?@".repeat(5), "]".repeat(5)))).await;
    assert!(message.contains("nests 5 filters ([?...] inside [?...]); json_edit_tool accepts at most 4"), "{message}");
    // `add` parses the parent path too.
    let add = json!({"operation": "add", "file_path": "f.json", "json_path": format!("{}.b", &parens), "value": 1});
    assert!(ws.err("json_edit_tool", add).await.contains("1001 levels deep"));
    assert_eq!(ws.read("f.json"), "{\"a\": 1}\n");
}

fn nested_array(depth: usize, inner: &str) -> String {
    format!("{}{inner}{}", "[".repeat(depth), "]".repeat(depth))
}

#[tokio::test]
async fn json_documents_past_the_json_limit_are_refused_and_never_written() {
    let ws = Ws::new();
    ws.write("f.json", nested_array(200, "1"));
    let message = ws.err("json_edit_tool", json!({"operation": "view", "file_path": "f.json"})).await;
    assert_eq!(
        message,
        "Invalid JSON in file f.json: arrays and objects nested deeper than 127 levels (the most Tackle reads) at \
         line 1 column 128. Edit it with edit_file, or jq in the shell."
    );
    // At the limit a file is read; a change that would nest it deeper is refused.
    ws.write("f.json", format!("{{\"a\": {}}}", nested_array(126, "1")));
    assert!(ws.ok("json_edit_tool", json_edit("$.a")).await.starts_with("JSONPath '$.a' matches:"));
    let deep_value: Value = serde_json::from_str(&nested_array(100, "2")).unwrap();
    let innermost = format!("$.a{}", "[0]".repeat(126));
    let set = json!({"operation": "set", "file_path": "f.json", "json_path": innermost, "value": deep_value});
    let message = ws.err("json_edit_tool", set).await;
    assert!(message.contains("would nest the document 227 levels deep; JSON is read at most 127"), "{message}");
    let add = json!({"operation": "add", "file_path": "f.json", "json_path": format!("{innermost}.x"), "value": 1});
    assert!(ws.err("json_edit_tool", add).await.contains("Cannot add key to non-object"));
    let parent = format!("$.a{}", "[0]".repeat(125));
    let add = json!({"operation": "add", "file_path": "f.json", "json_path": format!("{parent}[0]"), "value": [[]]});
    let message = ws.err("json_edit_tool", add).await;
    assert!(message.contains("would nest the document 129 levels deep"), "{message}");
    let add = json!({"operation": "add", "file_path": "f.json", "json_path": format!("{parent}[0]"), "value": 2});
    ws.ok("json_edit_tool", add).await;
}

#[tokio::test]
async fn json_edit_never_allocates_what_a_file_or_value_multiplies() {
    let ws = Ws::new();
    // Indented by 64 spaces, so writing it back indents 60,000 zeros 127 levels deep: 500 MB.
    let zeros = vec!["0"; 60_000].join(",");
    let original = format!("[\n{}{}\n]\n", " ".repeat(64), nested_array(125, &format!("[{zeros}]")));
    ws.write("f.json", &original);
    // A path with a slice rewrites the whole document (the tree): refused before it is built.
    let first_zero = format!("${}[0:1]", "[0]".repeat(126));
    let set = json!({"operation": "set", "file_path": "f.json", "json_path": first_zero, "value": 1});
    let message = ws.err("json_edit_tool", set).await;
    assert!(message.starts_with("f.json would be written out larger than 67108864 bytes"), "{message}");
    assert_eq!(ws.read("f.json"), original);
    // The plain path to the same zero rewrites only its byte.
    let first_zero = format!("${}", "[0]".repeat(127));
    let set = json!({"operation": "set", "file_path": "f.json", "json_path": first_zero, "value": 1});
    ws.ok("json_edit_tool", set).await;
    let changed = original.replacen("[0,", "[1,", 1);
    assert_eq!(ws.read("f.json"), changed);
    ws.write("f.json", &original);
    // Its view is 15 MB pretty-printed; only what is shown is kept.
    let view = ws.ok("json_edit_tool", json!({"operation": "view", "file_path": "f.json"})).await;
    assert!(
        view.ends_with(" characters total; use a narrower json_path ...]") && view.len() < 30_000,
        "{}",
        view.len()
    );

    // Each changed location costs memory: at most 100,000 at once.
    ws.write("f.json", format!("[{}]", vec!["0"; 100_001].join(",")));
    let remove = json!({"operation": "remove", "file_path": "f.json", "json_path": "$[*]"});
    let message = ws.err("json_edit_tool", remove).await;
    assert!(message.starts_with("JSONPath $[*] matches 100001 locations; json_edit_tool changes at most 100000"));

    // Copies of a large value at many places.
    ws.write("f.json", format!("{{\"a\": [{}]}}", vec!["0"; 100].join(",")));
    let big = "x".repeat(1 << 20);
    let set = json!({"operation": "set", "file_path": "f.json", "json_path": "$.a[*]", "value": big});
    let message = ws.err("json_edit_tool", set).await;
    assert!(message.starts_with("100 copies of this 1048578-byte value would make the document larger"), "{message}");
}

#[tokio::test]
async fn edit_file_refuses_a_replacement_that_multiplies_the_file() {
    let ws = Ws::new();
    ws.write("f.txt", "a".repeat(1 << 20));
    ws.ok("read_file", json!({"file_path": "f.txt", "limit": 1})).await;
    let edit = json!({"file_path": "f.txt", "old_string": "a", "new_string": "b".repeat(100), "replace_all": true});
    let message = ws.err("edit_file", edit).await;
    assert!(message.starts_with("Replacing 1048576 occurrences would make f.txt 104857600 bytes"), "{message}");
    assert_eq!(ws.read("f.txt").len(), 1 << 20);
}

#[tokio::test]
async fn regexes_and_globs_past_the_bounds_get_a_clear_error() {
    let ws = Ws::new();
    ws.write("a.txt", "a\n");
    let grep = |pattern: String| json!({"pattern": pattern});
    let message = ws.err("grep", grep(format!("{}a{}", "(".repeat(1000), ")".repeat(1000)))).await;
    assert!(message.starts_with("Invalid regex: ") && message.contains("nest"), "{message}");
    // Within the nest limit the pattern compiles and matches.
    let nested = format!("{}a{}", "(".repeat(60), ")".repeat(60));
    assert!(ws.ok("grep", grep(nested)).await.contains("a.txt"));
    let message = ws.err("grep", grep("a".repeat(64 * 1024 + 1))).await;
    assert!(message.starts_with("The regex pattern is 65537 bytes long; the most accepted is 65536."), "{message}");
    // A small pattern whose program is huge.
    let message = ws.err("grep", grep(r"\w{1000}{1000}".into())).await;
    assert!(message.starts_with("Invalid regex: ") && message.contains("size limit"), "{message}");

    let braces = format!("{}a{}", "{".repeat(1000), "}".repeat(1000));
    let message = ws.err("glob", json!({"pattern": braces})).await;
    assert!(message.contains("nested too deeply"), "{message}");
    let message = ws.err("grep", json!({"pattern": "a", "glob": braces})).await;
    assert!(message.contains("nested too deeply"), "{message}");
    let message = ws.err("glob", json!({"pattern": "*".repeat(4097)})).await;
    assert!(message.starts_with("The glob pattern is 4097 bytes long; the most accepted is 4096."), "{message}");
    let message = ws.err("grep", json!({"pattern": "a", "glob": "*".repeat(4097)})).await;
    assert!(message.starts_with("The glob pattern is 4097 bytes long"), "{message}");
    let within = format!("{}a.txt{}", "{".repeat(99), "}".repeat(99));
    assert_eq!(ws.ok("glob", json!({"pattern": within})).await, "a.txt");
}

#[tokio::test]
async fn numbers_at_the_ends_of_their_range_are_answers() {
    let ws = Ws::new();
    ws.write("a.txt", "a\nb\n");
    for (tool, args) in [
        ("grep", json!({"pattern": "a", "output_mode": "content", "context": u64::MAX, "head_limit": u64::MAX})),
        ("grep", json!({"pattern": "a", "offset": u64::MAX, "head_limit": 0})),
        ("grep", json!({"pattern": "a", "output_mode": "content", "-A": u64::MAX, "-B": u64::MAX})),
        ("read_file", json!({"file_path": "a.txt", "offset": u64::MAX, "limit": u64::MAX})),
        ("read_file", json!({"file_path": "a.txt", "offset": 1, "limit": u64::MAX})),
        (
            "str_replace_based_edit_tool",
            json!({"command": "view", "path": "/a.txt", "view_range": [i64::MIN, i64::MAX]}),
        ),
        ("str_replace_based_edit_tool", json!({"command": "view", "path": "/a.txt", "view_range": [1, -1]})),
    ] {
        let output = ws.call(tool, args.clone()).await;
        assert!(!output.text_content().contains("internal error"), "{tool} {args}: {}", output.text_content());
    }
}

/// One level of a filter expression around `inner`.
fn wrap(level: u8, inner: &str) -> String {
    match level % 5 {
        0 => format!("({inner})"),
        1 => format!("!({inner})"),
        2 => format!("@[?{inner}]"),
        3 => format!("length({inner}) == 1"),
        _ => format!("@.b && ({inner})"),
    }
}

/// Lines of a patch: markers of both patch formats, nested heredocs and hunks, and text.
fn patch_lines() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        3 => prop::sample::select(vec![
            "*** Begin Patch", "*** End Patch", "*** Add File: a.txt", "*** Update File: a.txt", "*** Delete File: a.txt",
            "*** Move to: b.txt", "*** End of File", "@@", "@@ a", "+a", "-a", " a", "a", "", "apply_patch <<'EOF'",
            "EOF", "<<<<<<< ORIGINAL", "=======", ">>>>>>> UPDATED", "*** Update File: ../x",
        ]).prop_map(str::to_owned),
        1 => any::<String>(),
    ];
    (prop::collection::vec(line, 0..40), 1usize..2000).prop_map(|(lines, repeat)| {
        // Repeated, so some patches nest hundreds of markers deep.
        let block = lines.join("\n");
        vec![block; repeat.min(50_000 / (lines.len() + 1))].join("\n")
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// Regexes and globs nested from shallow to far past the bounds: within them they compile
    /// and match, past them the error names the nesting; neither crashes.
    #[test]
    fn nested_regexes_and_globs_never_crash(depth in 0usize..2000, kind in 0usize..4) {
        let ws = Ws::one_shot();
        ws.write("a.txt", "a\n");
        let (open, close) = [("(", ")"), ("(?:", ")?"), ("[", "]"), ("(a|", ")")][kind];
        let pattern = format!("{}a{}", open.repeat(depth), close.repeat(depth));
        let output = block_on(ws.call("grep", json!({"pattern": pattern})));
        let text = output.text_content();
        if depth <= 30 {
            prop_assert!(text.contains("a.txt"), "{}: {}", pattern, text);
        } else if depth > 64 {
            prop_assert!(output.is_error && text.starts_with("Invalid regex: ") && text.contains("nest"), "{}", text);
        }
        let glob = format!("{}a.txt{}", "{".repeat(depth), "}".repeat(depth));
        let output = block_on(ws.call("glob", json!({"pattern": glob})));
        let text = output.text_content();
        // globset takes 100 nested `{…}` at most (search/bounds.rs): 100 itself is fine.
        if depth <= 100 {
            prop_assert_eq!(text, "a.txt");
        } else {
            prop_assert!(output.is_error && text.contains("nested too deeply"), "{}", text);
        }
    }

    /// Hostile patches in both formats: an answer every time (applied, or a parse or match
    /// error), and a refused patch changes nothing.
    #[test]
    fn hostile_patches_are_answered(text in patch_lines()) {
        let ws = Ws::one_shot();
        ws.write("a.txt", "a\n");
        for (tool, args) in [("apply_patch", json!({"input": text})), ("patch", json!({"path": "a.txt", "patch": text}))] {
            let output = block_on(ws.call(tool, args));
            prop_assert!(!output.text_content().contains("internal error"), "{}", output.text_content());
            if output.is_error && ws.exists("a.txt") {
                prop_assert_eq!(ws.read("a.txt"), "a\n");
            }
        }
    }

    /// Random nestings of parentheses, negations, filters and function calls, from shallow to
    /// far past the bounds: within the bounds the parser answers (a match or its own syntax
    /// error), past them the tool refuses before parsing; neither crashes.
    #[test]
    fn nested_jsonpath_filters_never_crash(levels in prop::collection::vec(any::<u8>(), 0..400)) {
        let mut expression = "@.a".to_owned();
        for &level in &levels {
            expression = wrap(level, &expression);
        }
        let path = format!("$[?{expression}]");
        // Each level opens one bracket or parenthesis, inside the outer `[?`.
        let depth = levels.len() + 1;
        let filters = levels.iter().filter(|l| *l % 5 == 2).count() + 1;
        let within = path.len() <= 4096 && depth <= 32 && filters <= 4;
        let ws = Ws::new();
        ws.write("f.json", "[{\"a\": 1, \"b\": true}]");
        let output = block_on(ws.call("json_edit_tool", json_edit(&path)));
        let text = output.text_content();
        let refused = text.contains("json_edit_tool accepts at most");
        prop_assert_eq!(refused, !within, "{}: {}", path, text);
    }
}
