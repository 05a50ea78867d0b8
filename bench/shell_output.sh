#!/usr/bin/env bash
# A command printing 100 MB through `tackle tools call bash`: the call's own duration
# (meta.duration_ms) and the peak RSS growth of the tackle process over a call of `true`.
# Prints medians of RUNS runs. Targets: <= 400 ms, <= 64 MB growth.
# Usage: bench/shell_output.sh [RUNS]   (builds the release binary first)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
cargo build --release -q -p tackle-cli
tackle=target/release/tackle
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/ws"

median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# Runs one call; prints "duration_ms peak_rss_kb".
call() {
  /usr/bin/time -f '%M' -o "$work/rss" "$tackle" tools call bash "{\"command\": \"$1\"}" --json --workspace "$work/ws" >"$work/out.json"
  duration=$(grep -o '"duration_ms": [0-9]*' "$work/out.json" | grep -o '[0-9]*$')
  echo "$duration $(tail -1 "$work/rss")"
}

for _ in $(seq "$runs"); do call true; done >"$work/base"
for _ in $(seq "$runs"); do call 'yes | head -c 100000000'; done >"$work/big"
grep -q '"truncated": true' "$work/out.json"

base_rss=$(cut -d' ' -f2 "$work/base" | median)
big_ms=$(cut -d' ' -f1 "$work/big" | median)
big_rss=$(cut -d' ' -f2 "$work/big" | median)
awk -v ms="$big_ms" -v b="$base_rss" -v r="$big_rss" 'BEGIN {
  printf "100 MB of output: %d ms per call (median), peak RSS %.1f MB vs %.1f MB for `true`: growth %.1f MB\n", ms, r / 1024, b / 1024, (r - b) / 1024
}'
