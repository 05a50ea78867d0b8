#!/usr/bin/env bash
# Peak RSS of a 200-step `tackle run` against the scripted fake server (issue 6 target:
# < 40 MB). Each step the fake model makes one sequentialthinking call; the run stops at
# --max-steps 200 (exit 1, status max_steps). Prints the max RSS in MB and the wall time.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p tackle-cli
cargo build --release -q -p tackle-testkit --example fake_llm_server
tmp=$(mktemp -d)
trap 'kill "${server_pid:-0}" 2>/dev/null || true; rm -rf "$tmp"' EXIT
cat > "$tmp/script.json" <<'JSON'
{"turns": [{"reply": {"text": "Another thought.", "tool_calls": [{"id": "t", "name": "sequentialthinking",
  "args": {"thought": "keep going, step by step, with a thought of moderate length", "next_thought_needed": true,
           "thought_number": 1, "total_thoughts": 300}}], "usage": {"input": 1000, "output": 50}}}],
 "repeat_last": true}
JSON
target/release/examples/fake_llm_server "$tmp/script.json" > "$tmp/port" &
server_pid=$!
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
port=$(head -1 "$tmp/port")
mkdir -p "$tmp/ws"
/usr/bin/time -f "%M %e" -o "$tmp/time" target/release/tackle run "think for a long time" \
  --model openai/fake --base-url "http://127.0.0.1:$port/v1" --workspace "$tmp/ws" \
  --tools default,sequentialthinking --max-steps 200 --json > "$tmp/out.json" || true
read -r rss_kb seconds < <(tail -1 "$tmp/time")
echo "result: $(cat "$tmp/out.json")"
echo "peak RSS: $((rss_kb / 1024)) MB ($rss_kb KB), wall $seconds s for 200 steps"
