"""Layer-2 families about what the IUT lists: its meta-tools and schemas, and which fixture
tools it identifies, by which tool ids (computed with the generated `make_tool_id`)."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any, Final

from gatespec_conformance.functions.run import same_json
from gatespec_conformance.live.checks import Emit, Family
from gatespec_conformance.live.facts import Live
from gatespec_conformance.live.observations import NAME_MAPPING, admitted
from gatespec_conformance.rules import SEED, SPEC, Finding, Rule, seed_value
from gatespec_surface import parsers
from gatespec_surface.budgets import CACHE_MARKER_ID
from gatespec_surface.descriptors import (
    ADVERTISE_OUTPUT_SCHEMAS,
    META_TOOL_DESCRIPTIONS,
    PROFILES,
    output_schema,
    tools_for_profile,
)
from gatespec_surface.errors import GatewayError
from gatespec_surface.grammars import is_name, is_tool_id

__all__ = ["FAMILIES", "semantic_schema"]

# JSON Schema keywords that only annotate: two schemas differing only in these accept the
# same arguments.
_ANNOTATIONS: Final = frozenset({"title", "description", "$comment", "examples"})
# Keywords whose value maps names to subschemas (the names are data, not keywords).
_NAMED: Final = frozenset({"properties", "patternProperties", "$defs", "definitions"})


def semantic_schema(schema: Any, named: bool = False) -> Any:
    """`schema` without annotations, with `required` as a sorted list: equal results mean the
    schemas are equal for validation."""
    if isinstance(schema, list):
        return [semantic_schema(x) for x in schema]
    if not isinstance(schema, dict):
        return schema
    if named:
        return {k: semantic_schema(v) for k, v in schema.items()}
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _ANNOTATIONS:
            continue
        if key == "required" and isinstance(value, list):
            out[key] = sorted(value, key=str)
        else:
            out[key] = semantic_schema(value, named=key in _NAMED)
    return out


async def _handshake(live: Live, emit: Emit) -> None:
    session = live.session
    emit.judge(
        "",
        None if session.protocol_version else "no protocol version was negotiated",
        got={"protocol_version": session.protocol_version},
    )


# Seed 000 §4.2: "exactly three meta-tools"; §4.1: tool_hydrate and tool_execute.
_SEED_META_TOOLS: Final = {
    "gateway": ("S000-GATEWAY-META-TOOLS",),
    "transparent": ("S000-TRANSPARENT-META-TOOLS",),
    "search": ("S003-SEARCH-META-TOOLS",),
}
_EVERY_PROFILE: Final = ("gateway", "transparent", "search")


async def _meta_tools(live: Live, emit: Emit) -> None:
    names = [t.name for t in await live.tools()]
    want = list(PROFILES[live.profile].meta_tools)
    if live.level == "seed":
        want = list(seed_value(_SEED_META_TOOLS[live.profile], want))
    missing = [n for n in want if n not in names]
    foreign = [n for n in names if n in META_TOOL_DESCRIPTIONS and n not in want]
    repeated = sorted({n for n in names if names.count(n) > 1})
    problem = None
    if missing:
        problem = f"missing meta-tools: {missing}"
    elif foreign:
        problem = f"lists meta-tools of another profile: {foreign}"
    elif repeated:
        problem = f"lists names more than once: {repeated[:5]}"
    elif PROFILES[live.profile].lists_upstream_tools == "none" and len(names) != len(want):
        extra = [n for n in names if n not in want]
        problem = f"lists upstream tools besides its meta-tools: {extra[:5]}"
    emit.judge("", problem, input="tools/list", expected=want, got=names[:60])


# The meta-tools' parameters are the seeds' (§3.1, §4.1, §4.2); their exact schemas are the
# spec's: tool_browse's "exactly one" by property counts (AM-BROWSE-ONEOF), the rest
# profiles.yaml's own bounds.
_PARAMETERS: Final = Rule(
    "the input schema does not declare the seed's parameters",
    ("EXPOSE-GATEWAY-THREE-META-TOOLS", "EXPOSE-TRANSPARENT-META-TOOLS", "SEARCH-FIXED-TOOL-SET"),
    SEED,
)
_BROWSE_SCHEMA: Final = Rule(
    "the input schema differs from the spec's (annotations aside)",
    levels=SPEC,
    amended_by=("AM-BROWSE-ONEOF",),
)
_SCHEMA: Final = Rule(
    "the input schema differs from the spec's (annotations aside)",
    levels=SPEC,
    spec_only="profiles.yaml's meta-tool input schemas (types, bounds, additionalProperties)",
)


# Seed 003 names call's arguments and batch's items ({operation, input}), not the name of the
# array batch takes, nor search's or schema's arguments (S003-CALL-ARGUMENTS,
# S003-BATCH-ITEM-ARGUMENTS): --level seed asks for those and nothing else.
_SEED_CALL: Final = frozenset(seed_value(("S003-CALL-ARGUMENTS",), ("operation", "input")))
_SEED_ITEM: Final = frozenset(seed_value(("S003-BATCH-ITEM-ARGUMENTS",), ("operation", "input")))


def _seed_parameters(tool: str, declared: dict[str, Any]) -> str | None:
    """What a search meta-tool's declared properties lack of the seed's (None: nothing)."""
    if tool == "call" and not _SEED_CALL <= set(declared):
        return f"missing {sorted(_SEED_CALL - set(declared))}"
    if tool == "batch":
        arrays = [v for v in declared.values() if isinstance(v, dict) and v.get("type") == "array"]
        items = [set((a.get("items") or {}).get("properties") or {}) for a in arrays]
        if not any(_SEED_ITEM <= i for i in items):
            return f"no array of {sorted(_SEED_ITEM)} objects"
    return None


async def _input_schemas(live: Live, emit: Emit) -> None:
    listed = {t.name: t for t in await live.tools()}
    seed_set = (
        set(seed_value(_SEED_META_TOOLS[live.profile], ()))
        if live.level == "seed" and live.profile in _SEED_META_TOOLS
        else None
    )
    for want in tools_for_profile(live.profile):
        if seed_set is not None and want.name not in seed_set:
            continue  # a meta-tool an amendment added (surface/meta-tools judges the set)
        got = listed.get(want.name)
        if got is None:
            emit.judge(want.name, "not listed", expected=want.input_schema)
            continue
        findings = []
        params = set(want.input_schema.get("properties", {}))
        declared_schemas = (got.input_schema or {}).get("properties") or {}
        declared = set(declared_schemas)
        if live.level == "seed" and live.profile == "search":
            missing = _seed_parameters(want.name, declared_schemas)
            if missing:
                findings.append(Finding(_PARAMETERS, missing, sorted(declared)))
        elif not params <= declared:
            findings.append(
                Finding(_PARAMETERS, f"missing {sorted(params - declared)}", sorted(declared))
            )
        if not same_json(semantic_schema(got.input_schema), semantic_schema(want.input_schema)):
            rule = _BROWSE_SCHEMA if want.name == "tool_browse" else _SCHEMA
            findings.append(Finding(rule, "", got.input_schema))
        emit.judge(
            want.name, findings, input=want.name, expected=want.input_schema, got=got.input_schema
        )


async def _output_schemas(live: Live, emit: Emit) -> None:
    listed = {t.name: t for t in await live.tools()}
    for want in tools_for_profile(live.profile):
        got = listed.get(want.name)
        if got is None:
            continue  # reported by surface/input-schema
        expected = output_schema(want.name) if ADVERTISE_OUTPUT_SCHEMAS else None
        ok = same_json(got.output_schema, expected)
        problem = None if ok else "outputSchema differs from profiles.yaml's advertise rule"
        emit.judge(want.name, problem, input=want.name, expected=expected, got=got.output_schema)


async def _marker_not_listed(live: Live, emit: Emit) -> None:
    names = [t.name for t in await live.tools()]
    wire = parsers.encode_wire_name(CACHE_MARKER_ID) if is_tool_id(CACHE_MARKER_ID) else None
    bad = [n for n in names if n in (CACHE_MARKER_ID, wire)]
    emit.judge("", f"tools/list shows the cache marker: {bad}" if bad else None, got=bad)


# ------------------------------------------------------------------ catalog


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _names_in(namespace: str | None, ids: Any) -> dict[str, list[str]]:
    """name part -> listed tool ids with that name part (of `namespace`, or of any)."""
    out: dict[str, list[str]] = {}
    for tool_id in ids:
        try:
            parts = parsers.parse_tool_id(tool_id)
        except GatewayError:
            continue
        if namespace is None or parts.namespace == namespace:
            out.setdefault(parts.name, []).append(tool_id)
    return out


# A fixture tool listed under no id at all is a tool the client cannot reach: in the gateway
# profile the path tree left it out (§3.2 "Returns the children at the addressed node"), in
# the transparent one the stripped list did (§4.1 "surfaces the entire upstream catalog").
# Listed under another id, it breaks the id rules instead (the family's own requirements).
_UNREACHABLE: Final = {
    "gateway": Rule("a fixture tool cannot be reached by path browsing", ("BROWSE-PATH-CHILDREN",)),
    "transparent": Rule(
        "a fixture tool is missing from the stripped tools/list",
        ("EXPOSE-TRANSPARENT-FULL-CATALOG",),
    ),
}
_WRONG_ID: Final = Rule(
    "a fixture tool is listed under another id",
    (
        "TOOLID-NAMESPACE-SOURCE",
        "TOOLID-VERSION-FROM-META",
        "TOOLID-HASH8-WHEN-NO-VERSION",
        "HASH-INPUT",
        "HASH-CANONICAL-SHAPE",
        "TOOLID-SOLE-KEY",
    ),
)


async def _tool_ids(live: Live, emit: Emit) -> None:
    expected = await live.expected()
    listed = await live.listed_ids()
    by_name = _names_in(None if live.level == "seed" else expected.namespace, listed)
    # Listed ids no fixture tool explains: a tool missing by its id may be one of them under an
    # id the kit cannot trace back (a mapped, cut name), so its failure names both rules.
    admitted_tools = [tool for tool in live.fixture if admitted(tool, live.level)]
    explained = {i for tool in admitted_tools for i in expected.allowed(tool.name)}
    unexplained = [i for ids in by_name.values() for i in ids if i not in explained]
    for tool in admitted_tools:
        allowed = expected.allowed(tool.name)
        problem: list[Finding] | None = None
        if not allowed & set(listed):
            wanted = " or ".join(sorted(allowed))
            # under its own name, or under a name mapped from it (AM-NAME-MAPPING)
            near = by_name.get(tool.name) or [
                i for n, ids in by_name.items() if _squash(n) == _squash(tool.name) for i in ids
            ]
            if near:
                detail = f"{wanted} is not listed (listed under {near})"
                problem = [Finding(_WRONG_ID, detail)]
            else:
                unreachable = _UNREACHABLE.get(live.profile, _WRONG_ID)
                problem = [Finding(unreachable, f"{wanted} is not listed")]
                if unexplained and unreachable is not _WRONG_ID:
                    problem.append(Finding(_WRONG_ID, f"unexplained ids listed: {unexplained[:3]}"))
        emit.judge(
            tool.name,
            problem,
            input={
                "namespace": expected.namespace,
                "upstream_name": tool.name,
                "input_schema": tool.input_schema,
                "version": tool.version,
            },
            expected=sorted(allowed),
            got=by_name.get(tool.name, []),
        )


def _excluded(by_grammar: bool) -> Callable[[Live, Emit], Awaitable[None]]:
    """A runner for the fixture tools that must not be listed: those whose name the name
    grammar rejects (by_grammar), or the others, whose card cannot fit its hard cap."""

    async def run(live: Live, emit: Emit) -> None:
        expected = await live.expected()
        listed = await live.listed_ids()
        by_name = _names_in(None if live.level == "seed" else expected.namespace, listed)
        for tool in live.fixture:
            if tool.expect != "exclude" or is_name(tool.name) == by_grammar:
                continue
            shown = tool.name if len(tool.name) <= 40 else tool.name[:37] + "..."
            hits = [i for i in expected.candidates.get(tool.name, ()) if i in listed]
            hits += [i for i in (expected.ids.get(tool.name),) if i is not None and i in listed]
            hits += [
                i for n, ids in by_name.items() if _squash(n) == _squash(tool.name) for i in ids
            ]
            mapped = by_grammar and NAME_MAPPING
            if mapped and live.level == "spec":
                emit.skip(shown, "AM-NAME-MAPPING lists it under a mapped id (catalog/tool-id)")
                continue
            problem = f"listed although it must be excluded ({tool.why})" if hits else None
            emit.judge(
                shown,
                problem,
                input={"upstream_name": tool.name},
                expected=[],
                got=hits,
                amended=("AM-NAME-MAPPING",) if mapped else (),
            )

    return run


async def _unexpected(live: Live, emit: Emit) -> None:
    expected = await live.expected()
    known = set(expected.ids.values()) | {i for c in expected.candidates.values() for i in c}
    listed = await live.listed_ids()
    namespace = None if live.level == "seed" else expected.namespace
    odd = []
    for tool_id in listed:
        name = _names_in(namespace, [tool_id])
        if not name:
            continue  # another namespace, or not a tool id (reported elsewhere)
        if tool_id not in known and not next(iter(name)).startswith("added_"):
            odd.append(tool_id)
    emit.judge(
        "",
        f"tool ids no fixture tool accounts for: {odd[:5]}" if odd else None,
        input={"namespace": expected.namespace},
        expected=sorted(known)[:10],
        got=odd[:10],
    )


FAMILIES: Final[list[Family]] = [
    Family(
        "surface/handshake",
        "server.surface.handshake",
        _handshake,
        via_requirements=("TRANSPORT-INIT-HANDSHAKE",),
        profiles=_EVERY_PROFILE,
        summary="the MCP connection is established in the client's protocol era",
    ),
    Family(
        "surface/meta-tools",
        "server.surface.meta_tools",
        _meta_tools,
        via_checks=("descriptor.profiles",),
        via_requirements=("EXPOSE-GATEWAY-NO-UPSTREAM-LISTING",),
        profiles=_EVERY_PROFILE,
        summary="tools/list holds exactly the profile's meta-tools (transparent: plus stripped)",
    ),
    Family(
        "surface/input-schema",
        "server.surface.input_schema",
        _input_schemas,
        via_checks=("descriptor.profiles",),
        profiles=_EVERY_PROFILE,
        summary="each meta-tool's input schema equals the generated one (annotations aside)",
    ),
    Family(
        "surface/output-schema",
        "server.surface.output_schema",
        _output_schemas,
        profiles=_EVERY_PROFILE,
        summary="outputSchema is advertised exactly as profiles.yaml says (AM-OUTPUT-SCHEMA-"
        "OFF-WIRE)",
        amended_by=("AM-OUTPUT-SCHEMA-OFF-WIRE",),
        seed="AM-OUTPUT-SCHEMA-OFF-WIRE",
    ),
    Family(
        "surface/marker-not-listed",
        "server.surface.marker_not_listed",
        _marker_not_listed,
        via_requirements=("CACHE-MARKER-NOT-IN-TOOLS-LIST",),
        summary="the cache marker never appears in tools/list",
    ),
    Family(
        "catalog/tool-id",
        "server.catalog.tool_id",
        _tool_ids,
        via_requirements=(
            "TOOLID-NAMESPACE-SOURCE",
            "TOOLID-VERSION-FROM-META",
            "TOOLID-HASH8-WHEN-NO-VERSION",
            "HASH-INPUT",
            "HASH-CANONICAL-SHAPE",
            "TOOLID-SOLE-KEY",
            "EXPOSE-TRANSPARENT-FULL-CATALOG",
            "EXPOSE-TRANSPARENT-NAME-IS-TOOLID",
        ),
        summary="every well-formed fixture tool is listed under the id make_tool_id gives "
        "(--level seed: under an id seed 000 §1.2-§1.4 allows)",
        amended_by=("AM-NAMESPACE-FROM-CONFIG",),
    ),
    Family(
        "catalog/excluded",
        "server.catalog.excluded",
        _excluded(by_grammar=True),
        via_requirements=("TOOLID-GRAMMAR",),
        summary="tools whose name breaks the name grammar are not listed "
        "(AM-NAMESPACE-FROM-CONFIG)",
    ),
    Family(
        "catalog/over-cap",
        "server.catalog.over_cap",
        _excluded(by_grammar=False),
        via_requirements=("BUDGET-OVER-CAP-ERROR", "BUDGET-CARD-HARD-CAP"),
        summary="a tool whose card cannot fit its hard cap is not listed (AM-CARD-OVER-CAP)",
    ),
    Family(
        "catalog/unexpected",
        "server.catalog.unexpected",
        _unexpected,
        via_requirements=("TOOLID-GRAMMAR", "TOOLID-NAMESPACE-SOURCE", "HASH-INPUT"),
        summary="no listed id of the fixture's namespace is one the fixture cannot explain",
    ),
]
