"""The interface every upstream (real MCP server or stub) offers to the pool and the router."""

from __future__ import annotations

import inspect
import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import Any, Literal, Self

from anyio.abc import TaskGroup

from gatespec.config import DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, ServerConfig
from gatespec.upstream.errors import UpstreamError

logger = logging.getLogger(__name__)

UpstreamState = Literal["idle", "connecting", "connected", "failed", "closed"]
ListChangedSupport = Literal["notification", "subscription"] | None

ToolsChangedCallback = Callable[[str], Awaitable[None] | None]
"""Called with the upstream key when the server says its tool list changed (sync or async)."""


class Upstream(ABC):
    """One upstream server.

    Lifecycle: `connect()` (raises UpstreamError when it cannot), then `list_tools()` and
    `call_tool()` from any task, then `close()`. `connect()` may be called again after a
    failure to reconnect. A connection is driven by a task in `task_group` when given (the pool
    passes its own), else in a task group the upstream hosts itself until `close()`.
    """

    def __init__(
        self,
        config: ServerConfig,
        *,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        call_timeout: float | None = None,
        on_tools_changed: ToolsChangedCallback | None = None,
    ) -> None:
        self.config = config
        self.key = config.key
        self.connect_timeout = connect_timeout
        # A per-server `timeout` in the config wins over the caller's default.
        self.call_timeout = (
            config.timeout if config.timeout is not None else call_timeout or DEFAULT_CALL_TIMEOUT
        )
        self.on_tools_changed = on_tools_changed

    @property
    @abstractmethod
    def state(self) -> UpstreamState: ...

    @property
    @abstractmethod
    def reason(self) -> str | None:
        """Why the upstream is failed (None otherwise)."""

    @property
    def error(self) -> UpstreamError | None:
        """The typed failure behind a failed state (kind + reason), else None."""
        return None

    @property
    def list_changed(self) -> ListChangedSupport:
        """How tool-list changes reach us: legacy notification, 2026 subscription, or not at all."""
        return None

    @property
    def connected(self) -> bool:
        return self.state == "connected"

    @abstractmethod
    async def connect(self, task_group: TaskGroup | None = None) -> None: ...

    @abstractmethod
    async def list_tools(self) -> list[dict[str, Any]]:
        """Every tool the server lists (all pages), as plain wire dicts exactly as sent."""

    @abstractmethod
    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, timeout: float | None = None
    ) -> dict[str, Any]:
        """Call a tool; the CallToolResult in wire form (content, structuredContent, isError,
        _meta). A tool-level failure is a result with isError true, not an exception."""

    @abstractmethod
    async def close(self) -> None: ...

    async def __aenter__(self) -> Self:
        try:
            await self.connect()
        except BaseException:
            await self.close()  # no __aexit__ follows a failed __aenter__
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def _tools_changed(self) -> None:
        """Run the registered callback; its failures are logged, never propagated."""
        callback = self.on_tools_changed
        if callback is None:
            return
        try:
            result = callback(self.key)
            if inspect.isawaitable(result):
                await result
        except Exception:
            logger.exception("on_tools_changed callback failed for upstream %r", self.key)
