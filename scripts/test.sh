#!/usr/bin/env bash
# The test command of the README: installs what the tests need, then runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-test-deps.sh
# The MCP peer tests fail, rather than skip, when a peer is missing.
export TACKLE_REQUIRE_PEERS=1
exec cargo nextest run --workspace --no-fail-fast "$@"
