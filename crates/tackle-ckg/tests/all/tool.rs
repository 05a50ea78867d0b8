//! The `ckg` tool through the executor, as a model's calls reach it: the outputs of
//! docs/ckg.md, the refresh after an edit by a file tool (that file only) and by `bash`,
//! references, and the repository map's ranking.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use tackle_core::{Executor, PathPolicy, SessionState, ToolCall, ToolOutput, ToolSession, ToolSessionConfig};
use tackle_sandbox::WorkspacePolicy;
use tackle_tools::fs::FsSettings;
use tokio_util::sync::CancellationToken;

struct Ws {
    _dir: tempfile::TempDir,
    root: PathBuf,
    session: ToolSession,
    executor: Executor,
}

impl Ws {
    /// A one-shot style session (no read-before-edit) over the built-ins and `ckg`.
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap().join("ws");
        std::fs::create_dir(&root).unwrap();
        let policy = WorkspacePolicy::new(&root).unwrap().with_home(Some(dir.path().join("home")));
        let mut registry = tackle_tools::builtin_registry();
        tackle_ckg::register(&mut registry);
        let selection = registry.select("code,bash", "code").unwrap();
        let mut config = ToolSessionConfig::new(root.clone());
        config.path_policy = Some(Arc::new(policy) as Arc<dyn PathPolicy>);
        let state = SessionState::default();
        state.insert(FsSettings { enforce_read_before_edit: false, ..FsSettings::default() });
        let session = ToolSession::with_state(config, registry.instantiate(&selection), state);
        Ws { _dir: dir, root, session, executor: Executor::default() }
    }

    fn write(&self, rel: &str, content: &str) {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    async fn call(&self, tool: &str, args: Value) -> ToolOutput {
        self.executor.run(&self.session, ToolCall::new("call_1", tool, args), &CancellationToken::new()).await
    }

    async fn ok(&self, tool: &str, args: Value) -> String {
        let output = self.call(tool, args.clone()).await;
        assert!(!output.is_error, "{tool} {args} failed: {}", output.text_content());
        output.text_content()
    }

    async fn err(&self, tool: &str, args: Value) -> String {
        let output = self.call(tool, args.clone()).await;
        assert!(output.is_error, "{tool} {args} should fail: {}", output.text_content());
        output.text_content()
    }

    /// How many times the index extracted `rel`: the number of distinct file row versions
    /// is not kept, so count through the symbols' ids, which grow with every re-extraction.
    fn symbol_ids(&self, rel: &str) -> Vec<i64> {
        let conn = rusqlite::Connection::open(self.root.join(".tackle/ckg/index.db")).unwrap();
        let mut statement = conn
            .prepare("SELECT s.id FROM symbols s JOIN files f ON f.id = s.file WHERE f.path = ?1 ORDER BY s.id")
            .unwrap();
        statement.query_map([rel.as_bytes()], |row| row.get(0)).unwrap().map(Result::unwrap).collect()
    }
}

const SHAPES: &str = "class Shape:\n    sides = 0\n\n    def area(self):\n        return 0\n\n\ndef make_square():\n    return Shape()\n";

#[tokio::test]
async fn trae_commands_answer_in_traes_shapes() {
    let ws = Ws::new();
    ws.write("geo/shapes.py", SHAPES);
    let out = ws.ok("ckg", json!({"command": "search_function", "identifier": "make_square"})).await;
    assert_eq!(
        out,
        "Found 1 function named make_square:\n1. geo/shapes.py:8-9\ndef make_square():\n    return Shape()"
    );
    let out =
        ws.ok("ckg", json!({"command": "search_function", "identifier": "make_square", "print_body": false})).await;
    assert_eq!(out, "Found 1 function named make_square:\n1. geo/shapes.py:8-9");
    // An explicit null means the default (Trae turned the body off).
    let out =
        ws.ok("ckg", json!({"command": "search_function", "identifier": "make_square", "print_body": null})).await;
    assert!(out.ends_with("return Shape()"), "{out}");
    let out = ws.ok("ckg", json!({"command": "search_class", "identifier": "Shape", "print_body": false})).await;
    assert_eq!(
        out,
        "Found 1 class named Shape:\n1. geo/shapes.py:1-5\nFields:\n- sides = 0\nMethods:\n- def area(self)"
    );
    let out = ws.ok("ckg", json!({"command": "search_class_method", "identifier": "area", "print_body": false})).await;
    assert_eq!(out, "Found 1 class method named area:\n1. geo/shapes.py:4-5 within class Shape");
    // Paths are relative to `path`.
    let out = ws
        .ok("ckg", json!({"command": "search_class_method", "identifier": "area", "path": "geo", "print_body": false}))
        .await;
    assert_eq!(out, "Found 1 class method named area:\n1. shapes.py:4-5 within class Shape");
}

#[tokio::test]
async fn nothing_found_offers_close_names() {
    let ws = Ws::new();
    ws.write("a.py", "def parse_config():\n    pass\n\ndef Parse():\n    pass\n");
    let out = ws.ok("ckg", json!({"command": "search_function", "identifier": "parse"})).await;
    assert_eq!(out, "No functions named parse found. Did you mean: Parse, parse_config?");
    let out = ws.ok("ckg", json!({"command": "search_class", "identifier": "zzzz"})).await;
    assert_eq!(out, "No classes named zzzz found.");
}

#[tokio::test]
async fn outline_references_and_search() {
    let ws = Ws::new();
    ws.write("geo/shapes.py", SHAPES);
    ws.write(
        "app.py",
        "from geo.shapes import make_square\n\ndef main():\n    make_square()\n    make_square()\n\nmake_square()\n",
    );
    let out = ws.ok("ckg", json!({"command": "outline", "path": "geo/shapes.py"})).await;
    assert_eq!(
        out,
        "geo/shapes.py\n1-5 class class Shape\n  2-2 field sides = 0\n  4-5 method def area(self)\n8-9 function def make_square()"
    );
    let out = ws.ok("ckg", json!({"command": "references", "identifier": "make_square"})).await;
    assert_eq!(
        out,
        "Found 3 references to make_square:\napp.py:4 in app.main (call)\napp.py:5 in app.main (call)\napp.py:7 in <top level> (call)"
    );
    let out = ws.ok("ckg", json!({"command": "references", "identifier": "make_square", "max_results": 1})).await;
    assert_eq!(
        out,
        "Found 3 references to make_square:\napp.py:4 in app.main (call)\n<response clipped> 2 more entries not shown \
         (raise max_results, now 1, to see more)"
    );
    let out = ws.ok("ckg", json!({"command": "search", "identifier": "squar"})).await;
    assert_eq!(out, "function geo.shapes.make_square geo/shapes.py:8-9");
    let out = ws.ok("ckg", json!({"command": "search", "identifier": "Shape.area"})).await;
    assert!(out.starts_with("method geo.shapes.Shape.area geo/shapes.py:4-5"), "{out}");
    let out = ws.ok("ckg", json!({"command": "search", "identifier": "make_sqare"})).await;
    assert!(out.starts_with("function geo.shapes.make_square"), "a misspelling still finds it: {out}");
}

#[tokio::test]
async fn bad_arguments_get_the_documented_errors() {
    let ws = Ws::new();
    ws.write("a.py", "def f():\n    pass\n");
    ws.write("notes.txt", "x");
    assert_eq!(ws.err("ckg", json!({"command": "search_function"})).await, "No identifier provided for the ckg tool");
    assert_eq!(
        ws.err("ckg", json!({"command": "search", "identifier": "f", "path": "missing"})).await,
        "Codebase path missing does not exist"
    );
    assert_eq!(
        ws.err("ckg", json!({"command": "search", "identifier": "f", "path": "a.py"})).await,
        "Codebase path a.py is not a directory"
    );
    assert_eq!(
        ws.err("ckg", json!({"command": "outline", "path": "notes.txt"})).await,
        "notes.txt is not in a supported language"
    );
    let out = ws.err("ckg", json!({"command": "search", "identifier": "f", "path": "/etc"})).await;
    assert!(out.contains("outside the workspace"), "{out}");
    let out = ws.err("ckg", json!({"command": "search", "identifier": "f", "max_results": 500})).await;
    assert!(out.contains("max_results must be <= 200"), "{out}");
}

#[tokio::test]
async fn an_edit_by_a_file_tool_refreshes_that_file_at_once() {
    let ws = Ws::new();
    ws.write("a.py", "def alpha():\n    pass\n");
    ws.write("b.py", "def beta():\n    pass\n");
    ws.ok("ckg", json!({"command": "search_function", "identifier": "alpha"})).await;
    let b_before = ws.symbol_ids("b.py");
    ws.ok("edit_file", json!({"file_path": "a.py", "old_string": "alpha", "new_string": "alpha_edited"})).await;
    // Without any ckg query: the listener already re-indexed a.py, and only a.py.
    let conn = rusqlite::Connection::open(ws.root.join(".tackle/ckg/index.db")).unwrap();
    let names: Vec<String> = conn
        .prepare("SELECT s.name FROM symbols s JOIN files f ON f.id = s.file WHERE f.path = x'612e7079'")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(names, ["alpha_edited"]);
    assert_eq!(ws.symbol_ids("b.py"), b_before, "b.py was not re-extracted");
    ws.ok("write_file", json!({"file_path": "c.py", "content": "def gamma():\n    pass\n"})).await;
    assert_eq!(ws.symbol_ids("c.py").len(), 1, "a new file is indexed on write");
    let out =
        ws.ok("ckg", json!({"command": "search_function", "identifier": "alpha_edited", "print_body": false})).await;
    assert_eq!(out, "Found 1 function named alpha_edited:\n1. a.py:1-2");
}

#[tokio::test]
async fn an_edit_by_bash_is_seen_by_the_next_query() {
    let ws = Ws::new();
    ws.write("a.py", "def alpha():\n    pass\n");
    ws.ok("ckg", json!({"command": "search_function", "identifier": "alpha"})).await;
    ws.ok("bash", json!({"command": "printf 'def from_bash():\\n    pass\\n' >> a.py && rm -f gone.py"})).await;
    let out = ws.ok("ckg", json!({"command": "search_function", "identifier": "from_bash", "print_body": false})).await;
    assert_eq!(out, "Found 1 function named from_bash:\n1. a.py:3-4");
}

#[tokio::test]
async fn repo_map_ranks_a_heavily_used_definition_above_an_unused_one() {
    let ws = Ws::new();
    ws.write("core/util.py", "def used_everywhere(x):\n    return x\n");
    ws.write("core/dead.py", "def never_called(x):\n    return x\n");
    for i in 0..6 {
        ws.write(
            &format!("app/mod{i}.py"),
            &format!("from core.util import used_everywhere\n\ndef job{i}():\n    return used_everywhere({i})\n"),
        );
    }
    let out = ws.ok("ckg", json!({"command": "repo_map"})).await;
    let used = out.find("def used_everywhere(x)").expect(&out);
    let unused = out.find("def never_called(x)").expect(&out);
    assert!(used < unused, "{out}");
    assert!(out.starts_with("core/util.py:\n│ def used_everywhere(x)"), "{out}");
    // A small budget keeps only the most important entries.
    let out = ws.ok("ckg", json!({"command": "repo_map", "max_tokens": 12})).await;
    assert!(out.contains("used_everywhere") && !out.contains("never_called"), "{out}");
    // A sub-folder maps only itself, paths relative to it.
    let out = ws.ok("ckg", json!({"command": "repo_map", "path": "app"})).await;
    assert!(!out.contains("used_everywhere(x)") && out.contains("mod0.py:"), "{out}");
}

#[tokio::test]
async fn long_answers_stay_within_the_cap() {
    let ws = Ws::new();
    for i in 0..300 {
        let functions: String = (0..20)
            .map(|j| format!("def function_number_{j}_of_module_{i}(argument_one, argument_two):\n    pass\n\n"))
            .collect();
        ws.write(&format!("pkg/module_{i}.py"), &functions);
    }
    let map = ws.ok("ckg", json!({"command": "repo_map", "max_tokens": 16000})).await;
    assert!((14_000..=16_000).contains(&map.chars().count()), "{}", map.chars().count());
    let out = ws.ok("ckg", json!({"command": "search", "identifier": "function_number", "max_results": 200})).await;
    assert!(out.chars().count() <= 16_100, "{}", out.chars().count());
    assert!(out.ends_with(" more entries not shown"), "{}", &out[out.len() - 80..]);
    // One class whose body alone is over the cap: its head is shown, cut at a line.
    let body: String = (0..3_000).map(|i| format!("    field_{i} = {i}\n")).collect();
    ws.write("big.py", &format!("class Big:\n{body}"));
    let out = ws.ok("ckg", json!({"command": "search_class", "identifier": "Big"})).await;
    assert!(out.starts_with("Found 1 class named Big:\n1. big.py:1-3001\nFields:\n- field_0 = 0"), "{}", &out[..200]);
    assert!(
        out.ends_with("\n<response clipped> the rest of this entry and 0 more entries not shown"),
        "{}",
        &out[out.len() - 200..]
    );
}

#[tokio::test]
async fn the_index_lives_in_the_protected_tackle_directory() {
    let ws = Ws::new();
    ws.write("a.py", "def alpha():\n    pass\n");
    ws.ok("ckg", json!({"command": "search", "identifier": "alpha"})).await;
    assert!(ws.root.join(".tackle/ckg/index.db").is_file());
    let out = ws.err("write_file", json!({"file_path": ".tackle/ckg/index.db", "content": "x"})).await;
    assert!(out.contains("protected"), "{out}");
}

#[tokio::test]
async fn the_code_toolset_is_the_file_tools_and_ckg() {
    let mut registry = tackle_tools::builtin_registry();
    tackle_ckg::register(&mut registry);
    let code = registry.select("code", "code").unwrap().names;
    assert_eq!(code, ["read_file", "write_file", "edit_file", "notebook_edit", "glob", "grep", "ckg"]);
    assert!(!registry.select("default", "default").unwrap().names.contains(&"ckg".to_owned()));
    assert!(registry.select("all", "all").unwrap().names.contains(&"ckg".to_owned()));
}
