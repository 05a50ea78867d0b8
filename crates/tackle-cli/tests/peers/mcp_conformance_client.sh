#!/usr/bin/env bash
# The client the MCP conformance suite (@modelcontextprotocol/conformance, client mode) runs:
# `mcp_conformance_client.sh URL`, with MCP_CONFORMANCE_SCENARIO naming the scenario and
# MCP_CONFORMANCE_CONTEXT holding its JSON context (pre-registered client credentials). It
# points Tackle at the scenario's server as the user-config server `conf` and calls its tool;
# sign-ins run by themselves, the authorization URL going to BROWSER (which follows the
# redirects). TACKLE_BIN is the tackle binary (default: tackle on PATH). See
# crates/tackle-cli/tests/all/mcp_conformance.rs and docs/mcp.md#tests.
set -euo pipefail
url="${!#}"
scenario="${MCP_CONFORMANCE_SCENARIO:?}"
tackle="${TACKLE_BIN:-tackle}"
home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
mkdir -p "$home/config" "$home/workspace"
context="${MCP_CONFORMANCE_CONTEXT:-{\}}"
client_id="$(jq -r '.client_id // empty' <<<"$context")"
client_secret="$(jq -r '.client_secret // empty' <<<"$context")"
{
  # The scenario checks that a form's defaults are applied: the unattended answer that does it.
  if [[ "$scenario" == elicitation-* ]]; then printf '[mcp]\nelicitation = "accept-defaults"\n'; fi
  printf '[mcp.servers.conf]\nurl = %s\n' "$(jq -Rn --arg v "$url" '$v')"
  printf '[mcp.servers.conf.oauth]\n'
  # The suite's stand-in for Tackle's client ID metadata document (used only where the
  # authorization server says it supports them).
  printf 'client_metadata_url = "https://conformance-test.local/client-metadata.json"\n'
  if [[ -n "$client_id" ]]; then printf 'client_id = %s\n' "$(jq -Rn --arg v "$client_id" '$v')"; fi
  if [[ -n "$client_secret" ]]; then printf 'client_secret = %s\n' "$(jq -Rn --arg v "$client_secret" '$v')"; fi
} >"$home/config/config.toml"
export TACKLE_CONFIG_DIR="$home/config" BROWSER="${BROWSER:-curl -sL -o /dev/null}"
cd "$home/workspace"
case "$scenario" in
  initialize) exec "$tackle" tools list --tools mcp ;;
  tools_call) exec "$tackle" tools call mcp__conf__add_numbers '{"a": 5, "b": 3}' ;;
  sse-retry) exec "$tackle" tools call mcp__conf__test_reconnection '{}' ;;
  elicitation-sep1034-client-defaults) exec "$tackle" tools call mcp__conf__test_client_elicitation_defaults '{}' ;;
  auth/*)
    # Signed in once, then used by a second process: the stored tokens must be enough.
    "$tackle" tools list --tools mcp >/dev/null
    exec "$tackle" tools call mcp__conf__test-tool '{}'
    ;;
  *) echo "unknown scenario $scenario" >&2; exit 2 ;;
esac
