"""The aggregate profile as replicas sharing a real Valkey server: a handshake-era session
opened on one replica is served by the other (AM-SHARED-SESSIONS), and a tools change that one
replica's upstream announces reaches the client's stream on the other (pub/sub fan-out).

Expected answers: the upstream's own echo, seed 001's `server__tool` names (the separator as
AM-AGGREGATE-SEPARATOR settles it), AM-SHARED-SESSIONS for the session rules, and the MCP
notification `notifications/tools/list_changed` for a tools change."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.fixtures.replica_cluster import Cluster, Router, sse_events

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(180)]


@asynccontextmanager
async def handshake_client(url: str, router: Router) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(transport=router, timeout=30) as http:
        transport = streamable_http_client(f"{url}/mcp", http_client=http)
        async with Client(transport, mode="legacy", cache=None) as client:
            yield client


async def test_an_aggregate_session_and_its_list_changes_cross_replicas(tmp_path: Path) -> None:
    cluster = Cluster(tmp_path, profile="aggregate", cache_stable=False).start(2)
    try:
        a, b = cluster.replicas
        target = {"next": a.port}

        def route(request: httpx2.Request) -> int | None:
            if request.method == "GET":
                return None  # the test opens the client's stream itself, on B
            port = target["next"]
            target["next"] = b.port if port == a.port else a.port  # alternate
            return port

        router = Router(route)
        async with handshake_client(a.url, router) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"alpha__echo", "beta__echo", "alpha__add_tool"} <= names
            echoed = await client.call_tool("beta__echo", {"text": "from either replica"})
            assert echoed.content[0].text == "from either replica"
            [session] = {s for *_, s in router.served if s}
            assert {p for p, _, m, s in router.served if s == session and m} == {a.port, b.port}

            headers = {
                "Accept": "text/event-stream",
                "Mcp-Session-Id": session,
                "MCP-Protocol-Version": router.last_headers["mcp-protocol-version"],
            }
            async with (
                httpx2.AsyncClient(timeout=30) as http,
                http.stream("GET", f"{b.url}/mcp", headers=headers) as stream,
            ):
                assert stream.status_code == 200
                target["next"] = a.port  # the change happens on A's copy of the upstream
                await client.call_tool("alpha__add_tool", {"name": "added_on_a"})
                with anyio.fail_after(20):
                    async for event in sse_events(stream):
                        if "data" in event:
                            heard = json.loads(event["data"])
                            break
            assert heard == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
            target["next"] = b.port
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert "alpha__added_on_a" in names
    finally:
        cluster.stop()
