#!/usr/bin/env bash
# What keeping secrets out of Tackle's environment block costs at start: `tackle parse` on an
# empty input, RUNS times with no secret-named variable (no re-execution) and RUNS times with
# OPENAI_API_KEY and GITHUB_TOKEN set (one re-execution), interleaved. Prints the median wall
# time and the CPU time per start of each; the difference is the price of the re-execution.
# Usage: bench/secrets_reexec.sh [RUNS]   (builds the release binary first)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-200}
cargo build --release -q -p tackle-cli
config=$(mktemp -d)
trap 'rm -rf "$config"' EXIT
python3 - "$runs" "$PWD/target/release/tackle" "$config" <<'PY'
import os, resource, statistics, subprocess, sys, time

runs, tackle, config = int(sys.argv[1]), sys.argv[2], sys.argv[3]
secret = lambda name: any(part in name.upper() for part in ("KEY", "SECRET", "TOKEN", "PASSWORD"))
clean = {k: v for k, v in os.environ.items() if not secret(k)} | {"TACKLE_CONFIG_DIR": config}
cases = {"no secret (no re-execution)": clean, "two secrets (one re-execution)": clean | {"OPENAI_API_KEY": "sk-x", "GITHUB_TOKEN": "ghp-x"}}
wall = {name: [] for name in cases}
cpu = {name: 0.0 for name in cases}
for _ in range(runs):
    for name, env in cases.items():
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([tackle, "parse"], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True)
        wall[name].append((time.perf_counter() - start) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu[name] += (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
for name in cases:
    print(f"{name}: median {statistics.median(wall[name]):.2f} ms wall, {cpu[name] / runs:.2f} ms CPU per start (n={runs})")
PY
