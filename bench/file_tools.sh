#!/usr/bin/env bash
# The file tools end to end (issue 14, points 12 and 13): `str_replace` on the 5,000-line file
# and `json_edit_tool` view / set on the 1 MB document of the criterion bench
# (crates/tackle-tools/benches/file_tools.rs), each call through `tackle tools batch` (one
# session), against Python's C-accelerated json.load of the same file in the same run.
# Reports CPU and wall time per call and checks the targets (str_replace <= 0.3 ms; set
# <= 5 ms and below half of json.load).
#
# Usage: bench/file_tools.sh [RUNS] [CALLS]    (results also go to target/bench-file-tools/report.json)
# TACKLE=path/to/tackle uses that binary; otherwise the release profile is built (thin LTO,
# about 25 minutes on 2 cores; CARGO_PROFILE_RELEASE_LTO=false builds it in less).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${TACKLE:-}" ]; then
  cargo build --release --quiet -p tackle-cli
  TACKLE=target/release/tackle
fi
exec python3 bench/file_tools.py "$(realpath "$TACKLE")" target/bench-file-tools "${1:-5}" "${2:-100}"
