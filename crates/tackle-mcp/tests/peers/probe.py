"""An MCP client probe built on the official Python SDK (`mcp==2.3.0`, `from mcp import Client`).

It connects to a server over stdio (`--stdio COMMAND ARG...`, which must come last) or
streamable HTTP (`--url URL`, with `--bearer TOKEN` sent as `Authorization: Bearer`), lists the tools (following cursors, failing on a cursor loop),
optionally calls one tool (with progress, or cancelled after a delay), and prints one JSON
document on stdout.

Exit codes: 0 ok; 2 protocol error (a JSON-RPC error); 3 transport error; 4 the call
returned isError and --fail-on-error was given.
"""

import argparse
import asyncio
import json
import sys
import time

import anyio
from mcp import Client, MCPError, StdioServerParameters


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url")
    parser.add_argument("--bearer", help="with --url: send Authorization: Bearer TOKEN")
    parser.add_argument("--mode", default="legacy", choices=["legacy", "auto"])
    parser.add_argument("--call", help="a tool to call")
    parser.add_argument("--args", default="{}", help="its arguments as JSON")
    parser.add_argument("--progress", action="store_true", help="ask for progress")
    parser.add_argument("--cancel-after", type=float, help="cancel the call after this many seconds")
    parser.add_argument("--then-call", help="a tool to call after the first call (same session)")
    parser.add_argument("--then-args", default="{}")
    parser.add_argument("--fail-on-error", action="store_true")
    parser.add_argument("--no-list", action="store_true")
    parser.add_argument("--elicit", choices=["accept", "decline"], help="answer approval prompts so")
    parser.add_argument("--repeat", type=int, default=1, help="call the tool this many times (timed)")
    parser.add_argument("--stdio", nargs=argparse.REMAINDER)
    return parser.parse_args()


def result_doc(result):
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


async def probe(args):
    if args.stdio:
        target = StdioServerParameters(command=args.stdio[0], args=args.stdio[1:])
    elif args.url and args.bearer:
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        http = create_mcp_http_client(headers={"Authorization": f"Bearer {args.bearer}"})
        target = streamable_http_client(args.url, http_client=http)
    elif args.url:
        target = args.url
    else:
        raise SystemExit("give --stdio COMMAND... or --url URL")
    doc = {}
    prompts = []
    elicitation = None
    if args.elicit:
        import mcp.types as types

        async def elicitation(context, params):
            prompts.append(params.message)
            if args.elicit == "accept":
                return types.ElicitResult(action="accept", content={"approve": True})
            return types.ElicitResult(action="decline")

    async with Client(target, mode=args.mode, cache=None, elicitation_callback=elicitation) as client:
        doc["protocolVersion"] = client.protocol_version
        info = client.server_info
        doc["serverInfo"] = info.model_dump(mode="json", exclude_none=True) if info else None
        doc["instructions"] = client.instructions
        if not args.no_list:
            tools, cursor, seen, pages = [], None, set(), 0
            while True:
                page = await client.list_tools(cursor=cursor)
                pages += 1
                tools.extend(tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
                if cursor in seen:
                    raise MCPError(-32603, f"cursor loop at {cursor!r}")
                seen.add(cursor)
            doc["pages"] = pages
            doc["tools"] = tools
        if args.call:
            progress = []

            async def on_progress(value, total, message):
                progress.append({"progress": value, "total": total, "message": message})

            callback = on_progress if args.progress else None
            arguments = json.loads(args.args)
            if args.cancel_after is not None:
                outcome = {}

                async def run():
                    outcome["result"] = await client.call_tool(args.call, arguments, progress_callback=callback)

                started = time.monotonic()
                async with anyio.create_task_group() as group:
                    group.start_soon(run)
                    await anyio.sleep(args.cancel_after)
                    group.cancel_scope.cancel()
                doc["cancelled"] = "result" not in outcome
                doc["cancel_seconds"] = round(time.monotonic() - started, 3)
                if "result" in outcome:
                    doc["call"] = result_doc(outcome["result"])
            else:
                started = time.monotonic()
                for _ in range(args.repeat):
                    result = await client.call_tool(args.call, arguments, progress_callback=callback)
                elapsed = time.monotonic() - started
                if args.repeat > 1:
                    doc["calls_per_second"] = round(args.repeat / elapsed, 1)
                doc["call"] = result_doc(result)
            doc["progress"] = progress
        if args.then_call:
            result = await client.call_tool(args.then_call, json.loads(args.then_args))
            doc["then"] = result_doc(result)
    if args.elicit:
        doc["prompts"] = prompts
    return doc


def main():
    args = parse_args()
    try:
        doc = asyncio.run(probe(args))
    except MCPError as err:
        data = err.error.data if getattr(err, "error", None) is not None else None
        print(json.dumps({"error": {"code": err.code, "message": str(err.error.message if err.error else err), "data": data}}))
        return 2
    except BaseException as err:  # transport failures arrive wrapped in exception groups
        while isinstance(err, BaseExceptionGroup) and len(err.exceptions) == 1:
            err = err.exceptions[0]
        if isinstance(err, MCPError):
            print(json.dumps({"error": {"code": err.code, "message": err.error.message, "data": err.error.data}}))
            return 2
        print(json.dumps({"transport_error": f"{type(err).__name__}: {err}"}))
        return 3
    print(json.dumps(doc))
    if args.fail_on_error and doc.get("call", {}).get("isError"):
        return 4
    return 0


if __name__ == "__main__":
    sys.exit(main())
