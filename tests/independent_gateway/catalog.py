"""The catalog: upstream tool listings turned into ids and cards, keyed by tool_id only."""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from .cards import Card, make_card
from .errors import GatewayError
from .ids import CatalogError, format_tool_id, parse_tool_id, tool_id_for
from .upstream import log

SEGMENT_MAX = 64


@dataclass
class Entry:
    tool_id: str
    namespace: str
    server: str
    upstream_name: str
    description: str
    input_schema: Any
    output_schema: Any
    annotations: dict[str, Any]
    card: Card
    leaf: str = ""


def _card_for(tool_id: str, namespace: str, name: str, tool: dict[str, Any]) -> Card:
    """Annotations are untrusted hints (seed 002) and only feed display fields."""
    raw = tool.get("annotations")
    hints: dict[str, Any] = raw if isinstance(raw, dict) else {}
    tags = []
    if hints.get("readOnlyHint") is True:
        tags.append("read-only")
    if hints.get("destructiveHint") is True:
        tags.append("destructive")
    cost = hints.get("costHint")
    return make_card(
        str(tool.get("description") or ""),
        id=tool_id,
        name=name,
        kind="tool",
        namespace=namespace,
        has_schema=isinstance(tool.get("inputSchema"), dict),
        tags=tags,
        cost_hint=float(cost) if isinstance(cost, int | float) and cost > 0 else 0.0,
        side_effects=hints.get("readOnlyHint") is not True,
    )


def _slug(name: str) -> str:
    """A §3.2 path segment for a tool leaf: lower-case, other characters become '-'."""
    slug = re.sub(r"[^a-z0-9_-]", "-", name.lower()).lstrip("_-")
    return (slug or "tool")[:SEGMENT_MAX]


class Catalog:
    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}
        self.rejected: dict[str, str] = {}  # tool_id -> why it is withheld (collision, card)
        self.namespaces: dict[str, dict[str, Entry]] = {}  # namespace -> leaf segment -> entry

    @classmethod
    def build(cls, listings: dict[str, list[dict[str, Any]]]) -> Catalog:
        catalog = cls()
        claims: dict[str, list[Entry]] = defaultdict(list)
        for server, tools in sorted(listings.items()):
            for tool in tools:
                upstream_name = str(tool.get("name", ""))
                try:
                    parts = tool_id_for(upstream_name, tool.get("inputSchema"), tool.get("_meta"))
                except CatalogError as exc:
                    log(f"CatalogError: {server}/{upstream_name} has no valid tool_id: {exc}")
                    continue
                tool_id = format_tool_id(parts)
                try:
                    card = _card_for(tool_id, parts.namespace, parts.name, tool)
                except CatalogError as exc:  # §2.3: over the hard cap after truncation
                    log(f"CatalogError: {tool_id} withheld: {exc}")
                    catalog.rejected[tool_id] = str(exc)
                    continue
                claims[tool_id].append(
                    Entry(
                        tool_id=tool_id,
                        namespace=parts.namespace,
                        server=server,
                        upstream_name=upstream_name,
                        description=str(tool.get("description") or ""),
                        input_schema=tool.get("inputSchema"),
                        output_schema=tool.get("outputSchema"),
                        annotations=tool.get("annotations") or {},
                        card=card,
                    )
                )
        for tool_id, claimants in claims.items():
            if len(claimants) > 1:
                # §1.5: loud, never silently disambiguated. Every claimant is withheld; the
                # rest of the catalog is served and the id answers with the collision.
                owners = [f"{e.server}/{e.upstream_name}" for e in claimants]
                log(f"CatalogError: tool_id {tool_id!r} collides between {owners}")
                catalog.rejected[tool_id] = f"tool_id collision between {', '.join(owners)}"
            else:
                catalog.entries[tool_id] = claimants[0]
        catalog._assign_leaves()
        return catalog

    def _assign_leaves(self) -> None:
        by_namespace: dict[str, list[Entry]] = defaultdict(list)
        for entry in sorted(self.entries.values(), key=lambda e: e.tool_id):
            by_namespace[entry.namespace].append(entry)
        for namespace, entries in sorted(by_namespace.items()):
            slugs = defaultdict(list)
            for entry in entries:
                slugs[_slug(entry.card.name)].append(entry)
            leaves: dict[str, Entry] = {}
            for slug, group in slugs.items():
                for entry in group:
                    if len(group) > 1:  # same slug twice: suffix a digest of the id to both
                        digest = hashlib.sha256(entry.tool_id.encode()).hexdigest()[:8]
                        entry.leaf = f"{slug[: SEGMENT_MAX - 9]}-{digest}"
                    else:
                        entry.leaf = slug
                    leaves[entry.leaf] = entry
            self.namespaces[namespace] = dict(sorted(leaves.items()))

    def hydrate(self, tool_id: Any) -> Entry:
        """Catalog.hydrate: the tool_id is the only key. A %-encoded id is decoded first."""
        if not isinstance(tool_id, str) or not tool_id:
            raise GatewayError(
                "ARGS_INVALID", "tool_id must be a non-empty string", str(tool_id or "")
            )
        decoded = unquote(tool_id) if "%" in tool_id else tool_id
        try:
            parse_tool_id(decoded)
        except CatalogError as exc:
            raise GatewayError("ARGS_INVALID", str(exc), tool_id) from None
        if decoded in self.entries:
            return self.entries[decoded]
        reason = self.rejected.get(decoded, "no tool with this id in the catalog")
        raise GatewayError("HYDRATE_FAILED", f"cannot hydrate {decoded}: {reason}", tool_id)
