"""Handshake-era Streamable HTTP sessions that any replica can serve (redis backend;
AM-SHARED-SESSIONS).

`SharedSessions` sits in front of the SDK's /mcp app (inside authentication, so it knows who
calls):
- A request that opens a session (initialize, no `Mcp-Session-Id`): once the SDK has answered
  it, the session (id, owner, negotiated protocol version, initialize params) is recorded in
  the registry before the answer reaches the client, so its next request may go anywhere.
- A request for a session this replica does not hold: the id is looked up; a registered
  session of the same owner (the credential the SDK compares) is adopted, i.e. served here from
  now on as if initialized here (server._sdk), and the request goes on to the SDK.
  Anything else goes on unchanged and the SDK answers 404, as for an unknown session.
- A session in use has its registry ttl refreshed, at most every tenth of the ttl; when its
  record is gone (the store restarted empty, or was down when the session opened) it is
  recorded again.
- Every replica holding a copy of a session listens on its channel; a POST carrying the
  client's answer to a request, or its cancellation of a call, that another replica waits for
  or runs is passed on there (replicas.answer_forward).
- DELETE of a session removes it from the registry and tells the other replicas, which close
  their copies.
Every session gets its own event store in the shared store (gatespec.replicas.event_store), so a
stream resumed with Last-Event-ID on any replica gets what it missed.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, Final

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser, authorization_context
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types import InitializeRequestParams
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.status import HTTP_200_OK
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gatespec.replicas.answer_forward import AnswerForward
from gatespec.replicas.event_store import SessionEvents
from gatespec.replicas.forwarded_posts import FORWARDED
from gatespec.replicas.registry import (
    SessionChannels,
    SessionRecord,
    SessionRegistry,
    owner_key,
)
from gatespec.server._sdk import (
    adopt_session,
    close_session,
    on_admit,
    on_discard,
    open_sessions,
    use_event_store,
)
from gatespec.state.base import StateUnavailable

__all__ = ["SharedSessions", "requestor_of", "run_channels"]

logger = logging.getLogger(__name__)

_SESSION_HEADER: Final = b"mcp-session-id"
_VERSION_HEADER: Final = b"mcp-protocol-version"
_TOUCH_FRACTION: Final = 0.1  # refresh a session's ttl after this share of it has passed


def requestor_of(scope: Scope) -> Any:
    """The credential the SDK binds a session to (None without access control)."""
    user = scope.get("user")
    return authorization_context(user) if isinstance(user, AuthenticatedUser) else None


class SharedSessions:
    """ASGI wrapper of the /mcp endpoint (module docstring)."""

    def __init__(
        self,
        app: ASGIApp,
        manager: StreamableHTTPSessionManager,
        registry: SessionRegistry,
        channels: SessionChannels,
        path: str,
    ) -> None:
        self.app = app
        self.manager = manager
        self.registry = registry
        self.channels = channels
        self.answers = AnswerForward(manager, registry, channels, path)
        self.touch_every = registry.ttl * _TOUCH_FRACTION
        self._touched: dict[str, float] = {}
        self._records: dict[str, SessionRecord] = {}  # of the sessions held here
        self._adopting = anyio.Lock()
        on_admit(manager, self._with_events)
        on_discard(manager, self._discarded)
        channels.on_ended = self._ended

    def _with_events(
        self,
        transport: StreamableHTTPServerTransport,
        client_params: InitializeRequestParams | None,
    ) -> None:
        session_id = transport.mcp_session_id
        assert session_id is not None
        skip: Callable[[str], bool] | None = getattr(transport, "unreplayable", None)
        if skip is not None:  # server.answers: answers sent as JSON are not stored
            transport.json_answered = set()  # type: ignore[attr-defined]
        events = SessionEvents(self.registry.client, self.registry.config, session_id, skip)
        use_event_store(transport, events)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or ())
        version = headers.get(_VERSION_HEADER)
        if version is not None and version.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS:
            await self.app(scope, receive, send)  # 2026-07-28: no session
            return
        session_id = headers.get(_SESSION_HEADER, b"").decode("latin-1")
        if not session_id:
            if scope.get("method") == "POST":
                await self._opening(scope, receive, send)
            else:
                await self.app(scope, receive, send)
            return
        held = session_id in open_sessions(self.manager)
        if held:
            await self._touch(session_id)
        elif scope.get(FORWARDED):
            return  # passed on for a copy this replica no longer holds
        else:
            held = await self._adopt(session_id, scope)
        method = scope.get("method")
        if method == "POST" and held:
            owner = owner_key(requestor_of(scope))
            await self.answers.post(session_id, owner, scope, receive, send, self.app)
            return
        if method != "DELETE":
            await self.app(scope, receive, send)
            return
        status = await _status_of(self.app, scope, receive, send)
        if status == HTTP_200_OK:
            try:
                await self.registry.remove(session_id, announce=True)
            except StateUnavailable as exc:
                logger.warning("session %s deleted here only: %s", session_id[:16], exc)

    async def _opening(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve a request that may open a session; record the session before the client
        hears of it (its next request may reach another replica first)."""
        body = bytearray()
        held: list[Message] = []

        async def reading() -> Message:
            message = await receive()
            if message["type"] == "http.request":
                body.extend(message.get("body", b""))
            return message

        async def holding(message: Message) -> None:
            if held or (
                message["type"] == "http.response.start"
                and message["status"] < 400
                and _header(message, _SESSION_HEADER) is not None
            ):
                held.append(message)
                if message["type"] == "http.response.body" and not message.get("more_body"):
                    await self._record_opened(scope, bytes(body), held)
                    for message in held:
                        await send(message)
                    held.clear()
                return
            await send(message)

        await self.app(scope, reading, holding)

    async def _record_opened(self, scope: Scope, request: bytes, answer: list[Message]) -> None:
        session_id = _header(answer[0], _SESSION_HEADER)
        assert session_id is not None
        try:
            params = json.loads(request)["params"]
            result = json.loads(b"".join(m.get("body", b"") for m in answer[1:]))["result"]
            record = SessionRecord(
                kind="http",
                owner=owner_key(requestor_of(scope)),
                protocol_version=str(result["protocolVersion"]),
                client_params=params,
            )
        except (ValueError, KeyError, TypeError):
            logger.warning("session %s: its initialize could not be read", session_id[:16])
            return
        await self._hold(session_id, record)
        try:
            await self.registry.record(session_id, record)
        except StateUnavailable as exc:
            logger.warning("session %s is served by this replica only: %s", session_id[:16], exc)

    async def _hold(self, session_id: str, record: SessionRecord) -> None:
        """Keep what this replica needs of a session it serves: its record (to record it
        again should the store lose it) and a subscription to its channel."""
        self._records[session_id] = record
        self._touched[session_id] = time.monotonic()
        await self.channels.hold("http", session_id, confirm=False)

    async def _discarded(self, session_id: str) -> None:
        """The SDK discarded this replica's copy (DELETE, idle timeout, close_session)."""
        self._touched.pop(session_id, None)
        if self._records.pop(session_id, None) is not None:
            with anyio.CancelScope(shield=True):
                await self.channels.release("http", session_id)

    async def _touch(self, session_id: str) -> None:
        now = time.monotonic()
        if now - self._touched.get(session_id, 0.0) < self.touch_every:
            return
        self._touched[session_id] = now
        record = self._records.get(session_id)
        try:
            if not await self.registry.touch(session_id) and record is not None:
                await self.registry.record(session_id, record)
                logger.info("session %s recorded again (the store had lost it)", session_id[:16])
        except StateUnavailable as exc:
            logger.warning("could not refresh session %s: %s", session_id[:16], exc)

    async def _adopt(self, session_id: str, scope: Scope) -> bool:
        """Serve a session another replica opened, when it is registered to this caller's
        credential; otherwise leave the SDK to answer 404. Whether it is held here now."""
        requestor = requestor_of(scope)
        async with self._adopting:
            if session_id in open_sessions(self.manager):
                return True  # adopted by a concurrent request meanwhile
            try:
                record = await self.registry.lookup(session_id)
            except StateUnavailable as exc:
                logger.warning("session %s not looked up: %s", session_id[:16], exc)
                return False
            if record is None or record.kind != "http":
                return False
            if record.owner != owner_key(requestor):
                logger.warning("refusing session %s to another credential", session_id[:16])
                return False
            try:
                params = InitializeRequestParams.model_validate(record.client_params or {})
            except ValidationError:
                logger.warning("session %s: its stored initialize is unreadable", session_id[:16])
                return False
            adopted = await adopt_session(
                self.manager, session_id, requestor, record.protocol_version, params
            )
            if adopted is None:
                return False  # at the session limit: the SDK answers
            await self._hold(session_id, record)
            return True

    async def _ended(self, session_id: str) -> None:
        """Another replica deleted the session: drop this replica's copy."""
        await close_session(self.manager, session_id)


def _header(message: Message, name: bytes) -> str | None:
    for key, value in message.get("headers") or ():
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


async def _status_of(app: ASGIApp, scope: Scope, receive: Receive, send: Send) -> int | None:
    status: list[int] = []

    async def watch(message: Message) -> None:
        if message["type"] == "http.response.start":
            status.append(message["status"])
        await send(message)

    await app(scope, receive, watch)
    return status[0] if status else None


def run_channels(app: Starlette, channels: SessionChannels) -> None:
    """Keep this replica's session subscriptions running while `app` serves (its lifespan)."""
    serving = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(inner: Any) -> AsyncIterator[Any]:
        async with serving(inner) as state, anyio.create_task_group() as tg:
            tg.start_soon(channels.run)
            yield state
            tg.cancel_scope.cancel()

    app.router.lifespan_context = lifespan
