#!/usr/bin/env bash
# Issue 30: MCP round trips measured with a raw JSON-RPC client (no client library in the
# figure): 1,000 sequential `tools/call` of `read_file` on a 3-byte file from
# `tackle mcp serve` over stdio, against server-everything's `echo` (Node) in the same run
# (targets: <= 60 us, <= 0.35x), and over streamable HTTP with one session and one keep-alive
# connection (target: <= 150 us). Median of the runs' medians, with the lowest and highest.
#
# Usage: bench/mcp_roundtrip.sh [CALLS] [RUNS]
# TACKLE=path/to/tackle uses that binary; otherwise the release profile is built.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-mcp-peers.sh
if [ -z "${TACKLE:-}" ]; then
  cargo build --release --quiet -p tackle-cli
  TACKLE=target/release/tackle
fi
everything=.mcp-peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js
exec python3 bench/mcp_roundtrip.py "$(realpath "$TACKLE")" "$everything" "${1:-1000}" "${2:-5}"
