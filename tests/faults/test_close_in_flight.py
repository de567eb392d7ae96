"""Issue 22 #11: a client that went away while upstreams were still connecting left ERROR
tracebacks ending in an AssertionError (upstream/connection.py): the gateway closing an
upstream while one of its requests (the catalog's first tools/list, a call) was in flight.
Such a request now fails with a typed UpstreamError saying the connection was closed."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from gatespec.upstream import UpstreamError, UpstreamPool
from tests.faults.support import config, upstream

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


async def test_a_request_in_flight_when_its_upstream_closes_fails_typed(tmp_path: Path) -> None:
    started = tmp_path / "started"
    cfg = config({"slow": upstream()}, call_timeout=30)
    failures: list[BaseException] = []
    async with UpstreamPool.from_config(cfg) as pool:
        await pool.start()

        async def held_call() -> None:
            args = {
                "bytes": 100,
                "hold_file": str(tmp_path / "never"),
                "started_file": str(started),
            }
            try:
                await pool.call("slow", "big", args)
            except BaseException as exc:  # noqa: BLE001 - what it raises is the point
                failures.append(exc)

        async with anyio.create_task_group() as tg:
            tg.start_soon(held_call)
            while not started.exists():
                await anyio.sleep(0.01)
            await pool.upstreams["slow"].close()
    assert len(failures) == 1
    assert isinstance(failures[0], UpstreamError), repr(failures[0])
    assert failures[0].kind == "unavailable"
    assert "closed" in failures[0].reason
