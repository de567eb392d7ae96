"""Bounds on the Streamable HTTP session table (issue 12 #9, AM-HTTP-SESSION-BOUNDS).

A handshake-era client opens a stateful session with an initialize POST; the SDK keeps each
until the client deletes it or it is idle for `idle_timeout`, and refuses new ones (503) while
`max_sessions` are open. Left at that, one client that opens sessions in a loop locks every
other handshake-era client out until its sessions idle out.

`SessionLimits` sits in front of the SDK's /mcp app, after authentication, and admits a new
session only after making room for it:
- a client (its verified identity, else its IP address) holds at most `per_client` sessions:
  at that count its own session that matters least makes room;
- the table holds at most `max_sessions`: when full, the session that matters least of all
  makes room.
"Matters least": fewest requests served, then longest unused. A flood of bare initializes
therefore displaces itself before any session in real use. A session with a request in
flight (an open GET stream included) is never displaced; when no session can go, the SDK's
own limit answers 503.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Final

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gatespec.access.bearer import IdentityToken
from gatespec.config import SessionBounds
from gatespec.server._sdk import close_session, open_sessions

logger = logging.getLogger(__name__)

__all__ = ["SessionBounds", "SessionLimits"]

_SESSION_HEADER: Final = b"mcp-session-id"
_VERSION_HEADER: Final = b"mcp-protocol-version"


@dataclass
class _Session:
    client: str
    requests: int = 1  # the initialize that opened it
    last_used: float = field(default_factory=time.monotonic)
    in_flight: int = 0

    def worth(self) -> tuple[int, float]:
        return (self.requests, self.last_used)


class SessionLimits:
    """ASGI wrapper of the /mcp endpoint enforcing `SessionBounds` (module docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        manager: StreamableHTTPSessionManager,
        bounds: SessionBounds,
        *,
        requires_identity: bool = False,
    ) -> None:
        self.app = app
        self.manager = manager
        self.bounds = bounds
        self.requires_identity = requires_identity
        self.sessions: dict[str, _Session] = {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or ())
        sid = headers.get(_SESSION_HEADER, b"").decode("latin-1")
        if sid:
            await self._in_session(sid, scope, receive, send)
        elif self._opens_session(scope, headers):
            await self._opening(scope, receive, send)
        else:
            await self.app(scope, receive, send)

    def _opens_session(self, scope: Scope, headers: dict[bytes, bytes]) -> bool:
        """A POST the SDK would answer with a new stateful session (handshake era)."""
        if scope.get("method") != "POST":
            return False
        version = headers.get(_VERSION_HEADER)
        if version is not None and version.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS:
            return False  # 2026-07-28: served per request, no session
        return not self.requires_identity or self._identity(scope) is not None

    @staticmethod
    def _identity(scope: Scope) -> str | None:
        user = scope.get("user")
        if isinstance(user, AuthenticatedUser) and isinstance(user.access_token, IdentityToken):
            return user.access_token.identity.key
        return None

    def _client(self, scope: Scope) -> str:
        name = self._identity(scope)
        if name is not None:
            return name
        peer = scope.get("client")
        return f"address:{peer[0]}" if peer else "address:?"

    async def _in_session(self, sid: str, scope: Scope, receive: Receive, send: Send) -> None:
        session = self.sessions.get(sid)
        if session is None:
            await self.app(scope, receive, send)
            return
        session.requests += 1
        session.in_flight += 1
        session.last_used = time.monotonic()
        try:
            await self.app(scope, receive, send)
        finally:
            session.in_flight -= 1
            session.last_used = time.monotonic()

    async def _opening(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = self._client(scope)
        await self._make_room(client)
        opened: list[str] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                for key, value in message.get("headers") or ():
                    if key.lower() == _SESSION_HEADER:
                        opened.append(value.decode("latin-1"))
            await send(message)

        await self.app(scope, receive, watch)
        if opened:
            self.sessions[opened[0]] = _Session(client)

    async def _make_room(self, client: str) -> None:
        live = open_sessions(self.manager)
        for sid in [sid for sid in self.sessions if sid not in live]:
            del self.sessions[sid]  # ended meanwhile (DELETE, idle timeout)
        own = [sid for sid, s in self.sessions.items() if s.client == client]
        if len(own) >= self.bounds.per_client:
            await self._displace(own, f"{client} holds {len(own)} sessions")
        elif len(live) >= self.bounds.max_sessions:
            await self._displace(list(self.sessions), f"{len(live)} sessions are open")

    async def _displace(self, candidates: list[str], why: str) -> None:
        idle = [sid for sid in candidates if self.sessions[sid].in_flight == 0]
        if not idle:
            return  # every one is busy: the SDK's own limit answers
        victim = min(idle, key=lambda sid: self.sessions[sid].worth())
        del self.sessions[victim]
        logger.info("closing session %s to make room (%s)", victim[:16], why)
        await close_session(self.manager, victim)
