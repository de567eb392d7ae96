"""Legacy SSE sessions across replicas (redis backend; AM-SHARED-SESSIONS).

A legacy client holds one long GET /sse stream on one replica and POSTs its messages to
/messages?session_id=X, which a load balancer may send to any replica. The replica holding the
stream subscribes to the session's channel (gatespec.replicas.registry) before the client
learns the session id; a replica that does not hold the session publishes the POST there (one
round trip: a script checks that the session is registered to the same credential, then
publishes) and answers as the SDK would: 202 when a replica received it, else 404 "Could not
find session". The holding replica passes the POST through its own app, as if it had arrived
there: the bearer token is verified again and the SDK checks it against the session's owner.
"""

from __future__ import annotations

import logging
import re
from typing import Final
from urllib.parse import parse_qsl
from uuid import UUID

import anyio
from starlette.responses import Response
from starlette.status import HTTP_202_ACCEPTED, HTTP_404_NOT_FOUND
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gatespec.replicas.forwarded_posts import FORWARDED, pack, serve
from gatespec.replicas.http_sessions import requestor_of
from gatespec.replicas.registry import (
    SessionChannels,
    SessionRecord,
    SessionRegistry,
    owner_key,
)
from gatespec.server.bodies import read_body, replaying
from gatespec.state.base import StateUnavailable

__all__ = ["SseForward"]

logger = logging.getLogger(__name__)

_ENDPOINT: Final = re.compile(rb"event: endpoint\r?\ndata: [^\r\n]*[?&]session_id=([0-9a-f]{32})")


def endpoint_session(message: Message) -> str | None:
    """The session id a GET /sse response's endpoint event names, if `message` carries it."""
    if message["type"] != "http.response.body":
        return None
    found = _ENDPOINT.search(message.get("body", b""))
    return found.group(1).decode() if found is not None else None


class SseForward:
    """The SSE routes' side of sharing legacy sessions (module docstring)."""

    def __init__(self, registry: SessionRegistry, channels: SessionChannels, path: str) -> None:
        self.registry = registry
        self.channels = channels
        self.path = path  # where POSTs arrive (the forwarded ones are served there too)
        self.app: ASGIApp | None = None  # the whole HTTP app, set once it is built
        channels.on_forwarded["sse"] = self.deliver

    def watch_connect(self, scope: Scope, send: Send, held: list[str]) -> Send:
        """`send` for a GET /sse response: once the endpoint event names the session, hold
        it (register it, subscribe to it) before the client can POST to it."""

        async def watching(message: Message) -> None:
            if not held and message["type"] == "http.response.body":
                found = _ENDPOINT.search(message.get("body", b""))
                if found is not None:
                    held.append(found.group(1).decode())
                    await self._open(held[0], scope)
            await send(message)

        return watching

    async def _open(self, session_id: str, scope: Scope) -> None:
        record = SessionRecord(kind="sse", owner=owner_key(requestor_of(scope)))
        try:
            await self.registry.record(session_id, record)
        except StateUnavailable as exc:
            logger.warning("SSE session %s is reachable here only: %s", session_id[:16], exc)
            return
        await self.channels.hold("sse", session_id)

    async def close(self, session_id: str) -> None:
        with anyio.CancelScope(shield=True):
            await self.channels.release("sse", session_id)
            try:
                await self.registry.remove(session_id)
            except StateUnavailable:
                pass  # it expires with the ttl

    async def post(self, scope: Scope, receive: Receive, send: Send, sdk: ASGIApp) -> None:
        """POST /messages: the SDK answers when the session is here; else it is forwarded."""
        if scope.get(FORWARDED):
            await sdk(scope, receive, send)
            return
        body, complete = await read_body(receive)
        replay = replaying(body, receive, complete)
        missing: list[Message] = []

        async def unless_missing(message: Message) -> None:
            if missing or (
                message["type"] == "http.response.start" and message["status"] == HTTP_404_NOT_FOUND
            ):
                missing.append(message)  # not here: forwarded below instead
                return
            await send(message)

        await sdk(scope, replay, unless_missing)
        if not missing:
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        session_id = UUID(hex=query["session_id"]).hex  # the SDK found it well-formed
        received = await self._publish(session_id, scope, body)
        if received > 0:
            await Response("Accepted", status_code=HTTP_202_ACCEPTED)(scope, receive, send)
        else:
            await Response("Could not find session", status_code=HTTP_404_NOT_FOUND)(
                scope, receive, send
            )

    async def _publish(self, session_id: str, scope: Scope, body: bytes) -> int:
        owner = owner_key(requestor_of(scope))
        try:
            return await self.registry.forward("sse", session_id, owner, pack(scope, body))
        except StateUnavailable as exc:
            logger.warning(
                "could not forward a message for SSE session %s: %s", session_id[:16], exc
            )
            return 0

    async def deliver(self, session_id: str, data: bytes) -> None:
        """A POST another replica forwarded for a session whose stream is here: serve it through
        this replica's app, as if it had arrived here."""
        if self.app is None:
            return
        status = await serve(self.app, self.path, data)
        if status != HTTP_202_ACCEPTED:
            logger.info("a forwarded message for SSE session %s: %s", session_id[:16], status)
