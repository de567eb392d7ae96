"""Telling connected clients that a list changed (tools, and in the aggregate profile prompts
and resources) or that a subscribed resource was updated, in each protocol era's way, and only
those whose identity's visible catalog changed (AM-ACCESS-NO-LEAK).

- Handshake era (stdio, SSE, stateful Streamable HTTP): a ``notifications/*/list_changed``
  on each live connection's standalone channel. Connections are remembered weakly, with the
  identity they proved, as they make requests, so a closed connection simply disappears.
- 2026-07-28: there is no standing channel; a client opens ``subscriptions/listen`` and the
  SDK's ListenHandler streams events published on its identity's subscription bus.

On a change each known identity's visible set is compared with the one it was last told about
(or saw when it first connected); only identities whose set changed are told. An identity whose
visible set is None (no access control, or unrestricted in the aggregate profile) is always
told.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable
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
from mcp_types import SubscriptionsListenRequestParams, SubscriptionsListenResult
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from gatespec.access import LOCAL, Identity
from gatespec.server._sdk import connection_of

logger = logging.getLogger(__name__)

SEND_TIMEOUT: Final = 5.0  # seconds one slow client may delay a notification round
# An HTTP request with no verified identity listens to a bus nothing is published on.
_NOBODY: Final = Identity("", "token")

VisibleIds = Callable[[Identity], frozenset[str] | None]
IdentityOf = Callable[[ServerRequestContext[Any, Any]], Identity | None]

# list -> (its 2026-07-28 event, the Connection method that sends its handshake-era notification)
_LISTS: Final[dict[str, tuple[ServerEvent, str]]] = {
    "tools": (ToolsListChanged(), "send_tool_list_changed"),
    "prompts": (PromptsListChanged(), "send_prompt_list_changed"),
    "resources": (ResourcesListChanged(), "send_resource_list_changed"),
}


class _Audience:
    """One identity's listeners: its subscription bus and what it was last told."""

    def __init__(self, identity: Identity, seen: frozenset[str] | None) -> None:
        self.identity = identity
        self.bus = InMemorySubscriptionBus()
        self.listen = ListenHandler(self.bus)
        self.seen = seen


class ListChangedNotifier:
    """Fans "list changed" and "resource updated" signals out to the clients they concern."""

    def __init__(
        self,
        visible: VisibleIds | None = None,
        identity_of: IdentityOf | None = None,
        send_timeout: float = SEND_TIMEOUT,
    ) -> None:
        # visible(identity): what it may see now; None: every identity sees everything.
        self.visible = visible
        # identity_of(ctx): who makes a request (None: nobody verified); default: LOCAL.
        self.identity_of: IdentityOf = identity_of or (lambda ctx: LOCAL)
        self.send_timeout = send_timeout
        self._audiences: dict[str, _Audience] = {}
        self._connections: weakref.WeakKeyDictionary[Connection, str] = weakref.WeakKeyDictionary()
        # session key -> its handshake-era connection, for notifications to one session
        self._sessions: weakref.WeakValueDictionary[str, Connection] = weakref.WeakValueDictionary()
        # session key (or listen stream) -> the identity key of its audience
        self._session_audience: dict[str, str] = {}

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

    def remember(self, session: str, ctx: ServerRequestContext[Any, Any]) -> None:
        """Know `session`'s connection and identity, for notifications meant for it alone."""
        self.track(ctx)
        identity = self.identity_of(ctx)
        if identity is not None:
            self._session_audience[session] = self._audience(identity).identity.key
        connection = connection_of(ctx)
        if connection is not None and ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            self._sessions[session] = connection

    def forget(self, session: str) -> None:
        """`session` (or listen stream) ended."""
        self._session_audience.pop(session, None)

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    async def tools_changed(self) -> None:
        """Announce a tools/list change. Never raises (a runtime callback)."""
        await self.lists_changed(frozenset({"tools"}))

    async def lists_changed(self, lists: frozenset[str]) -> None:
        """Announce that `lists` (tools, prompts, resources) changed to every identity whose
        visible set changed. Never raises (a runtime callback)."""
        try:
            told: set[str] = set()
            for key, audience in list(self._audiences.items()):
                # an identity's visible set may need a catalog view built: off the event loop
                now = await anyio.to_thread.run_sync(self._visible_now, audience.identity)
                if now is not None and now == audience.seen:
                    continue
                audience.seen = now
                told.add(key)
                for name in sorted(lists):
                    await audience.bus.publish(_LISTS[name][0])
            connections = [c for c, key in list(self._connections.items()) if key in told]
            for name in sorted(lists):
                await self._each(connections, _LISTS[name][1], ())
        except Exception:
            logger.exception("announcing a list change failed")

    async def resource_updated(self, uri: str, sessions: frozenset[str]) -> None:
        """A subscribed resource changed: tell its handshake-era subscribers, and the
        2026-07-28 listen streams of the identities subscribed to it whose filter names it.
        Never raises."""
        try:
            keys = {k for s in sessions if (k := self._session_audience.get(s)) is not None}
            for key in sorted(keys):
                audience = self._audiences.get(key)
                if audience is not None:
                    await audience.bus.publish(ResourceUpdated(uri=uri))
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
                self._connections.pop(connection, None)
        if scope.cancelled_caught:
            logger.warning("a client did not take %s within %ss", send, self.send_timeout)

    def close(self) -> None:
        """End every open subscriptions/listen stream gracefully (at shutdown)."""
        for audience in self._audiences.values():
            audience.listen.close()
