#!/usr/bin/env bash
# The test command of the README: installs what the tests need, then runs the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-test-deps.sh
exec cargo nextest run --workspace --no-fail-fast "$@"
