#!/usr/bin/env bash
# Where each recursive parser overflows the stack: for every case of
# crates/tackle-tools/examples/stack_depth.rs, the deepest nesting that still answers, on a
# 2 MiB thread (tokio's worker and blocking threads) and on the main thread (ulimit -s), in the
# given profile. The bounds in docs/architecture.md ("Bounded input") sit well below these.
#
# Usage: bench/stack_depth.sh [debug|release] [CASE...]
set -euo pipefail
cd "$(dirname "$0")/.."
profile=${1:-debug}
shift || true
cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
    cases=(jsonpath-parens jsonpath-filters jsonpath-length jsonpath-not json-parse json-value
        schema-compile schema-items schema-validate schema-pattern sanitize strict gemini toml-arrays toml-tables glob regex)
fi
flag=()
[ "$profile" = release ] && flag=(--release)
cargo build --quiet "${flag[@]}" -p tackle-tools --example stack_depth
probe=target/$profile/examples/stack_depth
ceiling=100000  # the 100k nested `length(` of the attack

# The deepest depth in [1, ceiling] at which `probe CASE DEPTH WHERE` answers: "N" when N+1
# overflows, ">=N" when the ceiling is reached, "N (slow)" when N+1 takes over 10 s.
run() { timeout 10 "$probe" "$@" >/dev/null 2>&1; }
deepest() {
    local case=$1 where=$2 good=0 bad=0 depth=16 code=0
    while [ $depth -le $ceiling ]; do
        code=0; run "$case" "$depth" "$where" || code=$?
        if [ $code -eq 0 ]; then good=$depth; else bad=$depth; break; fi
        depth=$((depth * 2))
        [ $depth -gt $ceiling ] && [ $good -lt $ceiling ] && depth=$ceiling
    done
    if [ $bad -eq 0 ]; then echo ">=$good"; return; fi
    while [ $((bad - good)) -gt 1 ]; do
        local mid=$(((good + bad) / 2))
        code=0; run "$case" "$mid" "$where" || code=$?
        if [ $code -eq 0 ]; then good=$mid; else bad=$mid; fi
    done
    code=0; run "$case" "$bad" "$where" || code=$?
    if [ $code -eq 124 ]; then echo "$good (slow)"; else echo "$good"; fi
}

printf '%-18s %14s %14s  %s\n' case "2MiB thread" "main ($(ulimit -s) KiB)" "answer at the 2 MiB depth"
for case in "${cases[@]}"; do
    thread=$(deepest "$case" thread)
    main=$(deepest "$case" main)
    depth=${thread#>=}
    answer=$(timeout 10 "$probe" "$case" "${depth% (slow)}" thread 2>&1 | tail -1 | cut -c1-70)
    printf '%-18s %14s %14s  %s\n' "$case" "$thread" "$main" "$answer"
done
