"""The core's value types and the contract the server layer drives: what a meta-tool returns
(Reply), what `gatespec catalog` lists (CatalogListing), and the runtime's operations
(GatewayRuntime). The runtime implements them; the server layer imports them from here, so the
core never depends on a transport or on the MCP server plumbing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from mcp_types import Tool

__all__ = ["CatalogListing", "GatewayRuntime", "Reply"]


@dataclass(frozen=True)
class Reply:
    """What a meta-tool returns on success."""

    text: str  # the exact text content the client receives (budgets are counted on it)
    structured: dict[str, Any] | None  # structuredContent, matching the meta-tool's output model
    # The called tool itself failed (AM-UPSTREAM-ISERROR): the result carries isError true.
    is_error: bool = False


@dataclass(frozen=True)
class CatalogListing:
    """What `gatespec catalog` prints (optional runtime method `catalog_listing()`)."""

    tools: list[tuple[str, str]]  # (tool_id, wire_name), in catalog order
    excluded: list[tuple[str, str, str]]  # (server key, upstream tool name, reason)


class GatewayRuntime(Protocol):
    """The runtime the server layer drives. Methods raise GatewayError for expected failures."""

    profile: str  # "gateway" | "transparent": the exposure profile served

    async def browse(self, session: str, query: str | None, path: str | None) -> Reply: ...

    async def hydrate(self, session: str, tool_id: str) -> Reply: ...

    async def execute(self, session: str, tool_id: str, args: dict[str, Any]) -> Reply: ...

    async def view(self, session: str, handle: str, selector: str) -> Reply: ...

    def stripped_tools(self) -> list[Tool]:
        """The transparent profile's stripped upstream entries (wire names, sentinel schema)."""
        ...

    def add_catalog_listener(self, callback: Callable[[], Awaitable[None]]) -> None:
        """Call `callback` after every catalog change."""
        ...
