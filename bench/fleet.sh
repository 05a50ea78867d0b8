#!/usr/bin/env bash
# The local fleet's overhead (issue 29 targets): N scripted tasks (default 100) of 3 model steps
# each against the fake model server, 2 workers. Prints the wall time, the sum of the tasks' own
# run times (their `duration_ms`), the ratio wall ÷ (sum ÷ workers) (target ≤ 1.2), the
# per-task overhead ((wall × workers − sum) ÷ tasks; target ≤ 50 ms without containers) and
# the fleet process's peak RSS with QUEUED tasks queued (default 1000; target ≤ 50 MB).
set -euo pipefail
cd "$(dirname "$0")/.."
tasks=${TASKS:-100}
queued=${QUEUED:-1000}
workers=2
cargo build --release -q -p tackle-cli
cargo build --release -q -p tackle-testkit --example fake_llm_server
tmp=$(mktemp -d)
trap 'kill "${server_pid:-0}" 2>/dev/null || true; rm -rf "$tmp"' EXIT
cat > "$tmp/script.json" <<'JSON'
{"turns": [{"reply": {"text": "Thinking.", "tool_calls": [{"id": "t", "name": "sequentialthinking",
  "args": {"thought": "a step", "next_thought_needed": true, "thought_number": 1, "total_thoughts": 3}}],
  "usage": {"input": 100, "output": 10}}}], "repeat_last": true}
JSON
target/release/examples/fake_llm_server "$tmp/script.json" > "$tmp/port" &
server_pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
port=$(head -1 "$tmp/port")
mkdir -p "$tmp/ws" "$tmp/config"
printf '[sandbox]\nmode = "none"\n' > "$tmp/config/config.toml"
for i in $(seq "$tasks"); do echo "{\"id\": \"t$i\", \"task\": \"think\", \"workspace\": \"ws\"}"; done > "$tmp/tasks.jsonl"
start=$(date +%s%N)
TACKLE_CONFIG_DIR="$tmp/config" target/release/tackle fleet run "$tmp/tasks.jsonl" --out "$tmp/out" \
  --workers "$workers" --model openai/fake --base-url "http://127.0.0.1:$port/v1" \
  --tools default,sequentialthinking --max-steps 3 > "$tmp/table" 2>/dev/null || true
end=$(date +%s%N)
python3 - "$tmp/out" "$tasks" "$workers" "$(( (end - start) / 1000000 ))" <<'PY'
import json, pathlib, sys
out, tasks, workers, wall = pathlib.Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
durations = [json.loads((d / "result.json").read_text())["duration_ms"] for d in out.iterdir() if (d / "result.json").exists()]
assert len(durations) == tasks, f"{len(durations)} results of {tasks}"
total = sum(durations)
print(f"{tasks} tasks, {workers} workers: wall {wall} ms, tasks' own time {total} ms in all")
print(f"ratio wall / (sum / workers): {wall / (total / workers):.2f} (target <= 1.2)")
print(f"per-task overhead: {(wall * workers - total) / tasks:.1f} ms (target <= 50)")
PY
# Peak RSS of the fleet process itself with many tasks queued behind 1 worker (sampled).
for i in $(seq "$queued"); do echo "{\"id\": \"q$i\", \"task\": \"think\"}"; done > "$tmp/queued.jsonl"
TACKLE_CONFIG_DIR="$tmp/config" target/release/tackle fleet run "$tmp/queued.jsonl" --out "$tmp/qout" \
  --workers 1 --model openai/fake --base-url "http://127.0.0.1:$port/v1" \
  --tools default,sequentialthinking --max-steps 1 > /dev/null 2>&1 &
fleet_pid=$!
peak=0
for _ in $(seq 40); do
  hwm=$(awk '/VmHWM/ {print $2}' "/proc/$fleet_pid/status" 2>/dev/null || echo 0)
  [ "${hwm:-0}" -gt "$peak" ] && peak=$hwm
  sleep 0.1
done
kill -INT "$fleet_pid" 2>/dev/null || true
wait "$fleet_pid" 2>/dev/null || true
echo "fleet process peak RSS with $queued tasks queued: $((peak / 1024)) MB ($peak KB; target <= 50 MB)"
