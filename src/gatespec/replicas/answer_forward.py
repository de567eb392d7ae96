"""A client's answers and cancellations reach the replica that waits for them (redis backend;
AM-SHARED-SESSIONS).

While a replica runs a call of a shared Streamable HTTP session, it may send the client a
request (sampling, elicitation, roots: server.relay) and wait for the answer; and the client
may cancel the call. Either comes back as a new POST of the session, which the load balancer
may send to another replica. Every replica holding a copy of a session listens on its
channel (replicas.registry); a replica that receives, for a session it holds,
- a JSON-RPC response to a request another gatespec process sent (its id names the process,
  server.relay.asked_here), or
- a `notifications/cancelled` for a request not in flight here
publishes the POST there (one round trip: a script checks the owner and publishes) and answers
202, as the SDK answers any response or notification. The replicas that receive it pass it
through their own app (replicas.forwarded_posts) when the request is theirs and drop it otherwise.
Everything else, and a response or cancellation for a request of this replica, goes straight
to the SDK without touching the store.
"""

from __future__ import annotations

import json
import logging
from typing import Final

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.responses import Response
from starlette.status import HTTP_202_ACCEPTED
from starlette.types import ASGIApp, Receive, Scope, Send

from gatespec.replicas.forwarded_posts import FORWARDED, pack, serve
from gatespec.replicas.registry import SessionChannels, SessionRegistry
from gatespec.server._sdk import in_flight
from gatespec.server.bodies import read_body, replaying
from gatespec.server.relay import asked_here
from gatespec.state.base import StateUnavailable

__all__ = ["AnswerForward"]

logger = logging.getLogger(__name__)

_CANCELLED: Final = "notifications/cancelled"
# A body without any of these is neither a response nor a cancellation: not parsed here.
_MARKERS: Final = (b'"result"', b'"error"', _CANCELLED.encode())


class AnswerForward:
    """The /mcp side of passing answers and cancellations on (module docstring)."""

    def __init__(
        self,
        manager: StreamableHTTPSessionManager,
        registry: SessionRegistry,
        channels: SessionChannels,
        path: str,
    ) -> None:
        self.manager = manager
        self.registry = registry
        self.path = path  # where forwarded POSTs are served (the /mcp route)
        self.app: ASGIApp | None = None  # the whole HTTP app, set once it is built
        channels.on_forwarded["http"] = self.deliver

    async def post(
        self, session_id: str, owner: str, scope: Scope, receive: Receive, send: Send, sdk: ASGIApp
    ) -> None:
        """A POST of a session held here: to the SDK, unless what it carries is awaited or
        running elsewhere."""
        body, complete = await read_body(receive)
        replay = replaying(body, receive, complete)
        if not (complete and self._for_elsewhere(session_id, body)):
            await sdk(scope, replay, send)
            return
        if scope.get(FORWARDED):
            return  # another replica's request, and not this one's either: nothing to do
        try:
            received = await self.registry.forward("http", session_id, owner, pack(scope, body))
        except StateUnavailable as exc:
            logger.warning("could not pass on a message of session %s: %s", session_id[:16], exc)
            received = -1
        if received < 0:  # not registered to this caller: the SDK answers as ever
            await sdk(scope, replay, send)
            return
        # the SDK's answer to a response or notification
        accepted = Response(
            status_code=HTTP_202_ACCEPTED,
            media_type="application/json",
            headers={"mcp-session-id": session_id},
        )
        await accepted(scope, replay, send)

    def _for_elsewhere(self, session_id: str, body: bytes) -> bool:
        if not any(marker in body for marker in _MARKERS):
            return False
        try:
            message = json.loads(body)
        except ValueError:
            return False  # the SDK answers a parse error
        if not isinstance(message, dict):
            return False
        method = message.get("method")
        if method is None:
            return ("result" in message or "error" in message) and not asked_here(message.get("id"))
        if method != _CANCELLED:
            return False
        params = message.get("params")
        request_id = params.get("requestId") if isinstance(params, dict) else None
        return request_id is not None and not in_flight(self.manager, session_id, request_id)

    async def deliver(self, session_id: str, data: bytes) -> None:
        """A POST another replica passed on for a session held here: serve it through this
        replica's app (post() above keeps it only when its request is here)."""
        if self.app is None:
            return
        status = await serve(self.app, self.path, data)
        if status not in (None, HTTP_202_ACCEPTED):
            logger.info("a forwarded message of session %s: %s", session_id[:16], status)
