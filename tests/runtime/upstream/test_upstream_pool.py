"""UpstreamPool: concurrent start with failure isolation, status, calls, refresh, list_changed."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import anyio
import pytest

from gatespec.upstream import UpstreamError, UpstreamPool, UpstreamStatus

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(40)]


def mixed_configs(servers: Any) -> list[Any]:
    return [
        servers.raw("good"),
        servers.config("ghost", {"command": "gatespec-no-such-command"}),
        servers.config(
            "sleeper", {"command": servers.python, "args": ["-c", "import time; time.sleep(999)"]}
        ),
        servers.raw("quitter", "--exit-now", "2"),
    ]


async def test_failures_are_isolated(servers: Any) -> None:
    progress: list[tuple[str, str, int, int]] = []
    start = anyio.current_time()
    async with UpstreamPool(mixed_configs(servers), connect_timeout=1.5, call_timeout=5) as pool:
        statuses = await pool.start(progress=lambda *args: progress.append(args))
        assert anyio.current_time() - start < 6  # the hang costs its timeout, not more
        by_key = {s.key: s for s in statuses}
        assert by_key["good"] == UpstreamStatus("good", "connected", None)
        assert [s.key for s in statuses] == ["good", "ghost", "sleeper", "quitter"]
        assert by_key["ghost"].state == "failed"
        assert by_key["ghost"].reason == "command not found: gatespec-no-such-command"
        assert by_key["sleeper"].state == "failed"
        assert "no MCP handshake within 1.5s" in (by_key["sleeper"].reason or "")
        assert by_key["quitter"].state == "failed"
        assert "refusing to start" in (by_key["quitter"].reason or "")
        error = pool.error("sleeper")
        assert error is not None and error.kind == "timeout"
        ghost_error = pool.error("ghost")
        assert ghost_error is not None and ghost_error.kind == "start_failed"
        # progress: one report per upstream, done counts up to total
        assert sorted(p[0] for p in progress) == ["ghost", "good", "quitter", "sleeper"]
        assert [p[2] for p in progress] == [1, 2, 3, 4] and {p[3] for p in progress} == {4}
        assert dict((p[0], p[1]) for p in progress)["good"] == "connected"

        tools = pool.tools()
        assert list(tools) == ["good"]
        assert "echo" in [t["name"] for t in tools["good"]]
        result = await pool.call("good", "echo", {"text": "isolated"})
        assert result["structuredContent"] == {"text": "isolated"}
        with pytest.raises(UpstreamError) as info:
            await pool.call("ghost", "anything", {})
        assert info.value.kind == "unavailable"
        assert "command not found" in info.value.reason


async def test_unknown_key_and_timeouts(servers: Any) -> None:
    async with UpstreamPool([servers.raw("a")], call_timeout=0.4) as pool:
        await pool.start()
        with pytest.raises(UpstreamError) as info:
            await pool.call("zzz", "echo", {})
        # seed 004: "Unknown server: {server_name}"
        assert (info.value.kind, info.value.key) == ("unknown_server", "zzz")
        assert info.value.reason == "Unknown server: zzz"
        with anyio.fail_after(5):
            with pytest.raises(UpstreamError) as slow:
                await pool.call("a", "sleep", {"seconds": 60})
        assert slow.value.kind == "timeout"
        with pytest.raises(UpstreamError, match="0.1s"):
            await pool.call("a", "sleep", {"seconds": 60}, timeout=0.1)
        assert pool.statuses() == [UpstreamStatus("a", "connected", None)]


async def test_kill_mid_call_then_refresh_reconnects(servers: Any) -> None:
    async with UpstreamPool([servers.raw("victim"), servers.raw("bystander")]) as pool:
        await pool.start()
        pid = (await pool.call("victim", "whoami", {}))["structuredContent"]["pid"]

        async def kill_soon() -> None:
            await anyio.sleep(0.3)
            os.kill(pid, signal.SIGKILL)

        async with anyio.create_task_group() as tg:
            tg.start_soon(kill_soon)
            with anyio.fail_after(5):
                with pytest.raises(UpstreamError) as info:
                    await pool.call("victim", "sleep", {"seconds": 60})
        assert info.value.kind == "unavailable"
        assert "process exited" in info.value.reason
        victim = pool.status("victim")
        assert victim.state == "failed" and "process exited" in (victim.reason or "")
        # its tools stay, answered "unavailable" (AM-UNAVAILABLE-NOT-MISSING)
        assert list(pool.tools()) == ["victim", "bystander"]
        with pytest.raises(UpstreamError) as down:
            await pool.call("victim", "echo", {"text": "x"})
        assert down.value.kind == "unavailable"
        assert (await pool.call("bystander", "echo", {"text": "fine"}))["isError"] is False

        statuses = await pool.refresh()
        assert [s.state for s in statuses] == ["connected", "connected"]
        new_pid = (await pool.call("victim", "whoami", {}))["structuredContent"]["pid"]
        assert new_pid != pid
        assert list(pool.tools()) == ["victim", "bystander"]


async def test_refresh_reconnects_a_restarted_http_server(servers: Any) -> None:
    port = servers.free_port()
    argv = [servers.python, str(servers.fixtures / "sdk_mcp_server.py"), "--http", str(port)]
    config = servers.config("web", {"type": "http", "url": f"http://127.0.0.1:{port}/mcp"})
    async with UpstreamPool([config], connect_timeout=5) as pool:
        # Down at start: recorded, not fatal.
        [status] = await pool.start()
        assert status.state == "failed" and "cannot connect" in (status.reason or "")
        proc = servers.spawn(argv, port)
        assert (await pool.refresh())[0].state == "connected"
        proc.stop()
        with pytest.raises(UpstreamError) as info:
            await pool.call("web", "echo", {"text": "x"})
        assert info.value.kind == "unavailable"
        assert pool.status("web").state == "failed"
        servers.spawn(argv, port)
        assert (await pool.refresh())[0].state == "connected"
        result = await pool.call("web", "echo", {"text": "restarted"})
        assert result["structuredContent"] == {"text": "restarted"}


async def test_list_changed_relists_and_notifies(servers: Any) -> None:
    seen: list[tuple[str, list[str]]] = []
    pool: UpstreamPool

    def on_change(key: str) -> None:
        seen.append((key, [t["name"] for t in pool.tools()[key]]))

    pool = UpstreamPool([servers.raw("raw")], on_tools_changed=on_change)
    await pool.start()
    try:
        added = (await pool.call("raw", "add_tool", {}))["content"][0]["text"]
        with anyio.fail_after(5):
            while not seen:
                await anyio.sleep(0.02)
        key, names = seen[0]
        assert key == "raw" and added in names  # the pool re-listed before notifying
        assert added in [t["name"] for t in pool.tools()["raw"]]
    finally:
        await pool.aclose()
    assert pool.tools() == {}


async def test_refresh_relists_connected_upstreams(servers: Any, tmp_path: Path) -> None:
    catalog = tmp_path / "catalog.json"
    catalog.write_text(json.dumps([{"name": "one", "inputSchema": {"type": "object"}}]))
    stub = servers.config("stub", {"type": "stub", "catalog": str(catalog)})
    async with UpstreamPool([stub, servers.raw("raw")]) as pool:
        await pool.start()
        assert [t["name"] for t in pool.tools()["stub"]] == ["one"]
        await pool.call("raw", "add_tool", {})
        await pool.refresh()
        assert len(pool.tools()["raw"]) == 11


async def test_start_under_a_timeout_then_close_elsewhere(servers: Any) -> None:
    # The pool's task group lives in its own task, so scopes around start() are harmless.
    pool = UpstreamPool([servers.raw("raw")])
    with anyio.fail_after(10):
        await pool.start()
    assert pool.statuses()[0].state == "connected"
    await pool.aclose()
    assert pool.statuses()[0].state == "pending"


async def test_statuses_before_start_and_duplicate_keys(servers: Any) -> None:
    pool = UpstreamPool([servers.raw("a"), servers.raw("b")])
    assert pool.statuses() == [
        UpstreamStatus("a", "pending", None),
        UpstreamStatus("b", "pending", None),
    ]
    await pool.aclose()
    with pytest.raises(ValueError, match="duplicate"):
        UpstreamPool([servers.raw("a"), servers.raw("a")])


async def test_many_upstreams_bounded_concurrency(servers: Any, tmp_path: Path) -> None:
    catalog = tmp_path / "c.json"
    catalog.write_text(json.dumps({"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}))
    configs = [
        servers.config(f"s{i}", {"type": "stub", "catalog": str(catalog)}) for i in range(30)
    ]
    async with UpstreamPool(configs, max_concurrency=4) as pool:
        statuses = await pool.start()
    assert [s.key for s in statuses] == [f"s{i}" for i in range(30)]
    assert {s.state for s in statuses} == {"connected"}
