"""Telling connected clients that tools/list changed, in each protocol era's way, and only
those whose identity's visible catalog changed (AM-ACCESS-NO-LEAK).

- Handshake era (stdio, SSE, stateful Streamable HTTP): a ``notifications/tools/list_changed``
  on each live connection's standalone channel. Connections are remembered weakly, with the
  identity they proved, as they make requests, so a closed connection simply disappears.
- 2026-07-28: there is no standing channel; a client opens ``subscriptions/listen`` and the
  SDK's ListenHandler streams events published on its identity's subscription bus.

On a catalog change each known identity's visible tool ids are compared with those it was last
told about (or saw when it first connected); only identities whose set changed are told.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable
from typing import Any, Final

import anyio
from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged
from mcp_types import SubscriptionsListenRequestParams, SubscriptionsListenResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from gatespec.access import LOCAL, Identity
from gatespec.server.sessions import connection_of

logger = logging.getLogger(__name__)

SEND_TIMEOUT: Final = 5.0  # seconds one slow client may delay a notification round
# An HTTP request with no verified identity listens to a bus nothing is published on.
_NOBODY: Final = Identity("", "token")

VisibleIds = Callable[[Identity], frozenset[str]]
IdentityOf = Callable[[ServerRequestContext[Any, Any]], Identity | None]


class _Audience:
    """One identity's listeners: its subscription bus and what it was last told."""

    def __init__(self, identity: Identity, seen: frozenset[str] | None) -> None:
        self.identity = identity
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        self.seen = seen


class ListChangedNotifier:
    """Fans a "tools/list changed" signal out to the clients it concerns."""

    def __init__(
        self,
        visible: VisibleIds | None = None,
        identity_of: IdentityOf | None = None,
        send_timeout: float = SEND_TIMEOUT,
    ) -> None:
        # visible(identity): the ids it may see now; None: every identity sees everything.
        self.visible = visible
        # identity_of(ctx): who makes a request (None: nobody verified); default: LOCAL.
        self.identity_of: IdentityOf = identity_of or (lambda ctx: LOCAL)
        self.send_timeout = send_timeout
        self._audiences: dict[str, _Audience] = {}
        self._connections: weakref.WeakKeyDictionary[Connection, str] = weakref.WeakKeyDictionary()

    def _audience(self, identity: Identity) -> _Audience:
        audience = self._audiences.get(identity.key)
        if audience is None:
            seen = self._visible_now(identity)
            audience = self._audiences[identity.key] = _Audience(identity, seen)
        return audience

    def _visible_now(self, identity: Identity) -> frozenset[str] | None:
        if self.visible is None:
            return None
        try:
            return self.visible(identity)
        except Exception:  # a broken catalog: treat as "changed" on the next round
            logger.exception("computing the visible catalog for list_changed failed")
            return None

    async def middleware(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Server middleware: remember handshake-era connections (and their identity) as they
        talk to us. Middleware (not a handler) so that a client which only initialized is
        known too."""
        self.track(ctx)
        return await call_next(ctx)

    def track(self, ctx: ServerRequestContext[Any, Any]) -> None:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return  # delivered through subscriptions/listen instead
        connection = connection_of(ctx)
        identity = self.identity_of(ctx)
        # A stateless HTTP connection has no channel to notify on; skip it.
        if identity is not None and connection is not None and connection.has_standalone_channel:
            self._connections[connection] = self._audience(identity).identity.key

    async def listen_handler(
        self, ctx: ServerRequestContext[Any, Any], params: SubscriptionsListenRequestParams
    ) -> SubscriptionsListenResult:
        """subscriptions/listen, served from the caller's identity's bus."""
        identity = self.identity_of(ctx) or _NOBODY
        return await self._audience(identity).listen(ctx, params)

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    async def tools_changed(self) -> None:
        """Announce a tools/list change to every identity whose visible catalog changed.
        Never raises (a runtime callback)."""
        try:
            told: set[str] = set()
            for key, audience in list(self._audiences.items()):
                # an identity's visible set may need a catalog view built: off the event loop
                now = await anyio.to_thread.run_sync(self._visible_now, audience.identity)
                if now is not None and now == audience.seen:
                    continue
                audience.seen = now
                told.add(key)
                await audience.bus.publish(ToolsListChanged())
            async with anyio.create_task_group() as tg:
                for connection, key in list(self._connections.items()):
                    if key in told and connection.initialized.is_set():
                        tg.start_soon(self._notify_one, connection)
        except Exception:
            logger.exception("announcing a tools/list change failed")

    async def _notify_one(self, connection: Connection) -> None:
        with anyio.move_on_after(self.send_timeout) as scope:
            try:
                await connection.send_tool_list_changed()
            except Exception:  # a broken client must not stop the others
                logger.debug("tools/list_changed to a connection failed", exc_info=True)
                self._connections.pop(connection, None)
        if scope.cancelled_caught:
            logger.warning("a client did not take tools/list_changed within %ss", self.send_timeout)

    def close(self) -> None:
        """End every open subscriptions/listen stream gracefully (at shutdown)."""
        for audience in self._audiences.values():
            audience.listen.close()
