"""Who is calling: the session key the runtime scopes state by, per transport.

| transport                                  | session key                               |
|--------------------------------------------|-------------------------------------------|
| Streamable HTTP, handshake era (stateful)  | ``http:<Mcp-Session-Id>``                 |
| legacy SSE (``/sse`` + ``/messages``)      | ``sse:<sessionId>`` (the SSE session)     |
| Streamable HTTP, 2026-07-28 (sessionless)  | ``http:sessionless`` (shared, see below)  |
| stdio, in-process                          | the ``fallback`` the server was built with|

Sessionless Streamable HTTP (protocol 2026-07-28, or a stateless handshake-era request) carries
no connection identity at all: every POST is self-contained and nothing in it tells two clients
apart (client info is optional and not an identity). A key per request would break the state a
session exists for (tool_view of an artifact from an earlier tool_execute, the cache-stable
prefix), so every sessionless request shares one key. Consequence: behind one gateway process,
sessionless clients share cache-stable ordering and can read each other's artifacts by handle
(handles are random, so only by being given one). Clients that need isolation use a session-
bearing transport (handshake-era Streamable HTTP, SSE or stdio). With access control, state is
keyed by the identity as well (gatespec.runtime_contract.Caller.scope): sessionless callers share it only
with callers of the same identity.
"""

from __future__ import annotations

from typing import Any, Final
from uuid import UUID

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.context import ServerRequestContext
from starlette.requests import Request

from gatespec.access import Identity
from gatespec.access.bearer import IdentityToken
from gatespec.server._sdk import connection_of

SESSIONLESS_KEY: Final = "http:sessionless"
MCP_SESSION_ID_HEADER: Final = "mcp-session-id"


def session_key(ctx: ServerRequestContext[Any, Any], fallback: str) -> str:
    """The key the runtime scopes per-client state by (see the module docstring)."""
    connection = connection_of(ctx)
    if connection is not None and connection.session_id:
        return f"http:{connection.session_id}"
    request = ctx.request
    if isinstance(request, Request):
        sse_id = request.query_params.get("session_id") or request.query_params.get("sessionId")
        if sse_id:
            return f"sse:{_normalise_uuid(sse_id)}"
        header = request.headers.get(MCP_SESSION_ID_HEADER)
        if header:  # stateful HTTP, should the Connection above ever be unreachable
            return f"http:{header}"
        return SESSIONLESS_KEY
    return fallback


def _normalise_uuid(value: str) -> str:
    # The SDK accepts any spelling UUID(hex=...) parses; one session must map to one key.
    try:
        return UUID(hex=value).hex
    except ValueError:
        return value


def identity_of(ctx: ServerRequestContext[Any, Any], fallback: Identity) -> Identity | None:
    """Who is calling (AM-ACCESS-CONTROL): over HTTP the identity its bearer token proved (the
    SDK's auth middleware put it on the request), over stdio and in-process `fallback` (the
    config's stdio identity). None: an HTTP request that carries no verified identity."""
    request = ctx.request
    if not isinstance(request, Request):
        return fallback
    user = request.scope.get("user")
    if isinstance(user, AuthenticatedUser) and isinstance(user.access_token, IdentityToken):
        return user.access_token.identity
    return None
