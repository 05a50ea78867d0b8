//! `tool_search` over a session's deferred tools: words and `select:` load tools into the
//! session's `Deferral` (what the next request shows), and the refusals: an empty query, no
//! match, a name that is not deferred, a session with nothing deferred.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use tackle_core::deferral::{Deferral, shown_specs};
use tackle_core::registry::{Registry, Selection};
use tackle_core::{
    BoxFuture, DynTool, Executor, Loading, PreparedCall, ToolCall, ToolError, ToolOutput, ToolSession,
    ToolSessionConfig, ToolSource, ToolSpec,
};
use tokio_util::sync::CancellationToken;

struct Fixed(ToolSpec);

impl DynTool for Fixed {
    fn spec(&self) -> &ToolSpec {
        &self.0
    }
    fn prepare(&self, _args: &Value) -> Result<PreparedCall, ToolError> {
        Ok(PreparedCall::new(true, true, None, |_| Box::pin(async { Ok(ToolOutput::text("ran")) })))
    }
    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

fn session_with(deferred: &[(&str, &str, &str)]) -> ToolSession {
    let mut registry = tackle_tools::builtin_registry();
    let mut names = vec!["read_file".to_owned(), "tool_search".to_owned()];
    for (name, hint, description) in deferred {
        let spec = ToolSpec::new(*name, *description)
            .search_hint(*hint)
            .loading(Loading::Deferred)
            .input_schema(json!({"type": "object", "properties": {}, "additionalProperties": false}));
        let tool: Arc<dyn DynTool> = Arc::new(Fixed(spec));
        registry.register_dyn(&["mcp"], ToolSource::Mcp("srv".into()), Arc::new(move || Arc::clone(&tool)));
        names.push((*name).to_owned());
    }
    let selection = Selection { names, warnings: Vec::new() };
    ToolSession::new(ToolSessionConfig::new(std::env::temp_dir()), registry.instantiate(&selection))
}

async fn call(session: &ToolSession, args: Value) -> ToolOutput {
    Executor::default().run(session, ToolCall::new("c1", "tool_search", args), &CancellationToken::new()).await
}

fn shown(session: &ToolSession) -> Vec<String> {
    shown_specs(session.tools(), &session.state().get::<Deferral>()).iter().map(|s| s.name.clone()).collect()
}

const TOOLS: [(&str, &str, &str); 3] = [
    ("mcp__git__log", "git commit history", "Show the commit log.\nMore detail."),
    ("mcp__git__diff", "git diff of changes", "Show the changes of the working tree."),
    ("mcp__weather__forecast", "weather forecast", "Get the weather forecast for a city."),
];

#[tokio::test]
async fn a_search_loads_the_best_matches_for_the_next_request() {
    let session = session_with(&TOOLS);
    assert_eq!(shown(&session), ["read_file", "tool_search"]);
    let out = call(&session, json!({"query": "commit history", "max_results": 1})).await;
    assert!(!out.is_error, "{}", out.text_content());
    assert_eq!(
        out.text_content(),
        "Loaded 1 tool(s), available from your next turn:\n- mcp__git__log: Show the commit log."
    );
    assert_eq!(shown(&session), ["read_file", "tool_search", "mcp__git__log"]);
    let out = call(&session, json!({"query": "select:mcp__weather__forecast, mcp__git__diff"})).await;
    assert_eq!(
        out.text_content(),
        "Loaded 2 tool(s), available from your next turn:\n- mcp__weather__forecast: Get the weather forecast for a city.\n\
         - mcp__git__diff: Show the changes of the working tree."
    );
    assert_eq!(shown(&session).len(), 5);
}

#[tokio::test]
async fn refusals_say_what_to_do() {
    let session = session_with(&TOOLS);
    let cases = [
        (json!({"query": "  "}), "The query is empty. Give words describing the tool you need, or select:NAME,NAME."),
        (json!({"query": "spreadsheet"}), "No deferred tools match \"spreadsheet\"."),
        (json!({"query": "select:read_file"}), "read_file is not a deferred tool."),
        (json!({"query": "select:nothing_here"}), "nothing_here is not a deferred tool."),
        (json!({"query": "select: ,"}), "select: names no tool; write select:NAME,NAME."),
        (json!({"query": "git", "max_results": 21}), "max_results must be <= 20"),
    ];
    for (args, message) in cases {
        let out = call(&session, args.clone()).await;
        assert!(out.is_error && out.text_content().contains(message), "{args}: {}", out.text_content());
    }
    assert_eq!(shown(&session), ["read_file", "tool_search"], "nothing was loaded");

    let plain = session_with(&[]);
    let out = call(&plain, json!({"query": "git"})).await;
    assert_eq!(out.text_content(), "No tools are deferred in this session: every tool is already available to call.");
    assert_eq!(shown(&plain), ["read_file"], "tool_search is not shown while nothing is deferred");
}

#[test]
fn tool_search_is_in_the_default_and_bare_toolsets() {
    let registry: Registry = tackle_tools::builtin_registry();
    for (name, toolsets) in [
        ("tool_search", vec!["default", "bare"]),
        ("load_skill", vec!["default", "bare"]),
        ("todo_write", vec!["default", "bare", "codex"]),
        ("todo_read", vec!["default", "bare"]),
        ("task_create", vec!["bare"]),
        ("task_list", vec!["bare"]),
    ] {
        assert_eq!(registry.get(name).unwrap().toolsets, toolsets, "{name}");
    }
}
