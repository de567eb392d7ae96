"""Wiring: config -> upstream pool -> registry -> profile -> transport."""

from __future__ import annotations

import logging
from typing import Any

from mcp.server.stdio import stdio_server

from .access import NOBODY, AccessControl
from .aggregate import AggregateProfile
from .config import Config
from .notify import Notifier
from .registry import Registry
from .search import SearchProfile
from .upstream import UpstreamPool

logger = logging.getLogger(__name__)

PROFILES = ("search", "aggregate")


class Gateway:
    def __init__(self, profile: str, config: Config):
        if profile not in PROFILES:
            raise ValueError(f"unknown profile {profile!r}; expected one of {PROFILES}")
        self.config = config
        self.pool = UpstreamPool(config)
        self.registry = Registry(self.pool)
        self.notifier = Notifier()
        self.access = AccessControl(config)
        self.profile: Any
        if profile == "aggregate":
            self.profile = AggregateProfile(self.pool, self.registry, self.notifier)
        else:
            self.profile = SearchProfile(config, self.pool, self.registry, self.access)

    @property
    def require_http_auth(self) -> bool:
        # search: bearer tokens always identify callers over HTTP (seed 003, Decision 5).
        # aggregate: the seeds say nothing; tokens are enforced only if identities are configured.
        return self.profile.name == "search" or self.access.has_identities

    async def __aenter__(self) -> Gateway:
        await self.registry.__aenter__()
        await self.pool.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.notifier.close()
        try:
            await self.pool.__aexit__(*exc)
        finally:
            await self.registry.__aexit__(*exc)

    async def serve_stdio(self) -> None:
        server = self.profile.make_server(self.access.stdio_identity)
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    def http_app(self, host: str) -> Any:
        from .http import build_app

        return build_app(
            self.profile.make_server(NOBODY),
            self.profile.make_server,
            self.access,
            host=host,
            require_auth=self.require_http_auth,
        )

    async def serve_http(self, host: str, port: int) -> None:
        import uvicorn

        if self.require_http_auth and not self.access.has_identities:
            logger.warning("no identities configured: every HTTP request will be refused with 401")
        app = self.http_app(host)
        server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on"))
        logger.info("switchyard (%s) serving http://%s:%d/mcp and /sse", self.profile.name, host, port)
        await server.serve()
