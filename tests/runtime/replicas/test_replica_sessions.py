"""Handshake-era sessions across gatespec replicas sharing a real Valkey server
(AM-SHARED-SESSIONS): a Streamable HTTP session (`Mcp-Session-Id`) and a legacy SSE session
opened on one replica are served by another, survive the first one's death, resume their
streams there, and stay their owner's. A client's answer to a request an upstream asked
during a call, or its cancellation of the call, reaches the replica running the call whichever
replica it was posted to. Readiness waits for every upstream to settle.

Expected answers: the upstream's own output (tests/fixtures/replica_upstream.big_text), seed
000 §5 for cache-stable order, AM-SHARED-SESSIONS for the session rules (the same session id
everywhere, 404 for a session that is not the caller's, 202 for a forwarded legacy POST), the
SDK's Streamable HTTP resumption contract (events after Last-Event-ID), the conformance
fixture's documented replies for sampling / elicitation and its logged cancellation
(AM-UPSTREAM-RELAY, as in tests/runtime/server/test_relay.py), and server.health for /readyz."""

from __future__ import annotations

import hashlib
import itertools
import json
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from gatespec_conformance.fixtures.rich import SAMPLE_REPLY_PREFIX
from gatespec_conformance.fixtures.upstream import fixture_argv
from gatespec_surface.budgets import CACHE_MARKER_ID
from tests.fixtures.replica_cluster import (
    UPSTREAM,
    Cluster,
    Replica,
    Router,
    rpc_method,
    sse_events,
)
from tests.fixtures.replica_upstream import big_text

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(180)]

TOKENS = {"alice": "alice-secret-token", "bob": "bob-secret-token"}
ACCESS = {
    "identities": {
        name: {"tokens": ["sha256:" + hashlib.sha256(token.encode()).hexdigest()]}
        for name, token in TOKENS.items()
    }
}


@asynccontextmanager
async def handshake_client(
    url: str, router: Router, headers: dict[str, str] | None = None, **callbacks: Any
) -> AsyncIterator[Client]:
    """The official client in the handshake era (initialize, then Mcp-Session-Id)."""
    async with httpx2.AsyncClient(transport=router, timeout=30, headers=headers) as http:
        transport = streamable_http_client(f"{url}/mcp", http_client=http)
        async with Client(transport, mode="legacy", cache=None, **callbacks) as client:
            yield client


async def call(client: Client, router: Router, tool: str, args: dict[str, Any]) -> tuple[Any, int]:
    """(structured result, the replica port that answered the tools/call)."""
    result = await client.call_tool(tool, args)
    [port] = [p for p, _, m, _ in router.served if m == "tools/call"][-1:]
    payload = result.structured_content
    if result.is_error and payload is None:
        payload = json.loads(result.content[0].text)
    return payload, port


def alternating(*replicas: Replica) -> Callable[[httpx2.Request], int | None]:
    """POSTs and DELETEs to each replica in turn; no standalone GET stream (405)."""
    turn = itertools.count()
    ports = [r.port for r in replicas]
    return lambda request: None if request.method == "GET" else ports[next(turn) % len(ports)]


def sessions(router: Router) -> set[str]:
    return {s for _, _, _, s in router.served if s}


async def test_a_session_initialized_on_one_replica_is_served_by_the_other(
    cluster: Cluster,
) -> None:
    a, b = cluster.replicas
    router = Router(alternating(a, b))
    async with handshake_client(a.url, router) as client:
        first, first_on = await call(client, router, "tool_browse", {"path": "/alpha"})
        ids = {card["name"]: card["id"] for card in first["cards"]}
        envelope, executed_on = await call(
            client, router, "tool_execute", {"tool_id": ids["big"], "args": {"lines": 1200}}
        )
        handle = envelope["artifacts"][0]["handle"]
        view, viewed_on = await call(
            client, router, "tool_view", {"handle": handle, "selector": "lines:1200-1200"}
        )
        assert view["content"] == big_text(1200).splitlines()[-1]
        assert viewed_on != executed_on
        # seed 000 §5: the same session browses on: every card seen, by id, as first emitted
        again, again_on = await call(client, router, "tool_browse", {"path": "/alpha"})
        if again_on == first_on:  # strict alternation: the next one is on the other replica
            again, again_on = await call(client, router, "tool_browse", {"path": "/alpha"})
        assert again_on != first_on
        assert again["cards"] == sorted(first["cards"], key=lambda c: c["id"])
        assert CACHE_MARKER_ID not in [c["id"] for c in again["cards"]]
    # one initialize, one session id, requests of that session served by both replicas
    assert [m for _, _, m, _ in router.served if m == "initialize"] == ["initialize"]
    [session] = sessions(router)
    assert {p for p, _, _, s in router.served if s == session} == {a.port, b.port}
    # closing the client deleted the session (on one replica): gone on both
    assert router.served[-1][1] == "DELETE"
    for replica in (a, b):
        gone = httpx2.post(
            f"{replica.url}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={"Mcp-Session-Id": session, "Accept": "application/json, text/event-stream"},
        )
        assert gone.status_code == 404


async def test_a_session_goes_on_with_the_same_id_after_its_replica_is_killed(
    cluster: Cluster,
) -> None:
    a, b = cluster.replicas
    target = [a.port]
    router = Router(lambda request: None if request.method == "GET" else target[0])
    async with handshake_client(a.url, router) as client:
        listing, _ = await call(client, router, "tool_browse", {"path": "/beta"})
        ids = {card["name"]: card["id"] for card in listing["cards"]}
        envelope, executed_on = await call(
            client, router, "tool_execute", {"tool_id": ids["big"], "args": {"lines": 800}}
        )
        assert executed_on == a.port
        a.kill()
        target[0] = b.port
        view, viewed_on = await call(
            client, router, "tool_view",
            {"handle": envelope["artifacts"][0]["handle"], "selector": "lines:800-800"},
        )  # fmt: skip
        assert viewed_on == b.port and view["content"] == "line 00800 of the big result"
        echoed, _ = await call(
            client, router, "tool_execute", {"tool_id": ids["echo"], "args": {"text": "on b"}}
        )
        assert echoed["summary"] == "on b"
    [session] = sessions(router)
    assert {p for p, _, m, s in router.served if s == session and m} == {a.port, b.port}
    assert [m for _, _, m, _ in router.served if m == "initialize"] == ["initialize"]
    assert [c for c in cluster.calls() if c["name"] == "big"] == [
        {"name": "big", "args": {"lines": 800}}
    ]


def stream_headers(session: str, version: str, **extra: str) -> dict[str, str]:
    return {
        "Accept": "text/event-stream",
        "Mcp-Session-Id": session,
        "MCP-Protocol-Version": version,
        **extra,
    }


async def test_a_get_stream_resumed_on_another_replica_gets_the_missed_notification(
    tmp_path: Path,
) -> None:
    # The transparent profile announces tools changes (its tools/list shows the catalog).
    cluster = Cluster(tmp_path, profile="transparent").start(2)
    try:
        a, b = cluster.replicas
        router = Router(lambda request: None if request.method == "GET" else a.port)
        async with (
            handshake_client(a.url, router) as client,
            httpx2.AsyncClient(timeout=30) as http,
        ):
            names = [t.name for t in (await client.list_tools()).tools]
            [add] = [n for n in names if n.startswith("alpha-nadd_tool")]
            [session] = sessions(router)
            version = router.last_headers["mcp-protocol-version"]
            headers = stream_headers(session, version)
            # the standalone stream on A: the first change arrives live, with its event id
            async with http.stream("GET", f"{a.url}/mcp", headers=headers) as live:
                assert live.status_code == 200
                await client.call_tool("tool_execute", {"tool_id": add, "args": {"name": "t1"}})
                with anyio.fail_after(20):
                    async for event in sse_events(live):
                        if "tools/list_changed" in event.get("data", ""):
                            seen = event["id"]
                            break
            await anyio.sleep(0.5)  # A notices the stream closed
            # the second change happens while the client has no stream: A keeps the event
            await client.call_tool("tool_execute", {"tool_id": add, "args": {"name": "t2"}})
            await anyio.sleep(1)
            resumed = stream_headers(session, version, **{"Last-Event-ID": seen})
            async with http.stream("GET", f"{b.url}/mcp", headers=resumed) as replay:
                assert replay.status_code == 200
                with anyio.fail_after(20):
                    missed = await anext(sse_events(replay))
        assert json.loads(missed["data"]) == {
            "jsonrpc": "2.0",
            "method": "notifications/tools/list_changed",
        }
        assert missed["id"] != seen
    finally:
        cluster.stop()


def sse_client_factory(router: Router) -> Callable[..., httpx2.AsyncClient]:
    def factory(
        headers: dict[str, str] | None = None, timeout: Any = None, auth: Any = None
    ) -> httpx2.AsyncClient:
        return httpx2.AsyncClient(transport=router, headers=headers, timeout=timeout, auth=auth)

    return factory


async def test_a_legacy_sse_client_posting_to_the_other_replica_gets_answers_on_its_stream(
    cluster: Cluster,
) -> None:
    a, b = cluster.replicas
    router = Router(lambda request: a.port if request.method == "GET" else b.port)
    transport = sse_client(f"{a.url}/sse", httpx_client_factory=sse_client_factory(router))
    async with Client(transport, mode="legacy", cache=None) as client:
        listing = (await client.call_tool("tool_browse", {"path": "/alpha"})).structured_content
        ids = {card["name"]: card["id"] for card in listing["cards"]}
        result = await client.call_tool(
            "tool_execute", {"tool_id": ids["echo"], "args": {"text": "relayed"}}
        )
        assert result.structured_content["summary"] == "relayed"
    assert {(p, m) for p, m, _, _ in router.served} == {(a.port, "GET"), (b.port, "POST")}
    assert [c for c in cluster.calls() if c["name"] == "echo"] == [
        {"name": "echo", "args": {"text": "relayed"}}
    ]


def with_fixture(folder: Path) -> Cluster:
    """Two replicas whose upstreams include the conformance fixture in rich mode (its tools
    ask the client for sampling or elicitation; `slow` logs its cancellation)."""
    argv = fixture_argv(folder / "fixture-calls.jsonl", rich=True)
    fixture = {"command": argv[0], "args": argv[1:]}
    return Cluster(folder, servers={"fixture": fixture}).start(2)


def fixture_calls(cluster: Cluster) -> list[dict[str, Any]]:
    log = cluster.folder / "fixture-calls.jsonl"
    text = log.read_text() if log.exists() else ""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


FIXTURE_QUERIES = {
    "sample": "ask the client to sample a reply",
    "elicit": "ask the client's user for a name",
    "slow": "sleep and log a cancellation",
}


async def fixture_tool(client: Client, name: str) -> str:
    """The fixture tool `name`'s id, found by tool_browse."""
    found = await client.call_tool("tool_browse", {"query": FIXTURE_QUERIES[name]})
    ids = [card["id"] for card in found.structured_content["cards"]]
    return next(i for i in ids if i.startswith(f"fixture:{name}#"))


async def sampled(ctx: Any, params: types.CreateMessageRequestParams) -> Any:
    text = types.TextContent(type="text", text="forty-two")
    return types.CreateMessageResult(role="assistant", content=text, model="test-model")


async def elicited(ctx: Any, params: Any) -> Any:
    return types.ElicitResult(action="accept", content={"name": "Ada"})


@pytest.mark.parametrize(
    ("tool", "answer"),
    [
        ("sample", f"{SAMPLE_REPLY_PREFIX}forty-two"),
        ("elicit", "the client answered accept: {'name': 'Ada'}"),
    ],
)
async def test_a_client_answer_posted_to_the_other_replica_reaches_the_waiting_call(
    tmp_path: Path, tool: str, answer: str
) -> None:
    cluster = with_fixture(tmp_path)
    try:
        a, b = cluster.replicas
        # every POST to A, except the client's answers (a JSON-RPC response: no method) to B
        router = Router(
            lambda r: None if r.method == "GET" else (b.port if r.method == "POST" and
                                                       not rpc_method(r) else a.port)
        )  # fmt: skip
        callbacks = {"sampling_callback": sampled, "elicitation_callback": elicited}
        async with handshake_client(a.url, router, **callbacks) as client:
            tool_id = await fixture_tool(client, tool)
            with anyio.fail_after(30):
                result = await client.call_tool("tool_execute", {"tool_id": tool_id, "args": {}})
        envelope = result.structured_content
        assert envelope is not None and envelope["status"] == "ok", result
        assert envelope["summary"] == answer
        answers = [p for p, h, m, _ in router.served if h == "POST" and not m]
        calls = [p for p, _, m, _ in router.served if m == "tools/call"]
        assert answers == [b.port] and set(calls) == {a.port}
    finally:
        cluster.stop()


async def test_a_cancellation_posted_to_the_other_replica_cancels_the_call(
    tmp_path: Path,
) -> None:
    cluster = with_fixture(tmp_path)
    try:
        a, b = cluster.replicas
        cancel = "notifications/cancelled"
        router = Router(
            lambda r: None if r.method == "GET" else (b.port if rpc_method(r) == cancel
                                                       else a.port)
        )  # fmt: skip
        async with handshake_client(a.url, router) as client:
            slow = await fixture_tool(client, "slow")
            with anyio.move_on_after(3):
                await client.call_tool("tool_execute", {"tool_id": slow, "args": {"seconds": 60}})
            # the upstream sees the cancellation of the call running on A
            with anyio.fail_after(15):
                while not any(
                    (c.get("name"), c.get("arguments")) == ("slow", {"cancelled": True})
                    for c in fixture_calls(cluster)
                ):
                    await anyio.sleep(0.1)
        assert [p for p, _, m, _ in router.served if m == cancel] == [b.port]
        assert {p for p, _, m, _ in router.served if m == "tools/call"} == {a.port}
    finally:
        cluster.stop()


def bearer(name: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[name]}"}


async def test_a_second_identity_cannot_use_the_first_ones_session(tmp_path: Path) -> None:
    cluster = Cluster(tmp_path, access=ACCESS).start(2)
    try:
        a, b = cluster.replicas
        router = Router(lambda request: None if request.method == "GET" else a.port)
        listing = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}
        accept = {"Accept": "application/json, text/event-stream"}
        async with handshake_client(a.url, router, bearer("alice")) as alice:
            await alice.list_tools()
            [session] = sessions(router)
            version = router.last_headers["mcp-protocol-version"]
            own = {**accept, "Mcp-Session-Id": session, "MCP-Protocol-Version": version}
            # bob, on the replica that holds it and on the other: as if there were no session
            for replica in (b, a):
                stolen = httpx2.post(
                    f"{replica.url}/mcp", json=listing, headers={**own, **bearer("bob")}
                )
                assert stolen.status_code == 404
            # alice, on the other replica: served
            mine = httpx2.post(f"{b.url}/mcp", json=listing, headers={**own, **bearer("alice")})
            assert mine.status_code == 200 and "tools" in mine.json()["result"]

        # legacy SSE: alice's stream on A, POSTs on B
        async with (
            httpx2.AsyncClient(timeout=30) as http,
            http.stream("GET", f"{a.url}/sse", headers=bearer("alice")) as stream,
        ):
            events = sse_events(stream)
            endpoint = (await anext(events))["data"]
            initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2024-11-05", "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}}}  # fmt: skip
            stolen = await http.post(f"{b.url}{endpoint}", json=initialize, headers=bearer("bob"))
            assert (stolen.status_code, stolen.text) == (404, "Could not find session")
            posted = await http.post(f"{b.url}{endpoint}", json=initialize, headers=bearer("alice"))
            assert posted.status_code == 202
            with anyio.fail_after(20):
                answer = await anext(events)
            assert json.loads(answer["data"])["id"] == 1
            assert "serverInfo" in json.loads(answer["data"])["result"]
        # a session nobody holds any more: the SDK's 404
        with anyio.fail_after(10):
            while (gone := await http_post(f"{b.url}{endpoint}", initialize, bearer("alice")))[
                0
            ] != 404:
                await anyio.sleep(0.2)
        assert gone == (404, "Could not find session")
    finally:
        cluster.stop()


async def http_post(url: str, body: Any, headers: dict[str, str]) -> tuple[int, str]:
    async with httpx2.AsyncClient(timeout=30) as http:
        response = await http.post(url, json=body, headers=headers)
    return response.status_code, response.text


async def test_ready_once_every_upstream_settled_not_when_serving_starts(tmp_path: Path) -> None:
    late = f"sleep 6; exec {sys.executable} {UPSTREAM}"
    servers = {
        "late": {"command": "sh", "args": ["-c", late]},
        "dead": {"command": sys.executable, "args": ["-c", "raise SystemExit(3)"]},
    }
    cluster = Cluster(tmp_path, servers=servers).start(1, wait=False)
    try:
        [replica] = cluster.replicas
        probes: list[tuple[int, dict[str, Any]]] = []
        with anyio.fail_after(60):
            while not probes or probes[-1][0] != 200:
                try:
                    if httpx2.get(f"{replica.url}/healthz", timeout=1).status_code == 200:
                        ready = httpx2.get(f"{replica.url}/readyz", timeout=1)
                        probes.append((ready.status_code, ready.json()))
                except httpx2.TransportError:
                    pass  # not serving yet
                await anyio.sleep(0.2)
        waiting = [body for status, body in probes if status == 503]
        # serving (alpha and beta ready, AM-SERVE-FIRST-READY) but not ready: late connects
        assert waiting and waiting[0]["upstreams"]["pending"] >= 1
        assert waiting[-1]["reasons"] == ["upstreams not listed yet: 1 of 4 still connecting"]
        # one dead upstream does not keep the replica out
        assert probes[-1][1]["upstreams"] == {
            "connected": 3, "failed": 1, "reconnecting": 0, "pending": 0
        }  # fmt: skip
    finally:
        cluster.stop()
