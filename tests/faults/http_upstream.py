"""A Streamable HTTP MCP server (the SDK's low-level server) with an echo tool and a tool that
answers with `bytes` bytes of text. Usage: python http_upstream.py PORT [--json]
(--json: answers as one JSON body; else SSE-framed, the SDK's default)."""

from __future__ import annotations

import sys
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server import Server

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


def main() -> None:
    server = Server("http-faults", on_list_tools=list_tools, on_call_tool=call_tool)
    app = server.streamable_http_app(json_response="--json" in sys.argv)
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")


if __name__ == "__main__":
    main()
