"""Client-scoped upstream state in the aggregate profile: an upstream session per client
session that has any (issue 22 item 8).

An MCP server keeps state about its one client: the roots it answered (servers ask once and
keep them, as server-filesystem keeps its allowed folders), the level it set with
logging/setLevel, what sampling or elicitation told it. Behind one shared upstream session,
that state is whichever client spoke last: client B, which declared no roots, would work in
client A's folders, and A's `error` level would silence B's debug logs. What a user of a
gateway expects is what a direct connection gives: the upstream sees each client as itself.

So a client session that has client-scoped state gets upstream sessions of its own:
- it has such state when it declared roots, sampling or elicitation at initialize, or once it
  sets a logging level (handshake era; a 2026-07-28 client carries its level on each request
  and is asked nothing: server.relay);
- its routed requests (tools/call, prompts/get, resources/read, completion/complete) go to its
  own connection of the target upstream, opened on first use (one process or HTTP session per
  client and upstream actually used), with its level set there; what the upstream asks or logs
  there can only be this client's: it is related to the request in flight, or, while the
  connection opens (servers ask for roots when initialized), to the request it opens for
  (the connection's `owner`, upstream.relay);
- a client with no such state shares the gateway's connection, whose requests of the client
  are answered as that client would be: refused, it declared nothing (a shared connection
  never carries anyone's roots or level, because no scoped client's request goes over it);
- merged lists, resource subscriptions and change notifications stay on the shared
  connection (they are the same for everyone, and the lists relay nothing);
- stdio serves one client: its session is the shared connection's, nothing is duplicated.

A client connection that fails answers that client's request with the upstream error, like the
shared one does; it is replaced on the next request, and closed when its session ends
(`forget`, called by the transports) or the gateway stops. A failure here never reaches
another client or the shared connection.

Every such connection may be a process: all clients together hold at most
gateway.max_client_connections. A new one past the bound closes the least recently used
connection that no request is using (its client gets a new one on its next request, with its
level set again and its roots asked again, as at first use); only when every connection is
busy is the request refused, SERVER_UNAVAILABLE naming the bound. Eviction rather than a
refusal, because an idle connection costs a process and serves no one, while a refusal would
shut out a new client for as long as idle ones stay connected.
"""

from __future__ import annotations

import logging
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import anyio

from gatespec.config import GatewayConfig
from gatespec.runtime_contract import Relay
from gatespec.upstream import UpstreamError, UpstreamPool
from gatespec.upstream.relay import InFlight

__all__ = ["ClientUpstreams"]

logger = logging.getLogger(__name__)


class ClientUpstreams:
    """The upstream connections of the client sessions that have client-scoped state."""

    def __init__(self, config: Callable[[], GatewayConfig]) -> None:
        self._config = config  # the current config (it changes on reload)
        self._scoped: set[str] = set()
        self._levels: dict[str, str] = {}
        self._pools: OrderedDict[tuple[str, str], UpstreamPool] = OrderedDict()  # LRU first
        self._opening: dict[tuple[str, str], anyio.Lock] = {}
        self._busy: Counter[tuple[str, str]] = Counter()  # requests using each connection

    def mark(self, session: str) -> None:
        """`session` has client-scoped state: its requests go to its own connections."""
        self._scoped.add(session)

    def scoped(self, session: str) -> bool:
        return session in self._scoped

    @asynccontextmanager
    async def serving(
        self, session: str, config_key: str, relay: Relay | None
    ) -> AsyncIterator[UpstreamPool | None]:
        """The pool `session`'s request to `config_key` goes through (None: the shared one);
        while the block runs, what its own connection asks or logs outside a tracked request
        goes to `relay` (the connection's owner)."""
        slot = (session, config_key)
        self._busy[slot] += 1
        pool = None
        try:
            pool = await self._pool_for(session, config_key, relay)
            yield pool
        finally:
            self._busy[slot] -= 1
            if not self._busy[slot]:
                del self._busy[slot]
            if pool is not None:
                for inflight in _inflights(pool):
                    if inflight.owner is relay:
                        inflight.owner = None

    async def _pool_for(
        self, session: str, config_key: str, relay: Relay | None
    ) -> UpstreamPool | None:
        """(see `serving`) A connection that failed is replaced."""
        if session not in self._scoped:
            return None
        slot = (session, config_key)
        async with self._opening.setdefault(slot, anyio.Lock()):
            pool = self._pools.get(slot)
            if pool is not None and pool.status(config_key).state == "connected":
                self._pools.move_to_end(slot)
                for inflight in _inflights(pool):
                    inflight.owner = relay
                return pool
            if pool is not None:
                self._pools.pop(slot, None)
                await _close(pool)
            config = self._config()
            server = config.servers.get(config_key)
            if server is None:
                raise UpstreamError(config_key, "unknown_server", f"Unknown server: {config_key}")
            await self._make_room(config_key, config.options.sessions.max_client_connections)
            pool = UpstreamPool(
                [server],
                connect_timeout=config.options.connect_timeout,
                call_timeout=config.call_timeout_for(config_key),
            )
            for inflight in _inflights(pool):
                inflight.owner = relay  # the upstream may ask as soon as it is initialized
            self._pools[slot] = pool
            await pool.start()
            level = self._levels.get(session)
            if level is not None:
                await pool.set_log_level(level)
            return pool

    async def _make_room(self, config_key: str, bound: int) -> None:
        """Close least recently used idle connections until a new one fits within `bound`."""
        while len(self._pools) >= bound:
            idle = next((s for s in self._pools if not self._busy[s]), None)
            if idle is None:
                raise UpstreamError(
                    config_key,
                    "unavailable",
                    f"all {len(self._pools)} upstream connections kept for clients "
                    "(gateway.max_client_connections) are in use; try again",
                )
            logger.info("closing the idle upstream connection %s to make room", idle)
            await _close(self._pools.pop(idle))

    async def set_level(self, session: str, level: str) -> None:
        """`session`'s logging/setLevel, on its own connections (now and when opened)."""
        self.mark(session)
        self._levels[session] = level
        for (owner, _), pool in list(self._pools.items()):
            if owner == session:
                await pool.set_log_level(level)

    async def forget(self, session: str) -> None:
        """`session` ended: close its connections."""
        self._scoped.discard(session)
        self._levels.pop(session, None)
        for slot in [s for s in self._pools if s[0] == session]:
            self._opening.pop(slot, None)
            pool = self._pools.pop(slot)
            await _close(pool)

    async def drop_server(self, config_key: str) -> None:
        """`config_key` was removed or replaced: close every client's connection to it."""
        for slot in [s for s in self._pools if s[1] == config_key]:
            await _close(self._pools.pop(slot))

    async def aclose(self) -> None:
        for slot in list(self._pools):
            await _close(self._pools.pop(slot))

    @property
    def connection_count(self) -> int:
        return len(self._pools)


def _inflights(pool: UpstreamPool) -> list[InFlight]:
    """The relay trackers of a pool's connections (a stub upstream has none)."""
    found = (getattr(upstream, "inflight", None) for upstream in pool.upstreams.values())
    return [inflight for inflight in found if isinstance(inflight, InFlight)]


async def _close(pool: UpstreamPool) -> None:
    with anyio.CancelScope(shield=True):
        try:
            await pool.aclose()
        except Exception:  # one client's connection must not take the gateway down
            logger.exception("closing a client's upstream connection failed")
