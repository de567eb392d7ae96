"""A real MCP server (stdio) with N tools, for the start-up and scale benchmarks.

The tools are the real catalog's (tests/fixtures/catalogs/mcp_catalog.json, the same file as
../shared/data/tool-retrieval/'s: names, descriptions and input schemas of 644 tools of 71 MCP
servers) repeated until there are N,
copy k of tool `name` of server `s` named `s-name-k` (cut to 64 characters, kept unique), so
cards, schemas and ranking see realistic text. Every tool echoes its arguments. The names hold
no "__" and neither start nor end with "_": the aggregate profile could not offer them
(AM-AGGREGATE-SEPARATOR) and listed none of the 10,000. `--list-delay` makes every tools/list
answer that much later (a slow-listing upstream).

Run: `python bench/many_tools_server.py --tools 10000 [--list-delay SECONDS]`
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

import anyio
from mcp.server import Server
from mcp.server.stdio import stdio_server
from mcp_types import CallToolResult, ListToolsResult, TextContent, Tool

# ../shared beside the checkout; a git worktree's checkout sits one level deeper.
_SHARED = [Path(__file__).resolve().parents[2] / "shared", Path("/work/shared")]
DATA = next((p for p in _SHARED if p.exists()), _SHARED[0]) / "data" / "tool-retrieval"
CATALOG = (
    Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "catalogs" / "mcp_catalog.json"
)
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_UNDERSCORES = re.compile(r"__+")


def synthetic_tools(n: int) -> list[dict[str, Any]]:
    """n tool definitions (name, description, inputSchema) built from the real catalog."""
    real = json.loads(CATALOG.read_text(encoding="utf-8"))
    tools: list[dict[str, Any]] = []
    names: set[str] = set()
    for i in range(n):
        item = real[i % len(real)]
        base = _UNDERSCORES.sub("_", _UNSAFE.sub("-", f"{item['server']}-{item['name']}"))
        suffix = f"-{i // len(real)}"
        name = base.lstrip("_")[: 64 - len(suffix)] + suffix
        while name in names:  # two real names that sanitise alike
            name = f"t{i}{suffix}"
        names.add(name)
        tools.append(
            {
                "name": name,
                "description": item.get("description") or "",
                "inputSchema": item["inputSchema"],
            }
        )
    return tools


async def serve(n: int, delay: float) -> None:
    listing = ListToolsResult(
        tools=[
            Tool(name=t["name"], description=t["description"], input_schema=t["inputSchema"])
            for t in synthetic_tools(n)
        ]
    )

    async def list_tools(ctx: Any, params: Any) -> ListToolsResult:
        await anyio.sleep(delay)
        return listing

    async def call_tool(ctx: Any, params: Any) -> CallToolResult:
        text = json.dumps(params.arguments or {}, ensure_ascii=False)
        return CallToolResult(content=[TextContent(type="text", text=text)])

    server = Server("many-tools", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, default=10_000)
    parser.add_argument("--list-delay", type=float, default=0.0)
    args = parser.parse_args()
    anyio.run(serve, args.tools, args.list_delay)
