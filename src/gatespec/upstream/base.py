"""The interface every upstream (real MCP server or stub) offers to the pool and the router."""

from __future__ import annotations

import inspect
import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Literal, Self

from anyio.abc import TaskGroup

from gatespec.config import DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, ServerConfig
from gatespec.upstream.errors import UpstreamError

if TYPE_CHECKING:
    from gatespec.runtime_contract import Relay

logger = logging.getLogger(__name__)

MAX_PAGES: Final = 1000  # a paginator that never ends must not hang a listing

UpstreamState = Literal["idle", "connecting", "connected", "failed", "closed"]
ListChangedSupport = Literal["notification", "subscription"] | None

ToolsChangedCallback = Callable[[str], Awaitable[None] | None]
"""Called with the upstream key when the server says its tool list changed (sync or async)."""

NotificationCallback = Callable[[str, str, dict[str, Any]], Awaitable[None] | None]
"""Called with (upstream key, method, params) for the notifications a registry follows:
notifications/prompts/list_changed, notifications/resources/list_changed and
notifications/resources/updated."""

FOLLOWED_NOTIFICATIONS = (
    "notifications/prompts/list_changed",
    "notifications/resources/list_changed",
    "notifications/resources/updated",
)


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
        self.on_notification: NotificationCallback | None = None

    @property
    @abstractmethod
    def state(self) -> UpstreamState: ...

    @property
    def capabilities(self) -> dict[str, Any]:
        """The capabilities the server declared (wire form); a server that declares none
        offers tools only."""
        return {"tools": {}}

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
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        relay: Relay | None = None,
    ) -> dict[str, Any]:
        """Call a tool; the CallToolResult in wire form (content, structuredContent, isError,
        _meta). A tool-level failure is a result with isError true, not an exception. What
        the server sends while answering (progress, logs, requests of its client) goes to
        `relay`, the client request the call is made for."""

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        relay: Relay | None = None,
    ) -> dict[str, Any]:
        """Any other MCP request (prompts/get, resources/list, ...): the result as the server
        sent it, less the protocol's own bookkeeping. UpstreamError when it fails."""
        raise UpstreamError(
            self.key, "call_failed", f"{method}: a {self.config.transport} upstream has no {method}"
        )

    async def list_all(
        self, method: str, field: str, timeout: float | None = None
    ) -> list[dict[str, Any]]:
        """Every entry of a paginated list (tools/list, prompts/list, resources/list,
        resources/templates/list), following nextCursor to the end; entries that are not
        objects are skipped and logged. UpstreamError on a failure, a loop or no end."""
        entries: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            params = {"cursor": cursor} if cursor is not None else {}
            raw = await self.request(method, params, timeout)
            page = raw.get(field)
            if not isinstance(page, list):
                raise UpstreamError(self.key, "protocol", f"{method} result has no {field} array")
            for item in page:
                if isinstance(item, dict):
                    entries.append(item)
                else:
                    logger.warning(
                        "upstream %r listed a non-object in %s: %r", self.key, method, item
                    )
            next_cursor = raw.get("nextCursor")
            if next_cursor is None or next_cursor == "":
                return entries
            if not isinstance(next_cursor, str):
                raise UpstreamError(self.key, "protocol", f"{method} nextCursor {next_cursor!r}")
            if next_cursor in seen:
                raise UpstreamError(
                    self.key, "protocol", f"{method} repeated cursor {next_cursor!r}"
                )
            seen.add(next_cursor)
            cursor = next_cursor
        raise UpstreamError(self.key, "protocol", f"{method} exceeded {MAX_PAGES} pages")

    async def _notified(self, method: str, params: dict[str, Any]) -> None:
        """Run the notification callback; its failures are logged, never propagated."""
        callback = self.on_notification
        if callback is None:
            return
        try:
            result = callback(self.key, method, params)
            if inspect.isawaitable(result):
                await result
        except Exception:
            logger.exception("on_notification callback failed for upstream %r", self.key)

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
