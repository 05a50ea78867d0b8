"""The report of bench/mcp.sh.

Usage: python bench/mcp.py TACKLE CALLS RUNS
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

tackle, calls, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
probe = os.path.join(root, "crates/tackle-mcp/tests/peers/probe.py")
everything = os.path.join(root, ".mcp-peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
workspace = tempfile.mkdtemp()

INIT = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                   "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                              "clientInfo": {"name": "bench", "version": "1"}}}) + "\n"


def sdk_rate(tool, args, server):
    out = subprocess.run([sys.executable, probe, "--no-list", "--call", tool, "--args", json.dumps(args),
                          "--repeat", str(calls), "--stdio", *server], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["calls_per_second"]


def startup_and_rss():
    times, rss = [], []
    for _ in range(max(runs * 4, 20)):
        started = time.perf_counter()
        child = subprocess.Popen([tackle, "mcp", "serve", "--workspace", workspace],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        child.stdin.write(INIT.encode())
        child.stdin.flush()
        child.stdout.readline()
        times.append((time.perf_counter() - started) * 1000)
        time.sleep(0.3)
        rss.append(resident_mb(child.pid))
        child.stdin.close()
        child.wait(timeout=10)
    return statistics.median(times), statistics.median(rss), max(rss)


def resident_mb(pid):
    """The resident set size of process `pid`, in MB."""
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:")) / 1024


def http_rss():
    child = subprocess.Popen([tackle, "mcp", "serve", "--http", "127.0.0.1:0", "--workspace", workspace],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    child.stderr.readline()
    time.sleep(0.5)
    mb = resident_mb(child.pid)
    child.terminate()
    child.wait(timeout=10)
    return mb


ours = [sdk_rate("task_done", {}, [tackle, "mcp", "serve", "--workspace", workspace, "--tools", "task_done"]) for _ in range(runs)]
theirs = [sdk_rate("echo", {"message": "hi"}, ["node", everything, "stdio"]) for _ in range(runs)]
startup_ms, rss_mb, rss_max = startup_and_rss()
report = {
    "python_sdk_calls_per_s_tackle": statistics.median(ours),
    "python_sdk_calls_per_s_everything_echo": statistics.median(theirs),
    "ratio_tackle_over_everything": round(statistics.median(ours) / statistics.median(theirs), 2),
    "initialize_ms_median": round(startup_ms, 1),
    "idle_rss_mb_median_stdio": round(rss_mb, 1),
    "idle_rss_mb_max_stdio": round(rss_max, 1),
    "idle_rss_mb_http": round(http_rss(), 1),
}
print(json.dumps(report, indent=2))
print(f"Python SDK client, {calls} sequential calls: tackle {report['python_sdk_calls_per_s_tackle']}/s, "
      f"server-everything echo {report['python_sdk_calls_per_s_everything_echo']}/s, "
      f"ratio {report['ratio_tackle_over_everything']} (target >= 1)")
print(f"initialize answered in {report['initialize_ms_median']} ms (target <= 50), "
      f"idle RSS {report['idle_rss_mb_median_stdio']} MB stdio / {report['idle_rss_mb_http']} MB http (target <= 20)")
