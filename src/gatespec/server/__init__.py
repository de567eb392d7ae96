"""The gateway's MCP server side: a profile's MCP server over a runtime, and its transports.

server = build_server(runtime)          # a catalog profile's server (gateway, transparent,
                                        # search); gatespec.profiles.registry.build_server
                                        # picks any profile's by its registry row
await serve_stdio(server)               # or, both from gatespec.server.transports,
await serve_http(server, "127.0.0.1", 8765, on_ready=print_ready)

The transports are not re-exported here: they wire in the replicas wing (gatespec.replicas),
which uses this package's seam and helpers, and importing them here would make the two import
each other.
"""

from gatespec.runtime_contract import CatalogListing, GatewayRuntime, Reply
from gatespec.server.catalog_server import (
    GatewayServer,
    MetaToolHandlers,
    build_server,
    error_result,
)
from gatespec.server.notify import ListChangedNotifier
from gatespec.server.sessions import SESSIONLESS_KEY, session_key

__all__ = [
    "SESSIONLESS_KEY",
    "CatalogListing",
    "GatewayRuntime",
    "GatewayServer",
    "ListChangedNotifier",
    "MetaToolHandlers",
    "Reply",
    "build_server",
    "error_result",
    "session_key",
]
