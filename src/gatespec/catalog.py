"""The catalog: every usable upstream tool as a SelectableItem, keyed by its tool_id.

Built from the tools each upstream lists (MCP wire form), grouped by the upstream's config key:

- namespace = the normalised config key (AM-NAMESPACE-FROM-CONFIG); two keys that normalise
  alike are an error, because their tools would share one namespace;
- tool_id = namespace, upstream name, and the declared version or hash8 (§1.2-§1.4);
- a name outside the `name` grammar is mapped, never dropped (AM-NAME-MAPPING);
- a tool that cannot be served faithfully (an input schema that is not a JSON Schema object, ...)
  is excluded with a recorded reason: one bad upstream tool never takes the catalog down and
  never disappears unnoticed;
- two tools resolving to one id (§1.5), one upstream listing a name twice, or two ids sharing a
  wire name (AM-WIRE-NAME) are a CatalogError each: the colliding tools are excluded with that
  error as their reason, and every other tool stays (AM-COLLISION-EXCLUDES).

The catalog takes ownership of the tool dicts it is given (they are not copied: building 10,000
tools must stay fast); `hydrate` hands out copies.
"""

from __future__ import annotations

import copy
import difflib
import functools
import gc
import hashlib
import json
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import jsonschema
import jsonschema_rs

from gatespec_surface import parsers
from gatespec_surface.errors import CatalogError, ErrorCode, GatewayError
from gatespec_surface.grammars import is_tool_id, is_wire_name

__all__ = ["Catalog", "Excluded", "Item", "operation_of", "server_keys"]


@dataclass(frozen=True, slots=True)
class Item:
    """One catalog entry, with exactly the fields of models.SelectableItem. A plain slotted
    dataclass: constructing 10,000 pydantic models would cost more than the rest of the build."""

    id: str
    kind: str
    name: str
    description: str
    namespace: str
    tags: tuple[str, ...]
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    side_effects: bool
    cost_hint: float
    metadata: Mapping[str, Any]  # server (config key), upstream_name, title: never on a card


@dataclass(frozen=True)
class Excluded:
    """An upstream tool left out of the catalog, and why."""

    server: str  # the upstream's config key
    name: str  # the upstream tool name as given (repr'd when it was not a string)
    reason: str


class _Skip(Exception):
    """Internal: this tool is excluded for the reason given."""


# ---------------------------------------------------------------------- schema checks
# A schema must be valid against the meta-schema of the draft its "$schema" names, else 2020-12
# (MCP's default dialect). jsonschema's own meta-validation costs ~2 ms per schema (2020-12),
# far too slow for 10,000 tools; jsonschema-rs checks the very same meta-schema documents in
# microseconds, so it decides; jsonschema only words the error message of a rejected schema.

_DEFAULT_DRAFT: Any = jsonschema.Draft202012Validator


@functools.lru_cache(maxsize=64)
def _draft(dialect: str | None) -> Any:
    """The validator class for a "$schema" URI (jsonschema normalises the URI; that is slow)."""
    probe = {} if dialect is None else {"$schema": dialect}
    return jsonschema.validators.validator_for(probe, default=_DEFAULT_DRAFT)


@functools.cache
def _meta_validator(cls: Any) -> Any:
    return cls(cls.META_SCHEMA)


@functools.cache
def _fast_meta_validator(cls: Any) -> Any:
    return jsonschema_rs.validator_for(cls.META_SCHEMA)


# (draft, sha256 of the canonical JSON) -> problem or None: refreshes, and schemas shared by
# many tools, are checked once. Bounded: cleared when full.
_MEMO: dict[tuple[Any, bytes], str | None] = {}
_MEMO_MAX = 16_384


def _meta_problem(cls: Any, schema: dict[str, Any]) -> str | None:
    """The meta-schema check itself, worded by jsonschema."""
    if _fast_meta_validator(cls).is_valid(schema):
        return None
    draft = cls.META_SCHEMA.get("$id") or cls.META_SCHEMA.get("id") or cls.__name__
    error = jsonschema.exceptions.best_match(_meta_validator(cls).iter_errors(schema))
    if error is None:
        return f"is not a valid JSON Schema ({draft})"  # only jsonschema-rs objects
    where = "/".join(str(p) for p in error.absolute_path) or "(root)"
    return f"is not a valid JSON Schema ({draft}): {error.message} at {where}"


def schema_problem(schema: dict[str, Any]) -> str | None:
    """Why `schema` is not a valid JSON Schema for its declared draft, or None."""
    dialect = schema.get("$schema")
    if dialect is not None and not isinstance(dialect, str):
        return f'is not a valid JSON Schema: "$schema" must be a URI string, not {dialect!r}'
    cls = _draft(dialect)
    if _fast_meta_validator(cls).is_valid(schema):
        return None  # the common case, in microseconds: no need to key the memo
    try:
        canonical = json.dumps(schema, sort_keys=True, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as exc:
        return f"is not JSON: {exc}"
    key = (cls, hashlib.sha256(canonical).digest())
    if key not in _MEMO:
        if len(_MEMO) >= _MEMO_MAX:
            _MEMO.clear()
        _MEMO[key] = _meta_problem(cls, schema)
    return _MEMO[key]


def _upstream_name(tool: Mapping[str, Any]) -> str:
    name = tool.get("name")
    if not isinstance(name, str):
        raise _Skip(f"name must be a string, not {type(name).__name__}")
    if not name:
        raise _Skip("name is empty")
    return name


def _object_schema(tool: Mapping[str, Any], key: str, required: bool) -> dict[str, Any] | None:
    schema = tool.get(key)
    if schema is None:
        if required:
            raise _Skip(f"{key} is missing")
        return None
    if not isinstance(schema, dict):
        raise _Skip(f"{key} must be a JSON object, not {type(schema).__name__}")
    declared = schema.get("type")
    if declared is not None and declared != "object":
        if not (isinstance(declared, list) and "object" in declared):
            # tool arguments (and structured results) are JSON objects (MCP Tool schema)
            raise _Skip(f'{key} must describe an object; its "type" is {declared!r}')
    problem = schema_problem(schema)
    if problem is not None:
        raise _Skip(f"{key} {problem}")
    return schema


def _item(config_key: str, namespace: str, tool: object) -> Item:
    if not isinstance(tool, Mapping):
        raise _Skip(f"a tool must be a JSON object, not {type(tool).__name__}")
    upstream_name = _upstream_name(tool)
    input_schema = _object_schema(tool, "inputSchema", required=True)
    assert input_schema is not None
    output_schema = _object_schema(tool, "outputSchema", required=False)
    description = tool.get("description")
    if description is None:
        description = ""
    elif not isinstance(description, str):
        raise _Skip(f"description must be a string, not {type(description).__name__}")
    meta = tool.get("_meta")
    version = meta.get("version") if isinstance(meta, Mapping) else None
    try:
        tool_id = parsers.make_tool_id(
            namespace, upstream_name, input_schema, version if isinstance(version, str) else None
        )
    except GatewayError as exc:
        raise _Skip(exc.message) from None
    annotations = tool.get("annotations")
    side_effects, tags, cost_hint = parsers.annotation_fields(annotations)
    title = tool.get("title")
    return Item(
        id=tool_id,
        kind="tool",
        name=parsers.tool_name(upstream_name),
        description=description,
        namespace=namespace,
        tags=tuple(tags),
        input_schema=input_schema,
        output_schema=output_schema,
        side_effects=side_effects,
        cost_hint=cost_hint,
        metadata=MappingProxyType(
            {
                "server": config_key,
                "upstream_name": upstream_name,
                "title": title if isinstance(title, str) else None,
                # the hints as declared (untrusted, seed 002): what access rules match on
                "annotations": MappingProxyType(
                    dict(annotations) if isinstance(annotations, Mapping) else {}
                ),
            }
        ),
    )


def server_keys(config_keys: Sequence[str]) -> dict[str, str]:
    """config key -> namespace; two keys that normalise alike cannot share one namespace."""
    out: dict[str, str] = {}
    owner: dict[str, str] = {}
    for key in config_keys:
        try:
            ns = parsers.server_key_from_config_key(key)
        except GatewayError as exc:
            raise CatalogError(message=exc.message, path=key) from None
        if ns in owner:
            raise CatalogError(
                message=(
                    f"config keys {owner[ns]!r} and {key!r} both normalise to the namespace "
                    f"{ns!r}; rename one of them"
                ),
                path=key,
                details={"namespace": ns, "config_keys": [owner[ns], key]},
            )
        owner[ns] = key
        out[key] = ns
    return out


def _describe(item: Item) -> str:
    return f"{item.metadata['server']!r}/{item.metadata['upstream_name']!r}"


def _collisions(items: Sequence[Item]) -> dict[int, str]:
    """Index in `items` -> the CatalogError message of each tool that collides with another:
    the same tool_id (§1.5), or one upstream listing the same name twice (a call by that name
    could reach either)."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, item in enumerate(items):
        groups.setdefault(("id", item.id), []).append(i)
        upstream = (item.metadata["server"], item.metadata["upstream_name"])
        groups.setdefault(("upstream", *upstream), []).append(i)
    out: dict[int, str] = {}
    for members in groups.values():
        if len(members) < 2:
            continue
        who = ", ".join(f"{_describe(items[i])} ({items[i].id})" for i in members)
        for i in members:
            out.setdefault(i, CatalogError(message=f"upstream tools collide: {who}").message)
    return out


class Catalog:
    """An immutable snapshot of the usable upstream tools. Build with `Catalog.build`."""

    __slots__ = ("_by_id", "_by_wire", "_wire_of", "_items", "_by_ns", "_by_op", "_excluded")

    def __init__(
        self,
        by_id: dict[str, Item],
        by_wire: dict[str, str],
        excluded: list[Excluded],
    ) -> None:
        self._by_id = by_id
        self._by_wire = by_wire
        self._wire_of = {tool_id: wire for wire, tool_id in by_wire.items()}
        self._items = tuple(by_id[k] for k in sorted(by_id))
        by_ns: dict[str, list[Item]] = {}
        for item in self._items:
            by_ns.setdefault(item.namespace, []).append(item)
        self._by_ns = MappingProxyType({ns: tuple(v) for ns, v in sorted(by_ns.items())})
        # search operations (AM-SEARCH-OPERATION); one per id, _build saw to that
        self._by_op = {operation_of(item): item for item in self._items}
        self._excluded = tuple(excluded)

    # ------------------------------------------------------------------ building

    def without(self, dropped: Mapping[str, str]) -> Catalog:
        """A copy minus the tools in `dropped` (tool_id -> reason), recorded as excluded: how a
        tool whose card cannot fit its cap leaves the catalog (AM-CARD-OVER-CAP)."""
        by_id = {k: v for k, v in self._by_id.items() if k not in dropped}
        by_wire = {w: t for w, t in self._by_wire.items() if t not in dropped}
        excluded = list(self._excluded) + [
            Excluded(
                self._by_id[t].metadata["server"], self._by_id[t].metadata["upstream_name"], reason
            )
            for t, reason in sorted(dropped.items())
        ]
        return Catalog(by_id, by_wire, excluded)

    def restricted_to(self, tool_ids: Collection[str]) -> Catalog:
        """The catalog of the tools in `tool_ids` only, as an identity that may see just those
        sees it: nothing about the others, not even that they were left out."""
        by_id = {k: v for k, v in self._by_id.items() if k in tool_ids}
        by_wire = {w: t for w, t in self._by_wire.items() if t in tool_ids}
        return Catalog(by_id, by_wire, [])

    @classmethod
    def build(cls, tools_by_server: Mapping[str, Sequence[object]]) -> Catalog:
        """Items from each upstream's tools/list result, keyed by the upstream's config key."""
        gc_was_enabled = gc.isenabled()
        gc.disable()  # many small acyclic objects: collector passes would only cost time
        try:
            return cls._build(tools_by_server)
        finally:
            if gc_was_enabled:
                gc.enable()

    @classmethod
    def _build(cls, tools_by_server: Mapping[str, Sequence[object]]) -> Catalog:
        namespaces = server_keys(list(tools_by_server))
        by_id: dict[str, Item] = {}
        excluded: list[Excluded] = []
        items: list[Item] = []
        for config_key, tools in tools_by_server.items():
            namespace = namespaces[config_key]
            for tool in tools:
                try:
                    items.append(_item(config_key, namespace, tool))
                except _Skip as why:
                    raw = tool.get("name") if isinstance(tool, Mapping) else None
                    name = raw if isinstance(raw, str) else repr(raw)
                    excluded.append(Excluded(config_key, name, str(why)))
        # §1.5: a collision is a loud CatalogError, charged to the colliding tools only
        # (AM-COLLISION-EXCLUDES): the others are served, the reason is listed and logged.
        collided = _collisions(items)
        for i, item in enumerate(items):
            if i in collided:
                excluded.append(
                    Excluded(item.metadata["server"], item.metadata["upstream_name"], collided[i])
                )
            else:
                by_id[item.id] = item
        wire, clashes = _wire_table(by_id)
        clashes.update(_operation_clashes(by_id))
        wire = {w: tool_id for w, tool_id in wire.items() if tool_id not in clashes}
        for tool_id, reason in clashes.items():
            item = by_id.pop(tool_id)
            excluded.append(
                Excluded(item.metadata["server"], item.metadata["upstream_name"], reason)
            )
        return cls(by_id, wire, excluded)

    # ------------------------------------------------------------------ lookups

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Item]:
        return iter(self._items)

    def __contains__(self, tool_id: object) -> bool:
        return tool_id in self._by_id

    def items(self) -> tuple[Item, ...]:
        """Every item, sorted by id."""
        return self._items

    @property
    def excluded(self) -> list[Excluded]:
        """The upstream tools left out, with reasons, in input order."""
        return list(self._excluded)

    def get(self, tool_id: str) -> Item | None:
        """The item with this canonical tool_id, or None."""
        return self._by_id.get(tool_id)

    def namespaces(self) -> list[str]:
        """Namespaces that hold at least one item, sorted."""
        return list(self._by_ns)

    def by_namespace(self, namespace: str) -> tuple[Item, ...]:
        """The items of one namespace, sorted by id (empty for an unknown namespace)."""
        return self._by_ns.get(namespace, ())

    def by_operation(self, operation: str) -> Item | None:
        """The item a search operation "/namespace/name" names, or None."""
        return self._by_op.get(operation)

    def wire_name(self, tool_id: str) -> str:
        """The tools/list-safe name of a tool (AM-WIRE-NAME)."""
        return self._wire_of[self.resolve(tool_id).id]

    def resolve(self, id_or_wire_name: object) -> Item:
        """The item a canonical tool_id or a wire name stands for. TOOL_NOT_FOUND for a
        well-formed name of no tool, ARGS_INVALID for anything that is neither form."""
        if isinstance(id_or_wire_name, str):
            item = self._by_id.get(id_or_wire_name)
            if item is None:
                tool_id = self._by_wire.get(id_or_wire_name)
                item = self._by_id.get(tool_id) if tool_id is not None else None
            if item is None and is_tool_id(id_or_wire_name):
                item = self._bare(id_or_wire_name)
            if item is not None:
                return item
            if is_tool_id(id_or_wire_name) or is_wire_name(id_or_wire_name):
                raise GatewayError(
                    ErrorCode.TOOL_NOT_FOUND,
                    f"no tool {id_or_wire_name!r} in the catalog; "
                    + self._suggestion(id_or_wire_name),
                    id_or_wire_name,
                )
        shown = repr(id_or_wire_name)[:80]
        raise GatewayError(
            ErrorCode.ARGS_INVALID,
            f"{shown} is neither a tool_id nor a wire name of one",
            id_or_wire_name if isinstance(id_or_wire_name, str) else shown,
        )

    def _bare(self, tool_id: str) -> Item | None:
        """AM-BARE-TOOL-ID: `namespace:name`, with neither version nor hash8, names the one
        tool of that namespace and name when there is exactly one (never a guess between two)."""
        parts = parsers.parse_tool_id(tool_id)
        if parts.version is not None or parts.hash8 is not None:
            return None
        same = [i for i in self._by_ns.get(parts.namespace, ()) if i.name == parts.name]
        return same[0] if len(same) == 1 else None

    def _suggestion(self, name: str) -> str:
        """The closest ids to a name that names no tool (a wrong hash8, an aggregate-style
        `ns__name`, a typo), or where to look when none is close."""
        close = difflib.get_close_matches(name, self._by_id.keys(), n=3, cutoff=0.6)
        if close:
            return "did you mean " + " or ".join(repr(c) for c in close) + "?"
        return "search or browse to find one"

    def hydrate(self, tool_id: str) -> dict[str, Any]:
        """§4.3 HydrationResult for a canonical tool_id: the full, untruncated description and
        the real schemas (copies: callers may not change the catalog through them)."""
        item = self._by_id.get(tool_id)
        if item is None and is_tool_id(tool_id):
            item = self._bare(tool_id)
        if item is None:
            if is_tool_id(tool_id):
                raise GatewayError(
                    ErrorCode.TOOL_NOT_FOUND,
                    f"no tool {tool_id!r} in the catalog; " + self._suggestion(tool_id),
                    tool_id,
                )
            raise GatewayError(
                ErrorCode.ARGS_INVALID, f"{repr(tool_id)[:80]} is not a tool_id", str(tool_id)
            )
        return {
            "tool_id": item.id,
            "name": item.name,
            "description": item.description,
            "input_schema": copy.deepcopy(item.input_schema),
            "output_schema": copy.deepcopy(item.output_schema),
            "side_effects": item.side_effects,
            "cost_hint": item.cost_hint,
            "tags": list(item.tags),
        }


def operation_of(item: Item) -> str:
    """The search operation of a catalog item (AM-SEARCH-OPERATION-NAME)."""
    return parsers.format_search_operation(item.namespace, item.name)


def _operation_clashes(by_id: Mapping[str, Item]) -> dict[str, str]:
    """tool_id -> reason for ids that share a search operation (a mapped name equal to
    another tool's verbatim name): both are excluded (AM-SEARCH-OPERATION-NAME)."""
    owners: dict[str, list[str]] = {}
    for tool_id in sorted(by_id):
        owners.setdefault(operation_of(by_id[tool_id]), []).append(tool_id)
    clashes: dict[str, str] = {}
    for operation, ids in owners.items():
        if len(ids) > 1:
            reason = CatalogError(message=f"tool ids {ids} share the operation {operation!r}")
            clashes.update((tool_id, reason.message) for tool_id in ids)
    return clashes


def _wire_table(by_id: Mapping[str, Item]) -> tuple[dict[str, str], dict[str, str]]:
    """(wire name -> tool_id, tool_id -> reason) for every item: shortened names resolve only
    through this table, and ids that share a wire name (AM-WIRE-NAME) collide."""
    owners: dict[str, list[str]] = {}
    for tool_id in sorted(by_id):
        owners.setdefault(parsers.encode_wire_name(tool_id), []).append(tool_id)
    table: dict[str, str] = {}
    clashes: dict[str, str] = {}
    for wire, ids in owners.items():
        if len(ids) == 1:
            table[wire] = ids[0]
            continue
        reason = CatalogError(message=f"tool ids {ids} share the wire name {wire!r}").message
        clashes.update((tool_id, reason) for tool_id in ids)
    return table, clashes
