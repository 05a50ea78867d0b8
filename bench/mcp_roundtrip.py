"""The report of bench/mcp_roundtrip.sh: MCP round trips measured with a raw JSON-RPC client,
so that the figure is the server's and the pipe's, not a client library's.

Usage: python bench/mcp_roundtrip.py TACKLE EVERYTHING_JS CALLS RUNS

- stdio: one request in flight; `tools/call` of `read_file` on a 3-byte file from
  `tackle mcp serve`, against `tools/call` of `echo` from server-everything (Node), each after
  20 warm-up calls. The request bytes are prepared before timing; reading stops at the
  answer's newline.
- streamable HTTP: one session, one keep-alive connection, `tools/call` of `read_file` as a
  plain POST answered with `application/json` (the client accepts only JSON).
Each run prints per-call medians; the report gives the median of the runs' medians and the
spread (lowest and highest run median), in microseconds.
"""

import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

tackle, everything, calls, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
WARMUP = 20
workspace = tempfile.mkdtemp()
with open(os.path.join(workspace, "f.txt"), "w") as f:
    f.write("hi\n")

INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(i, tool, args):
    return (json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                        "params": {"name": tool, "arguments": args}}) + "\n").encode()


class Lines:
    """Reads newline-terminated messages from a file descriptor with os.read."""

    def __init__(self, fd):
        self.fd, self.buf = fd, b""

    def line(self):
        while True:
            at = self.buf.find(b"\n")
            if at >= 0:
                line, self.buf = self.buf[:at], self.buf[at + 1:]
                return line
            chunk = os.read(self.fd, 1 << 16)
            if not chunk:
                raise EOFError("the server closed its output")
            self.buf += chunk

    def answer(self):
        """The next answer, past the server's own notifications and requests."""
        while True:
            line = self.line()
            if b'"method"' not in line:
                return line


def stdio_run(command, tool, args, check):
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out, inp = Lines(child.stdout.fileno()), child.stdin.fileno()
    os.write(inp, (json.dumps(INIT) + "\n").encode())
    out.answer()
    os.write(inp, (json.dumps(INITIALIZED) + "\n").encode())
    requests = [call(i + 1, tool, args) for i in range(WARMUP + calls)]
    for request in requests[:WARMUP]:
        os.write(inp, request)
        check(json.loads(out.answer()))
    times = []
    clock = time.perf_counter_ns
    for request in requests[WARMUP:]:
        started = clock()
        os.write(inp, request)
        last = out.answer()
        times.append(clock() - started)
    check(json.loads(last))
    child.stdin.close()
    child.wait(timeout=10)
    return statistics.median(times) / 1000


def http_run():
    child = subprocess.Popen([tackle, "mcp", "serve", "--http", "127.0.0.1:0", "--workspace", workspace],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        banner = ""
        while "listening on" not in banner:
            banner = child.stderr.readline().decode()
            if not banner:
                raise RuntimeError("tackle mcp serve --http ended before listening")
        address = next(word for word in banner.split() if word.startswith("http://"))
        host, port = address[len("http://"):].split("/")[0].rsplit(":", 1)
        sock = socket.create_connection((host, int(port)))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        reader = sock.makefile("rb")

        def post(body, session=None):
            headers = [f"POST /mcp HTTP/1.1", f"Host: {host}:{port}", "Content-Type: application/json",
                       "Accept: application/json, text/event-stream", f"Content-Length: {len(body)}"]
            if session:
                headers += [f"Mcp-Session-Id: {session}", "MCP-Protocol-Version: 2025-06-18"]
            return ("\r\n".join(headers) + "\r\n\r\n").encode() + body

        def answer():
            status = reader.readline()
            headers = {}
            while True:
                line = reader.readline()
                if line in (b"\r\n", b""):
                    break
                name, _, value = line.decode().partition(":")
                headers[name.strip().lower()] = value.strip()
            if "content-length" in headers:
                return status, headers, reader.read(int(headers["content-length"]))
            body = b""
            while True:  # chunked
                size = int(reader.readline().split(b";")[0], 16)
                if size == 0:
                    reader.readline()
                    return status, headers, body
                body += reader.read(size)
                reader.readline()

        sock.sendall(post(json.dumps(INIT).encode()))
        status, headers, _ = answer()
        session = headers.get("mcp-session-id")
        sock.sendall(post(json.dumps(INITIALIZED).encode(), session))
        answer()
        requests = [post(call(i + 1, "read_file", {"file_path": "f.txt"}).strip(), session)
                    for i in range(WARMUP + calls)]
        for request in requests[:WARMUP]:
            sock.sendall(request)
            status, headers, body = answer()
            check_read(parse_body(headers, body))
        times = []
        clock = time.perf_counter_ns
        for request in requests[WARMUP:]:
            started = clock()
            sock.sendall(request)
            status, headers, body = answer()
            times.append(clock() - started)
        check_read(parse_body(headers, body))
        sock.close()
        return statistics.median(times) / 1000
    finally:
        child.terminate()
        child.wait(timeout=10)


def parse_body(headers, body):
    if headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in body.decode().splitlines() if line.startswith("data:")]
        return json.loads(next(d for d in data if d))
    return json.loads(body)


def check_read(message):
    text = message["result"]["content"][0]["text"]
    assert "hi" in text and not message["result"].get("isError"), message


def check_echo(message):
    assert "hi" in message["result"]["content"][0]["text"], message


def summary(medians):
    return {"median_us": round(statistics.median(medians), 1), "min_us": round(min(medians), 1),
            "max_us": round(max(medians), 1)}


ours, theirs, http = [], [], []
for _ in range(runs):
    ours.append(stdio_run([tackle, "mcp", "serve", "--workspace", workspace], "read_file", {"file_path": "f.txt"},
                          check_read))
    theirs.append(stdio_run(["node", everything, "stdio"], "echo", {"message": "hi"}, check_echo))
    http.append(http_run())
report = {
    "calls_per_run": calls,
    "runs": runs,
    "load_average": os.getloadavg()[0],
    "stdio_tackle_read_file": summary(ours),
    "stdio_everything_echo": summary(theirs),
    "stdio_ratio": round(statistics.median(ours) / statistics.median(theirs), 2),
    "http_tackle_read_file": summary(http),
}
print(json.dumps(report, indent=2))
print(f"stdio round trip: tackle read_file {report['stdio_tackle_read_file']['median_us']} us, "
      f"server-everything echo {report['stdio_everything_echo']['median_us']} us, "
      f"ratio {report['stdio_ratio']} (targets <= 60 us, <= 0.35)")
print(f"streamable HTTP round trip, one session, keep-alive: {report['http_tackle_read_file']['median_us']} us "
      f"(target <= 150 us)")
