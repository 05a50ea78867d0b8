#!/usr/bin/env bash
# 1,000 calls of `echo hi` in one persistent shell through `tackle tools batch`, against
# spawning `bash -c 'echo hi'` 1,000 times from one process (what nanobot and mini-swe-agent do,
# keeping no state). Prints the median of RUNS runs of each, in ms per call.
# Usage: bench/shell_echo.sh [RUNS]   (builds the release binary first)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
calls=1000
cargo build --release -q -p tackle-cli
tackle=target/release/tackle
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/ws"
for _ in $(seq "$calls"); do echo '{"name": "bash", "args": {"command": "echo hi"}}'; done >"$work/calls.jsonl"

now_ns() { date +%s%N; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

for _ in $(seq "$runs"); do
  start=$(now_ns)
  "$tackle" tools batch --workspace "$work/ws" <"$work/calls.jsonl" >"$work/out.jsonl"
  end=$(now_ns)
  test "$(grep -c '"output":"hi"' "$work/out.jsonl")" -eq "$calls"
  echo $(((end - start) / calls))
done | median >"$work/tackle_ns"

for _ in $(seq "$runs"); do
  start=$(now_ns)
  for _ in $(seq "$calls"); do bash -c 'echo hi' >/dev/null; done
  end=$(now_ns)
  echo $(((end - start) / calls))
done | median >"$work/spawn_ns"

tackle_ns=$(cat "$work/tackle_ns")
spawn_ns=$(cat "$work/spawn_ns")
awk -v t="$tackle_ns" -v s="$spawn_ns" 'BEGIN {
  printf "tackle tools batch, persistent shell: %.3f ms per call (median of runs, process start included)\n", t / 1e6
  printf "bash -c per call, no state kept:      %.3f ms per call\n", s / 1e6
  printf "ratio: %.1f%% of the spawning time (target <= 25%%, and <= 0.5 ms per call)\n", 100 * t / s
}'
