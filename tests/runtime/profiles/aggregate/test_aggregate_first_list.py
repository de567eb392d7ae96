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

import anyio
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
    direct = [sys.executable, str(ROOT / "bench" / "many_tools_server.py"), "--tools", str(MANY)]
    many = [*direct, "--list-delay", str(LIST_DELAY_S)]
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

    gateway = [sys.executable, "-m", "gatespec.cli", "serve", "--config", str(path)]
    read: dict[str, list[str]] = {}

    async def read_from(key: str, command: list[str]) -> None:
        read[key] = await listed(StdioServerParameters(command=command[0], args=command[1:]))

    # The gateway's first listing, and the upstreams' own read directly at the same time (the
    # many-tools one without the delay, which only sleeps before answering).
    async with anyio.create_task_group() as reads:
        reads.start_soon(read_from, "gateway", gateway)
        reads.start_soon(read_from, "many", direct)
        reads.start_soon(read_from, "time", [time_server])
    expected = [f"{key}__{name}" for key in ("many", "time") for name in read[key]]
    assert len(expected) > MANY
    assert read["gateway"] == expected
