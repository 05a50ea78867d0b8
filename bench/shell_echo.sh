#!/usr/bin/env bash
# Issue 30: 1,000 calls of `echo hi` in one persistent shell through `tackle tools batch`
# (bypass mode, the process start included), against spawning `bash -c 'echo hi'` 1,000 times
# from one process (what nanobot and mini-swe-agent do, keeping no state), alternating in one
# run (targets: <= 0.1 ms per call, <= 0.1x spawning). Then 100 calls of `ls` in `dont-ask`
# mode, where the analysis judges `ls` read-only and it runs under the read-only restriction
# (goal: <= 2 ms per call), against `ls` in bypass mode. Each figure: the median of RUNS runs,
# with the lowest and highest, in ms per call.
# Usage: bench/shell_echo.sh [RUNS]
# TACKLE=path/to/tackle uses that binary; otherwise the release profile is built.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-7}
if [ -z "${TACKLE:-}" ]; then
  cargo build --release -q -p tackle-cli
  TACKLE=target/release/tackle
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/ws"
touch "$work/ws/a.txt"
for _ in $(seq 1000); do echo '{"name": "bash", "args": {"command": "echo hi"}}'; done >"$work/echo.jsonl"
for _ in $(seq 100); do echo '{"name": "bash", "args": {"command": "ls"}}'; done >"$work/ls.jsonl"

now_ns() { date +%s%N; }
# Runs a batch; prints ns per call after checking every call answered `expected`.
batch() { # mode file calls expected
  local start end
  start=$(now_ns)
  "$TACKLE" tools batch --workspace "$work/ws" --permission-mode "$1" <"$2" >"$work/out.jsonl"
  end=$(now_ns)
  test "$(grep -c "\"output\":\"$4\"" "$work/out.jsonl")" -eq "$3"
  echo $(((end - start) / $3))
}
spawn() {
  local start end
  start=$(now_ns)
  for _ in $(seq 1000); do bash -c 'echo hi' >/dev/null; done
  end=$(now_ns)
  echo $(((end - start) / 1000))
}
for _ in $(seq "$runs"); do
  echo "echo $(batch bypass "$work/echo.jsonl" 1000 hi)"
  echo "spawn $(spawn)"
  echo "ls_ro $(batch dont-ask "$work/ls.jsonl" 100 a.txt)"
  echo "ls $(batch bypass "$work/ls.jsonl" 100 a.txt)"
done >"$work/figures"
# median, lowest and highest of one figure, in ms
stats() { grep "^$1 " "$work/figures" | cut -d' ' -f2 | sort -n | awk '{ v[NR] = $1 } END {
  m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
  printf "%.3f %.3f %.3f", m / 1e6, v[1] / 1e6, v[NR] / 1e6 }'; }
read -r echo_ms echo_lo echo_hi <<<"$(stats echo)"
read -r spawn_ms spawn_lo spawn_hi <<<"$(stats spawn)"
read -r ro_ms ro_lo ro_hi <<<"$(stats ls_ro)"
read -r ls_ms ls_lo ls_hi <<<"$(stats ls)"
load=$(cut -d' ' -f1 /proc/loadavg)
cat <<EOF
$runs runs, load $load on $(nproc) cores; ms per call, median (lowest-highest):
tackle tools batch, echo hi, persistent shell: $echo_ms ($echo_lo-$echo_hi)
bash -c 'echo hi' per call, no state kept:     $spawn_ms ($spawn_lo-$spawn_hi)
ratio: $(awk -v t="$echo_ms" -v s="$spawn_ms" 'BEGIN { printf "%.3f", t / s }') (targets: <= 0.1 ms per call, <= 0.1x spawning)
ls, read-only restriction (dont-ask):          $ro_ms ($ro_lo-$ro_hi) (goal <= 2 ms)
ls, unrestricted (bypass):                     $ls_ms ($ls_lo-$ls_hi)
EOF
