"""A small, deliberately misbehaving MCP server on stdio (plain Python, no SDK), for the
client tests: over-long and colliding names, $ref/anyOf schemas, hostile schemas (as deep as
a message can carry, $refs that multiply or loop, a regex nested past its parser's bound), a
task-only tool, pages and
cursor loops, progress, slow calls, calls that are never answered, every call failing, a crash
on call, list changes, and banners on stdout and stderr.

Every message it receives is appended to the file named by --record, one JSON per line.
"""

import argparse
import json
import os
import sys
import threading
import time

parser = argparse.ArgumentParser()
parser.add_argument("--long-names", action="store_true")
parser.add_argument("--ref-schema", action="store_true")
parser.add_argument("--hostile-schemas", action="store_true")
parser.add_argument("--task-tool", action="store_true")
parser.add_argument("--fail-calls", action="store_true", help="answer every tools/call with a JSON-RPC error")
parser.add_argument("--never-initialize", action="store_true")
parser.add_argument("--never-answer-calls", action="store_true")
parser.add_argument("--crash-on", help="exit with status 3 when this tool is called")
parser.add_argument("--page-size", type=int, default=0)
parser.add_argument("--cursor-loop", action="store_true")
parser.add_argument("--endless-pages", action="store_true", help="one new tool per page, always with a next cursor")
parser.add_argument("--stdout-banner", action="store_true")
parser.add_argument("--record")
args = parser.parse_args()

lock = threading.Lock()
cancelled = set()
extra_tools = []


def send(message):
    with lock:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()


def record(message):
    if args.record:
        with open(args.record, "a") as f:
            f.write(json.dumps(message) + "\n")


def tool(name, schema=None, **extra):
    entry = {"name": name, "description": f"The {name} tool.", "inputSchema": schema or {"type": "object"}}
    entry.update(extra)
    return entry


def tools():
    listed = [
        tool("echo", {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
             annotations={"readOnlyHint": True}),
        tool("slow", {"type": "object", "properties": {"seconds": {"type": "number"}, "steps": {"type": "integer"}}}),
        tool("toggle"),
        tool("image"),
    ]
    if args.long_names:
        listed.append(tool("a.b"))
        listed.append(tool("a/b"))
        for i in range(3):
            listed.append(tool(f"{'very.long/' * 19}{i}.tool"))
    if args.ref_schema:
        listed.append(tool("refs", {
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {
                "point": {"$ref": "#/$defs/Point"},
                "mode": {"anyOf": [{"type": "string", "enum": ["fast", "slow"]}]},
            },
            "required": ["point"],
            "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}},
        }))
    if args.hostile_schemas:
        listed.extend(hostile_tools())
    if args.task_tool:
        listed.append(tool("research", execution={"taskSupport": "required"}))
    listed.extend(extra_tools)
    return listed


def hostile_tools():
    # 119 levels of items: with the message around it, 126 levels, one below what JSON carries.
    deep = {"type": "string"}
    for _ in range(119):
        deep = {"type": "array", "items": deep}
    # Each definition names the next twice: 2^40 nodes if inlined in full.
    defs = {f"d{i}": {"type": "object", "properties": {"a": {"$ref": f"#/$defs/d{i + 1}"},
                                                        "b": {"$ref": f"#/$defs/d{i + 1}"}}} for i in range(40)}
    defs["d40"] = {"type": "string"}
    return [
        tool("deep", {"type": "object", "properties": {"v": deep}}),
        tool("bomb", {"type": "object", "properties": {"v": {"$ref": "#/$defs/d0"}}, "$defs": defs}),
        tool("loop", {"$ref": "#/$defs/d", "$defs": {"d": {"$ref": "#/$defs/d"}}}),
        tool("pattern", {"type": "object", "properties": {"v": {"type": "string", "pattern": "(" * 1000 + ")" * 1000}}}),
    ]


def call(request):
    rid = request["id"]
    params = request.get("params") or {}
    name = params.get("name")
    arguments = params.get("arguments") or {}
    token = (params.get("_meta") or {}).get("progressToken")
    if args.never_answer_calls:
        return
    if args.fail_calls:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32603, "message": "backend down"}})
        return
    if name == args.crash_on:
        os._exit(3)
    if name == "echo":
        text = arguments.get("text", "")
        result = {"content": [{"type": "text", "text": f"Echo: {text}"}], "structuredContent": {"echo": text}}
    elif name == "slow":
        steps = int(arguments.get("steps", 4))
        for step in range(1, steps + 1):
            time.sleep(float(arguments.get("seconds", 1)) / steps)
            if rid in cancelled:
                return
            if token is not None:
                send({"jsonrpc": "2.0", "method": "notifications/progress",
                      "params": {"progressToken": token, "progress": step, "total": steps, "message": f"step {step}"}})
        result = {"content": [{"type": "text", "text": f"slept in {steps} steps"}]}
    elif name == "toggle":
        if extra_tools:
            extra_tools.clear()
        else:
            extra_tools.append(tool("added"))
        send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        result = {"content": [{"type": "text", "text": "toggled"}]}
    elif name == "image":
        result = {"content": [{"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]}
    elif any(t["name"] == name for t in tools()):
        result = {"content": [{"type": "text", "text": f"called {name} with {json.dumps(arguments, sort_keys=True)}"}]}
    else:
        result = {"content": [{"type": "text", "text": f"MCP error -32602: Tool {name} not found"}], "isError": True}
    send({"jsonrpc": "2.0", "id": rid, "result": result})


def main():
    if args.stdout_banner:
        sys.stdout.write("fake server starting (this line is not JSON)\n")
        sys.stdout.flush()
    sys.stderr.write("fake server: a banner on stderr\n")
    sys.stderr.flush()
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        message = json.loads(line)
        record(message)
        method = message.get("method")
        rid = message.get("id")
        if method == "initialize":
            if args.never_initialize:
                continue
            send({"jsonrpc": "2.0", "id": rid, "result": {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "fake", "version": "1.0"}}})
        elif method == "tools/list":
            listed = tools()
            raw_cursor = (message.get("params") or {}).get("cursor")
            if args.endless_pages:
                n = int(raw_cursor or 0)
                send({"jsonrpc": "2.0", "id": rid, "result": {"tools": [tool(f"page{n}")], "nextCursor": str(n + 1)}})
                continue
            cursor = 0 if args.cursor_loop or raw_cursor is None else int(raw_cursor)
            size = args.page_size or len(listed)
            page = listed[cursor:cursor + size]
            result = {"tools": page}
            if args.cursor_loop:
                result["nextCursor"] = "again"
                result["tools"] = listed if raw_cursor is None else []
            elif cursor + size < len(listed):
                result["nextCursor"] = str(cursor + size)
            send({"jsonrpc": "2.0", "id": rid, "result": result})
        elif method == "tools/call":
            threading.Thread(target=call, args=(message,), daemon=True).start()
        elif method == "notifications/cancelled":
            cancelled.add(message["params"].get("requestId"))
        elif method == "ping":
            send({"jsonrpc": "2.0", "id": rid, "result": {}})
        elif rid is not None:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    main()
