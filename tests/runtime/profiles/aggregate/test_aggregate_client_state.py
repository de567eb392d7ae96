"""Client-scoped state stays with its client in the aggregate profile over HTTP (issue 22
item 8): `gatespec serve --profile aggregate --transport http` in front of a real upstream that
keeps its client's roots and logging level (tests/fixtures/client_state_server.py), two real
MCP SDK clients over Streamable HTTP and over legacy SSE. Client A declares roots and sets a
level; client B declares nothing and sets nothing: B never sees A's roots or A's level, and A
keeps its own whatever B does.
"""

from __future__ import annotations

import json
import os
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
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

FIXTURE = Path(__file__).resolve().parents[3] / "fixtures" / "client_state_server.py"
ALICE = "file:///home/alice/project"


@pytest.fixture(scope="module")
def gateway(
    module_servers: Any, tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> str:
    """The gateway's base URL (the upstream's extra arguments: the indirect parameter), one per
    module and set of arguments: what each test checks is the state of the clients it opens
    itself, and every client's state ends with its session (as the tests below check)."""
    extra = list(getattr(request, "param", []))
    tmp_path = tmp_path_factory.mktemp("client-state")
    config = {
        "mcpServers": {"state": {"command": sys.executable, "args": [str(FIXTURE), *extra]}},
        "gateway": {"profile": "aggregate", "call_timeout": 20, "watch": False},
    }
    path = tmp_path / "gatespec.json"
    path.write_text(json.dumps(config))
    port = module_servers.free_port()
    argv = [sys.executable, "-m", "gatespec.cli", "serve", "--config", str(path)]
    module_servers.spawn([*argv, "--transport", "http", "--port", str(port)], port)
    return f"http://127.0.0.1:{port}"


async def alice_roots(ctx: Any) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri=ALICE, name="alice")])


@asynccontextmanager
async def connect(base: str, transport: str, **callbacks: Any) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(timeout=30) as http:
        if transport == "sse":
            stream: Any = sse_client(f"{base}/sse")
        else:
            stream = streamable_http_client(f"{base}/mcp", http_client=http)
        async with Client(stream, mode="legacy", cache=None, **callbacks) as client:
            yield client


async def said(client: Client, tool: str) -> str:
    result = await client.call_tool(f"state__{tool}", {})
    block = result.content[0]
    assert isinstance(block, types.TextContent), result
    return block.text


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_roots_and_log_level_stay_with_their_client(gateway: str, transport: str) -> None:
    async with (
        connect(gateway, transport, list_roots_callback=alice_roots) as alice,
        connect(gateway, transport) as bob,
    ):
        await alice.set_logging_level("error")
        assert await said(alice, "roots") == f"roots: {ALICE}"
        assert await said(alice, "level") == "level: error"

        bob_roots = await said(bob, "roots")
        assert ALICE not in bob_roots
        assert bob_roots.startswith("roots: refused:"), bob_roots  # B declared no roots
        assert await said(bob, "level") == "level: unset"

        await bob.set_logging_level("debug")
        assert await said(bob, "level") == "level: debug"
        assert await said(alice, "level") == "level: error"  # B's level is not A's
        assert await said(alice, "roots") == f"roots: {ALICE}"


async def test_one_client_per_transport_too(gateway: str) -> None:
    async with (
        connect(gateway, "http", list_roots_callback=alice_roots) as alice,
        connect(gateway, "sse") as bob,
    ):
        await alice.set_logging_level("critical")
        assert await said(alice, "roots") == f"roots: {ALICE}"
        assert ALICE not in await said(bob, "roots")
        assert await said(bob, "level") == "level: unset"


# Issue 22 item 17: a handshake-era session's resource subscriptions end with it.

RESOURCE = "state+state://r"


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_a_sessions_subscriptions_end_with_it(gateway: str, transport: str) -> None:
    async with connect(gateway, "http") as observer:
        async with connect(gateway, transport) as alice:
            await alice.subscribe_resource(RESOURCE)
            assert await said(observer, "subscribed") == "subscribed: state://r"
        for _ in range(50):  # the session's end reaches the gateway a moment later
            if await said(observer, "subscribed") == "subscribed: ":
                break
            await anyio.sleep(0.1)
        assert await said(observer, "subscribed") == "subscribed: "


async def test_a_stdio_sessions_subscriptions_end_with_it(tmp_path: Path) -> None:
    log = tmp_path / "subscriptions.jsonl"
    server = {"command": sys.executable, "args": [str(FIXTURE), "--log", str(log)]}
    config = {"mcpServers": {"state": server}, "gateway": {"profile": "aggregate", "watch": False}}
    path = tmp_path / "gatespec.json"
    path.write_text(json.dumps(config))
    argv = ["-m", "gatespec.cli", "serve", "--config", str(path)]
    params = StdioServerParameters(command=sys.executable, args=argv, env=dict(os.environ))
    async with Client(params, mode="legacy", cache=None) as client:
        await client.subscribe_resource(RESOURCE)
    for _ in range(50):
        if "resources/unsubscribe" in (log.read_text() if log.exists() else ""):
            break
        await anyio.sleep(0.1)
    methods = [json.loads(line)["method"] for line in log.read_text().splitlines()]
    assert methods == ["resources/subscribe", "resources/unsubscribe"]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_a_clients_own_upstream_fails_and_ends_alone(gateway: str) -> None:
    """A client with client-scoped state has an upstream process of its own: when it crashes,
    that client's call fails and the next one gets a fresh process; the others never notice;
    the process ends with the client's session."""
    async with connect(gateway, "http") as bob:
        async with connect(gateway, "http", list_roots_callback=alice_roots) as alice:
            alice_pid = int((await said(alice, "pid")).split()[1])
            bob_pid = int((await said(bob, "pid")).split()[1])
            assert alice_pid != bob_pid

            crashed = await alice.call_tool("state__crash", {})
            assert crashed.is_error
            assert await said(bob, "pid") == f"pid: {bob_pid}"  # the shared one is untouched
            again = int((await said(alice, "pid")).split()[1])
            assert again not in (alice_pid, bob_pid)
            assert await said(alice, "roots") == f"roots: {ALICE}"
        for _ in range(50):
            if not alive(again):
                break
            await anyio.sleep(0.1)
        assert not alive(again)  # closed with alice's session
        assert await said(bob, "pid") == f"pid: {bob_pid}"


@pytest.mark.parametrize("gateway", [["--roots-at-init"]], indirect=True)
@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_an_upstream_that_asks_at_initialization_gets_its_own_clients_roots(
    gateway: str, transport: str
) -> None:
    """Servers like server-filesystem ask for roots once, when initialized: a client's own
    upstream session is opened during that client's request, and is asked as that client."""
    async with connect(gateway, transport) as bob:
        async with connect(gateway, transport, list_roots_callback=alice_roots) as alice:
            assert await said(alice, "roots") == f"roots: {ALICE}"
            assert ALICE not in await said(bob, "roots")
