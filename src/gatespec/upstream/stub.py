"""A stub upstream that serves a static tool catalog from a JSON file and echoes calls.

Used for benchmarks and tests with hundreds of tools and no processes. Accepted file shapes:
``[{"name", "description", "inputSchema", ...}, ...]``, ``{"tools": [...]}``, and the
tool-retrieval catalog items ``{"server", "name", "description", "inputSchema", ...}``; when the
config names a ``server``, only items whose ``server`` field equals it are served.
Tools are served exactly as written (minus catalog bookkeeping keys such as ``server``), so a
malformed entry in the file reaches the caller like a malformed tool from a real server.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from anyio.abc import TaskGroup

from gatespec.config import DEFAULT_CONNECT_TIMEOUT, ServerConfig
from gatespec.upstream.base import ToolsChangedCallback, Upstream, UpstreamState
from gatespec.upstream.errors import UpstreamError

if TYPE_CHECKING:
    from gatespec.runtime_contract import Relay

logger = logging.getLogger(__name__)

# Keys an MCP tool definition may carry on the wire; other keys of catalog items are dropped.
TOOL_KEYS: Final = frozenset(
    {"name", "title", "description", "inputSchema", "outputSchema", "annotations", "icons",
     "execution", "_meta"}
)  # fmt: skip


def load_catalog(config: ServerConfig) -> list[dict[str, Any]]:
    """The tool dicts a stub config serves; raises UpstreamError(start_failed) on a bad file."""
    key, path = config.key, config.catalog
    if path is None:
        raise UpstreamError(key, "start_failed", "stub server has no catalog file")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UpstreamError(
            key, "start_failed", f"cannot read catalog {path}: {exc.strerror or exc}"
        ) from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UpstreamError(
            key, "start_failed", f"catalog {path} is not valid JSON: {exc}"
        ) from exc
    items = data.get("tools") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise UpstreamError(
            key, "start_failed", f"catalog {path}: expected an array of tools or {{'tools': [...]}}"
        )
    tools: list[dict[str, Any]] = []
    for item in items:
        if not isinstance(item, dict):  # same rule as a real server's listing
            logger.warning("stub %r: catalog entry is not an object: %r", key, item)
            continue
        if config.catalog_server is not None and item.get("server") != config.catalog_server:
            continue
        tools.append({k: v for k, v in item.items() if k in TOOL_KEYS})
    if config.catalog_server is not None and not tools:
        raise UpstreamError(
            key, "start_failed", f"catalog {path} has no tools of server {config.catalog_server!r}"
        )
    return tools


def echo_result(key: str, name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The deterministic answer of a stub tool: a description of the call plus its arguments."""
    args = dict(arguments)
    text = f"stub {key}/{name} called with {json.dumps(args, sort_keys=True, ensure_ascii=False)}"
    return {
        "content": [{"type": "text", "text": text}],
        "structuredContent": args,
        "isError": False,
    }


class StubUpstream(Upstream):
    """Serves a static catalog; `connect()` (re)reads the file."""

    def __init__(
        self,
        config: ServerConfig,
        *,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        call_timeout: float | None = None,
        on_tools_changed: ToolsChangedCallback | None = None,
    ) -> None:
        if config.kind.mcp:
            raise ValueError(f"StubUpstream cannot serve a {config.transport} server")
        super().__init__(
            config,
            connect_timeout=connect_timeout,
            call_timeout=call_timeout,
            on_tools_changed=on_tools_changed,
        )
        self._tools: list[dict[str, Any]] | None = None
        self._state: UpstreamState = "idle"
        self._error: UpstreamError | None = None

    @property
    def state(self) -> UpstreamState:
        return self._state

    @property
    def reason(self) -> str | None:
        return self._error.reason if self._error is not None else None

    @property
    def error(self) -> UpstreamError | None:
        return self._error if self._state == "failed" else None

    async def connect(self, task_group: TaskGroup | None = None) -> None:
        try:
            self._tools = load_catalog(self.config)
        except UpstreamError as exc:
            self._state, self._error, self._tools = "failed", exc, None
            raise
        self._state, self._error = "connected", None

    def _require(self) -> list[dict[str, Any]]:
        if self._state != "connected" or self._tools is None:
            raise UpstreamError(self.key, "unavailable", f"not connected ({self._state})")
        return self._tools

    async def list_tools(self) -> list[dict[str, Any]]:
        return copy.deepcopy(self._require())  # callers may edit their copy

    async def request(
        self,
        method: str,
        params: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        relay: Relay | None = None,
    ) -> dict[str, Any]:
        if method == "tools/list":  # one page: a catalog file has no cursors
            return {"tools": await self.list_tools()}
        return await super().request(method, params, timeout, relay)

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        relay: Relay | None = None,
    ) -> dict[str, Any]:
        tools = self._require()
        if not any(isinstance(t, dict) and t.get("name") == name for t in tools):
            raise UpstreamError(
                self.key, "call_failed", f"tools/call {name!r}: server error -32602: unknown tool"
            )
        return echo_result(self.key, name, arguments or {})

    async def close(self) -> None:
        self._state, self._tools = "closed", None
