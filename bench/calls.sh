#!/usr/bin/env bash
# Side by side: gptme 0.35.1 (from PyPI, in its own virtualenv) and Tackle's tackle-calls
# parse the same transcripts: 10 MB with 5,000 code blocks, and 10 MB with 50,000. Reports
# medians (MB/s) and checks issue 5's targets: Tackle >= 200 MB/s and >= 20x gptme on the
# 5,000-block transcript; streaming in 16-byte chunks <= 2x the whole-text parse; and end to
# end (issue 14), `tackle parse` as a process >= 30x gptme, in <= 2,000 writes per document.
#
# Usage: bench/calls.sh [RUNS]        (results also go to target/bench-calls/report.json)
# TACKLE=path/to/tackle uses that binary; otherwise the release profile is built (thin LTO,
# about 25 minutes on 2 cores; CARGO_PROFILE_RELEASE_LTO=false builds it in less).
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv-bench
if ! "$VENV/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("gptme") != "0.35.1")' 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check 'gptme==0.35.1' 'lxml==6.1.3'
fi

cargo build --release --quiet -p tackle-calls --example bench_parse
if [ -z "${TACKLE:-}" ]; then
  cargo build --release --quiet -p tackle-cli
  TACKLE=target/release/tackle
fi
exec "$VENV/bin/python" bench/calls.py target/release/examples/bench_parse "$(realpath "$TACKLE")" target/bench-calls "${1:-15}"
