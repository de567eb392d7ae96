"""Telling connected clients that a list changed (tools, and in the aggregate profile prompts
and resources) or that a subscribed resource was updated, in each protocol era's way.

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
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from gatespec.server.sessions import connection_of

logger = logging.getLogger(__name__)

SEND_TIMEOUT: Final = 5.0  # seconds one slow client may delay a notification round

# list -> (its 2026-07-28 event, the Connection method that sends its handshake-era notification)
_LISTS: Final[dict[str, tuple[ServerEvent, str]]] = {
    "tools": (ToolsListChanged(), "send_tool_list_changed"),
    "prompts": (PromptsListChanged(), "send_prompt_list_changed"),
    "resources": (ResourcesListChanged(), "send_resource_list_changed"),
}


class ListChangedNotifier:
    """Fans a "tools/list changed" signal out to every connected client."""

    def __init__(self, send_timeout: float = SEND_TIMEOUT) -> None:
        self.bus = InMemorySubscriptionBus()
        self.listen_handler = ListenHandler(self.bus)
        self.send_timeout = send_timeout
        self._connections: weakref.WeakSet[Connection] = weakref.WeakSet()
        # session key -> its handshake-era connection, for notifications to one session
        self._sessions: weakref.WeakValueDictionary[str, Connection] = weakref.WeakValueDictionary()

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

    def remember(self, session: str, ctx: ServerRequestContext[Any, Any]) -> None:
        """Know `session`'s connection, for notifications meant for it alone."""
        self.track(ctx)
        connection = connection_of(ctx)
        if connection is not None and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self._sessions[session] = connection

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    async def tools_changed(self) -> None:
        """Announce a tools/list change to everyone. Never raises (a runtime callback)."""
        await self.lists_changed(frozenset({"tools"}))

    async def lists_changed(self, lists: frozenset[str]) -> None:
        """Announce that `lists` (tools, prompts, resources) changed, to everyone. Never
        raises (a runtime callback)."""
        try:
            for name in sorted(lists):
                event, send = _LISTS[name]
                await self.bus.publish(event)
                await self._each(list(self._connections), send, ())
        except Exception:
            logger.exception("announcing a list change failed")

    async def resource_updated(self, uri: str, sessions: frozenset[str]) -> None:
        """A subscribed resource changed: tell its handshake-era subscribers, and every
        2026-07-28 listen stream whose filter names it. Never raises."""
        try:
            await self.bus.publish(ResourceUpdated(uri=uri))
            connections = [c for s in sessions if (c := self._sessions.get(s)) is not None]
            await self._each(connections, "send_resource_updated", (uri,))
        except Exception:
            logger.exception("announcing a resource update failed")

    async def _each(self, connections: list[Connection], send: str, args: tuple[Any, ...]) -> None:
        async with anyio.create_task_group() as tg:
            for connection in connections:
                if connection.initialized.is_set():
                    tg.start_soon(self._notify_one, connection, send, args)

    async def _notify_one(
        self,
        connection: Connection,
        send: str = "send_tool_list_changed",
        args: tuple[Any, ...] = (),
    ) -> None:
        with anyio.move_on_after(self.send_timeout) as scope:
            try:
                await getattr(connection, send)(*args)
            except Exception:  # a broken client must not stop the others
                logger.debug("%s to a connection failed", send, exc_info=True)
                self._connections.discard(connection)
        if scope.cancelled_caught:
            logger.warning("a client did not take %s within %ss", send, self.send_timeout)

    def close(self) -> None:
        """End every open subscriptions/listen stream gracefully (at shutdown)."""
        self.listen_handler.close()
