"""The report of bench/calls.sh: times gptme 0.35.1's fence scanner in this (virtualenv)
Python, runs Tackle's bench_parse on the same files, prints the medians and the targets.
Both sides measure the thread's CPU time (a shared machine inflates wall time unevenly).

End to end, `tackle parse --codeblocks` (and `tackle parse`, the markdown calls) runs as a
process: the transcript on stdin, the JSON document read from a pipe. Its CPU time (user +
system, every thread, from the child's rusage) is compared with gptme's in-process parse, and
its `write` system calls are counted (`/proc/PID/io` of the exited child, before it is reaped).

Usage: python bench/calls.py BENCH_PARSE TACKLE OUT_DIR RUNS
"""

import json
import os
import statistics
import subprocess
import sys
import time

from gptme.codeblock import Codeblock

bench_parse, tackle, out_dir, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
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


def tackle_parse(path, args, runs):
    """`tackle parse ARGS < path`, end to end: medians of CPU and wall time, and the writes."""
    size = os.path.getsize(path)
    cpu, wall = [], []
    for _ in range(runs):
        with open(path, "rb") as stdin:
            start = time.perf_counter()
            child = subprocess.Popen([tackle, "parse", *args], stdin=stdin, stdout=subprocess.PIPE)
            out_bytes = len(child.stdout.read())
            os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)
            with open(f"/proc/{child.pid}/io") as io:
                writes = int(next(line for line in io if line.startswith("syscw:")).split()[1])
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)
            wall.append(time.perf_counter() - start)
            cpu.append(usage.ru_utime + usage.ru_stime)
        if child.returncode != 0:
            raise SystemExit(f"tackle parse {args} exited {child.returncode}")
    return {"mb_s": size / 1e6 / statistics.median(cpu), "wall_mb_s": size / 1e6 / statistics.median(wall),
            "cpu_ms": statistics.median(cpu) * 1e3, "writes": writes, "out_bytes": out_bytes}


report = {}
for name, blocks in [("5000_blocks", 5000), ("50000_blocks", 50000)]:
    path = os.path.join(out_dir, f"{name}.md")
    with open(path, "w", encoding="utf-8") as f:
        subprocess.run([bench_parse, "--generate", str(10 * 1024 * 1024), str(blocks)], stdout=f, check=True)
    theirs = gptme(path, max(3, runs // 3))
    ours = json.loads(subprocess.run([bench_parse, path, "--runs", str(runs)], capture_output=True, check=True, text=True).stdout)
    blocks_e2e = tackle_parse(path, ["--codeblocks"], runs)
    calls_e2e = tackle_parse(path, [], runs)
    report[name] = {"gptme": theirs, "tackle": ours, "parse_codeblocks": blocks_e2e, "parse_calls": calls_e2e}
    print(f"\n{name} ({ours['bytes'] / 1e6:.1f} MB; gptme finds {theirs['blocks']} blocks, Tackle {ours['blocks']})")
    print(f"  gptme 0.35.1 Codeblock.iter_from_markdown   {theirs['mb_s']:9.1f} MB/s")
    print(f"  tackle codeblocks, whole text              {ours['codeblocks_mb_s']:9.1f} MB/s  ({ours['codeblocks_mb_s'] / theirs['mb_s']:.0f}x gptme)")
    print(f"  tackle markdown calls, whole text          {ours['markdown_calls_mb_s']:9.1f} MB/s")
    print(f"  tackle codeblocks, 16-byte chunks          {ours['codeblocks_stream16_mb_s']:9.1f} MB/s  ({ours['stream16_over_whole']:.2f}x the whole-text time)")
    print(f"  tackle markdown calls, 16-byte chunks      {ours['markdown_calls_stream16_mb_s']:9.1f} MB/s  ({ours['calls_stream16_over_whole']:.2f}x)")
    print(f"  tackle codeblocks, 16-byte byte chunks     {ours['codeblocks_stream16_bytes_mb_s']:9.1f} MB/s  (UTF-8 reassembly included)")
    for label, e2e in [("tackle parse --codeblocks", blocks_e2e), ("tackle parse (markdown calls)", calls_e2e)]:
        print(f"  {label + ', end to end':42} {e2e['mb_s']:9.1f} MB/s of CPU ({e2e['mb_s'] / theirs['mb_s']:.0f}x gptme; "
              f"{e2e['cpu_ms']:.1f} ms, {e2e['wall_mb_s']:.0f} MB/s wall), {e2e['writes']} writes for "
              f"{e2e['out_bytes'] / 1e6:.1f} MB of JSON")

with open(os.path.join(out_dir, "report.json"), "w") as f:
    json.dump(report, f, indent=2)

main = report["5000_blocks"]
checks = [
    ("markdown >= 200 MB/s", main["tackle"]["markdown_calls_mb_s"] >= 200),
    (">= 20x gptme", main["tackle"]["codeblocks_mb_s"] >= 20 * main["gptme"]["mb_s"]),
    ("16-byte streaming <= 2x whole text (code blocks)", main["tackle"]["stream16_over_whole"] <= 2.0),
    ("16-byte streaming <= 2x whole text (markdown calls)", main["tackle"]["calls_stream16_over_whole"] <= 2.0),
    ("tackle parse --codeblocks end to end >= 30x gptme", main["parse_codeblocks"]["mb_s"] >= 30 * main["gptme"]["mb_s"]),
    ("<= 2,000 writes per JSON document", all(r[k]["writes"] <= 2000 for r in report.values()
                                              for k in ("parse_codeblocks", "parse_calls"))),
]
print()
for label, ok in checks:
    print(f"  {'met' if ok else 'NOT MET'}: {label}")
