"""Upstream connections: one MCP server each (stdio, Streamable HTTP, legacy SSE, or a stub
catalog), and a pool that starts, isolates, refreshes and calls many of them.

    async with UpstreamPool(config.servers, connect_timeout=20, call_timeout=30) as pool:
        await pool.start(progress=print_progress)
        for key, state, reason in pool.statuses(): ...
        catalog = pool.tools()               # {key: [tool dicts exactly as listed]}
        result = await pool.call("fs", "read_file", {"path": "/tmp/x"})

Tools come back as plain wire dicts, malformed ones included; `tool_problem(tool)` says why a
tool cannot be exposed, so one bad definition costs that tool, not the whole server.
"""

from gatespec.upstream.base import (
    FOLLOWED_NOTIFICATIONS,
    ListChangedSupport,
    NotificationCallback,
    ToolsChangedCallback,
    Upstream,
    UpstreamState,
)
from gatespec.upstream.connection import McpUpstream
from gatespec.upstream.errors import ERROR_KINDS, ErrorKind, UpstreamError
from gatespec.upstream.factory import create_upstream
from gatespec.upstream.pool import (
    ProgressCallback,
    Reconfigured,
    UpstreamPool,
    UpstreamStatus,
)
from gatespec.upstream.revive import keep_connected
from gatespec.upstream.stub import StubUpstream, echo_result, load_catalog
from gatespec.upstream.wire import call_result, plain_result, strip_envelope_meta, tool_problem

__all__ = [
    "ERROR_KINDS",
    "FOLLOWED_NOTIFICATIONS",
    "ErrorKind",
    "ListChangedSupport",
    "McpUpstream",
    "NotificationCallback",
    "ProgressCallback",
    "Reconfigured",
    "StubUpstream",
    "ToolsChangedCallback",
    "Upstream",
    "UpstreamError",
    "UpstreamPool",
    "UpstreamState",
    "UpstreamStatus",
    "call_result",
    "create_upstream",
    "echo_result",
    "keep_connected",
    "load_catalog",
    "plain_result",
    "strip_envelope_meta",
    "tool_problem",
]
