"""A server on the official Python SDK (mcp 2.x, MCPServer) that offers what Tackle's client
handles besides tools: resources (text, an image, a binary blob), a resource template, a
prompt with arguments, and a tool that asks its client through elicitation. Used by the
tackle-cli tests of resources, prompts and elicitation (docs/mcp.md#resources-and-prompts,
#elicitation). Run: python sdk_extras.py (stdio)."""

import asyncio
import base64
from typing import Literal

from pydantic import BaseModel, Field

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("extras")

PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@server.resource("notes://readme", name="readme", description="The project's notes.", mime_type="text/plain")
def readme() -> str:
    return "Remember the milk."


@server.resource("img://pixel", name="pixel", mime_type="image/png")
def pixel() -> bytes:
    return PIXEL


@server.resource("bin://data", name="data", mime_type="application/octet-stream")
def data() -> bytes:
    return bytes([0, 1, 2, 255])


@server.resource("notes://topics/{topic}", name="topic", description="Notes on one topic.")
def topic(topic: str) -> str:
    return f"Notes on {topic}."


@server.prompt(description="Review some code.")
def review(code: str, focus: str = "bugs") -> str:
    return f"Please review this code for {focus}:\n{code}"


class Booking(BaseModel):
    guest: str = Field(default="Ada", description="Who stays")
    nights: int = Field(default=2, description="How many nights")
    room: Literal["single", "double"] = Field(default="single", description="The kind of room")
    breakfast: bool = Field(default=False, description="Breakfast included")


@server.tool()
async def book(ctx: Context) -> str:
    """Books a room, asking the person for the details."""
    result = await ctx.elicit("Book a room", Booking)
    if result.action == "accept":
        return f"accept: {result.data.model_dump_json()}"
    return result.action


class Subscription(BaseModel):
    email: str = Field(description="Where the news goes")


@server.tool()
async def subscribe(ctx: Context) -> str:
    """Subscribes, asking for an address that has no default."""
    result = await ctx.elicit("Subscribe to the news", Subscription)
    if result.action == "accept":
        return f"accept: {result.data.model_dump_json()}"
    return result.action


LATE = {"action": "none yet"}


@server.tool()
async def late(ctx: Context) -> str:
    """Asks for a form half a second after answering: out of the blue, with no call in flight."""
    session = ctx.session

    async def ask_later():
        await asyncio.sleep(0.5)
        schema = {"type": "object", "properties": {"ok": {"type": "boolean", "default": True}}}
        result = await session.elicit_form("Out of the blue", schema)
        LATE["action"] = result.action

    asyncio.get_running_loop().create_task(ask_later())
    return "scheduled"


@server.tool()
async def late_result() -> str:
    """What the form of `late` got."""
    return LATE["action"]


@server.tool()
async def url_form(ctx: Context) -> str:
    """Asks the client to open a URL (URL-mode elicitation)."""
    result = await ctx.session.elicit_url("Sign in", "https://example.invalid/", "e1", related_request_id=ctx.request_id)
    return result.action


if __name__ == "__main__":
    server.run()
