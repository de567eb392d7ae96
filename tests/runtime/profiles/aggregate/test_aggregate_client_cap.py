"""The bound on the upstream connections the aggregate profile opens for clients with
client-scoped state (gateway.max_client_connections, gatespec.profiles.aggregate.client_upstreams):
past it, the least recently used idle connection is closed (its process ends; its client gets
a new one on its next request, its roots asked again); when every connection is busy, the
request is refused SERVER_UNAVAILABLE naming the bound. A real `gatespec serve --profile
aggregate --transport http`, real MCP SDK clients, the client-state fixture upstream."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.runtime.load_support import serve_http
from tests.runtime.profiles.aggregate.test_aggregate_client_state import alive, said

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "client_state_server.py"


def gateway(servers: Any, tmp_path: Path, bound: int) -> str:
    config = {
        "mcpServers": {"state": {"command": sys.executable, "args": [str(FIXTURE)]}},
        "gateway": {
            "profile": "aggregate",
            "call_timeout": 30,
            "watch": False,
            "max_client_connections": bound,
        },
    }
    path = tmp_path / "gatespec.json"
    path.write_text(json.dumps(config))
    return serve_http(servers, path)[1]


def roots_of(uri: str, gate: anyio.Event | None = None, asked: anyio.Event | None = None) -> Any:
    async def answer(ctx: Any) -> types.ListRootsResult:
        if asked is not None:
            asked.set()
        if gate is not None:
            await gate.wait()
        return types.ListRootsResult(roots=[types.Root(uri=uri)])

    return answer


@asynccontextmanager
async def client(url: str, roots: Any) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(timeout=60) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode="legacy", cache=None, list_roots_callback=roots) as c:
            yield c


async def gone(pid: int) -> bool:
    for _ in range(100):
        if not alive(pid):
            return True
        await anyio.sleep(0.05)
    return False


async def test_past_the_bound_the_least_recently_used_idle_connection_closes(
    servers: Any, tmp_path: Path
) -> None:
    url = gateway(servers, tmp_path, bound=2)
    async with (
        client(url, roots_of("file:///a")) as a,
        client(url, roots_of("file:///b")) as b,
        client(url, roots_of("file:///c")) as c,
    ):
        assert await said(a, "roots") == "roots: file:///a"
        pid_a = int((await said(a, "pid")).split()[1])
        pid_b = int((await said(b, "pid")).split()[1])
        await said(a, "pid")  # a used last: b's connection is the least recently used
        pid_c = int((await said(c, "pid")).split()[1])
        assert len({pid_a, pid_b, pid_c}) == 3
        assert await gone(pid_b) and alive(pid_a)
        # b goes on: a new connection of its own, its roots asked again (a's is now the LRU)
        assert await said(b, "roots") == "roots: file:///b"
        assert await gone(pid_a) and alive(pid_c)
        assert await said(c, "roots") == "roots: file:///c"


async def test_with_every_connection_busy_a_new_one_is_refused(
    servers: Any, tmp_path: Path
) -> None:
    url = gateway(servers, tmp_path, bound=1)
    gate, asked = anyio.Event(), anyio.Event()
    async with (
        client(url, roots_of("file:///a", gate, asked)) as a,
        client(url, roots_of("file:///b")) as b,
    ):
        answers: list[str] = []
        async with anyio.create_task_group() as tg:

            async def held() -> None:  # a's call waits on a's own roots answer
                answers.append(await said(a, "roots"))

            tg.start_soon(held)
            await asked.wait()  # a's call is on a's own connection, which asks a's roots
            refused = await b.call_tool("state__pid", {})
            assert refused.is_error
            text = refused.content[0]
            assert isinstance(text, types.TextContent)
            assert "SERVER_UNAVAILABLE" in text.text and "max_client_connections" in text.text
            gate.set()
        assert answers == ["roots: file:///a"]
        # a's connection is idle now: b's next request takes its place
        assert (await said(b, "pid")).startswith("pid: ")
