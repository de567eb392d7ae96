"""Places in a spec file's YAML by key path: `card.hard_cap_tokens` (keys), `[0]` (a list
index), `{a,b}` (each of several keys), `[id=A,B]` (the list items whose `id` is A or B).
Seed facts name their places this way; a path that reaches nothing gives MISSING."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

_STEP = re.compile(r"\.?([^.\[\]{}]+)|\[(\d+)\]|\.?\{([^}]+)\}|\[(\w+)=([^\]]+)\]")
MISSING = object()  # what a path that reaches nothing gives


@dataclass(frozen=True)
class Place:
    """One resolved location: its display name and the spec's value there."""

    where: str
    value: Any


@dataclass(frozen=True)
class _Select:
    """`[id=A,B]`: the items of a list whose `id` is A or B (requirements by id)."""

    key: str
    values: tuple[str, ...]


def _steps(path: str) -> list[str | int | list[str] | _Select]:
    out: list[str | int | list[str] | _Select] = []
    pos = 0
    while pos < len(path):
        m = _STEP.match(path, pos)
        if not m or m.end() == pos:
            raise ValueError(f"cannot read key path {path!r} at {pos}")
        key, index, alts, sel_key, sel_values = m.groups()
        if sel_key is not None:
            out.append(_Select(sel_key, tuple(sel_values.split(","))))
        else:
            out.append(
                key if key is not None else int(index) if index is not None else alts.split(",")
            )
        pos = m.end()
    return out


def resolve_path(data: Any, path: str) -> list[tuple[str, Any]]:
    """(key path, value) for every place `path` names in `data`; a missing key gives MISSING."""
    results: list[tuple[str, Any]] = [("", data)]
    for step in _steps(path):
        nxt: list[tuple[str, Any]] = []
        for where, node in results:
            if isinstance(step, _Select):
                for want in step.values:
                    found = [
                        item
                        for item in (node if isinstance(node, list) else [])
                        if isinstance(item, dict) and str(item.get(step.key)) == want
                    ]
                    label = f"{where}[{step.key}={want}]"
                    nxt.append((label, found[0] if len(found) == 1 else MISSING))
                continue
            keys = step if isinstance(step, list) else [step]
            for key in keys:
                label = f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}".lstrip(".")
                if isinstance(key, int):
                    ok = isinstance(node, list) and 0 <= key < len(node)
                    nxt.append((label, node[key] if ok else MISSING))
                else:
                    ok = isinstance(node, dict) and key in node
                    nxt.append((label, node[key] if ok else MISSING))
        results = nxt
    return results
