#!/usr/bin/env python3
"""Container latency, side by side with the host (docs/containers.md#performance).

1. Start to first tool answer: wall time of `tackle tools call bash '{"command":"echo hi"}'
   --container IMAGE` (engine found, container created and started, tackle mcp serve inside,
   tools listed, the call answered, the container removed), minus nothing: the whole command;
   and the same command without --container, for reference.
2. `bash` of `echo hi` in one session: median round trip of a `tools batch` line, on the
   host and through the container.

Usage: DOCKER_HOST=unix:///path/podman.sock bench/container_latency.py [TACKLE] [IMAGE] [N]
(default target/release/tackle, localhost/tackle-test:1, 200 calls). The image comes from
scripts/container-test-images.sh.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

tackle = sys.argv[1] if len(sys.argv) > 1 else "target/release/tackle"
image = sys.argv[2] if len(sys.argv) > 2 else "localhost/tackle-test:1"
calls = int(sys.argv[3]) if len(sys.argv) > 3 else 200
workspace = tempfile.mkdtemp()
env = dict(os.environ, TACKLE_CONFIG_DIR="/nonexistent-tackle-config")
echo = '{"command":"echo hi"}'


def one_shot(extra):
    start = time.perf_counter()
    subprocess.run([tackle, "tools", "call", "bash", echo, "--workspace", workspace, *extra],
                   check=True, capture_output=True, env=env)
    return time.perf_counter() - start


def round_trips(extra):
    proc = subprocess.Popen([tackle, "tools", "batch", "--workspace", workspace, *extra],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env=env, text=True, bufsize=1)
    line = json.dumps({"name": "bash", "args": {"command": "echo hi"}}) + "\n"
    times = []
    for i in range(calls + 5):
        start = time.perf_counter()
        proc.stdin.write(line)
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        assert answer["output"] == "hi", answer
        if i >= 5:  # the first calls start the shell
            times.append(time.perf_counter() - start)
    proc.stdin.close()
    proc.wait(timeout=30)
    return times


container = ["--container", image]
starts = [one_shot(container) for _ in range(10)]
hosts = [one_shot([]) for _ in range(10)]
print(f"tools call with --container (start to answer, container removed): median {statistics.median(starts)*1000:.0f} ms, max {max(starts)*1000:.0f} ms")
print(f"tools call on the host:                                           median {statistics.median(hosts)*1000:.0f} ms")
host = round_trips([])
inside = round_trips(container)
h, c = statistics.median(host) * 1000, statistics.median(inside) * 1000
print(f"bash echo hi round trip, median of {calls}: host {h:.2f} ms, container {c:.2f} ms, difference {c-h:+.2f} ms")
