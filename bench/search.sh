#!/usr/bin/env bash
# Side by side: Tackle's grep and glob tools (through `tackle tools call`, the whole process
# as a user runs it) and ripgrep (`rg`, the reference) on the same trees:
#   - grep over a tree of at least 100 MB of real source (copied from the cargo registry, or
#     generated when there is none): the same files and counts are checked, then each query
#     runs A/B alternating and the median wall times and their ratio are printed
#     (issue 3 target: tackle <= 1.5x rg);
#   - glob over 100,000 files against `rg --files -g PATTERN` (same target).
#
# Usage: bench/search.sh [RUNS]   (trees and report.json go to target/bench-search/)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v rg >/dev/null || { echo "bench/search.sh needs rg (scripts/install-test-deps.sh installs it)" >&2; exit 1; }
cargo build --release --quiet -p tackle-cli
exec python3 bench/search.py target/release/tackle target/bench-search "${1:-9}"
