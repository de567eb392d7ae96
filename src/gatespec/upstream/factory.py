"""Pick the upstream implementation a server config needs."""

from __future__ import annotations

from gatespec.config import DEFAULT_CONNECT_TIMEOUT, ServerConfig
from gatespec.upstream.base import ToolsChangedCallback, Upstream
from gatespec.upstream.connection import McpUpstream
from gatespec.upstream.stub import StubUpstream


def create_upstream(
    config: ServerConfig,
    *,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    call_timeout: float | None = None,
    on_tools_changed: ToolsChangedCallback | None = None,
) -> Upstream:
    """A `StubUpstream` for stub configs, an `McpUpstream` (stdio/http/sse) otherwise."""
    if not config.kind.mcp:
        return StubUpstream(
            config,
            connect_timeout=connect_timeout,
            call_timeout=call_timeout,
            on_tools_changed=on_tools_changed,
        )
    return McpUpstream(
        config,
        connect_timeout=connect_timeout,
        call_timeout=call_timeout,
        on_tools_changed=on_tools_changed,
    )
