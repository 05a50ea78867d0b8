"""The report of bench/file_tools.sh: the file tools end to end through `tackle tools batch`
(one session, JSON Lines in and out), against the criterion figures of
crates/tackle-tools/benches/file_tools.rs and Python's C-accelerated `json.load`.

Per call, in steady state: (the batch with WARM + N calls - the batch with only the WARM
calls) / N, so the process's start, the session's assembly and the session's first calls of the
tool are not counted, as criterion's warm-up leaves them out. The first calls are reported
apart ("first calls": (the WARM-call batch - an empty batch) / WARM): they pay once per session
for compiling the tool's argument validator and for the fresh memory of the first reads. Both CPU time (user + system, every thread, from the
child's rusage) and wall time are reported: on a machine shared with other work wall time is
inflated unevenly, CPU time much less. `json.load` is timed in this process (thread CPU time and
wall time) on the same file, in the same run.

Usage: python3 bench/file_tools.py TACKLE OUT_DIR [RUNS] [CALLS]
"""

import json
import os
import statistics
import subprocess
import sys
import threading
import time

tackle, out_dir, runs, calls = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
workspace = os.path.join(out_dir, "ws")
os.makedirs(workspace, exist_ok=True)


def source_file():
    # The criterion bench's file: 5,000 lines, 325 KiB, one marker line in the middle.
    lines = []
    for i in range(5000):
        if i == 2500:
            lines.append("    let marker = MARKER_A; // the line the bench edits, 67 bytes.\n")
        else:
            lines.append(f"    let value_{i:05} = compute(input, {i:05}); // line {i:05} of file\n")
    return "".join(lines)


def json_file():
    # The criterion bench's document: 3,400 records, about 1 MB, indented by 2.
    records = [
        {"id": i, "name": f"user {i}", "email": f"user{i}@example.com", "active": i % 2 == 0,
         "tags": ["alpha", "beta", "gamma"], "score": i * 1.5, "address": {"city": "Springfield", "zip": f"{i:05}"}}
        for i in range(3400)
    ]
    return json.dumps({"version": 1, "records": records}, indent=2) + "\n"


def batch(lines):
    """Runs one batch; returns (cpu seconds, wall seconds, output lines)."""
    payload = "".join(json.dumps(line) + "\n" for line in lines).encode()
    start = time.perf_counter()
    child = subprocess.Popen([tackle, "tools", "batch", "--tools", "all"], cwd=workspace,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    writer = threading.Thread(target=lambda: (child.stdin.write(payload), child.stdin.close()))
    writer.start()
    out = child.stdout.read()
    writer.join()
    # The child's own rusage (every thread), read as it is reaped.
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    results = [json.loads(line) for line in out.decode().splitlines()]
    bad = [r for r in results if r["is_error"]]
    if bad or len(results) != len(lines) or child.returncode != 0:
        raise SystemExit(f"batch failed (exit {child.returncode}): {bad[:1]}")
    return usage.ru_utime + usage.ru_stime, wall, results


# The calls of a session's warm-up (even: an edit and its reverse leave the file as it was).
WARM = 4


def per_call(make_lines):
    """Medians over RUNS of the per-call CPU and wall time of the calls make_lines(n) returns,
    in steady state, and of the session's first WARM calls."""
    cpu, wall, first = [], [], []
    for _ in range(runs):
        empty_cpu, _, _ = batch([])
        warm_cpu, warm_wall, _ = batch(make_lines(WARM))
        full_cpu, full_wall, _ = batch(make_lines(WARM + calls))
        cpu.append((full_cpu - warm_cpu) / calls)
        wall.append((full_wall - warm_wall) / calls)
        first.append((warm_cpu - empty_cpu) / WARM)
    return {"cpu_ms": statistics.median(cpu) * 1e3, "wall_ms": statistics.median(wall) * 1e3,
            "first_calls_cpu_ms": statistics.median(first) * 1e3}


def str_replace_lines(n):
    pairs = [("MARKER_A", "MARKER_B"), ("MARKER_B", "MARKER_A")]
    return [{"name": "str_replace_based_edit_tool",
             "args": {"command": "str_replace", "path": "big.rs", "old_str": f"marker = {pairs[i % 2][0]};",
                      "new_str": f"marker = {pairs[i % 2][1]};"}} for i in range(n)]


def json_lines(operation):
    def lines(n):
        calls = []
        for i in range(n):
            args = {"operation": operation, "file_path": "data.json", "json_path": "$.records[2500].score"}
            if operation == "set":
                args["value"] = i
            calls.append({"name": "json_edit_tool", "args": args})
        return calls
    return lines


def python_json_load(path, times):
    cpu, wall = [], []
    for _ in range(times):
        start, start_cpu = time.perf_counter(), time.thread_time()
        with open(path, encoding="utf-8") as f:
            json.load(f)
        cpu.append(time.thread_time() - start_cpu)
        wall.append(time.perf_counter() - start)
    return {"cpu_ms": statistics.median(cpu) * 1e3, "wall_ms": statistics.median(wall) * 1e3}


with open(os.path.join(workspace, "big.rs"), "w") as f:
    f.write(source_file())
data = os.path.join(workspace, "data.json")
with open(data, "w") as f:
    f.write(json_file())

report = {
    "load_average": os.getloadavg(),
    "str_replace_5000_lines": per_call(str_replace_lines),
    "json_view_1mb": per_call(json_lines("view")),
    "json_set_1mb": per_call(json_lines("set")),
    "python_json_load_1mb": python_json_load(data, max(20, calls)),
}
report["load_average_after"] = os.getloadavg()
with open(os.path.join(out_dir, "report.json"), "w") as f:
    json.dump(report, f, indent=2)

print(f"load average {report['load_average'][0]:.1f} (after: {report['load_average_after'][0]:.1f}); "
      f"{runs} runs of {calls} calls, medians per call")
for name, label in [("str_replace_5000_lines", "str_replace, 5,000-line file"),
                    ("json_view_1mb", "json_edit_tool view, 1 MB"),
                    ("json_set_1mb", "json_edit_tool set, 1 MB"),
                    ("python_json_load_1mb", "Python json.load of the same 1 MB")]:
    r = report[name]
    first = f"  (first {WARM} calls: {r['first_calls_cpu_ms']:.3f} ms CPU each)" if "first_calls_cpu_ms" in r else ""
    print(f"  {label:38} {r['cpu_ms']:7.3f} ms CPU  {r['wall_ms']:7.3f} ms wall{first}")

set_cpu, load_cpu = report["json_set_1mb"]["cpu_ms"], report["python_json_load_1mb"]["cpu_ms"]
checks = [
    ("str_replace <= 0.3 ms per edit (CPU)", report["str_replace_5000_lines"]["cpu_ms"] <= 0.3),
    ("json_edit set <= 5 ms (CPU)", set_cpu <= 5.0),
    ("json_edit set < half of Python's json.load (CPU)", set_cpu < load_cpu / 2),
]
print()
for label, ok in checks:
    print(f"  {'met' if ok else 'NOT MET'}: {label}")
