"""Health and readiness for a load balancer, and the drain state of a shutting-down replica.

GET /healthz  200 while the process serves (liveness), draining or not.
GET /readyz   200 when this replica should get traffic: its upstreams have been listed and it
              is not draining; 503 otherwise. The body says why, and what the state backend
              answers, but a shared-store outage does not make a replica unready: every
              replica shares the store, so taking them all out of rotation would turn a
              degraded service (gatespec.state.effects) into none.

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


class Health:
    """What /healthz and /readyz report for one replica."""

    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime
        self.listed = False  # the upstreams have been listed once (start-up finished)
        self.draining = False

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
        if not self.listed:
            reasons.append("upstreams not listed yet")
        if self.draining:
            reasons.append("draining")
        body = {"ready": not reasons, "reasons": reasons, "state": await self.state_status()}
        status = HTTP_503_SERVICE_UNAVAILABLE if reasons else HTTP_200_OK
        return JSONResponse(body, status_code=status)


def health_routes(health: Health) -> list[Route]:
    return [
        Route("/healthz", endpoint=health.healthz, methods=["GET"]),
        Route("/readyz", endpoint=health.readyz, methods=["GET"]),
    ]
