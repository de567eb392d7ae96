"""Nagle must stay off on the gateway's HTTP connections.

With Nagle on, the second small write of a response waits for the client's delayed ACK: every
Streamable HTTP request then costs ~40 ms. asyncio turns TCP_NODELAY on for an accepted
connection only when the listening socket was made as IPPROTO_TCP, so the check is on the
server's end of a real connection, accepted by the real serve_http, after a real MCP request.
No timing is asserted: the socket option is the cause, and it is checked directly.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from gatespec.server import build_server
from gatespec.server.transports import bind_http, serve_http

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.timeout(30),
    pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc (Linux)"),
]


def accepted_nodelay(port: int) -> list[int]:
    """TCP_NODELAY of every connected socket in this process whose local port is `port`:
    the server's ends of the connections accepted on it (client ends have other ports)."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        try:
            if not os.readlink(f"/proc/self/fd/{name}").startswith("socket:"):
                continue
            sock = socket.socket(fileno=os.dup(int(name)))
        except OSError:
            continue  # closed meanwhile, or not a socket Python can wrap
        with sock:
            if sock.family not in (socket.AF_INET, socket.AF_INET6):
                continue
            try:
                sock.getpeername()  # the listening socket has no peer
            except OSError:
                continue
            if sock.getsockname()[1] == port:
                found.append(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
    return found


@pytest.mark.parametrize("client_mode", ["2026-07-28", "legacy"])
async def test_accepted_http_connections_have_nagle_off(
    client_mode: str, fake_gateway: Any
) -> None:
    server = build_server(fake_gateway.FakeRuntime("gateway", fake_gateway.sample_tools()))
    sock = bind_http("127.0.0.1", 0)
    port = sock.getsockname()[1]
    ready = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(
            lambda: serve_http(
                server, "127.0.0.1", port, sock=sock, on_ready=lambda _url: ready.set()
            )
        )
        await ready.wait()
        async with Client(f"http://127.0.0.1:{port}/mcp", mode=client_mode, cache=None) as client:
            listed = await client.list_tools()
            assert [t.name for t in listed.tools] == ["tool_browse", "tool_execute", "tool_view"]
            flags = accepted_nodelay(port)
        tg.cancel_scope.cancel()
    assert flags, "no accepted connection found on the gateway's port"
    assert all(flags), f"TCP_NODELAY off on an accepted connection: {flags}"
