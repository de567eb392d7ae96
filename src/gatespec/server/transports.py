"""Serving a GatewayServer: stdio, or one HTTP app with every MCP HTTP transport.

HTTP routes (AM-SSE-AND-STREAMABLE):
- ``/mcp``: Streamable HTTP for both protocol eras. Handshake-era clients get a stateful
  session (``Mcp-Session-Id``, so list_changed can reach them on their GET stream); 2026-07-28
  clients are served per request by the SDK (routed on ``MCP-Protocol-Version``). A POST that
  carries a request is answered with an SSE stream: what an upstream sends while answering
  (progress, log messages, sampling / elicitation / roots requests) rides that request's
  stream to its client (AM-UPSTREAM-RELAY). (A JSON body would save 0.1-0.7 ms of server CPU
  per call, measured here, but carries nothing but the response.)
- ``/sse`` + ``/messages?session_id=``: the 2024-11-05 SSE transport. The SDK advertises
  ``session_id``; seed 001's spelling ``sessionId`` is accepted too.

DNS-rebinding protection (Host/Origin checks) is on for loopback binds, for every route: the
SDK turns it on for /mcp only and leaves SSE unprotected unless told.
"""

from __future__ import annotations

import logging
import socket
import sys
from collections.abc import Awaitable, Callable
from typing import Final
from urllib.parse import parse_qsl, urlencode

import anyio
from mcp.server.sse import SseServerTransport
from mcp.server.stdio import stdio_server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from gatespec.server.stdio import pipe_stdio
from gatespec.server.surface import GatewayServer
from gatespec.serving import ServeError

logger = logging.getLogger(__name__)

MCP_PATH: Final = "/mcp"
SSE_PATH: Final = "/sse"
MESSAGES_PATH: Final = "/messages"
LOOPBACK_HOSTS: Final = ("127.0.0.1", "localhost", "::1")
SHUTDOWN_GRACE: Final = 3  # seconds open streams (SSE, GET) get before uvicorn drops them


def loopback_security(host: str) -> TransportSecuritySettings | None:
    """Host/Origin checks for a loopback bind (what the SDK applies to /mcp), else None."""
    if host not in LOOPBACK_HOSTS:
        return None
    hosts = ["127.0.0.1", "localhost", "[::1]"]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*hosts, *(f"{h}:*" for h in hosts)],
        allowed_origins=[f"http://{h}{port}" for h in hosts for port in ("", ":*")],
    )


class _SseConnect:
    """GET /sse: one legacy SSE connection, served until the client goes away."""

    def __init__(self, server: GatewayServer, transport: SseServerTransport) -> None:
        self.server = server
        self.transport = transport

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            async with self.transport.connect_sse(scope, receive, send) as (read, write):
                await self.server.run(read, write, self.server.create_initialization_options())
        except ValueError as exc:
            # connect_sse raises this after it has already answered a rejected request (403).
            logger.debug("SSE connection refused: %s", exc)


class _SseMessages:
    """POST /messages: a client message for an open SSE connection."""

    def __init__(self, transport: SseServerTransport) -> None:
        self.transport = transport

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"))
        keys = {k for k, _ in query}
        if "session_id" not in keys and "sessionId" in keys:
            query.append(("session_id", next(v for k, v in query if k == "sessionId")))
            scope = {**scope, "query_string": urlencode(query).encode("latin-1")}
        await self.transport.handle_post_message(scope, receive, send)


def build_http_app(
    server: GatewayServer,
    *,
    host: str = "127.0.0.1",
    security: TransportSecuritySettings | None = None,
) -> Starlette:
    """One Starlette app: Streamable HTTP at /mcp, legacy SSE at /sse + /messages."""
    security = security if security is not None else loopback_security(host)
    sse = SseServerTransport(MESSAGES_PATH, security_settings=security)
    messages = _SseMessages(sse)
    routes = [
        Route(SSE_PATH, endpoint=_SseConnect(server, sse), methods=["GET"]),
        Route(MESSAGES_PATH, endpoint=messages, methods=["POST"]),
        Route(MESSAGES_PATH + "/", endpoint=messages, methods=["POST"]),
    ]
    return server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        json_response=False,
        host=host,
        transport_security=security,
        custom_starlette_routes=routes,
    )


async def serve_stdio(server: GatewayServer) -> None:
    """Serve one client over this process's stdin/stdout until it closes stdin."""
    async with pipe_stdio() as pipes:
        stdin, stdout = pipes if pipes is not None else (None, None)
        async with stdio_server(stdin, stdout) as (read, write):
            await server.run(read, write, server.create_initialization_options())


async def serve_http(
    server: GatewayServer,
    host: str,
    port: int,
    *,
    sock: socket.socket | None = None,
    on_ready: Callable[[str], Awaitable[None] | None] | None = None,
    log_level: str = "warning",
) -> None:
    """Serve the HTTP app with uvicorn until interrupted; on_ready gets the base URL.

    The socket is bound by `bind_http` (pass `sock` to bind before slow start-up work), not
    by uvicorn, so that a taken port is a ServeError rather than uvicorn's sys.exit from
    inside the event loop.
    """
    try:
        import uvicorn
    except ImportError as exc:  # uvicorn comes with mcp, but say so if it is gone
        raise ServeError(
            "serving HTTP needs uvicorn: pip install 'uvicorn>=0.31' into this environment"
        ) from exc
    sock = sock if sock is not None else bind_http(host, port)
    app = build_http_app(server, host=host)
    config = uvicorn.Config(
        app,
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=SHUTDOWN_GRACE,
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
        # Shutting down: end subscriptions/listen streams gracefully (the client is told the
        # stream closed on purpose) instead of letting uvicorn's grace period run out on them.
        if server.notifier is not None:
            server.notifier.close()

    with sock:
        async with anyio.create_task_group() as tg:
            tg.start_soon(lifecycle)
            try:
                await web.serve(sockets=[sock])
            finally:
                tg.cancel_scope.cancel()


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
