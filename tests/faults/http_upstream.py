"""A Streamable HTTP MCP server (the SDK's low-level server) with an echo tool and a tool that
answers with `bytes` bytes of text. Usage: python http_upstream.py PORT [--json | --legacy-sse]
(--json: answers as one JSON body; else SSE-framed, the SDK's default; --legacy-sse: the
2024-11-05 SSE transport instead, GET /sse + POST /messages/)."""

from __future__ import annotations

import sys
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server import Server
from mcp.server.sse import SseServerTransport
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string"}, "bytes": {"type": "integer"}},
}


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(
        tools=[
            types.Tool(name="echo", description="Echo the text back.", input_schema=SCHEMA),
            types.Tool(name="big", description="A very large answer.", input_schema=SCHEMA),
        ]
    )


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    args = params.arguments or {}
    text = "x" * int(args["bytes"]) if params.name == "big" else str(args.get("text"))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def legacy_sse_app(server: Server) -> Starlette:
    transport = SseServerTransport("/messages/")

    async def connect(request: Request) -> Response:
        async with transport.connect_sse(request.scope, request.receive, request._send) as (
            read,
            write,
        ):
            await server.run(read, write, server.create_initialization_options())
        return Response()

    return Starlette(
        routes=[
            Route("/sse", endpoint=connect, methods=["GET"]),
            Mount("/messages/", app=transport.handle_post_message),
        ]
    )


def main() -> None:
    server = Server("http-faults", on_list_tools=list_tools, on_call_tool=call_tool)
    if "--legacy-sse" in sys.argv:
        app = legacy_sse_app(server)
    else:
        app = server.streamable_http_app(json_response="--json" in sys.argv)
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")


if __name__ == "__main__":
    main()
