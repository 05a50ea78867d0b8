//! End to end: a model's reply in each text format, parsed, run by the real executor with the
//! built-in tools (gptme's `save`, `append`, `patch` among them) in a real workspace, and the
//! results rendered back as the next user message (docs/reference/formats.md#block-tools, docs/reference/formats.md#results-back-to-the-model).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use pretty_assertions::assert_eq;
use tackle_calls::{CallResult, ParsedCall, Parser, TextFormat, ToolIndex, render_results};
use tackle_core::{Executor, PathPolicy, ToolSession, ToolSessionConfig};
use tackle_sandbox::WorkspacePolicy;
use tokio_util::sync::CancellationToken;

struct Workspace {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    session: ToolSession,
}

fn workspace() -> Workspace {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let registry = tackle_tools::builtin_registry();
    let selection = registry.select("all", "all").unwrap();
    let mut config = ToolSessionConfig::new(root.clone());
    config.path_policy = Some(Arc::new(WorkspacePolicy::new(&root).unwrap()) as Arc<dyn PathPolicy>);
    let session = ToolSession::new(config, registry.instantiate(&selection));
    Workspace { _dir: dir, root, session }
}

/// Streams `reply` to the parser in small chunks, runs each call as soon as it is yielded,
/// and returns the user message with the results.
async fn run(format: TextFormat, reply: &str, ws: &Workspace) -> (Vec<ParsedCall>, String) {
    let tools = ToolIndex::from_toolset(ws.session.tools());
    let executor = Executor::default();
    let mut parser = Parser::new(format, &tools).with_step(2);
    let mut calls = Vec::new();
    let mut outputs = Vec::new();
    let mut chunks: Vec<&str> = Vec::new();
    let mut rest = reply;
    while !rest.is_empty() {
        let mut cut = 7.min(rest.len());
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        chunks.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    let mut finished = Vec::new();
    for chunk in chunks {
        finished.extend(parser.feed(chunk));
        for call in finished.drain(..) {
            outputs.push(executor.run(&ws.session, call.to_tool_call(), &CancellationToken::new()).await);
            calls.push(call);
        }
    }
    for call in parser.finish() {
        outputs.push(executor.run(&ws.session, call.to_tool_call(), &CancellationToken::new()).await);
        calls.push(call);
    }
    let texts: Vec<String> = outputs.iter().map(tackle_core::ToolOutput::text_content).collect();
    let results: Vec<CallResult<'_>> = calls
        .iter()
        .zip(&outputs)
        .zip(&texts)
        .map(|((call, output), text)| CallResult {
            tool: &call.name,
            id: &call.id,
            is_error: output.is_error,
            output: text,
        })
        .collect();
    let message = render_results(format, &results);
    (calls, message)
}

#[tokio::test]
async fn a_markdown_reply_writes_files_through_the_block_tools() {
    let ws = workspace();
    let reply = "I'll create the script.\n```save hello.py\nprint('hello')\n```\n\nThen extend it:\n```append hello.py\nprint('bye')\n```\n\nAnd fix the greeting:\n```patch hello.py\n<<<<<<< ORIGINAL\nprint('hello')\n=======\nprint('hello, world')\n>>>>>>> UPDATED\n```\n\nAn example, not run:\n```python\nprint('not a call')\n```\n\nAnd a mistake:\n```save\nno path given\n```\n";
    let (calls, message) = run(TextFormat::Markdown, reply, &ws).await;
    assert_eq!(std::fs::read_to_string(ws.root.join("hello.py")).unwrap(), "print('hello, world')\nprint('bye')\n");
    let ids: Vec<&str> = calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, vec!["call_2_1", "call_2_2", "call_2_3", "call_2_4"]);
    assert_eq!(
        message,
        "Result of save (call 1):\n```output\nSaved to hello.py\n```\n\nResult of append (call 2):\n```output\nAppended to hello.py\n```\n\nResult of patch (call 3):\n```output\nPatch applied to hello.py (1 hunks)\n```\n\nResult of save (call 4) — error:\n```output\nNo path provided for the save tool\n```"
    );
}

#[tokio::test]
async fn an_xml_reply_and_a_tool_reply_do_the_same() {
    let ws = workspace();
    let xml = "<tool-use>\n<save path=\"a.md\">\n# Title\n```python\nprint(1)\n```\n</save>\n</tool-use>\n<function_calls>\n<invoke name=\"append\" id=\"x2\">\n<parameter name=\"path\">a.md</parameter>\n<parameter name=\"content\">more &amp; more</parameter>\n</invoke>\n</function_calls>\n";
    let (_, message) = run(TextFormat::Xml, xml, &ws).await;
    assert_eq!(
        std::fs::read_to_string(ws.root.join("a.md")).unwrap(),
        "# Title\n```python\nprint(1)\n```\nmore & more\n"
    );
    assert_eq!(
        message,
        "<tool-result name=\"save\" id=\"call_2_1\" status=\"ok\">Saved to a.md</tool-result>\n<tool-result name=\"append\" id=\"x2\" status=\"ok\">Appended to a.md</tool-result>"
    );
    let tool = "@patch(p1): {\"path\": \"a.md\", \"patch\": \"<<<<<<< ORIGINAL\\nmore & more\\n=======\\nthe end\\n>>>>>>> UPDATED\"}\n@patch(p2): {\"path\": \"a.md\", \"patch\": \"nonsense\"}\n";
    let (_, message) = run(TextFormat::Tool, tool, &ws).await;
    assert!(std::fs::read_to_string(ws.root.join("a.md")).unwrap().ends_with("```\nthe end\n"));
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(
        lines[0],
        "@result(p1): {\"tool\":\"patch\",\"is_error\":false,\"output\":\"Patch applied to a.md (1 hunks)\"}"
    );
    assert!(
        lines[1].starts_with("@result(p2): {\"tool\":\"patch\",\"is_error\":true,\"output\":\"The patch has no hunks."),
        "{}",
        lines[1]
    );
}
