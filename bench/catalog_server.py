"""A real MCP server (stdio) serving the tools of one server of the real catalog
(../shared/data/tool-retrieval/mcp_catalog.json), optionally slow to list them, for
bench/aggregate.py. Every tool echoes its arguments.

Run: `python bench/catalog_server.py --server NAME [--list-delay SECONDS]`
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import anyio
from many_tools_server import DATA
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp_types import CallToolResult, ListToolsResult, TextContent, Tool


def catalog_servers() -> dict[str, list[dict[str, Any]]]:
    """Real catalog server name -> its tools (name, description, inputSchema)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for item in json.loads((DATA / "mcp_catalog.json").read_text(encoding="utf-8")):
        tool = {
            "name": item["name"],
            "description": item.get("description") or "",
            "inputSchema": item["inputSchema"],
        }
        out.setdefault(item["server"], []).append(tool)
    return out


async def serve(name: str, delay: float) -> None:
    tools = [
        Tool(name=t["name"], description=t["description"], input_schema=t["inputSchema"])
        for t in catalog_servers()[name]
    ]

    async def list_tools(ctx: Any, params: Any) -> ListToolsResult:
        await anyio.sleep(delay)
        return ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: Any) -> CallToolResult:
        text = json.dumps(params.arguments or {}, ensure_ascii=False)
        return CallToolResult(content=[TextContent(type="text", text=text)])

    server = Server(f"catalog-{name}", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--list-delay", type=float, default=0.0)
    args = parser.parse_args()
    anyio.run(serve, args.server, args.list_delay)
