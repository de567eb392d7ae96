"""Many concurrent client sessions over HTTP against a real `gatespec serve`, with an upstream
that logs every echo call it executes (tests/fixtures/raw_mcp_server.py --log), so that a load test
can tell an error, a wrong answer, a lost call (answered but never executed upstream) and a
duplicated one (executed twice) apart. Used by the aggregate load and the reload-under-load
tests."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

UPSTREAM = Path(__file__).resolve().parents[1] / "fixtures" / "raw_mcp_server.py"


def echo_server(log: Path) -> dict[str, Any]:
    return {"command": sys.executable, "args": [str(UPSTREAM), "--log", str(log)]}


def serve_http(servers: Any, config: Path) -> tuple[Any, str]:
    """`gatespec serve --config CONFIG --transport http` through the `servers` fixture: its
    process and its /mcp URL."""
    port = servers.free_port()
    argv = [sys.executable, "-m", "gatespec.cli", "serve", "--config", str(config)]
    process = servers.spawn([*argv, "--transport", "http", "--port", str(port)], port)
    return process, f"http://127.0.0.1:{port}/mcp"


def write_config(path: Path, servers: dict[str, Any], **gateway: Any) -> None:
    # every session comes from 127.0.0.1: the per-client session bound must admit them all
    options = {"watch": False, "call_timeout": 60, "max_sessions_per_client": 1000, **gateway}
    path.write_text(json.dumps({"mcpServers": servers, "gateway": options}))


@dataclass
class Outcome:
    calls: int = 0
    errors: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)

    def upstream_counts(self, log: Path) -> Counter[str]:
        return Counter(log.read_text(encoding="utf-8").splitlines())


async def echo_via(client: Client, profile: str, tool: str, text: str) -> types.CallToolResult:
    """One echo call the way `profile` invokes upstream tools (`tool`: its name or id)."""
    if profile == "aggregate":
        return await client.call_tool(tool, {"text": text})
    return await client.call_tool("tool_execute", {"tool_id": tool, "args": {"text": text}})


def answer_text(result: types.CallToolResult, profile: str) -> str | None:
    if result.is_error:
        return None
    if profile == "aggregate":
        block = result.content[0]
        return block.text if isinstance(block, types.TextContent) else None
    return str((result.structured_content or {}).get("summary"))


async def echo_tool(url: str, profile: str, server: str) -> str:
    """The name (aggregate) or id (gateway) of `server`'s echo tool."""
    async with Client(url, mode="legacy", cache=None) as client:
        if profile == "aggregate":
            return f"{server}__echo"
        browse = await client.call_tool("tool_browse", {"query": "echo the text back"})
        cards = (browse.structured_content or {})["cards"]
        return next(c["id"] for c in cards if c["id"].startswith(f"{server}:echo"))


async def run_load(
    url: str,
    profile: str,
    tool: str,
    sessions: int,
    calls: int,
    roots_every: int = 0,
    meanwhile: Callable[[], Awaitable[None]] | None = None,
) -> Outcome:
    """`sessions` concurrent handshake-era sessions, `calls` echo calls each with a text of its
    own; every `roots_every`-th session declares roots (client-scoped state: in the aggregate
    profile it gets upstream connections of its own). `meanwhile` runs alongside."""
    outcome = Outcome()

    async def roots(ctx: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri="file:///load")])

    async def session(n: int) -> None:
        options: dict[str, Any] = {}
        if roots_every and n % roots_every == 0:
            options["list_roots_callback"] = roots
        async with httpx2.AsyncClient(timeout=120) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport, mode="legacy", cache=None, **options) as client:
                for i in range(calls):
                    text = f"s{n}-c{i}"
                    started = anyio.current_time()
                    try:
                        result = await echo_via(client, profile, tool, text)
                    except Exception as exc:  # a transport failure counts as an error
                        outcome.errors.append(f"{text}: {type(exc).__name__}: {exc}")
                        continue
                    outcome.latencies.append(anyio.current_time() - started)
                    outcome.calls += 1
                    got = answer_text(result, profile)
                    if result.is_error:
                        outcome.errors.append(f"{text}: {result.content}")
                    elif got != text:
                        outcome.wrong.append(f"{text}: {got!r}")

    async with anyio.create_task_group() as tg:
        if meanwhile is not None:
            tg.start_soon(meanwhile)
        async with anyio.create_task_group() as clients:
            for n in range(sessions):
                clients.start_soon(session, n)
        tg.cancel_scope.cancel()
    return outcome


def expected_texts(sessions: int, calls: int) -> Counter[str]:
    return Counter(f"s{n}-c{i}" for n in range(sessions) for i in range(calls))
