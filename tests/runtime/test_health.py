"""/healthz and /readyz (gatespec.server.health), served by a Starlette app in-process."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette

from gatespec.server.health import Health, health_routes
from gatespec.state import MemoryState, StateUnavailable

pytestmark = pytest.mark.anyio


class DownState(MemoryState):
    name = "redis"

    async def ping(self) -> None:
        raise StateUnavailable("redis://valkey:6379/0: Connection refused")


async def probe(health: Health, path: str) -> tuple[int, Any]:
    app = Starlette(routes=health_routes(health))
    async with httpx2.AsyncClient(transport=httpx2.ASGITransport(app), base_url="http://gw") as c:
        response = await c.get(path)
    return response.status_code, response.json()


async def test_ready_only_once_listed_and_until_draining() -> None:
    health = Health(SimpleNamespace(state=MemoryState()))
    assert await probe(health, "/readyz") == (
        503,
        {"ready": False, "reasons": ["upstreams not listed yet"], "state": "memory: ok"},
    )
    assert await probe(health, "/healthz") == (200, {"status": "ok"})
    health.listed = True
    assert await probe(health, "/readyz") == (
        200,
        {"ready": True, "reasons": [], "state": "memory: ok"},
    )
    health.drain()
    assert (await probe(health, "/readyz"))[0] == 503
    assert (await probe(health, "/readyz"))[1]["reasons"] == ["draining"]
    assert await probe(health, "/healthz") == (200, {"status": "draining"})


async def test_a_store_outage_is_reported_but_keeps_the_replica_ready() -> None:
    health = Health(SimpleNamespace(state=DownState()))
    health.listed = True
    status, body = await probe(health, "/readyz")
    assert status == 200 and body["ready"] is True
    assert body["state"] == "redis: unreachable: redis://valkey:6379/0: Connection refused"
