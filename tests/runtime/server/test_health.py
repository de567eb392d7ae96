"""/healthz and /readyz (gatespec.server.health), served by a Starlette app in-process."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import httpx2
import pytest
from starlette.applications import Starlette

from gatespec.server.health import Health, health_routes
from gatespec.state import MemoryState, StateUnavailable
from gatespec.upstream.pool import UpstreamStatus

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


class Pool:
    """The upstream pool's statuses as a test sets them (a stub: the slow replica test
    checks the same against real upstreams)."""

    def __init__(self, **states: str) -> None:
        self.states = states

    def statuses(self) -> list[UpstreamStatus]:
        return [UpstreamStatus(k, s, None) for k, s in self.states.items()]  # type: ignore[arg-type]


async def test_ready_once_every_upstream_settled_and_until_draining() -> None:
    pool = Pool(alpha="connected", beta="pending", gamma="pending")
    health = Health(SimpleNamespace(state=MemoryState(), pool=pool))
    assert await probe(health, "/readyz") == (
        503,
        {
            "ready": False,
            "reasons": ["upstreams not listed yet: 2 of 3 still connecting"],
            "upstreams": {"connected": 1, "failed": 0, "reconnecting": 0, "pending": 2},
            "not_ready": [
                {"upstream": "beta", "state": "pending", "reason": "connecting for the first time"},
                {
                    "upstream": "gamma",
                    "state": "pending",
                    "reason": "connecting for the first time",
                },
            ],
            "state": "memory: ok",
        },
    )
    assert await probe(health, "/healthz") == (200, {"status": "ok"})
    # one dead upstream (failed its first attempt) does not keep the replica out
    pool.states.update(beta="failed")
    assert (await probe(health, "/readyz"))[0] == 503
    pool.states.update(gamma="connected")
    assert await probe(health, "/readyz") == (
        200,
        {
            "ready": True,
            "reasons": [],
            "upstreams": {"connected": 2, "failed": 1, "reconnecting": 0, "pending": 0},
            "not_ready": [{"upstream": "beta", "state": "failed", "reason": "failed"}],
            "state": "memory: ok",
        },
    )
    # a latch: retrying the dead one (pending again) does not take the replica out
    pool.states.update(beta="pending")
    status, body = await probe(health, "/readyz")
    assert status == 200 and body["upstreams"]["reconnecting"] == 1
    health.drain()
    assert (await probe(health, "/readyz"))[0] == 503
    assert (await probe(health, "/readyz"))[1]["reasons"] == ["draining"]
    assert await probe(health, "/healthz") == (200, {"status": "draining"})


async def test_a_store_outage_is_reported_but_keeps_the_replica_ready() -> None:
    health = Health(SimpleNamespace(state=DownState(), pool=Pool(alpha="connected")))
    status, body = await probe(health, "/readyz")
    assert status == 200 and body["ready"] is True
    assert body["state"] == "redis: unreachable: redis://valkey:6379/0: Connection refused"


async def test_readyz_names_the_upstreams_that_are_not_ready_and_why() -> None:
    class Reasons(Pool):
        def statuses(self) -> list[UpstreamStatus]:
            reasons = {"beta": "exited with status 1: boom"}
            return [
                UpstreamStatus(k, s, reasons.get(k) if s == "failed" else None)  # type: ignore[arg-type]
                for k, s in self.states.items()
            ]

    pool = Reasons(alpha="connected", beta="failed", gamma="pending")
    health = Health(SimpleNamespace(state=MemoryState(), pool=pool))
    status, body = await probe(health, "/readyz")
    assert status == 503
    assert body["not_ready"] == [
        {"upstream": "beta", "state": "failed", "reason": "exited with status 1: boom"},
        {"upstream": "gamma", "state": "pending", "reason": "connecting for the first time"},
    ]
    assert body["reasons"] == ["upstreams not listed yet: 1 of 3 still connecting"]
    pool.states.update(gamma="connected", beta="pending")  # beta retried
    status, body = await probe(health, "/readyz")
    assert status == 200
    assert body["not_ready"] == [
        {
            "upstream": "beta",
            "state": "reconnecting",
            "reason": "retrying after a failure: exited with status 1: boom",
        }
    ]
