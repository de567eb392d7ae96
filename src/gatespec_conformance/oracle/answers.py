"""Expected answers for the remaining layer-1 functions, each from the statement it restates."""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping
from typing import Any, Final

from gatespec_surface.grammars import GRAMMARS
from gatespec_surface.parsers import (
    WIRE_DIGEST_CHARS,
    WIRE_ESCAPE,
    WIRE_ESCAPES,
    WIRE_MAX_LENGTH,
    WIRE_SHORT_MARKER,
)

__all__ = ["annotation_answer", "selector_answer", "unwire", "wire_answer", "wire_name"]

# Seed 002, "MCP annotations are untrusted hints": hint -> tag when the hint is true.
_HINT_TAGS: Final = {"readOnlyHint": "read-only", "destructiveHint": "destructive"}


def annotation_answer(annotations: Mapping[str, Any]) -> dict[str, Any]:
    """Seed 002's table: readOnlyHint true gives side_effects false and "read-only";
    destructiveHint true gives "destructive"; costHint becomes cost_hint as a float. Without
    readOnlyHint true a tool may have side effects (AM-SIDE-EFFECTS-DEFAULT). A costHint that is
    not a positive finite number leaves cost_hint at its default 0 (models.yaml: minimum 0,
    default 0): hints are untrusted, so a wrong type is ignored, never an error."""
    tags = sorted(tag for hint, tag in _HINT_TAGS.items() if annotations.get(hint) is True)
    cost = annotations.get("costHint")
    cost_hint = 0.0
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        if math.isfinite(cost) and cost > 0:
            cost_hint = float(cost)
    return {
        "side_effects": annotations.get("readOnlyHint") is not True,
        "tags": tags,
        "cost_hint": cost_hint,
    }


def selector_answer(value: str) -> dict[str, Any]:
    """tool_view selectors as grammars.yaml `view_selector` describes them: "all"; lines 1-based
    and inclusive ("lines:A" one line, "lines:A-" to the end); bytes 0-based and inclusive;
    "json:" and a JSON pointer. A range that starts at line 0 or ends before it starts is the
    grammar's error."""
    info = GRAMMARS["view_selector"]
    m = re.fullmatch(info.pattern, value)
    bad = {"error": info.error.value}
    if m is None or (info.max_length is not None and len(value) > info.max_length):
        return bad
    none = {"start": None, "end": None, "pointer": None}
    if value == "all":
        return {"ok": {"kind": "all", **none}}
    if m.group("pointer") is not None:
        return {"ok": {"kind": "json", **none, "pointer": m.group("pointer")}}
    kind = "lines" if m.group("line_start") is not None else "bytes"
    group = "line" if kind == "lines" else "byte"
    start = int(m.group(f"{group}_start"))
    end_text = m.group(f"{group}_end")
    end = None if value.endswith("-") else (int(end_text) if end_text else start)
    if (kind == "lines" and start < 1) or (end is not None and end < start):
        return bad
    return {"ok": {"kind": kind, "start": start, "end": end, "pointer": None}}


def wire_answer(tool_id: str) -> dict[str, Any]:
    """encode_wire_name's answer: the wire name, or the tool_id grammar's error for a string
    that is no tool_id."""
    info = GRAMMARS["tool_id"]
    valid = re.fullmatch(info.pattern, tool_id) and len(tool_id) <= (info.max_length or 10**9)
    return {"ok": wire_name(tool_id)[0]} if valid else {"error": info.error.value}


def wire_name(tool_id: str) -> tuple[str, bool]:
    """(the wire name AM-WIRE-NAME gives `tool_id`, whether it is reversible). Each character
    is escaped by profiles.yaml's table; an escaped id over WIRE_MAX_LENGTH becomes the longest
    prefix of whole escapes that leaves room for the marker and the digest, the marker, and the
    first digest characters of sha256(tool_id)."""
    pieces = [WIRE_ESCAPES.get(ch, ch) for ch in tool_id]
    full = "".join(pieces)
    if len(full) <= WIRE_MAX_LENGTH:
        return full, True
    room = WIRE_MAX_LENGTH - len(WIRE_SHORT_MARKER) - WIRE_DIGEST_CHARS
    prefix = ""
    for piece in pieces:
        if len(prefix) + len(piece) > room:
            break
        prefix += piece
    digest = hashlib.sha256(tool_id.encode("utf-8")).hexdigest()[:WIRE_DIGEST_CHARS]
    return prefix + WIRE_SHORT_MARKER + digest, False


def unwire(name: str) -> str | None:
    """The tool_id a full wire name escapes, or None for a name that is not a sequence of the
    table's escapes (a shortened one: its marker is no escape)."""
    unescapes = {v: k for k, v in WIRE_ESCAPES.items()}
    out, i = [], 0
    while i < len(name):
        pair = name[i : i + 2]
        if name[i] == WIRE_ESCAPE:
            if pair not in unescapes:
                return None
            out.append(unescapes[pair])
            i += 2
        else:
            out.append(name[i])
            i += 1
    return "".join(out)
