"""HTTP serving: Streamable HTTP at /mcp plus legacy HTTP+SSE at /sse and
/messages, behind an optional bearer-token check."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecuritySettings
from starlette.authentication import AuthCredentials
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from .access import SCOPE_KEY, AccessControl, bearer_token
from .sse import SseSessions

logger = logging.getLogger(__name__)


class BearerAuth:
    """ASGI middleware: a request without a valid bearer token gets 401.

    On success the identity is put on the ASGI scope (`switchyard.identity`,
    read by the handlers through the SDK's `ctx.request`) and as an SDK
    `AuthenticatedUser` on `scope["user"]`, which makes the SDK bind each
    Streamable HTTP session to the identity that created it.
    """

    def __init__(self, app: ASGIApp, access: AccessControl, required: bool):
        self.app = app
        self.access = access
        self.required = required

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.required:
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        token = bearer_token(headers.get("authorization"))
        identity = self.access.authenticate(token)
        if identity is None:
            await self._unauthorized(send, "missing bearer token" if token is None else "invalid bearer token")
            return
        scope[SCOPE_KEY] = identity
        scope["user"] = AuthenticatedUser(AccessToken(token=token or "", client_id=identity.name, scopes=[]))
        scope["auth"] = AuthCredentials([])
        await self.app(scope, receive, send)

    @staticmethod
    async def _unauthorized(send: Send, description: str) -> None:
        body = json.dumps({"error": "invalid_token", "error_description": description}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"www-authenticate", f'Bearer realm="switchyard", error="invalid_token", '
                     f'error_description="{description}"'.encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


class _ASGIEndpoint:
    """Lets Starlette's `Route` call a raw ASGI coroutine."""

    def __init__(self, fn: Callable[[Scope, Receive, Send], Awaitable[None]]):
        self.fn = fn

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.fn(scope, receive, send)


def security_settings(host: str) -> TransportSecuritySettings | None:
    """DNS-rebinding protection for loopback binds, as the SDK does by default."""
    if host in ("127.0.0.1", "localhost", "::1"):
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
    return None


def build_app(
    shared_server: Any,
    make_session_server: Callable[[Any], Any],
    access: AccessControl,
    *,
    host: str,
    require_auth: bool,
) -> ASGIApp:
    """The whole HTTP surface.

    `shared_server` serves every Streamable HTTP session (the SDK's session
    manager multiplexes sessions over one server); `make_session_server` is
    called once per SSE connection (seed 001, "Create session").
    """
    security = security_settings(host)
    sse = SseSessions(make_session_server, "/messages", security)
    routes = [
        Route("/sse", endpoint=_ASGIEndpoint(sse.handle_sse), methods=["GET"]),
        Route("/messages", endpoint=_ASGIEndpoint(sse.handle_post), methods=["POST"]),
        Route("/messages/", endpoint=_ASGIEndpoint(sse.handle_post), methods=["POST"]),
    ]
    app = shared_server.streamable_http_app(
        streamable_http_path="/mcp",
        host=host,
        transport_security=security,
        custom_starlette_routes=routes,
    )
    app.state.sse_sessions = sse
    return BearerAuth(app, access, require_auth)
