//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, client mode)
//! against Tackle: every client scenario of the 2025-03-26, 2025-06-18 and 2025-11-25 specs
//! that Tackle implements must pass with no failed check and no warning. The suite starts the
//! scenario's server (and authorization server) and runs
//! `crates/tackle-cli/tests/peers/mcp_conformance_client.sh URL`, which points Tackle at it;
//! sign-ins go to `BROWSER='curl -sL -o /dev/null'`, which follows the redirects back to
//! Tackle's loopback callback. Skipped, with a reason, when the suite is not installed
//! (`scripts/install-mcp-peers.sh`), unless `TACKLE_REQUIRE_PEERS` is set.

use std::path::Path;
use std::process::Command;

use crate::peers;

/// Runs one scenario; panics with the suite's report unless every check passed.
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
    let summary = report.lines().find(|line| line.starts_with("Passed: ")).unwrap_or("no summary");
    let clean = summary.ends_with(", 0 failed, 0 warnings")
        && summary
            .strip_prefix("Passed: ")
            .and_then(|s| s.split(',').next())
            .is_some_and(|ratio| ratio.split_once('/').is_some_and(|(passed, all)| passed == all && passed != "0"));
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
