"""Issue 22, never tested before: the config reloaded under load (AM-REGISTRY-RELOAD). A real
`gatespec serve --transport http` in front of a stdio upstream that logs every call it
executes; 40 concurrent sessions call it while the config file is rewritten and SIGHUP makes
the gateway reload it, again and again: another upstream added and removed, gateway options
changed, and the called upstream's own entry changed (so it is replaced: a new process made
while the old one serves, the old one's calls in flight finished there). Expected: no error,
every answer the caller's own, every call executed upstream exactly once (none lost, none
duplicated), and the reloads applied."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from tests.runtime.load_support import (
    echo_server,
    echo_tool,
    expected_texts,
    run_load,
    serve_http,
    write_config,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow, pytest.mark.timeout(600)]

SESSIONS, CALLS, RELOADS = 40, 10, 8


@pytest.mark.parametrize("profile", ["gateway", "aggregate"])
async def test_reloads_under_load_lose_and_duplicate_nothing(
    servers: Any, tmp_path: Path, profile: str
) -> None:
    log = tmp_path / "calls.log"
    config = tmp_path / "gatespec.json"
    up = {"up": echo_server(log)}
    extra = {"extra": echo_server(tmp_path / "extra.log")}
    write_config(config, up, profile=profile)
    gateway, url = serve_http(servers, config)
    tool = await echo_tool(url, profile, "up")
    seen_extra: list[bool] = []

    async def reload_again_and_again() -> None:
        for n in range(RELOADS):
            with_extra = n % 2 == 0
            servers_now = {**up, **extra} if with_extra else up
            write_config(config, servers_now, profile=profile, call_timeout=60 + n)
            gateway.proc.send_signal(signal.SIGHUP)
            await anyio.sleep(0.5)
            if with_extra:
                seen_extra.append(await lists_extra(url, profile))

    outcome = await run_load(url, profile, tool, SESSIONS, CALLS, meanwhile=reload_again_and_again)
    assert_nothing_lost(outcome, log)
    assert any(seen_extra), "no reload was applied while the load ran"


@pytest.mark.parametrize("profile", ["gateway", "aggregate"])
async def test_replacing_the_called_upstream_under_load_loses_nothing(
    servers: Any, tmp_path: Path, profile: str
) -> None:
    log = tmp_path / "calls.log"
    config = tmp_path / "gatespec.json"
    write_config(config, {"up": echo_server(log)}, profile=profile)
    gateway, url = serve_http(servers, config)
    tool = await echo_tool(url, profile, "up")
    generations: list[str] = []

    async def replace_again_and_again() -> None:
        for n in range(RELOADS):
            entry = {**echo_server(log), "env": {"GENERATION": str(n)}}  # a changed entry
            write_config(config, {"up": entry}, profile=profile)
            gateway.proc.send_signal(signal.SIGHUP)
            await anyio.sleep(0.5)
            generations.append(str(n))

    outcome = await run_load(url, profile, tool, SESSIONS, CALLS, meanwhile=replace_again_and_again)
    assert_nothing_lost(outcome, log)
    assert generations, "no replacement happened while the load ran"


def assert_nothing_lost(outcome: Any, log: Path) -> None:
    assert outcome.errors == []
    assert outcome.wrong == []
    assert outcome.calls == SESSIONS * CALLS
    assert outcome.upstream_counts(log) == expected_texts(SESSIONS, CALLS)


async def lists_extra(url: str, profile: str) -> bool:
    async with Client(url, mode="legacy", cache=None) as client:
        if profile == "aggregate":
            names = [tool.name for tool in (await client.list_tools()).tools]
            return any(name.startswith("extra__") for name in names)
        browse = await client.call_tool("tool_browse", {"path": "/"})
        return "extra" in str(browse.structured_content)
