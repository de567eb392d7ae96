"""The kit's layer-1 adapter around switchyard's own naming functions (namespacing.py,
operations.py).

Written by us, not by switchyard's author: it translates the kit's JSON-lines protocol
(docs/conformance.md, "The adapter protocol") into those calls. Switchyard's NamespaceError has
two kinds, named after seed 004's two parse failures: "missing" ("Missing Server Context",
a name with no server part) and "invalid" ("Invalid Namespace"); the protocol calls them
NOT_NAMESPACED and NAME_INVALID. Everything else answers `unsupported`: switchyard implements
seeds 001/003/004, not 000's tool ids, paths or cards.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from switchyard import namespacing, operations

from tests.cleanroom.adapters.protocol import serve

_CODES = {"missing": "NOT_NAMESPACED", "invalid": "NAME_INVALID"}


def _parse_name(value: str) -> Any:
    parsed = namespacing.parse_name(value)
    return {"server": parsed.server, "tool": parsed.name}


def _format_name(server: str, name: str) -> Any:
    formatted = namespacing.apply_name(server, name)
    if formatted is None:
        raise namespacing.NamespaceError("invalid", f"{name!r} cannot be namespaced")
    return formatted


def _parse_uri(value: str) -> Any:
    parsed = namespacing.parse_uri(value)
    return {"server": parsed.server, "uri": parsed.name}


def _parse_operation(value: str) -> Any:
    parsed = operations.parse_operation_name(value)
    if parsed is None:
        return None
    return {"namespace": parsed[0], "name": parsed[1]}


FUNCTIONS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "parse_aggregate_name": lambda i: _parse_name(i["value"]),
    "format_aggregate_name": lambda i: _format_name(i["server"], i["name"]),
    "parse_resource_uri": lambda i: _parse_uri(i["value"]),
    "format_resource_uri": lambda i: namespacing.apply_uri(i["server"], i["uri"]),
    "parse_search_operation": lambda i: _parse_operation(i["value"]),
}


def answer(function: str, data: dict[str, Any]) -> dict[str, Any]:
    if function == "hello":
        return {"ok": {"implementation": "switchyard (clean room)", "spec_version": None}}
    if function not in FUNCTIONS:
        return {"unsupported": True}
    try:
        result = FUNCTIONS[function](data)
    except namespacing.NamespaceError as exc:
        return {"error": _CODES[exc.kind], "message": exc.message}
    if result is None:  # switchyard's parse_operation_name: "not an operation name"
        return {"error": "TOOL_NOT_FOUND", "message": f"{data.get('value')!r} names no operation"}
    return {"ok": result}


if __name__ == "__main__":
    serve(answer)
