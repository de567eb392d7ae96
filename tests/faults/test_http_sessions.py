"""Issue 12 #9 (AM-HTTP-SESSION-BOUNDS): a flood of handshake-era initialize requests cannot
exhaust the Streamable HTTP session table. Each client (here: each loopback source address)
holds at most max_sessions_per_client sessions and the table at most max_sessions; the least
used idle session makes room, so the flood displaces itself, never gets 503, and a session in
real use keeps working throughout."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.server.sse import SseServerTransport
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from gatespec.server import _sdk
from tests.faults.support import GATESPEC, upstream

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(120)]

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "flood", "version": "1"},
    },
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture
def gateway(tmp_path: Path) -> Iterator[str]:
    path, port = tmp_path / "gateway.json", free_port()
    options = {"max_sessions": 6, "max_sessions_per_client": 3, "refresh_interval": 0}
    path.write_text(json.dumps({"mcpServers": {"up": upstream()}, "gateway": options}))
    argv = [GATESPEC, "serve", "--config", str(path), "--transport", "http", "--port", str(port)]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None and time.monotonic() < deadline, "gateway did not listen"
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(15)


async def flood(url: str, source: str, count: int) -> tuple[Counter[int], list[str]]:
    """`count` bare initialize requests from `source`: (HTTP statuses, session ids given)."""
    statuses: Counter[int] = Counter()
    sessions: list[str] = []
    transport = httpx2.AsyncHTTPTransport(local_address=source)
    async with httpx2.AsyncClient(transport=transport, timeout=30) as http:
        for _ in range(count):
            answer = await http.post(url, json=INITIALIZE, headers=HEADERS)
            statuses[answer.status_code] += 1
            if "mcp-session-id" in answer.headers:
                sessions.append(answer.headers["mcp-session-id"])
    return statuses, sessions


async def answers(url: str, session: str) -> int:
    """The status a request in `session` gets (404: the session is gone)."""
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    headers = {**HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    async with httpx2.AsyncClient(timeout=30) as http:
        return (await http.post(url, json=ping, headers=headers)).status_code


async def test_a_flood_displaces_itself_and_a_session_in_use_survives(gateway: str) -> None:
    async with Client(gateway, mode="legacy", cache=None) as client:
        for _ in range(3):  # a session in real use
            assert not (await client.call_tool("tool_browse", {"query": "echo"})).is_error
        # one client (the same loopback address) opens 40 sessions: never refused...
        statuses, sessions = await flood(gateway, "127.0.0.1", 40)
        assert statuses == Counter({200: 40})
        # ...but holds at most 3 (its busiest, the one in use, among them)
        alive = [s for s in sessions if await answers(gateway, s) == 200]
        assert len(alive) <= 2 and sessions[-1] in alive
        # many clients together fill the table: the least used sessions make room
        for source in ("127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"):
            statuses, _ = await flood(gateway, source, 5)
            assert statuses == Counter({200: 5})
        assert not (await client.call_tool("tool_browse", {"query": "echo"})).is_error


def test_the_sdk_private_names_the_server_seam_uses_are_there() -> None:
    """server._sdk reads the SDK's private session state: fail loudly if it moves."""
    manager = StreamableHTTPSessionManager(app=None)  # type: ignore[arg-type]
    assert _sdk.open_sessions(manager) == {}
    assert manager._session_owners == {}
    assert manager._task_group is None and manager._lifespan_state is None
    assert callable(manager._discard_session) and callable(manager._admit_session)
    transport = StreamableHTTPServerTransport(mcp_session_id="x")
    assert transport._event_store is None
    assert transport._request_streams == {}
    assert callable(StreamableHTTPServerTransport._handle_post_request)
    assert not _sdk.in_flight(manager, "x", 1)
    assert _sdk.sse_streams(SseServerTransport("/messages")) == 0
