"""The catalog: upstream tools -> tool_ids, cards, hydration, path graph.

Seed 000 §1 (ids, collisions), §2 (cards), §3 (path graph), §4.3
(``Catalog.hydrate(item_id) -> HydrationResult``, keyed only by tool_id).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import jsonschema

from .cards import ChoiceCard, build_card, order_cards
from .errors import HYDRATE_FAILED, PATH_NOT_FOUND, TOOL_ID_COLLISION, CatalogError, GatewayError
from .paths import SEGMENT_RE, format_path
from .router import score
from .toolid import declared_version, make_tool_id, parse_tool_id

log = logging.getLogger("tollbooth.catalog")


@dataclass(slots=True)
class CatalogEntry:
    """One upstream tool, as the catalog knows it."""

    tool_id: str
    server: str  # upstream key in the config
    upstream_name: str
    description: str  # full, untruncated upstream description
    input_schema: Any
    output_schema: Any
    annotations: Mapping[str, Any]
    card: ChoiceCard  # score-less base card
    schema_error: str | None = None  # why the schema cannot be hydrated, if so


def schema_problem(schema: Any) -> str | None:
    """None if *schema* is a usable JSON Schema for an MCP tool input, else why not."""
    if not isinstance(schema, Mapping):
        return "inputSchema is not an object"
    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        return f"inputSchema is not a valid JSON Schema: {exc.message}"
    except Exception as exc:  # noqa: BLE001 - any failure means "unusable"
        return f"inputSchema cannot be checked: {exc}"
    if schema.get("type", "object") != "object":
        return "inputSchema root type is not 'object'"
    return None


def tool_card(tool_id: str, tool: Mapping[str, Any], has_schema: bool) -> ChoiceCard:
    """Card for an upstream tool dict (seed 000 §2.1; seed 002 annotation mapping):
    ``readOnlyHint`` -> tag ``read-only`` and ``side_effects=False``;
    ``destructiveHint`` -> tag ``destructive``; ``costHint`` -> ``cost_hint``.
    Without ``readOnlyHint: true`` the tool is assumed to have side effects."""
    ann = tool.get("annotations") if isinstance(tool.get("annotations"), Mapping) else {}
    tags = []
    if ann.get("readOnlyHint") is True:
        tags.append("read-only")
    if ann.get("destructiveHint") is True:
        tags.append("destructive")
    cost = ann.get("costHint")
    cost = float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost > 0 else 0.0
    parts = parse_tool_id(tool_id)
    desc = tool.get("description")
    return build_card(
        tool_id,
        parts.name,
        desc if isinstance(desc, str) else "",
        tags=tags,
        kind="tool",
        namespace=parts.namespace,
        has_schema=has_schema,
        cost_hint=cost,
        side_effects=ann.get("readOnlyHint") is not True,
    )


def make_entry(server: str, tool: Mapping[str, Any], namespace: str | None = None) -> CatalogEntry:
    """Derive a :class:`CatalogEntry` from one raw upstream tool dict.
    Raises :class:`CatalogError` if no id or card can be derived."""
    name = tool.get("name")
    schema = tool.get("inputSchema")
    tool_id = make_tool_id(name, schema, declared_version(tool), namespace)  # type: ignore[arg-type]
    problem = schema_problem(schema)
    desc = tool.get("description")
    ann = tool.get("annotations")
    return CatalogEntry(
        tool_id=tool_id,
        server=server,
        upstream_name=name,  # type: ignore[arg-type]
        description=desc if isinstance(desc, str) else "",
        input_schema=schema,
        output_schema=tool.get("outputSchema"),
        annotations=ann if isinstance(ann, Mapping) else {},
        card=tool_card(tool_id, tool, has_schema=problem is None),
        schema_error=problem,
    )


@dataclass(slots=True)
class _Node:
    children: dict[str, _Node] = field(default_factory=dict)
    tools: list[str] = field(default_factory=list)  # tool_ids whose leaf is this node
    loose: list[str] = field(default_factory=list)  # listed here, not addressable


class Catalog:
    """Tool_id-keyed catalog with hydration and a namespace/cluster/leaf graph."""

    def __init__(self, entries: Iterable[CatalogEntry] = ()) -> None:
        self.entries: dict[str, CatalogEntry] = {}
        self.problems: list[dict[str, Any]] = []
        for e in entries:
            self.entries[e.tool_id] = e
        self._build_graph()

    @classmethod
    def from_upstreams(
        cls, listings: Mapping[str, Iterable[Any]], namespaces: Mapping[str, str | None] | None = None
    ) -> Catalog:
        """Build from ``{server_key: [raw tool dict, ...]}``.  Tools with no
        derivable id/card are skipped; ids produced by two different upstream
        tools (§1.5 ``CatalogError``) are *all* withheld.  Both are logged and
        recorded in ``catalog.problems``; neither stops the build."""
        namespaces = namespaces or {}
        by_id: dict[str, list[CatalogEntry]] = {}
        problems: list[dict[str, Any]] = []
        for server in sorted(listings):
            for tool in listings[server]:
                if not isinstance(tool, Mapping):
                    problems.append({"server": server, "error": "tool entry is not an object"})
                    continue
                try:
                    entry = make_entry(server, tool, namespaces.get(server))
                except CatalogError as exc:
                    log.warning("skipping upstream tool %r from %r: %s", tool.get("name"), server, exc.message)
                    problems.append({"server": server, "tool": tool.get("name"), "code": exc.code, "error": exc.message})
                    continue
                by_id.setdefault(entry.tool_id, []).append(entry)
        kept: list[CatalogEntry] = []
        for tool_id, group in by_id.items():
            if len(group) > 1:
                err = CatalogError(
                    TOOL_ID_COLLISION,
                    f"tool_id {tool_id!r} produced by {[(e.server, e.upstream_name) for e in group]}",
                )
                log.error("%s; withholding all of them", err.message)
                problems.append({"tool_id": tool_id, "code": err.code, "error": err.message})
                continue
            kept.append(group[0])
        cat = cls(kept)
        cat.problems = problems
        return cat

    # -- §4.3 hydration ------------------------------------------------------
    def hydrate(self, tool_id: str) -> dict[str, Any]:
        """``Catalog.hydrate(item_id) -> HydrationResult`` (seed 000 §4.3).

        Returns ``{"tool_id", "name", "description", "inputSchema",
        ["outputSchema"], ["annotations"]}`` with the real upstream schema.
        Raises :class:`GatewayError` ``HYDRATE_FAILED`` for unknown ids and for
        tools whose upstream schema is unusable."""
        entry = self.entries.get(tool_id)
        if entry is None:
            raise GatewayError(HYDRATE_FAILED, f"unknown tool_id {tool_id!r}", path=tool_id)
        if entry.schema_error is not None:
            raise GatewayError(
                HYDRATE_FAILED, entry.schema_error, path=tool_id, details={"upstream": entry.server}
            )
        out: dict[str, Any] = {
            "tool_id": entry.tool_id,
            "name": entry.upstream_name,
            "description": entry.description,
            "inputSchema": entry.input_schema,
        }
        if entry.output_schema is not None:
            out["outputSchema"] = entry.output_schema
        if entry.annotations:
            out["annotations"] = dict(entry.annotations)
        return out

    # -- §3 path graph -------------------------------------------------------
    def _build_graph(self) -> None:
        self._root = _Node()
        for tool_id in sorted(self.entries):
            parts = parse_tool_id(tool_id)
            node = self._root.children.setdefault(parts.namespace, _Node())
            *clusters, leaf = parts.name.split(".")
            addressable = True
            for seg in clusters:
                if SEGMENT_RE.fullmatch(seg) is None:
                    addressable = False
                    break
                node = node.children.setdefault(seg, _Node())
            if addressable and SEGMENT_RE.fullmatch(leaf):
                node.children.setdefault(leaf, _Node()).tools.append(tool_id)
            else:
                node.loose.append(tool_id)

    def _count(self, node: _Node) -> int:
        return len(node.tools) + len(node.loose) + sum(self._count(c) for c in node.children.values())

    def _node_card(self, segments: tuple[str, ...], node: _Node) -> ChoiceCard:
        path = format_path(segments)
        n = self._count(node)
        what = "namespace" if len(segments) == 1 else "cluster"
        return build_card(
            path,
            segments[-1],
            f"{what} {path}: {n} tool(s); browse this path to list them.",
            kind="internal",
            namespace=segments[0],
            has_schema=False,
            side_effects=False,
        )

    def browse_path(self, segments: tuple[str, ...]) -> list[ChoiceCard]:
        """Children of the node addressed by (already validated) *segments*
        (seed 000 §3.2/§3.3), ordered per §2.5.  ``()`` lists one internal card
        per namespace; a pure leaf returns its tool card.  Raises
        :class:`GatewayError` ``PATH_NOT_FOUND`` for absent nodes."""
        node = self._root
        for i, seg in enumerate(segments):
            nxt = node.children.get(seg)
            if nxt is None:
                raise GatewayError(
                    PATH_NOT_FOUND, f"no node at {format_path(segments[: i + 1])}", path=format_path(segments)
                )
            node = nxt
        if segments and not node.children:  # a leaf
            return order_cards(self.entries[t].card for t in node.tools + node.loose)
        cards: list[ChoiceCard] = []
        for seg, child in node.children.items():
            if child.children:
                cards.append(self._node_card((*segments, seg), child))
            cards.extend(self.entries[t].card for t in child.tools)
        cards.extend(self.entries[t].card for t in node.loose)
        return order_cards(cards)

    # -- §3.1 query routing -------------------------------------------------
    def route(self, query: str, top_k: int) -> list[ChoiceCard]:
        """Top-k tool cards for *query* with ``score`` set (score > 0 only),
        ordered per §2.5."""
        scored: list[ChoiceCard] = []
        for e in self.entries.values():
            s = score(
                query,
                [e.tool_id, e.upstream_name, e.card.namespace, e.card.name],
                [e.description, " ".join(e.card.tags)],
            )
            if s > 0:
                scored.append(_with_score(e.card, s))
        return order_cards(scored)[: max(0, top_k)]


def _with_score(card: ChoiceCard, s: float) -> ChoiceCard:
    return replace(card, score=float(s))
