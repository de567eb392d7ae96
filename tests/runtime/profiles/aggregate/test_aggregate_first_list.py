"""The aggregate profile's first tools/list, through `gatespec serve` over stdio, in front of
a real slow-listing server with many tools (bench/many_tools_server.py, the scale benchmark's
upstream) and mcp-server-time. The aggregate registry connects every upstream before it
answers (AM-SERVE-FIRST-READY is a catalog-profile rule), so the first tools/list holds every
tool each server lists, namespaced server__tool (seed 004, AM-AGGREGATE-SEPARATOR). The
expected names are the upstreams' own listings, read directly from them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

pytestmark = [pytest.mark.anyio, pytest.mark.real_upstream, pytest.mark.timeout(120)]

ROOT = Path(__file__).resolve().parents[4]
MANY = 600  # more than one page of the merged list (aggregate_listing.page_size)
LIST_DELAY_S = 1.5  # every tools/list of the many-tools server answers this late


async def listed(params: StdioServerParameters) -> list[str]:
    """Every tool name of one server's first listing, following nextCursor."""
    names: list[str] = []
    async with Client(params, mode="legacy") as client:
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            names += [t.name for t in page.tools]
            cursor = page.next_cursor
            if not cursor:
                return names


async def test_first_tools_list_holds_a_slow_listing_upstream(tmp_path: Path, servers: Any):
    many = [sys.executable, str(ROOT / "bench" / "many_tools_server.py"), "--tools", str(MANY)]
    many += ["--list-delay", str(LIST_DELAY_S)]
    time_server = servers.binary(servers.venv_bin / "mcp-server-time")
    config = {
        "mcpServers": {
            "many": {"command": many[0], "args": many[1:]},
            "time": {"command": time_server},
        },
        "gateway": {"profile": "aggregate", "call_timeout": 30},
    }
    path = tmp_path / "gatespec.json"
    path.write_text(json.dumps(config))

    expected = [
        f"many__{n}" for n in await listed(StdioServerParameters(command=many[0], args=many[1:]))
    ]
    expected += [f"time__{n}" for n in await listed(StdioServerParameters(command=time_server))]
    assert len(expected) > MANY

    gateway = [sys.executable, "-m", "gatespec.cli", "serve", "--config", str(path)]
    first = await listed(StdioServerParameters(command=gateway[0], args=gateway[1:]))
    assert first == expected
