# Copied from generator/support/vectors.py by `make generate`; do not edit.
"""The reference dispatcher of the language-neutral test vectors: each vector function takes
the case's JSON input and answers with the surface's own code, {"ok": value} or
{"error": CODE}. Another implementation answers the same functions (the conformance kit's
`functions` command)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from .errors import SurfaceError
from .grammar import Matcher
from .paths import PathParts
from .selectors import ViewSelector

Input = dict[str, Any]
Function = Callable[[Input], Any]


@dataclass(frozen=True)
class Surface:
    """The functions of the surface the vectors exercise."""

    matchers: Mapping[str, Matcher]  # grammar name -> match_NAME
    parse_tool_id: Callable[[object], Any]  # -> a dataclass of the parts
    format_tool_id: Callable[[Any], str]
    tool_id_parts: Callable[..., Any]
    hash8: Callable[[str, object], str]
    make_tool_id: Callable[[str, str, object, str | None], str]
    parse_path: Callable[[object], PathParts]
    encode_wire_name: Callable[[str], str]
    decode_wire_name: Callable[[object], str]
    parse_aggregate_name: Callable[[object], tuple[str, str]]
    format_aggregate_name: Callable[[str, str], str]
    parse_resource_uri: Callable[[object], tuple[str, str]]
    format_resource_uri: Callable[[str, str], str]
    parse_search_operation: Callable[[object], tuple[str, str]]
    parse_view_selector: Callable[[object], ViewSelector]
    server_key: Callable[[str], str]
    annotation_fields: Callable[[Any], tuple[bool, list[str], float]]
    render_card: Callable[[Any], str]
    validate_card: Callable[[object], None]


def functions(s: Surface) -> dict[str, Function]:
    """Vector function name -> how the surface answers it."""

    def grammar_match(inp: Input) -> bool:
        s.matchers[inp["grammar"]](inp["value"])
        return True

    def parse_path(inp: Input) -> Any:
        parts = s.parse_path(inp["value"])
        return {"segments": list(parts.segments), "star": parts.star}

    def parse_aggregate_name(inp: Input) -> Any:
        server, tool = s.parse_aggregate_name(inp["value"])
        return {"server": server, "tool": tool}

    def parse_resource_uri(inp: Input) -> Any:
        server, uri = s.parse_resource_uri(inp["value"])
        return {"server": server, "uri": uri}

    def parse_search_operation(inp: Input) -> Any:
        ns, name = s.parse_search_operation(inp["value"])
        return {"namespace": ns, "name": name}

    def parse_view_selector(inp: Input) -> Any:
        sel = s.parse_view_selector(inp["value"])
        return {"kind": sel.kind, "start": sel.start, "end": sel.end, "pointer": sel.pointer}

    def annotation_fields(inp: Input) -> Any:
        side_effects, tags, cost = s.annotation_fields(inp["annotations"])
        return {"side_effects": side_effects, "tags": tags, "cost_hint": cost}

    def validate_card(inp: Input) -> bool:
        s.validate_card(inp["card"])
        return True

    return {
        "grammar_match": grammar_match,
        "parse_tool_id": lambda inp: dataclasses.asdict(s.parse_tool_id(inp["value"])),
        "format_tool_id": lambda inp: s.format_tool_id(s.tool_id_parts(**inp["parts"])),
        "hash8": lambda inp: s.hash8(inp["upstream_name"], inp["input_schema"]),
        "make_tool_id": lambda inp: s.make_tool_id(
            inp["namespace"], inp["upstream_name"], inp["input_schema"], inp.get("version")
        ),
        "parse_path": parse_path,
        "encode_wire_name": lambda inp: s.encode_wire_name(inp["tool_id"]),
        "decode_wire_name": lambda inp: s.decode_wire_name(inp["name"]),
        "parse_aggregate_name": parse_aggregate_name,
        "format_aggregate_name": lambda inp: s.format_aggregate_name(inp["server"], inp["name"]),
        "parse_resource_uri": parse_resource_uri,
        "format_resource_uri": lambda inp: s.format_resource_uri(inp["server"], inp["uri"]),
        "parse_search_operation": parse_search_operation,
        "parse_view_selector": parse_view_selector,
        "server_key": lambda inp: s.server_key(inp["config_key"]),
        "annotation_fields": annotation_fields,
        "render_card": lambda inp: s.render_card(inp["card"]),
        "validate_card": validate_card,
    }


def run_case(table: Mapping[str, Function], case: Mapping[str, Any]) -> dict[str, Any]:
    """Answer one vector case: {"ok": value} or {"error": CODE}."""
    try:
        return {"ok": table[case["function"]](case["input"])}
    except SurfaceError as exc:
        return {"error": exc.code.value}


def load_cases(package: str, files: Sequence[str]) -> list[dict[str, Any]]:
    """Every case of the package's vector files, in file order."""
    out: list[dict[str, Any]] = []
    for name in files:
        doc = json.loads(resources.files(package).joinpath(name).read_text(encoding="utf-8"))
        out.extend(doc["cases"])
    return out
