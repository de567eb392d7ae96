"""Serving a GatewayServer: stdio, or one HTTP app with every MCP HTTP transport.

HTTP routes (AM-SSE-AND-STREAMABLE):
- ``/mcp``: Streamable HTTP for both protocol eras. Handshake-era clients get a stateful
  session (``Mcp-Session-Id``, so list_changed can reach them on their GET stream); 2026-07-28
  clients are served per request by the SDK (routed on ``MCP-Protocol-Version``). A POSTed
  request is answered with one JSON body, unless something an upstream sends while answering
  it (progress, sampling / elicitation / roots requests) may have to ride that request's SSE
  stream to its client (server.answers, AM-HTTP-ANSWER-FORM).
- ``/sse`` + ``/messages?session_id=``: the 2024-11-05 SSE transport. The SDK advertises
  ``session_id``; seed 001's spelling ``sessionId`` is accepted too.

DNS-rebinding protection (Host/Origin checks) is on for loopback binds, for every route: the
SDK turns it on for /mcp only and leaves SSE unprotected unless told. Other binds get it when
the config names the hosts (and origins) to accept (gateway.access.http).

With access control (AM-ACCESS-CONTROL), every MCP route requires a bearer token, checked by
the MCP SDK's server auth: its AuthenticationMiddleware runs the token verifier
(gatespec.access.tokens), its RequireAuthMiddleware answers a request without a valid token
401 with a WWW-Authenticate challenge naming the protected-resource metadata (RFC 9728), which
is served at /.well-known/oauth-protected-resource/mcp. The SDK wraps /mcp; the SSE routes are
wrapped here the same way. Sessions are bound to the identity that opened them by the SDK: a
request for another identity's session is answered as for a session that does not exist.

With a shared state backend (redis), handshake-era sessions are served by every replica
(AM-SHARED-SESSIONS): replicas.http_sessions for /mcp, replicas.sse_forward for /sse + /messages.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import signal
import socket
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import parse_qsl, urlencode

import anyio
from mcp.server.auth.middleware.bearer_auth import RequireAuthMiddleware
from mcp.server.auth.routes import build_resource_metadata_url
from mcp.server.auth.settings import AuthSettings
from mcp.server.sse import SseServerTransport
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gatespec.config import SessionBounds
from gatespec.metrics import CONTENT_TYPE
from gatespec.observe.routes import status_routes
from gatespec.observe.tracing import follow_http_headers
from gatespec.replicas.http_sessions import SharedSessions, run_channels
from gatespec.replicas.registry import SessionChannels, SessionRegistry, open_registry
from gatespec.replicas.sse_forward import SseForward, endpoint_session
from gatespec.server._sdk import on_discard, sse_streams
from gatespec.server._sdk import open_sessions as sdk_sessions
from gatespec.server.answers import answer_per_request
from gatespec.server.catalog_server import GatewayServer
from gatespec.server.health import Health, health_routes
from gatespec.server.request_shape import RequestShape
from gatespec.server.session_limits import SessionLimits
from gatespec.server.stdio import pipe_stdio
from gatespec.serving import ServeError

if TYPE_CHECKING:
    from gatespec.access.config import AccessConfig

logger = logging.getLogger(__name__)

MCP_PATH: Final = "/mcp"
SSE_PATH: Final = "/sse"
MESSAGES_PATH: Final = "/messages"
METRICS_PATH: Final = "/metrics"
LOOPBACK_HOSTS: Final = ("127.0.0.1", "localhost", "::1")
SHUTDOWN_GRACE: Final = 3  # seconds open streams (SSE, GET) get before uvicorn drops them


def is_loopback(host: str) -> bool:
    """Whether `host` names a loopback address: localhost, or any of 127.0.0.0/8 and ::1 (not
    only 127.0.0.1: a bind to 127.0.0.2 is as open to DNS rebinding)."""
    if host in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def loopback_security(
    host: str, hosts: tuple[str, ...] = (), origins: tuple[str, ...] = ()
) -> TransportSecuritySettings | None:
    """Host/Origin checks: for a loopback bind (`is_loopback`) the loopback names and the
    bound address (what the SDK applies to
    /mcp) plus `hosts` and `origins`; for another bind only those given, else None (no
    check: the operator named no host to check against)."""
    allowed_hosts = list(hosts)
    allowed_origins = list(origins)
    if is_loopback(host):
        loopback = ["127.0.0.1", "localhost", "[::1]"]
        bound = f"[{host}]" if ":" in host else host
        if bound not in loopback:  # 127.0.0.2 and the rest of 127.0.0.0/8
            loopback.append(bound)
        allowed_hosts += [*loopback, *(f"{h}:*" for h in loopback)]
        allowed_origins += [f"http://{h}{port}" for h in loopback for port in ("", ":*")]
    if not allowed_hosts:
        return None
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=allowed_hosts,
        allowed_origins=allowed_origins,
    )


def _auth_settings(access: AccessConfig, resource_url: str) -> AuthSettings:
    """The SDK's resource-server settings: the metadata names this gateway and the server
    whose tokens it accepts (the JWT issuer, or the gateway itself for static tokens). The
    verifier checks a JWT's audience itself, so the SDK's resource check stays off."""
    http = access.http
    resource = http.resource_url or resource_url
    issuer = http.authorization_server
    if issuer is None and access.jwt is not None and access.jwt.issuer.startswith("http"):
        issuer = access.jwt.issuer
    origin = "/".join(resource.split("/", 3)[:3])  # scheme://host:port
    # validated from strings so that AuthSettings keeps a path-less URL as written (RFC 8414
    # issuers compare as exact strings; a trailing slash would make another issuer)
    return AuthSettings.model_validate(
        {
            "issuer_url": issuer or origin,
            "resource_server_url": resource,
            "validate_token_resource": False,
        }
    )


def _guarded(app: ASGIApp, auth: AuthSettings | None) -> ASGIApp:
    """`app` behind the SDK's bearer-token requirement, when tokens are required."""
    if auth is None or auth.resource_server_url is None:
        return app
    metadata = build_resource_metadata_url(auth.resource_server_url)
    return RequireAuthMiddleware(app, auth.required_scopes or [], metadata)


class _SseConnect:
    """GET /sse: one legacy SSE connection, served until the client goes away."""

    def __init__(
        self, server: GatewayServer, transport: SseServerTransport, forward: SseForward | None
    ) -> None:
        self.server = server
        self.transport = transport
        self.forward = forward  # replicas: POSTs for this stream may arrive at another one

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        held: list[str] = []
        if self.forward is not None:
            send = self.forward.watch_connect(scope, send, held)
        named: list[str] = []  # the session this stream serves, once the endpoint names it
        send = _naming(send, named)
        try:
            async with self.transport.connect_sse(scope, receive, send) as (read, write):
                await self.server.run(read, write, self.server.create_initialization_options())
        except ValueError as exc:
            # connect_sse raises this after it has already answered a rejected request (403).
            logger.debug("SSE connection refused: %s", exc)
        finally:
            if self.forward is not None and held:
                await self.forward.close(held[0])
            if named:  # the session ends with its stream (server.sessions names it so)
                with anyio.CancelScope(shield=True), anyio.move_on_after(SHUTDOWN_GRACE):
                    await self.server.session_ended(f"sse:{named[0]}")


def _naming(send: Send, named: list[str]) -> Send:
    """`send`, noting the session id the endpoint event names into `named`."""

    async def noting(message: Message) -> None:
        if not named and (session := endpoint_session(message)) is not None:
            named.append(session)
        await send(message)

    return noting


class _SseMessages:
    """POST /messages: a client message for an open SSE connection."""

    def __init__(self, transport: SseServerTransport, forward: SseForward | None) -> None:
        self.transport = transport
        self.forward = forward

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"))
        keys = {k for k, _ in query}
        if "session_id" not in keys and "sessionId" in keys:
            query.append(("session_id", next(v for k, v in query if k == "sessionId")))
            scope = {**scope, "query_string": urlencode(query).encode("latin-1")}
        if self.forward is None:
            await self.transport.handle_post_message(scope, receive, send)
        else:
            await self.forward.post(scope, receive, send, self.transport.handle_post_message)


def build_http_app(
    server: GatewayServer,
    *,
    host: str = "127.0.0.1",
    security: TransportSecuritySettings | None = None,
    access: AccessConfig | None = None,
    resource_url: str | None = None,
    sessions: SessionBounds | None = None,
    health: Health | None = None,
) -> Starlette:
    """One Starlette app: Streamable HTTP at /mcp, legacy SSE at /sse + /messages; with an
    access config that names tokens, every MCP route requires one (module docstring).
    resource_url: this gateway's /mcp URL, for the protected-resource metadata; sessions:
    the bounds of the /mcp session table (gatespec.server.session_limits)."""
    sessions = sessions or SessionBounds()
    if security is None:
        http = access.http if access is not None else None
        security = loopback_security(
            host, http.allowed_hosts if http else (), http.allowed_origins if http else ()
        )
    auth = None
    if access is not None and access.authenticates:
        auth = _auth_settings(access, resource_url or f"http://{host}{MCP_PATH}")
        server.requires_identity = True
    sse = SseServerTransport(MESSAGES_PATH, security_settings=security)
    # Replicas sharing a store share handshake-era sessions too (AM-SHARED-SESSIONS).
    registry = open_registry(getattr(server.served, "state", None))
    channels = SessionChannels(registry) if registry is not None else None
    forward = None
    if registry is not None and channels is not None:
        forward = SseForward(registry, channels, MESSAGES_PATH)
    connect = _guarded(_SseConnect(server, sse, forward), auth)
    messages = _guarded(RequestShape(_SseMessages(sse, forward)), auth)
    routes = [
        Route(SSE_PATH, endpoint=connect, methods=["GET"]),
        Route(MESSAGES_PATH, endpoint=messages, methods=["POST"]),
        Route(MESSAGES_PATH + "/", endpoint=messages, methods=["POST"]),
        *(health_routes(health) if health is not None else ()),
        *metrics_routes(server),
        *status_routes(server, security),  # the status page (gatespec.observe)
    ]
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        # SSE where a request needs it: the handshake-era sessions choose per request
        # (answer_per_request), the 2026-07-28 path answers JSON unless the handler sent
        # something first.
        json_response=False,
        host=host,
        transport_security=security,
        auth=auth,
        token_verifier=access.verifier() if auth is not None and access is not None else None,
        custom_starlette_routes=routes,
        session_idle_timeout=sessions.idle_timeout,
        max_sessions=sessions.max_sessions,
    )
    answer_per_request(server.session_manager, server.may_relay)
    follow_http_headers(server)  # a client's W3C trace headers (gatespec.observe.tracing)

    async def discarded(session_id: str) -> None:  # a session's end (server.sessions names it)
        # bounded: a hung upstream must not hold up the SDK's session cleanup
        with anyio.CancelScope(shield=True), anyio.move_on_after(SHUTDOWN_GRACE):
            await server.session_ended(f"http:{session_id}")

    on_discard(server.session_manager, discarded)
    shared = None
    if registry is not None and channels is not None and forward is not None:
        shared = (registry, channels)
        forward.app = app
        run_channels(app, channels)
    _bound_sessions(app, server, sessions, requires_identity=auth is not None, shared=shared)
    if server.metrics is not None:
        server.metrics.sessions = lambda: open_sessions(server, sse)
    return app


def open_sessions(server: GatewayServer, sse: SseServerTransport) -> int:
    """The client sessions this replica holds: Streamable HTTP (handshake era) and SSE
    (2026-07-28 requests hold none)."""
    return len(sdk_sessions(server.session_manager)) + sse_streams(sse)


def metrics_routes(server: GatewayServer) -> list[Route]:
    """GET /metrics: the Prometheus text format (gatespec.metrics); like /healthz, no token
    (it names upstreams and tools, never callers or arguments)."""
    metrics = server.metrics
    if metrics is None:
        return []

    async def scrape(request: Request) -> Response:
        return Response(metrics.exposition(), media_type=CONTENT_TYPE)

    return [Route(METRICS_PATH, endpoint=scrape, methods=["GET"])]


def _bound_sessions(
    app: Starlette,
    server: GatewayServer,
    bounds: SessionBounds,
    *,
    requires_identity: bool,
    shared: tuple[SessionRegistry, SessionChannels] | None,
) -> None:
    """Put SessionLimits in front of the /mcp endpoint (inside the app's authentication
    middleware, so it knows who is calling; outside the SDK's token requirement, which it
    lets answer callers without a valid token), and behind it, with a shared store,
    SharedSessions (sessions other replicas opened)."""
    manager = server.session_manager
    for route in app.routes:
        if isinstance(route, Route) and route.path == MCP_PATH:
            inner = route.app
            if shared is not None:
                inner = SharedSessions(inner, manager, *shared, MCP_PATH)
                inner.answers.app = app  # forwarded POSTs are served by the whole app
            limited = SessionLimits(inner, manager, bounds, requires_identity=requires_identity)
            route.app = RequestShape(limited)
            return
    raise RuntimeError(f"the SDK's app has no {MCP_PATH} route")  # pragma: no cover


async def serve_stdio(server: GatewayServer, drain_timeout: float = SHUTDOWN_GRACE) -> None:
    """Serve one client over this process's stdin/stdout until it closes stdin (the requests
    read before then are answered first, within `drain_timeout`)."""
    try:
        async with pipe_stdio(drain_timeout) as streams:
            if streams is not None:
                await server.run(*streams, server.create_initialization_options())
                return
        async with stdio_server() as (read, write):  # a terminal or a file: the SDK's own
            await server.run(read, write, server.create_initialization_options())
    finally:  # the one session ends with stdin (server.sessions: the fallback key)
        with anyio.CancelScope(shield=True), anyio.move_on_after(SHUTDOWN_GRACE):
            await server.session_ended(server.fallback_session)


async def serve_http(
    server: GatewayServer,
    host: str,
    port: int,
    *,
    sock: socket.socket | None = None,
    on_ready: Callable[[str], Awaitable[None] | None] | None = None,
    log_level: str = "warning",
    access: AccessConfig | None = None,
    sessions: SessionBounds | None = None,
    drain_timeout: float = SHUTDOWN_GRACE,
) -> None:
    """Serve the HTTP app with uvicorn until interrupted; on_ready gets the base URL.

    The socket is bound by `bind_http` (pass `sock` to bind before slow start-up work), not
    by uvicorn, so that a taken port is a ServeError rather than uvicorn's sys.exit from
    inside the event loop.

    Serving starts once the first upstream is ready (AM-SERVE-FIRST-READY); /readyz says
    ready once every upstream has settled (server.health) and until SIGTERM (or SIGINT)
    starts the drain: uvicorn closes the listening socket, lets the calls in flight finish
    for up to `drain_timeout` seconds, then cancels what is left.
    """
    try:
        import uvicorn
    except ImportError as exc:  # uvicorn comes with mcp, but say so if it is gone
        raise ServeError(
            "serving HTTP needs uvicorn: pip install 'uvicorn>=0.31' into this environment"
        ) from exc
    sock = sock if sock is not None else bind_http(host, port)
    resource_url = _url(host, sock.getsockname()[1]) + MCP_PATH
    health = Health(server.served)
    app = build_http_app(
        server,
        host=host,
        access=access,
        resource_url=resource_url,
        sessions=sessions,
        health=health,
    )
    from gatespec.server.http_writes import OneWriteHttpProtocol

    config = uvicorn.Config(
        app,
        http=OneWriteHttpProtocol,
        log_level=log_level,
        # uvicorn's records go through the gateway's own handler (one line each, no expanded
        # secret: gatespec.logs) instead of handlers uvicorn would install for itself.
        log_config=None,
        lifespan="on",
        timeout_graceful_shutdown=math.ceil(drain_timeout),  # uvicorn takes whole seconds
    )
    web = uvicorn.Server(config)

    async def lifecycle() -> None:
        while not web.started:
            if web.should_exit:
                return
            await anyio.sleep(0.02)
        if on_ready is not None:
            result = on_ready(_url(host, sock.getsockname()[1]))
            if result is not None:
                await result
        while not web.should_exit:
            await anyio.sleep(0.1)
        health.drain()
        # Shutting down: end subscriptions/listen streams gracefully (the client is told the
        # stream closed on purpose) instead of letting uvicorn's grace period run out on them.
        if server.notifier is not None:
            server.notifier.close()

    with sock, _drained_sigterm(web):
        async with anyio.create_task_group() as tg:
            tg.start_soon(lifecycle)
            try:
                await web.serve(sockets=[sock])
            finally:
                tg.cancel_scope.cancel()


@contextmanager
def _drained_sigterm(web: Any) -> Iterator[None]:
    """uvicorn drains on SIGTERM, then raises the signal again with the handler it found; the
    default one would kill the process before the upstreams are closed. Ours (also in place a
    moment before uvicorn takes over) just asks the server to exit, so shutdown runs on and
    the process exits 0."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        web.should_exit = True

    previous = signal.signal(signal.SIGTERM, stop)
    _SERVING.add(web)
    try:
        yield
    finally:
        _SERVING.discard(web)
        signal.signal(signal.SIGTERM, previous)


# The uvicorn servers this process is serving with: the CLI's SIGTERM handler drains them
# (calls in flight finish) instead of cancelling everything as it does during start-up.
_SERVING: set[Any] = set()


def drain_serving() -> bool:
    """Ask every HTTP server serving in this process to drain; whether there was one."""
    for web in _SERVING:
        web.should_exit = True
    return bool(_SERVING)


def bind_http(host: str, port: int) -> socket.socket:
    """A listening-ready TCP socket for serve_http, or ServeError saying why not."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not the default 0: asyncio sets TCP_NODELAY on accepted connections only
    # when the listening socket says it is TCP. Without it Nagle holds back the second write
    # of a response until the client's delayed ACK (~40 ms per Streamable HTTP request).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ServeError(f"cannot listen on {_url(host, port)}: {exc.strerror or exc}") from exc
    return sock


def _url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def print_ready(url: str) -> None:
    print(
        f"gatespec: serving {url}{MCP_PATH} (Streamable HTTP) and {url}{SSE_PATH} (SSE)",
        file=sys.stderr,
        flush=True,
    )
