"""The core's value types and the contract the server layer drives: who is calling (Caller),
what a meta-tool returns (Reply), what `gatespec catalog` lists (CatalogListing), and the
runtime's operations (GatewayRuntime). The per-meta-tool operations are generated from
profiles.yaml (gatespec_surface.operations.MetaToolOperations): the runtime implements them,
the server layer dispatches to them, and the core never depends on a transport or on the MCP
server plumbing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from gatespec.access.identity import LOCAL, Identity
from gatespec_surface.operations import MetaToolOperations

if TYPE_CHECKING:
    from mcp_types import Tool

__all__ = ["Caller", "CatalogListing", "GatewayRuntime", "Reply"]


@dataclass(frozen=True)
class Caller:
    """Who makes a request: the transport's session key and the identity it proved."""

    session: str
    identity: Identity = LOCAL

    @property
    def scope(self) -> str:
        """What per-caller state (artifacts, cache-stable sessions) is keyed by: the session
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


@dataclass(frozen=True)
class CatalogListing:
    """What `gatespec catalog` prints (optional runtime method `catalog_listing()`)."""

    tools: list[tuple[str, str]]  # (tool_id, wire_name), in catalog order
    excluded: list[tuple[str, str, str]]  # (server key, upstream tool name, reason)


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
