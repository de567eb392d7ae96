"""The observation port of a stdio gateway: /metrics, /status and /status.json over HTTP.

A stdio gateway has no HTTP app of its own, so the opt-in `--metrics-port` (the config's
`gateway.metrics_port`) serves what the HTTP transport serves beside /mcp: the Prometheus
metrics and the status page, from the same route builders. It runs uvicorn in a thread of its
own (as prometheus-client's own metrics server did), so it needs nothing from the stdio loop
and never touches the process's signal handlers (uvicorn only installs them in the main
thread); the runtime state it reads is read under the locks the runtime and the call log keep
for worker threads.

With access control that names tokens, /status.json wants one (the identity the token proves
sees its own status); otherwise the viewer is the stdio client's identity.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from gatespec.access.config import AccessConfig

__all__ = ["observe_port"]

_STARTED_WITHIN = 10.0  # seconds uvicorn gets to start listening


def observe_app(server: Any, host: str, access: AccessConfig | None) -> Starlette:
    # Imported here: a stdio serve without --metrics-port never builds the app, and the status
    # routes bring PyJWT (~2 MiB) with them.
    from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.authentication import AuthenticationMiddleware

    from gatespec.observe.routes import status_routes
    from gatespec.server.transports import loopback_security, metrics_routes

    http = access.http if access is not None else None
    security = loopback_security(
        host, http.allowed_hosts if http else (), http.allowed_origins if http else ()
    )
    tokens = access is not None and access.authenticates
    middleware = []
    if tokens and access is not None:
        backend = BearerAuthBackend(access.verifier())
        middleware.append(Middleware(AuthenticationMiddleware, backend=backend))
    routes = [*metrics_routes(server), *status_routes(server, security, requires_token=tokens)]
    return Starlette(routes=routes, middleware=middleware)


@contextmanager
def observe_port(
    server: Any, host: str, port: int | None, access: AccessConfig | None = None
) -> Iterator[str | None]:
    """Serve `server`'s metrics and status on host:port while the block runs; yields the base
    URL (None and nothing served when `port` is None). ServeError when the port is taken."""
    if port is None:
        yield None
        return
    import uvicorn

    from gatespec.server.transports import _url, bind_http

    sock = bind_http(host, port)  # a taken port: ServeError, before anything starts
    metrics = getattr(server, "metrics", None)
    if metrics is not None:
        metrics.sessions = lambda: 1  # stdio: one client
    app = observe_app(server, host, access)
    web = uvicorn.Server(uvicorn.Config(app, log_config=None, log_level="warning"))
    thread = threading.Thread(
        target=web.run, kwargs={"sockets": [sock]}, name="gatespec-observe", daemon=True
    )
    thread.start()
    deadline = time.monotonic() + _STARTED_WITHIN
    while not web.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield _url(host, sock.getsockname()[1])
    finally:
        web.should_exit = True
        thread.join(timeout=5)
        sock.close()
