"""Process wiring: upstream connections + runtime + stdio MCP server."""

from __future__ import annotations

import logging

import anyio
from mcp.server.stdio import stdio_server

from .config import Settings
from .runtime import ProxyRuntime, RuntimeOptions
from .server import TollboothServer
from .upstream import UpstreamManager

log = logging.getLogger("tollbooth")


async def serve(settings: Settings, profile: str) -> None:
    """Serve one stdio MCP session.  Upstreams connect concurrently with the
    client's handshake; tool handlers wait until the catalog is built."""
    async with anyio.create_task_group() as tg:
        manager = UpstreamManager(
            settings.servers, tg, call_timeout=settings.call_timeout, connect_timeout=settings.connect_timeout
        )
        runtime = ProxyRuntime(
            manager,
            list(settings.servers),
            RuntimeOptions(cache_stable=settings.cache_stable, top_k=settings.top_k, namespaces=settings.namespaces()),
        )
        app = TollboothServer(
            runtime, profile, encode_names=settings.encode_names, proxy_result=settings.proxy_result
        )

        async def warm_up() -> None:
            try:
                await manager.start_all()
                await runtime.refresh_catalog()
            except Exception:  # noqa: BLE001
                log.exception("catalog build failed; serving an empty catalog")
            finally:
                app.ready.set()

        tg.start_soon(warm_up)
        async with stdio_server() as (read, write):
            await app.server.run(read, write, app.server.create_initialization_options())
        manager.close_all()
        tg.cancel_scope.cancel()
