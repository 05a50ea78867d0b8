#!/usr/bin/env bash
# Side by side for issue 7: the official Python MCP SDK (mcp==2.3.0) calling a trivial tool
# of `tackle mcp serve` (task_done) and server-everything's `echo`, sequentially over stdio
# (ratio printed; target: Tackle at least as fast); `tackle mcp serve` time to answer
# `initialize` (target <= 50 ms) and idle RSS (target <= 20 MB). Medians.
# The in-process figure (>= 5,000 calls/s) is the criterion bench:
#   cargo bench -p tackle-mcp --bench serve
#
# Usage: bench/mcp.sh [CALLS] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-mcp-peers.sh
cargo build --release --quiet -p tackle-cli
exec .venv-mcp/bin/python bench/mcp.py target/release/tackle "${1:-2000}" "${2:-5}"
