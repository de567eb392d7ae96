"""The core's value types and the contract the server layer drives: what a meta-tool returns
(Reply), what `gatespec catalog` lists (CatalogListing), the runtime's operations
(GatewayRuntime), and the client request an upstream request is made for (Relay). The runtime
implements them; the server layer imports them from here (and builds Relays), so the core
never depends on a transport or on the MCP server plumbing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from mcp_types import Tool

__all__ = [
    "CLIENT_CAPABILITIES",
    "CatalogListing",
    "GatewayRuntime",
    "Relay",
    "RelayError",
    "Reply",
]

# What an upstream may ask of its client, by the capability the client must declare
# (AM-UPSTREAM-RELAY).
CLIENT_CAPABILITIES: dict[str, str] = {
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
    "roots/list": "roots",
}


@dataclass(frozen=True)
class Reply:
    """What a meta-tool returns on success."""

    text: str  # the exact text content the client receives (budgets are counted on it)
    structured: dict[str, Any] | None  # structuredContent, matching the meta-tool's output model


@dataclass(frozen=True)
class CatalogListing:
    """What `gatespec catalog` prints (optional runtime method `catalog_listing()`, which may
    be a coroutine)."""

    tools: list[tuple[str, str]]  # (tool_id, wire_name), in catalog order
    excluded: list[tuple[str, str, str]]  # (server key, upstream tool name, reason)
    columns: tuple[str, str] = ("tool_id", "wire_name")  # what the two parts of `tools` are


class RelayError(Exception):
    """The client refused or failed a request relayed to it (its JSON-RPC error, passed on)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class Relay(Protocol):
    """The client request an upstream request is made for (AM-UPSTREAM-RELAY): what the
    upstream sends while answering reaches this request, and only it.

    Built by the server layer from the incoming request; the upstream layer calls it."""

    session: str  # the client session the request belongs to (never relay across sessions)

    @property
    def wants_progress(self) -> bool:
        """The client asked for progress (its request carried a progress token)."""
        ...

    async def progress(self, progress: float, total: float | None, message: str | None) -> None:
        """Report progress under the client's own token."""
        ...

    async def log(self, level: str, data: Any, logger: str | None) -> None:
        """A logging notification for the client, if its level lets it through."""
        ...

    def refusal(self, method: str) -> str | None:
        """Why `method` (a CLIENT_CAPABILITIES key) cannot be asked of this client, or None."""
        ...

    async def ask(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """Send the request to the client; its result, or RelayError."""
        ...


class GatewayRuntime(Protocol):
    """The runtime the server layer drives. Methods raise GatewayError for expected failures."""

    profile: str  # "gateway" | "transparent": the exposure profile served

    async def browse(self, session: str, query: str | None, path: str | None) -> Reply: ...

    async def hydrate(self, session: str, tool_id: str) -> Reply: ...

    async def execute(
        self, session: str, tool_id: str, args: dict[str, Any], relay: Relay | None = None
    ) -> Reply: ...

    async def view(self, session: str, handle: str, selector: str) -> Reply: ...

    def stripped_tools(self) -> list[Tool]:
        """The transparent profile's stripped upstream entries (wire names, sentinel schema)."""
        ...

    def add_catalog_listener(self, callback: Callable[[], Awaitable[None]]) -> None:
        """Call `callback` after every catalog change."""
        ...
