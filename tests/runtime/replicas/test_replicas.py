"""Two gatespec replicas behind a round-robin client, sharing a real Valkey server
(AM-SHARED-STATE): every request goes to the other replica than the one before, through one
official MCP client (protocol 2026-07-28: no session, so any replica may answer).

Expected answers: the upstream's own output (tests/fixtures/replica_upstream.big_text), seed
000 §5 for cache-stable order and frozen content, AM-SHARED-STATE for what survives a replica
crash and a store restart; seed 001 "Event Notification" for list_changed, which a replica
hears of from another through the store's pub/sub."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server.subscriptions import ToolsListChanged

from gatespec_surface.budgets import CACHE_MARKER_ID
from tests.fixtures.replica_cluster import Cluster, RoundRobin
from tests.fixtures.replica_upstream import big_text

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(180)]


@asynccontextmanager
async def round_robin(cluster: Cluster) -> AsyncIterator[tuple[Client, RoundRobin]]:
    balancer = RoundRobin([r.port for r in cluster.replicas])
    async with httpx2.AsyncClient(transport=balancer, timeout=30) as http:
        url = f"http://127.0.0.1:{cluster.replicas[0].port}/mcp"
        async with Client(
            streamable_http_client(url, http_client=http), mode="2026-07-28", cache=None
        ) as client:
            yield client, balancer


async def call(
    client: Client, balancer: RoundRobin, tool: str, args: dict[str, Any]
) -> tuple[Any, int]:
    """(structured result, the replica port that answered)."""
    result = await client.call_tool(tool, args)
    port = balancer.served[-1][0]
    payload = result.structured_content
    if result.is_error and payload is None:
        payload = json.loads(result.content[0].text)
    return payload, port


async def tool_ids(client: Client, balancer: RoundRobin, namespace: str) -> dict[str, str]:
    listing, _ = await call(client, balancer, "tool_browse", {"path": f"/{namespace}"})
    return {card["name"]: card["id"] for card in listing["cards"]}


async def test_execute_on_one_replica_and_view_on_the_other(cluster: Cluster) -> None:
    async with round_robin(cluster) as (client, balancer):
        ids = await tool_ids(client, balancer, "alpha")
        envelope, executed_on = await call(
            client, balancer, "tool_execute", {"tool_id": ids["big"], "args": {"lines": 3000}}
        )
        [artifact] = [a for a in envelope["artifacts"] if a["media_type"].startswith("text/")]
        view, viewed_on = await call(
            client, balancer, "tool_view", {"handle": artifact["handle"], "selector": "lines:2-3"}
        )
        assert viewed_on != executed_on
        assert view["content"] == "".join(big_text(3000).splitlines(keepends=True)[1:3]).rstrip(
            "\n"
        )
        assert view["total_size"] == len(big_text(3000).encode())
        # every request alternated between the two replicas
        ports = [port for port, _ in balancer.served]
        assert all(a != b for a, b in zip(ports, ports[1:], strict=False))


async def test_cache_stable_order_continues_across_replicas(cluster: Cluster) -> None:
    async with round_robin(cluster) as (client, balancer):
        first, first_on = await call(client, balancer, "tool_browse", {"path": "/alpha"})
        assert CACHE_MARKER_ID not in [c["id"] for c in first["cards"]]  # §5.3 first browse
        frozen = {c["id"]: c for c in first["cards"]}
        second, second_on = await call(client, balancer, "tool_browse", {"path": "/beta"})
        third, third_on = await call(
            client, balancer, "tool_browse", {"query": "long numbered text lines"}
        )
        assert len({first_on, second_on}) == 2 and third_on == first_on
        seen = {**frozen, **{c["id"]: c for c in second["cards"]}}
        cards = third["cards"]
        ids = [c["id"] for c in cards]
        # §5.1: seen cards first, by id, exactly as first emitted (a path browse's score, not
        # this query's); then the marker if there are new cards; then new cards by id.
        prefix = [c for c in cards if c["id"] in seen]
        assert cards[: len(prefix)] == [seen[c["id"]] for c in prefix]
        assert [c["id"] for c in prefix] == sorted(c["id"] for c in prefix)
        assert prefix, "the query found none of the six tools"
        if len(prefix) < len(cards):
            assert ids[len(prefix)] == CACHE_MARKER_ID
        # and once more on the other replica: byte-identical cards, all seen, no marker
        again, again_on = await call(
            client, balancer, "tool_browse", {"query": "long numbered text lines"}
        )
        assert again_on != third_on
        assert again["cards"] == [
            c for c in sorted(cards, key=lambda c: c["id"]) if c["id"] != CACHE_MARKER_ID
        ]


async def test_a_replica_killed_mid_session_loses_no_artifact_and_repeats_no_call(
    cluster: Cluster,
) -> None:
    async with round_robin(cluster) as (client, balancer):
        ids = await tool_ids(client, balancer, "beta")
        envelope, executed_on = await call(
            client, balancer, "tool_execute", {"tool_id": ids["big"], "args": {"lines": 2500}}
        )
        handle = envelope["artifacts"][0]["handle"]
        [victim] = [r for r in cluster.replicas if r.port == executed_on]
        victim.kill()
        for selector in ("lines:1-1", "lines:2500-2500"):
            view, viewed_on = await call(
                client, balancer, "tool_view", {"handle": handle, "selector": selector}
            )
            assert viewed_on != executed_on
        assert view["content"] == "line 02500 of the big result"
        echoed, _ = await call(
            client, balancer, "tool_execute", {"tool_id": ids["echo"], "args": {"text": "after"}}
        )
        assert echoed["summary"] == "after"
    calls = cluster.calls()
    assert [c for c in calls if c["name"] == "big"] == [{"name": "big", "args": {"lines": 2500}}]
    assert [c for c in calls if c["name"] == "echo"] == [
        {"name": "echo", "args": {"text": "after"}}
    ]


async def test_the_gateway_recovers_when_the_store_restarts(cluster: Cluster) -> None:
    assert cluster.valkey is not None
    async with round_robin(cluster) as (client, balancer):
        ids = await tool_ids(client, balancer, "alpha")
        envelope, _ = await call(
            client, balancer, "tool_execute", {"tool_id": ids["big"], "args": {"lines": 2000}}
        )
        handle = envelope["artifacts"][0]["handle"]
        cluster.valkey.kill()
        failed, _ = await call(client, balancer, "tool_view", {"handle": handle, "selector": "all"})
        assert failed["error"] == "VIEW_FAILED" and "unreachable" in failed["message"]
        # still ready: the outage is everyone's, and answered (gatespec.server.health)
        status = httpx2.get(f"{cluster.replicas[0].url}/readyz", timeout=5)
        assert status.status_code == 200 and "unreachable" in status.json()["state"]
        cluster.valkey.start()  # same port, no persistence: it comes back empty
        for _ in range(2):  # on both replicas, neither restarted
            envelope, executed_on = await call(
                client, balancer, "tool_execute", {"tool_id": ids["big"], "args": {"lines": 300}}
            )
            assert envelope["artifacts"], envelope["provenance"]
            view, viewed_on = await call(
                client, balancer,
                "tool_view", {"handle": envelope["artifacts"][0]["handle"], "selector": "lines:300-300"},
            )  # fmt: skip
            assert view["content"] == "line 00300 of the big result"
            assert viewed_on != executed_on


async def test_sigterm_drains_calls_in_flight(cluster: Cluster) -> None:
    [draining, other] = cluster.replicas
    async with round_robin(cluster) as (client, balancer):
        ids = await tool_ids(client, balancer, "alpha")
    direct = RoundRobin([draining.port])
    results: list[Any] = []
    async with httpx2.AsyncClient(transport=direct, timeout=30) as http:
        url = f"{draining.url}/mcp"
        async with Client(
            streamable_http_client(url, http_client=http), mode="2026-07-28", cache=None
        ) as slow:
            # the client lists tools after its first call (for output schemas): done before
            await slow.call_tool("tool_browse", {"path": "/alpha"})

            async def in_flight() -> None:
                results.append(
                    await slow.call_tool(
                        "tool_execute", {"tool_id": ids["sleep"], "args": {"seconds": 2}}
                    )
                )

            async with anyio.create_task_group() as tg:
                tg.start_soon(in_flight)
                await anyio.sleep(0.7)  # the call has reached the upstream
                draining.terminate()
                await anyio.sleep(0.3)
                with pytest.raises(httpx2.TransportError):  # no longer accepting
                    httpx2.get(f"{draining.url}/healthz", timeout=1)
    assert results[0].structured_content["summary"] == "slept"
    assert draining.proc.wait(10) == 0
    assert httpx2.get(f"{other.url}/readyz", timeout=5).status_code == 200


@asynccontextmanager
async def direct(url: str) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(timeout=30) as http:
        transport = streamable_http_client(f"{url}/mcp", http_client=http)
        async with Client(transport, mode="2026-07-28", cache=None) as client:
            yield client


async def test_a_tools_change_one_replica_hears_of_reaches_a_listener_on_another(
    tmp_path: Path,
) -> None:
    # Each replica runs its own copy of the upstream; only the copy that made the change
    # tells its gateway, and the replicas do not poll (refresh_interval 0): the other replica
    # can only learn of it from the first, through the store's pub/sub.
    cluster = Cluster(tmp_path, profile="transparent").start(2)
    try:
        told, listening = cluster.replicas
        async with direct(listening.url) as listener:
            before = {t.name for t in (await listener.list_tools()).tools}
            async with listener.listen(tools_list_changed=True) as subscription:
                async with direct(told.url) as caller:
                    [add] = [n for n in before if n.startswith("alpha-nadd_tool")]
                    result = await caller.call_tool(
                        "tool_execute", {"tool_id": add, "args": {"name": "fresh_tool"}}
                    )
                    assert not result.is_error, result.content
                with anyio.fail_after(20):
                    event = await subscription.__anext__()
            assert event == ToolsListChanged()
            after = {t.name for t in (await listener.list_tools()).tools}
        # both copies list the shared file's new tool: one per upstream key
        assert {n.split("-h")[0] for n in after - before} == {
            "alpha-nfresh_tool",
            "beta-nfresh_tool",
        }
    finally:
        cluster.stop()
