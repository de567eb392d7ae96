"""JSON-RPC error constructors used by both profiles.

Handlers raise `MCPError`; the SDK's server runner turns it into a JSON-RPC
error response, so nothing else ever crosses the MCP boundary.
"""

from __future__ import annotations

from typing import Any

import mcp.types as types
from mcp.shared.exceptions import MCPError

INVALID_PARAMS = types.INVALID_PARAMS  # -32602
INTERNAL_ERROR = types.INTERNAL_ERROR  # -32603
REQUEST_TIMEOUT = types.REQUEST_TIMEOUT  # -32001 (SDK-defined "request timed out")


def rpc_error(code: int, message: str, **data: Any) -> MCPError:
    return MCPError(code, message, {k: v for k, v in data.items() if v is not None} or None)


def not_namespaced(message: str, name: str) -> MCPError:
    return rpc_error(INVALID_PARAMS, message, name=name, reason="missing_namespace")


def invalid_namespace(message: str, name: str) -> MCPError:
    return rpc_error(INVALID_PARAMS, message, name=name, reason="invalid_namespace")


def unknown_server(server: str, name: str) -> MCPError:
    return rpc_error(INVALID_PARAMS, f"Unknown server: {server}", server=server, name=name, reason="unknown_server")


def not_found(what: str, name: str, server: str) -> MCPError:
    return rpc_error(INVALID_PARAMS, f"{what} not found: {name}", server=server, name=name, reason="not_found")


def unavailable(server: str, detail: str | None = None) -> MCPError:
    return rpc_error(INTERNAL_ERROR, f"Server {server} unavailable", server=server, detail=detail, reason="unavailable")


def timeout(server: str, name: str, seconds: float) -> MCPError:
    return rpc_error(
        REQUEST_TIMEOUT,
        f"Timeout: '{name}' on server {server} did not complete within {seconds:g}s and was cancelled",
        server=server,
        name=name,
        timeoutSeconds=seconds,
        reason="timeout",
    )


def upstream_protocol(server: str, detail: str) -> MCPError:
    return rpc_error(INTERNAL_ERROR, f"Server {server} sent an invalid response", server=server, detail=detail)
