#!/usr/bin/env bash
# The Ray engine's per-task overhead (issue 29: measured and reported): TASKS scripted tasks
# (default 20) of 3 model steps each through `tackle fleet run --engine ray` on a one-node Ray
# cluster started here (2 CPUs, so 2 jobs at once), against the fake model server. Prints the
# wall time, the tasks' own run time and the per-task overhead ((wall × 2 − sum) ÷ tasks): job
# submission, Ray's job supervisor and driver start, and the polling.
set -euo pipefail
cd "$(dirname "$0")/.."
tasks=${TASKS:-20}
ray=.venv-ray/bin/ray
[ -x "$ray" ] || { echo "$ray is missing: run scripts/install-test-deps.sh" >&2; exit 1; }
cargo build --release -q -p tackle-cli
cargo build --release -q -p tackle-testkit --example fake_llm_server
tmp=$(mktemp -d /tmp/tackle-ray-bench.XXXXXX)
trap '"$ray" stop --force >/dev/null 2>&1 || true; kill "${server_pid:-0}" 2>/dev/null || true; rm -rf "$tmp"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
gcs=$(free_port); dash=$(free_port)
RAY_USAGE_STATS_ENABLED=0 "$ray" start --head --node-ip-address=127.0.0.1 --port="$gcs" --dashboard-host=127.0.0.1 \
  --dashboard-port="$dash" --include-dashboard=true --num-cpus=2 --disable-usage-stats --temp-dir="$tmp/ray" >/dev/null
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
TACKLE_CONFIG_DIR="$tmp/config" target/release/tackle fleet run "$tmp/tasks.jsonl" --out "$tmp/out" --workers 2 \
  --engine ray --ray-address "http://127.0.0.1:$dash" --ray-env TACKLE_CONFIG_DIR --model openai/fake \
  --base-url "http://127.0.0.1:$port/v1" --tools default,sequentialthinking --max-steps 3 > /dev/null 2>&1 || true
end=$(date +%s%N)
python3 - "$tmp/out" "$tasks" "$(( (end - start) / 1000000 ))" <<'PY'
import json, pathlib, sys
out, tasks, wall = pathlib.Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
durations = [json.loads((d / "result.json").read_text())["duration_ms"] for d in out.iterdir() if (d / "result.json").exists()]
assert len(durations) == tasks, f"{len(durations)} results of {tasks}"
total = sum(durations)
print(f"ray engine: {tasks} tasks, 2 at once: wall {wall} ms, tasks' own time {total} ms in all")
print(f"per-task overhead: {(wall * 2 - total) / tasks:.0f} ms")
PY
