"""The catalog of what every upstream exposes (seed 001, "Server Management",
"Tool Storage", "Event Notification").

Items are stored CLEAN (upstream names, full schemas) indexed by server key;
namespacing happens only at the boundary (seed 004, Principle 1/3).

* addServer  == an upstream (re)connects: fetch all tools (paginated), store,
  emit `change`.
* removeServer == an upstream disconnects: drop everything it exposed, emit
  `change`.
* upstream `notifications/*/list_changed`: re-fetch from that backend, update
  the catalog, emit `change`.
* `collect(kind)`: the broadcast of seed 004 ("Broadcast Methods"): ask every
  upstream in parallel, store what came back, report per-server failures so
  the caller can return partial results.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.abc
import mcp.types as types
from mcp.shared.exceptions import MCPError

from .upstream import UpstreamError, UpstreamPool

logger = logging.getLogger(__name__)

KINDS = ("tools", "prompts", "resources", "resource_templates")
# Which client-facing list_changed notification a catalog kind belongs to.
NOTIFY_KIND = {"tools": "tools", "prompts": "prompts", "resources": "resources", "resource_templates": "resources"}

ChangeListener = Callable[[str], Awaitable[None]]


class Registry:
    def __init__(self, pool: UpstreamPool):
        self.pool = pool
        self.catalog: dict[str, dict[str, list[Any]]] = {kind: {} for kind in KINDS}
        self._listeners: list[ChangeListener] = []
        self._tg: anyio.abc.TaskGroup | None = None
        pool.subscribe(self._on_upstream_event)

    # ------------------------------------------------------------------ events
    def on_change(self, listener: ChangeListener) -> None:
        self._listeners.append(listener)

    async def emit_change(self, kind: str) -> None:
        """The registry `change` event; `kind` is tools|prompts|resources."""
        for listener in list(self._listeners):
            try:
                await listener(kind)
            except Exception:  # noqa: BLE001
                logger.exception("change listener failed")

    def _spawn(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> None:
        if self._tg is not None:
            self._tg.start_soon(fn, *args)

    async def _on_upstream_event(self, server: str, event: str) -> None:
        if event == "connected":
            self._spawn(self.add_server, server)
        elif event == "disconnected":
            await self.remove_server(server)
        elif event == "tools_changed":
            self._spawn(self._refresh_and_emit, server, ("tools",), "tools")
        elif event == "prompts_changed":
            self._spawn(self._refresh_and_emit, server, ("prompts",), "prompts")
        elif event == "resources_changed":
            self._spawn(self._refresh_and_emit, server, ("resources", "resource_templates"), "resources")

    async def _refresh_and_emit(self, server: str, kinds: tuple[str, ...], notify: str) -> None:
        for kind in kinds:
            try:
                await self.refresh(server, kind)
            except Exception as exc:  # noqa: BLE001
                logger.warning("re-fetch of %s from %s failed: %s", kind, server, exc)
        await self.emit_change(notify)

    async def add_server(self, server: str) -> None:
        """Seed 001 "Add server": fetch all tools (paginated) and store them."""
        try:
            await self.refresh(server, "tools")
        except Exception as exc:  # noqa: BLE001
            logger.warning("initial tool fetch from %s failed: %s", server, exc)
        upstream = self.pool.get(server)
        await self.emit_change("tools")
        for kind in ("prompts", "resources"):
            if upstream is not None and upstream.supports(kind):
                await self.emit_change(kind)

    async def remove_server(self, server: str) -> None:
        """Seed 001 "Remove server": drop everything the server exposed."""
        removed = {NOTIFY_KIND[kind] for kind in KINDS if self.catalog[kind].pop(server, None)}
        for kind in ("tools", "prompts", "resources"):
            if kind in removed:
                await self.emit_change(kind)

    # ----------------------------------------------------------------- fetching
    async def fetch(self, server: str, kind: str) -> list[Any]:
        upstream = self.pool.get(server)
        if upstream is None:
            raise KeyError(server)
        if not upstream.supports(kind):
            return []
        try:
            return await upstream.list_all(kind)
        except MCPError as exc:
            if exc.code == types.METHOD_NOT_FOUND:
                return []
            raise

    async def refresh(self, server: str, kind: str) -> list[Any]:
        items = await self.fetch(server, kind)
        self.catalog[kind][server] = items
        return items

    async def collect(self, kind: str) -> dict[str, list[Any] | Exception]:
        """Broadcast a list request to every upstream in parallel."""
        results: dict[str, list[Any] | Exception] = {}

        async def one(server: str) -> None:
            try:
                results[server] = await self.refresh(server, kind)
            except (UpstreamError, MCPError) as exc:
                results[server] = exc
            except Exception as exc:  # noqa: BLE001 - a broken upstream must not break the broadcast
                logger.exception("broadcast %s to %s failed", kind, server)
                results[server] = exc

        async with anyio.create_task_group() as tg:
            for server in self.pool.keys():
                tg.start_soon(one, server)
        return {server: results[server] for server in self.pool.keys()}

    # ------------------------------------------------- seed 001 "Tool Discovery"
    def list_tools(self, compact: bool = False) -> list[Any]:
        """`listTools(compact)`: compact cards carry only name, description and server ID."""
        out: list[Any] = []
        for server, tools in self.catalog["tools"].items():
            for tool in tools:
                if compact:
                    out.append({"name": tool.name, "description": tool.description, "serverId": server})
                else:
                    out.append((server, tool))
        return out

    def get_tool(self, server: str, name: str) -> Any | None:
        """`getTool(name)`: the complete stored definition, input schema included."""
        return self.cached("tools", server, name)

    def cached(self, kind: str, server: str, name: str) -> Any | None:
        for item in self.catalog[kind].get(server, []):
            if getattr(item, "name", None) == name:
                return item
        return None

    async def resolve(self, kind: str, server: str, name: str) -> Any | None:
        """Find a tool/prompt by clean name; re-fetch that server once on a miss."""
        item = self.cached(kind, server, name)
        if item is not None:
            return item
        items = await self.refresh(server, kind)
        for candidate in items:
            if getattr(candidate, "name", None) == name:
                return candidate
        return None

    # ---------------------------------------------------------------- lifecycle
    async def __aenter__(self) -> Registry:
        self._tg = anyio.create_task_group()
        await self._tg.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        assert self._tg is not None
        self._tg.cancel_scope.cancel()
        await self._tg.__aexit__(None, None, None)
        self._tg = None
