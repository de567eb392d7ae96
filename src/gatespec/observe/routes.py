"""GET /status (the page) and GET /status.json (what it shows), for any GatewayServer.

The page holds no data: it is served to anyone, with a Content-Security-Policy that lets it
load nothing from elsewhere and fetch only from this origin. The document is served to a
viewer the gateway knows: with bearer tokens required (access control), the identity its
token proves (the app's authentication middleware, as for /mcp), otherwise the server's
fallback identity (the config's stdio identity, else local). It is checked like /mcp against
DNS rebinding (Host and Origin), since it shows the viewer's calls and their arguments.

`attach(server)` adds the call log (gatespec.observe.calls) to the server's middleware once.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any, Final

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from gatespec.access import LOCAL, Identity
from gatespec.access.bearer import IdentityToken
from gatespec.observe.calls import CallLog
from gatespec.observe.status import status_document

__all__ = ["STATUS_JSON_PATH", "STATUS_PATH", "attach", "status_routes"]

STATUS_PATH: Final = "/status"
STATUS_JSON_PATH: Final = "/status.json"
_CSP: Final = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_ATTACHED: Final = "_gatespec_call_log"


@cache
def page() -> str:
    return resources.files(__package__).joinpath("status.html").read_text(encoding="utf-8")


def fallback_identity(server: Any) -> Identity:
    identity = getattr(server, "fallback_identity", LOCAL)
    return identity if isinstance(identity, Identity) else LOCAL


def attach(server: Any) -> CallLog:
    """The server's call log, added to its middleware on first use."""
    log = getattr(server, _ATTACHED, None)
    if isinstance(log, CallLog):
        return log
    from gatespec.server.catalog_server import caller_identity

    log = CallLog(lambda ctx: caller_identity(server, ctx, fallback_identity(server)))
    server.middleware.append(log)
    setattr(server, _ATTACHED, log)
    return log


def _viewer(request: Request, server: Any, requires_token: bool) -> Identity | None:
    user = request.scope.get("user")
    if isinstance(user, AuthenticatedUser) and isinstance(user.access_token, IdentityToken):
        return user.access_token.identity
    return None if requires_token else fallback_identity(server)


def status_routes(
    server: Any,
    security: TransportSecuritySettings | None,
    *,
    requires_token: bool | None = None,
) -> list[Route]:
    """The page and its document for `server` (module docstring); `requires_token`: whether a
    viewer must prove an identity (default: whether the server requires one of its callers,
    read at request time)."""
    from gatespec.profiles.registry import profile_named
    from gatespec.server.catalog_server import server_version

    calls = attach(server)
    source = profile_named(server.served.profile).status(server.served)
    guard = TransportSecurityMiddleware(security) if security is not None else None
    version = server_version()

    async def show_page(request: Request) -> Response:
        return HTMLResponse(page(), headers={"Content-Security-Policy": _CSP})

    async def document(request: Request) -> Response:
        if guard is not None and (refused := await guard.validate_request(request)) is not None:
            return refused
        required = server.requires_identity if requires_token is None else requires_token
        viewer = _viewer(request, server, required)
        if viewer is None:
            return JSONResponse(
                {"error": "a bearer token is required"},
                status_code=401,
                headers={"WWW-Authenticate": "Bearer"},
            )
        # In a worker thread: a catalog profile may build its snapshot on first use.
        metrics = getattr(server, "metrics", None)
        body = await anyio.to_thread.run_sync(
            status_document, source, calls, metrics, viewer, version
        )
        return JSONResponse(body, headers={"Cache-Control": "no-store"})

    return [
        Route(STATUS_PATH, endpoint=show_page, methods=["GET"]),
        Route(STATUS_JSON_PATH, endpoint=document, methods=["GET"]),
    ]
