"""Stdio upstreams started before the SDK is imported (gatespec.spawn) and adopted by the
pool's first connection: same process, same environment as the SDK would give it, crash
detection and stderr reports as for any connection, nothing left running."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Any

import anyio
import pytest
from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS, get_default_environment

from gatespec import spawn
from gatespec.upstream import UpstreamError, UpstreamPool

pytestmark = [pytest.mark.timeout(40)]


@pytest.fixture(autouse=True)
def no_leftovers() -> Any:
    yield
    spawn.discard_early()


def test_environment_is_the_one_the_sdk_gives(servers: Any) -> None:
    assert spawn.INHERITED_ENV == tuple(DEFAULT_INHERITED_ENV_VARS)
    config = servers.config("e", {"command": "x", "env": {"EXTRA": "1", "PATH": "/p"}})
    assert spawn.spawn_environment(config) == get_default_environment() | {
        "EXTRA": "1",
        "PATH": "/p",
    }


def test_only_stdio_upstreams_up_to_the_limit_and_failed_spawns_are_skipped(
    servers: Any,
) -> None:
    configs = [
        servers.config("web", {"type": "http", "url": "http://127.0.0.1:9/mcp"}),
        servers.config("ghost", {"command": "gatespec-no-such-command"}),
        servers.raw("one"),
        servers.raw("two"),
    ]
    started = spawn.spawn_early(configs, limit=2)
    # web is not stdio; ghost (no such command) takes a place, as in the pool; two: past it
    assert sorted(started) == ["one"]
    process = started["one"].process
    spawn.discard_early()
    assert process.poll() is not None and spawn.take(configs[2]) is None


def test_a_changed_config_does_not_adopt(servers: Any) -> None:
    spawn.spawn_early([servers.raw("r")], limit=8)
    assert spawn.take(servers.raw("r", "--page-size", "1")) is None
    assert spawn.take(servers.raw("r")) is not None


@pytest.mark.anyio
async def test_first_connection_adopts_then_a_reconnect_spawns_anew(servers: Any) -> None:
    configs = [servers.raw("adopted"), servers.raw("plain")]
    early = spawn.spawn_early(configs[:1], limit=8)["adopted"].process
    async with UpstreamPool(configs, call_timeout=5) as pool:
        assert [s.state for s in await pool.start()] == ["connected", "connected"]
        whoami = await pool.call("adopted", "whoami", {})
        assert whoami["structuredContent"]["pid"] == early.pid
        echoed = await pool.call("adopted", "echo", {"text": "through adopted pipes"})
        assert echoed["structuredContent"] == {"text": "through adopted pipes"}

        os.kill(early.pid, signal.SIGKILL)  # a crash is seen as for any connection
        with anyio.fail_after(5):
            while pool.status("adopted").state != "failed":
                await anyio.sleep(0.05)
        assert "process exited" in (pool.status("adopted").reason or "")
        with pytest.raises(UpstreamError):
            await pool.call("adopted", "echo", {"text": "x"})

        await pool.refresh()
        again = await pool.call("adopted", "whoami", {})
        assert again["structuredContent"]["pid"] != early.pid
    assert early.poll() is not None


@pytest.mark.anyio
async def test_closing_stops_the_adopted_process(servers: Any) -> None:
    config = servers.raw("adopted")
    early = spawn.spawn_early([config], limit=8)["adopted"].process
    async with UpstreamPool([config]) as pool:
        await pool.start()
        assert early.poll() is None
    assert early.poll() is not None


@pytest.mark.anyio
async def test_a_start_failure_of_an_early_process_is_reported_with_its_stderr(
    servers: Any,
) -> None:
    config = servers.raw("quitter", "--exit-now", "2")
    spawn.spawn_early([config], limit=8)
    async with UpstreamPool([config], connect_timeout=5) as pool:
        (status,) = await pool.start()
    assert status.state == "failed" and "refusing to start" in (status.reason or "")


def test_the_cli_starts_upstreams_before_importing_the_sdk() -> None:
    code = "import sys, gatespec.cli; print(sorted(m for m in ('mcp', 'gatespec.upstream') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
