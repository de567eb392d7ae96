"""The kit's layer-1 adapter around tollbooth's own library (`tollbooth.surface`).

Written by us, not by tollbooth's author: it only translates the kit's JSON-lines protocol
(docs/conformance.md, "The adapter protocol") into calls of the functions tollbooth's README
lists, and tollbooth's exceptions into the seed's names for them (seed 000 §1.6 and §2.3 name
the class CatalogError; §3.4 names the GatewayError codes). Functions the seeds do not define,
or that tollbooth does not offer, answer `unsupported`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tollbooth import catalog, paths, surface, toolid
from tollbooth.errors import CatalogError, GatewayError

from tests.cleanroom.adapters.protocol import serve

_PROBE_ID = "probe:probe#00000000"  # any grammatical id: annotation_fields builds a card for it


def _grammar(grammar: str, value: str) -> Any:
    checks: dict[str, tuple[Callable[[str], bool], str]] = {
        "tool_id": (_parses, "CATALOG_ERROR"),
        "namespace": (toolid.is_namespace, "CATALOG_ERROR"),
        "name": (toolid.is_name, "CATALOG_ERROR"),
        "version": (toolid.is_version, "CATALOG_ERROR"),
        "hash8": (lambda v: toolid._HASH8.fullmatch(v) is not None, "CATALOG_ERROR"),
        "path": (lambda v: surface.validate_path(v) is None, "PATH_INVALID"),
        # one segment, by tollbooth's own §3.2 production (`segment = ... | "*"`); embedding it
        # in a path would let a "/" inside it through ("a/b" read as two segments)
        "path_segment": (
            lambda v: v == paths.WILDCARD or paths.SEGMENT_RE.fullmatch(v) is not None,
            "PATH_INVALID",
        ),
    }
    if grammar not in checks:
        return {"unsupported": True}
    check, code = checks[grammar]
    return {"ok": True} if check(value) else {"error": code}


def _parses(value: str) -> bool:
    try:
        surface.parse_tool_id(value)
    except CatalogError:
        return False
    return True


def _parse_tool_id(value: str) -> Any:
    p = surface.parse_tool_id(value)
    return {"namespace": p.namespace, "name": p.name, "version": p.version, "hash8": p.hash8}


def _format_tool_id(parts: dict[str, Any]) -> Any:
    return surface.format_tool_id(
        toolid.ToolIdParts(
            parts["namespace"], parts["name"], parts.get("version"), parts.get("hash8")
        )
    )


def _parse_path(value: str) -> Any:
    segments = surface.parse_path(value)
    return {"segments": list(segments), "star": value.endswith("/*")}


def _make_tool_id(i: dict[str, Any]) -> Any:
    # tollbooth reads a declared version through declared_version(), which ignores one that
    # breaks the §1.1 version grammar; the id is then hashed (catalog.make_entry)
    version = toolid.declared_version({"_meta": {"version": i.get("version")}})
    return surface.make_tool_id(i["upstream_name"], i["input_schema"], version, i["namespace"])


def _annotation_fields(annotations: dict[str, Any]) -> Any:
    card = catalog.tool_card(_PROBE_ID, {"name": "probe", "annotations": annotations}, False)
    return {"side_effects": card.side_effects, "tags": list(card.tags), "cost_hint": card.cost_hint}


def _render_card(card: dict[str, Any]) -> Any:
    fields = {k: card[k] for k in card if k in surface.ChoiceCard.__dataclass_fields__}
    fields["tags"] = tuple(fields.get("tags", ()))
    return surface.render_card(surface.ChoiceCard(**fields))


def _validate_card(card: dict[str, Any]) -> Any:
    surface.validate_card_dict(card)
    return True


FUNCTIONS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "parse_tool_id": lambda i: _parse_tool_id(i["value"]),
    "format_tool_id": lambda i: _format_tool_id(i["parts"]),
    "hash8": lambda i: surface.hash8(i["upstream_name"], i["input_schema"]),
    "make_tool_id": lambda i: _make_tool_id(i),
    "parse_path": lambda i: _parse_path(i["value"]),
    "annotation_fields": lambda i: _annotation_fields(i["annotations"]),
    "render_card": lambda i: _render_card(i["card"]),
    "validate_card": lambda i: _validate_card(i["card"]),
    # what build_card does to a description: one line (§2.1), then §2.4
    "truncate_description": lambda i: surface.truncate_description(
        surface.single_line(i["text"]), i["budget_tokens"]
    ),
    "count_tokens": lambda i: surface.count_tokens(i["text"]),
}


def answer(function: str, data: dict[str, Any]) -> dict[str, Any]:
    if function == "hello":
        return {"ok": {"implementation": "tollbooth (clean room)", "spec_version": None}}
    if function == "grammar_match":
        return _grammar(data["grammar"], data["value"])
    if function not in FUNCTIONS:
        return {"unsupported": True}
    try:
        return {"ok": FUNCTIONS[function](data)}
    except CatalogError as exc:
        return {"error": "CATALOG_ERROR", "message": f"{exc.code}: {exc.message}"}
    except GatewayError as exc:
        return {"error": exc.code, "message": exc.message}


if __name__ == "__main__":
    serve(answer)
