//! The official MCP conformance suite (`@modelcontextprotocol/conformance`) against Tackle.
//! Client mode: every client scenario of the 2025-03-26, 2025-06-18 and 2025-11-25 specs
//! that Tackle implements must pass with no failed check and no warning. Server mode
//! ([`server_scenarios`]): the protocol scenarios that apply to `tackle mcp serve --http`. The suite starts the
//! scenario's server (and authorization server) and runs
//! `crates/tackle-cli/tests/peers/mcp_conformance_client.sh URL`, which points Tackle at it;
//! sign-ins go to `BROWSER='curl -sL -o /dev/null'`, which follows the redirects back to
//! Tackle's loopback callback. Skipped, with a reason, when the suite is not installed
//! (`scripts/install-mcp-peers.sh`), unless `TACKLE_REQUIRE_PEERS` is set.

use std::path::Path;
use std::process::Command;

use crate::peers;

/// The suite's summary line and whether it is clean: every check passed, none failed, and at
/// most `warnings` warnings.
fn verdict(report: &str, warnings: usize) -> (String, bool) {
    let summary = report.lines().find(|line| line.starts_with("Passed: ")).unwrap_or("no summary").to_owned();
    let clean = summary.ends_with(&format!(", 0 failed, {warnings} warnings"))
        && summary
            .strip_prefix("Passed: ")
            .and_then(|s| s.split(',').next())
            .is_some_and(|ratio| ratio.split_once('/').is_some_and(|(passed, all)| passed == all && passed != "0"));
    (summary, clean)
}

/// Runs one client scenario; panics with the suite's report unless every check passed.
fn scenario(name: &str) {
    let (node, cli) = require!(peers::conformance(), "the MCP conformance suite");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/mcp_conformance_client.sh");
    let out = Command::new(node)
        .arg(cli)
        .args(["client", "--scenario", name, "--timeout", "90000", "--command"])
        .arg(&script)
        .env("TACKLE_BIN", env!("CARGO_BIN_EXE_tackle"))
        .env("BROWSER", "curl -sL -o /dev/null")
        .env_remove("TACKLE_CONFIG_DIR")
        .env_remove("TACKLE_TRUST_WORKSPACE")
        .env_remove("TACKLE_ALLOW_PROJECT_MCP")
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let (summary, clean) = verdict(&report, 0);
    assert!(
        clean && report.contains("OVERALL: PASSED") && out.status.success(),
        "scenario {name}: {summary}\n{report}"
    );
}

macro_rules! scenarios {
    ($($test:ident => $name:literal,)*) => {
        $(
            #[test]
            fn $test() {
                scenario($name);
            }
        )*
    };
}

scenarios! {
    initialize => "initialize",
    tools_call => "tools_call",
    sse_retry => "sse-retry",
    elicitation_sep1034_client_defaults => "elicitation-sep1034-client-defaults",
    auth_metadata_default => "auth/metadata-default",
    auth_metadata_var1 => "auth/metadata-var1",
    auth_metadata_var2 => "auth/metadata-var2",
    auth_metadata_var3 => "auth/metadata-var3",
    auth_basic_cimd => "auth/basic-cimd",
    auth_scope_from_www_authenticate => "auth/scope-from-www-authenticate",
    auth_scope_from_scopes_supported => "auth/scope-from-scopes-supported",
    auth_scope_omitted_when_undefined => "auth/scope-omitted-when-undefined",
    auth_scope_step_up => "auth/scope-step-up",
    auth_scope_retry_limit => "auth/scope-retry-limit",
    auth_token_endpoint_auth_basic => "auth/token-endpoint-auth-basic",
    auth_token_endpoint_auth_post => "auth/token-endpoint-auth-post",
    auth_token_endpoint_auth_none => "auth/token-endpoint-auth-none",
    auth_pre_registration => "auth/pre-registration",
    auth_2025_03_26_oauth_metadata_backcompat => "auth/2025-03-26-oauth-metadata-backcompat",
    auth_2025_03_26_oauth_endpoint_fallback => "auth/2025-03-26-oauth-endpoint-fallback",
}

/// `tackle mcp serve --http` against the suite's server scenarios that apply to it. One
/// warning is known and allowed: `server-sse-polling`'s `server-sse-disconnect-resume` (a
/// SHOULD: the server does not close an SSE stream mid-call for the client to resume).
#[test]
fn server_scenarios() {
    let (node, cli) = require!(peers::conformance(), "the MCP conformance suite");
    let workspace = tempfile::tempdir().unwrap();
    let serve = crate::support::serve::HttpServe::start(workspace.path(), &[]);
    let mut failures = Vec::new();
    for (name, warnings) in [
        ("server-initialize", 0),
        ("ping", 0),
        ("logging-set-level", 0),
        ("tools-list", 0),
        ("dns-rebinding-protection", 0),
        ("server-sse-polling", 1),
        ("server-sse-multiple-streams", 0),
    ] {
        let out =
            Command::new(&node).arg(&cli).args(["server", "--url", &serve.url, "--scenario", name]).output().unwrap();
        let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        let (summary, clean) = verdict(&report, warnings);
        if !clean {
            failures.push(format!("{name}: {summary}\n{report}"));
        }
    }
    serve.stop();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
