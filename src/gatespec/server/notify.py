"""Telling connected clients that tools/list changed, in each protocol era's way.

- Handshake era (stdio, SSE, stateful Streamable HTTP): a ``notifications/tools/list_changed``
  on each live connection's standalone channel. Connections are remembered weakly as they make
  requests, so a closed connection simply disappears.
- 2026-07-28: there is no standing channel; a client opens ``subscriptions/listen`` and the
  SDK's ListenHandler streams events published on our subscription bus.
"""

from __future__ import annotations

import logging
import weakref
from typing import Any, Final

import anyio
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from gatespec.server.sessions import connection_of

logger = logging.getLogger(__name__)

SEND_TIMEOUT: Final = 5.0  # seconds one slow client may delay a notification round


class ListChangedNotifier:
    """Fans a "tools/list changed" signal out to every connected client."""

    def __init__(self, send_timeout: float = SEND_TIMEOUT) -> None:
        self.bus = InMemorySubscriptionBus()
        self.listen_handler = ListenHandler(self.bus)
        self.send_timeout = send_timeout
        self._connections: weakref.WeakSet[Connection] = weakref.WeakSet()

    async def middleware(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Server middleware: remember handshake-era connections as they talk to us.

        Middleware (not a handler) so that a client which only initialized is known too.
        """
        self.track(ctx)
        return await call_next(ctx)

    def track(self, ctx: ServerRequestContext[Any, Any]) -> None:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return  # delivered through subscriptions/listen instead
        connection = connection_of(ctx)
        # A stateless HTTP connection has no channel to notify on; skip it.
        if connection is not None and connection.has_standalone_channel:
            self._connections.add(connection)

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    async def tools_changed(self) -> None:
        """Announce a tools/list change to everyone. Never raises (a runtime callback)."""
        try:
            await self.bus.publish(ToolsListChanged())
            async with anyio.create_task_group() as tg:
                for connection in list(self._connections):
                    if connection.initialized.is_set():
                        tg.start_soon(self._notify_one, connection)
        except Exception:
            logger.exception("announcing a tools/list change failed")

    async def _notify_one(self, connection: Connection) -> None:
        with anyio.move_on_after(self.send_timeout) as scope:
            try:
                await connection.send_tool_list_changed()
            except Exception:  # a broken client must not stop the others
                logger.debug("tools/list_changed to a connection failed", exc_info=True)
                self._connections.discard(connection)
        if scope.cancelled_caught:
            logger.warning("a client did not take tools/list_changed within %ss", self.send_timeout)

    def close(self) -> None:
        """End every open subscriptions/listen stream gracefully (at shutdown)."""
        self.listen_handler.close()
