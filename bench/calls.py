"""The report of bench/calls.sh: times gptme 0.35.1's fence scanner in this (virtualenv)
Python, runs Tackle's bench_parse on the same files, prints the medians and the targets.
Both sides measure the thread's CPU time (a shared machine inflates wall time unevenly).

Usage: python bench/calls.py BENCH_PARSE OUT_DIR RUNS
"""

import json
import os
import statistics
import subprocess
import sys
import time

from gptme.codeblock import Codeblock

bench_parse, out_dir, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.makedirs(out_dir, exist_ok=True)


def gptme(path, runs):
    # Thread CPU time, as the Tackle side measures: the machine may be shared with other work.
    text = open(path, encoding="utf-8").read()
    blocks = len(Codeblock.iter_from_markdown(text))
    times = []
    for _ in range(runs):
        start = time.thread_time()
        Codeblock.iter_from_markdown(text)
        times.append(time.thread_time() - start)
    return {"blocks": blocks, "mb_s": len(text.encode()) / 1e6 / statistics.median(times)}


report = {}
for name, blocks in [("5000_blocks", 5000), ("50000_blocks", 50000)]:
    path = os.path.join(out_dir, f"{name}.md")
    with open(path, "w", encoding="utf-8") as f:
        subprocess.run([bench_parse, "--generate", str(10 * 1024 * 1024), str(blocks)], stdout=f, check=True)
    theirs = gptme(path, max(3, runs // 3))
    ours = json.loads(subprocess.run([bench_parse, path, "--runs", str(runs)], capture_output=True, check=True, text=True).stdout)
    report[name] = {"gptme": theirs, "tackle": ours}
    print(f"\n{name} ({ours['bytes'] / 1e6:.1f} MB; gptme finds {theirs['blocks']} blocks, Tackle {ours['blocks']})")
    print(f"  gptme 0.35.1 Codeblock.iter_from_markdown   {theirs['mb_s']:9.1f} MB/s")
    print(f"  tackle codeblocks, whole text              {ours['codeblocks_mb_s']:9.1f} MB/s  ({ours['codeblocks_mb_s'] / theirs['mb_s']:.0f}x gptme)")
    print(f"  tackle markdown calls, whole text          {ours['markdown_calls_mb_s']:9.1f} MB/s")
    print(f"  tackle codeblocks, 16-byte chunks          {ours['codeblocks_stream16_mb_s']:9.1f} MB/s  ({ours['stream16_over_whole']:.2f}x the whole-text time)")
    print(f"  tackle markdown calls, 16-byte chunks      {ours['markdown_calls_stream16_mb_s']:9.1f} MB/s  ({ours['calls_stream16_over_whole']:.2f}x)")
    print(f"  tackle codeblocks, 16-byte byte chunks     {ours['codeblocks_stream16_bytes_mb_s']:9.1f} MB/s  (UTF-8 reassembly included)")

with open(os.path.join(out_dir, "report.json"), "w") as f:
    json.dump(report, f, indent=2)

main = report["5000_blocks"]
checks = [
    ("markdown >= 200 MB/s", main["tackle"]["markdown_calls_mb_s"] >= 200),
    (">= 20x gptme", main["tackle"]["codeblocks_mb_s"] >= 20 * main["gptme"]["mb_s"]),
    ("16-byte streaming <= 2x whole text (code blocks)", main["tackle"]["stream16_over_whole"] <= 2.0),
    ("16-byte streaming <= 2x whole text (markdown calls)", main["tackle"]["calls_stream16_over_whole"] <= 2.0),
]
print()
for label, ok in checks:
    print(f"  {'met' if ok else 'NOT MET'}: {label}")
