"""The runtime contract: the value types and operations the server layer drives. Who is calling
(Caller), what a meta-tool returns (Reply), what `gatespec catalog` lists (CatalogListing), the
client request an upstream request is made for (Relay), and a catalog runtime's operations
(GatewayRuntime). The per-meta-tool operations are generated from profiles.yaml
(gatespec_surface.operations.MetaToolOperations): the runtime implements them, the server layer
dispatches to them (and builds Relays), and nothing here depends on a transport or on the MCP
server plumbing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from gatespec.access.identity import LOCAL, Identity
from gatespec_surface.operations import MetaToolOperations

if TYPE_CHECKING:
    from mcp_types import Tool

__all__ = [
    "CLIENT_CAPABILITIES",
    "Caller",
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
class Caller:
    """Who makes a request: the transport's session key and the identity it proved."""

    session: str
    identity: Identity = LOCAL
    # The client request behind this call, for what upstreams send while answering it
    # (AM-UPSTREAM-RELAY); None where nothing can reach the client.
    relay: Relay | None = field(default=None, compare=False)

    @property
    def scope(self) -> str:
        """What per-caller state (artifacts, seen cards) is keyed by: the session
        of this identity, never shared with another identity's session of the same key."""
        return f"{self.identity.key}|{self.session}"


@dataclass(frozen=True)
class Reply:
    """What a meta-tool returns on success."""

    text: str  # the exact text content the client receives (budgets are counted on it)
    structured: dict[str, Any] | None  # structuredContent, matching the meta-tool's output model
    # The result is an error result (isError true): the called tool itself failed
    # (AM-UPSTREAM-ISERROR), or the upstream's own result says so.
    is_error: bool = False
    # Further text parts for the reader, after `text` (e.g. that a view was cut, and how to
    # read on); never counted into `text`'s budget.
    notes: tuple[str, ...] = ()
    # Meta-tools whose result is the upstream's own (profiles.yaml `result: upstream`): its
    # content blocks as given (MCP wire form), which replace `text`.
    content: tuple[Mapping[str, Any], ...] | None = None
    # Image and audio content blocks (MCP wire form) after `text` and `notes`, for the model to
    # see (AM-INLINE-MEDIA); never counted into `text`'s budget.
    media: tuple[Mapping[str, Any], ...] = ()


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


class GatewayRuntime(MetaToolOperations[Caller, Reply], Protocol):
    """The runtime the server layer drives: every meta-tool's operation (generated from
    profiles.yaml), plus what tools/list and list_changed need. Operations raise GatewayError
    for expected failures."""

    profile: str  # the exposure profile served (profiles.yaml)

    def stripped_tools(self, identity: Identity) -> list[Tool]:
        """The transparent profile's stripped entries this identity may see."""
        ...

    def visible_ids(self, identity: Identity) -> frozenset[str]:
        """The tool ids this identity may see now: list_changed reaches a client only when its
        identity's set changed (AM-ACCESS-NO-LEAK)."""
        ...

    def add_catalog_listener(self, callback: Callable[[], Awaitable[None]]) -> None:
        """Call `callback` after every catalog change."""
        ...
