"""The gateway's MCP server side: a profile's surface over a runtime, and its transports.

server = build_server(runtime)          # a catalog profile's surface (gateway, transparent,
                                        # search); gatespec.profiles.registry.build_server
                                        # picks any profile's by its registry row
await serve_stdio(server)               # or
await serve_http(server, "127.0.0.1", 8765, on_ready=print_ready)
"""

from gatespec.core import CatalogListing, GatewayRuntime, Reply
from gatespec.server.notify import ListChangedNotifier
from gatespec.server.sessions import SESSIONLESS_KEY, session_key
from gatespec.server.surface import (
    GatewayServer,
    MetaToolSurface,
    build_server,
    error_result,
)
from gatespec.server.transports import (
    ServeError,
    bind_http,
    build_http_app,
    loopback_security,
    print_ready,
    serve_http,
    serve_stdio,
)

__all__ = [
    "SESSIONLESS_KEY",
    "ServeError",
    "CatalogListing",
    "GatewayRuntime",
    "GatewayServer",
    "ListChangedNotifier",
    "MetaToolSurface",
    "Reply",
    "bind_http",
    "build_http_app",
    "build_server",
    "error_result",
    "loopback_security",
    "print_ready",
    "serve_http",
    "serve_stdio",
    "session_key",
]
