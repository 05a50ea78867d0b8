#!/usr/bin/env bash
# A command printing 100 MB through `tackle tools call bash`: the call's own duration
# (meta.duration_ms) against the same command writing to a file in the same run (issue 30:
# ratio <= 1.1), and the peak RSS growth of the tackle process over a call of `true`
# (<= 64 MB). Prints medians of RUNS runs.
# Usage: bench/shell_output.sh [RUNS]   (TACKLE=path/to/tackle, or the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
if [ -z "${TACKLE:-}" ]; then
  cargo build --release -q -p tackle-cli
  TACKLE=target/release/tackle
fi
tackle=$TACKLE
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
# The command alone, writing to a file on the same file system as the spill directory.
for _ in $(seq "$runs"); do
  start=$(date +%s%N)
  bash -c "yes | head -c 100000000 >'$work/plain.out'"
  end=$(date +%s%N)
  echo $(((end - start) / 1000000))
done >"$work/plain"
grep -q '"truncated": true' "$work/out.json"

base_rss=$(cut -d' ' -f2 "$work/base" | median)
big_ms=$(cut -d' ' -f1 "$work/big" | median)
big_rss=$(cut -d' ' -f2 "$work/big" | median)
plain_ms=$(median <"$work/plain")
awk -v ms="$big_ms" -v p="$plain_ms" -v b="$base_rss" -v r="$big_rss" 'BEGIN {
  printf "100 MB of output: %d ms per call (median); the command writing to a file: %d ms; ratio %.2f (target <= 1.1)\n", ms, p, ms / p
  printf "peak RSS %.1f MB vs %.1f MB for `true`: growth %.1f MB (target <= 64)\n", r / 1024, b / 1024, (r - b) / 1024
}'
