"""A tiny upstream MCP server (stdio) used by the end-to-end tests.

Tools are chosen to exercise: the three §1.4 derivation rules, declared
versions, annotations -> tags, structuredContent -> facts/artifacts, long text
-> firewall, images, upstream isError, a malformed schema, a crash and a hang.
"""

from __future__ import annotations

import base64
import os
import sys

import anyio
import mcp.types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake-image-bytes").decode()

TOOLS = [
    {
        "name": "github.create_issue",
        "description": "Create an issue in a GitHub repository. Returns the issue number.",
        "inputSchema": {
            "type": "object",
            "properties": {"title": {"type": "string"}, "body": {"type": "string"}},
            "required": ["title"],
        },
        "_meta": {"version": "1.4.0"},
        "annotations": {"destructiveHint": True},
    },
    {
        "name": "weather.get",
        "description": "Get the weather forecast for a city.",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        "_meta": {"version": "2024-05"},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "slack_send_message",
        "description": "Send a message to a Slack channel.",
        "inputSchema": {
            "type": "object",
            "properties": {"channel": {"type": "string"}, "text": {"type": "string"}},
            "required": ["channel", "text"],
        },
    },
    {
        "name": "read_file",
        "description": "Read a file and return a long text body.\nSecond line of the description.",
        "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
        "annotations": {"readOnlyHint": True},
    },
    {
        "name": "media.snapshot",
        "description": "Return an image.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "fail.always",
        "description": "Always reports a tool-level error.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "broken.schema",
        "description": "Has an invalid input schema.",
        "inputSchema": {"type": "object", "properties": {"a": {"type": 42}}},
    },
    {
        "name": "crash.now",
        "description": "Kills the upstream process.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "crash.later",
        "description": "Answers, then kills the upstream process shortly after.",
        "inputSchema": {"type": "object", "properties": {}},
    },
    {
        "name": "slow.wait",
        "description": "Sleeps far longer than the gateway's call timeout.",
        "inputSchema": {"type": "object", "properties": {}},
    },
]


async def list_tools(ctx, params) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[types.Tool.model_validate(t, by_name=False) for t in TOOLS])


async def call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
    name, args = params.name, params.arguments or {}
    if name == "github.create_issue":
        return types.CallToolResult(
            content=[
                types.TextContent(
                    text=f"created issue '{args['title']}'",
                    annotations=types.Annotations(audience=["user"], priority=0.9),
                )
            ],
            structured_content={"number": 42, "status": "created"},
        )
    if name == "weather.get":
        return types.CallToolResult(content=[types.TextContent(text=f"Sunny in {args['city']}")])
    if name == "slack_send_message":
        seen_meta = params.meta is not None
        return types.CallToolResult(
            content=[types.TextContent(text=f"sent to {args['channel']}: {args['text']}")],
            structured_content={"ok": True, "meta_forwarded": seen_meta},
        )
    if name == "read_file":
        body = "\n".join(f"line {i}: " + "lorem ipsum dolor sit amet " * 3 for i in range(1, 41))
        return types.CallToolResult(content=[types.TextContent(text=body)])
    if name == "media.snapshot":
        return types.CallToolResult(
            content=[types.TextContent(text="snapshot"), types.ImageContent(data=PNG, mime_type="image/png")]
        )
    if name == "fail.always":
        return types.CallToolResult(content=[types.TextContent(text="it failed")], is_error=True)
    if name == "crash.now":
        sys.stderr.flush()
        os._exit(3)
    if name == "crash.later":
        import threading

        threading.Timer(0.2, lambda: os._exit(4)).start()
        return types.CallToolResult(content=[types.TextContent(text="bye")])
    if name == "slow.wait":
        await anyio.sleep(3600)
    return types.CallToolResult(content=[types.TextContent(text=f"unknown tool {name}")], is_error=True)


async def main() -> None:
    server = Server("fixture-upstream", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (r, w):
        await server.run(r, w, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
