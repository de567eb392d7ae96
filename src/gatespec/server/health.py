"""Health and readiness for a load balancer, and the drain state of a shutting-down replica.

GET /healthz  200 while the process serves (liveness), draining or not.
GET /readyz   200 when this replica should get traffic: every configured upstream has
              settled once (listed, or failed its first attempt) and it is not draining; 503
              otherwise. The body says why, counts the upstreams by state, names each one
              not connected (`not_ready`: upstream, state, reason: the last error, or what it
              is doing), and says what the state backend answers.

Why "settled once": the gateway answers as soon as its first upstream is ready
(AM-SERVE-FIRST-READY), but a load balancer that sends traffic then would route callers to a
replica missing most of the catalog while its peers have all of it. Waiting for every upstream
to be *connected* instead would let one dead upstream keep every replica out forever; one that
failed its first attempt is retried in the background and joins when it comes back (a tools
change then reaches clients as list_changed). Readiness is a latch: an upstream that later
goes down, or one a config reload adds, does not take a ready replica out of rotation, since
every replica would see the same.

A shared-store outage does not make a replica unready either: every replica shares the store,
so taking them all out of rotation would turn a degraded service (gatespec.state.effects) into
none.

Neither route needs a bearer token: they say nothing about tools or callers.
"""

from __future__ import annotations

import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.status import HTTP_200_OK, HTTP_503_SERVICE_UNAVAILABLE

__all__ = ["Health", "health_routes"]

log = logging.getLogger(__name__)

# Why an upstream is not connected, when the pool gives no reason of its own.
_WHY = {"pending": "connecting for the first time", "reconnecting": "retrying after a failure"}


class Health:
    """What /healthz and /readyz report for one replica."""

    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime
        self.listed = False  # every upstream has settled once (latched)
        self.draining = False
        self._settled: set[str] = set()  # upstreams seen listed or failed at least once
        self._last_error: dict[str, str] = {}  # the last failure seen of each upstream

    def upstreams(self) -> tuple[dict[str, int], list[dict[str, str]]]:
        """How many configured upstreams are connected, failed, or have not settled yet (a
        retry after a failure does not count as unsettled), and each one not connected with
        its state and why; latches `listed` once none is unsettled."""
        pool = getattr(self.runtime, "pool", None)
        counts = {"connected": 0, "failed": 0, "reconnecting": 0, "pending": 0}
        not_ready = []
        for status in pool.statuses() if pool is not None else ():
            state = status.state
            if state != "pending":
                self._settled.add(status.key)
            elif status.key in self._settled:
                state = "reconnecting"  # failed once, being retried
            counts[state] += 1
            if status.reason is not None:
                self._last_error[status.key] = status.reason
            if state == "reconnecting" and status.key in self._last_error:
                reason = f"{_WHY[state]}: {self._last_error[status.key]}"
            else:
                reason = status.reason or _WHY.get(state, state)
            if state != "connected":
                not_ready.append({"upstream": status.key, "state": state, "reason": reason})
        if counts["pending"] == 0:
            self.listed = True
        return counts, not_ready

    def drain(self) -> None:
        if not self.draining:
            log.info("draining: refusing new connections, finishing calls in flight")
        self.draining = True

    async def state_status(self) -> str:
        state = getattr(self.runtime, "state", None)
        if state is None:
            return "none"
        try:
            await state.ping()
        except Exception as exc:  # StateUnavailable, or anything the client raised
            return f"{state.name}: unreachable: {exc}"
        return f"{state.name}: ok"

    async def healthz(self, request: Request) -> JSONResponse:
        return JSONResponse({"status": "draining" if self.draining else "ok"})

    async def readyz(self, request: Request) -> JSONResponse:
        reasons = []
        upstreams, not_ready = self.upstreams()
        if not self.listed:
            reasons.append(
                f"upstreams not listed yet: {upstreams['pending']} of {sum(upstreams.values())} "
                "still connecting"
            )
        if self.draining:
            reasons.append("draining")
        body = {
            "ready": not reasons,
            "reasons": reasons,
            "upstreams": upstreams,
            "not_ready": not_ready,
            "state": await self.state_status(),
        }
        status = HTTP_503_SERVICE_UNAVAILABLE if reasons else HTTP_200_OK
        return JSONResponse(body, status_code=status)


def health_routes(health: Health) -> list[Route]:
    return [
        Route("/healthz", endpoint=health.healthz, methods=["GET"]),
        Route("/readyz", endpoint=health.readyz, methods=["GET"]),
    ]
