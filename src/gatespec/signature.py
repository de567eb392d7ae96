"""The argument signature an ARGS_INVALID error shows (AM-ARGS-SIGNATURE, cards.yaml
`signature`): `TOOL(required: type, optional?: type, ...)`, at most SIGNATURE_MAX_TOKENS exact
cl100k_base tokens. In the gateway profile the agent never sees a schema, so this is how it
learns what a tool accepts after getting it wrong."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from gatespec.tokens import count_tokens
from gatespec_surface.budgets import (
    SIGNATURE_ENUM_VALUES_MAX,
    SIGNATURE_MAX_TOKENS,
    SIGNATURE_MORE,
    SIGNATURE_OPTIONAL_MARK,
)

__all__ = ["signature"]


def _type(schema: object) -> str:
    if not isinstance(schema, Mapping):
        return "any"
    enum = schema.get("enum")
    if isinstance(enum, list) and 0 < len(enum) <= SIGNATURE_ENUM_VALUES_MAX:
        return "|".join(json.dumps(v, ensure_ascii=False) for v in enum)
    kind = schema.get("type")
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind) or "any"
    if kind == "array":
        items = schema.get("items")
        return (
            f"array<{_type(items)}>" if isinstance(items, Mapping) and "type" in items else "array"
        )
    return kind if isinstance(kind, str) else "any"


def _parts(schema: Mapping[str, Any]) -> list[tuple[str, bool]]:
    """(text, required) per property: the required ones first, each group in schema order."""
    props = schema.get("properties")
    if not isinstance(props, Mapping):
        return []
    required = schema.get("required")
    needed = {r for r in required if isinstance(r, str)} if isinstance(required, list) else set()
    ordered = [n for n in props if n in needed] + [n for n in props if n not in needed]
    return [
        (
            f"{name}{'' if name in needed else SIGNATURE_OPTIONAL_MARK}: {_type(props[name])}",
            name in needed,
        )
        for name in ordered
    ]


def signature(tool: str, schema: object) -> str:
    """The signature of a tool with this input schema, within the token budget: arguments are
    dropped from the end (optional ones first) and SIGNATURE_MORE stands for them."""
    parts = _parts(schema) if isinstance(schema, Mapping) else []

    def render(shown: list[tuple[str, bool]], cut: bool) -> str:
        texts = [text for text, _ in shown] + ([SIGNATURE_MORE] if cut else [])
        return f"{tool}({', '.join(texts)})"

    shown = list(parts)  # required first: dropping from the end drops optional ones first
    text = render(shown, False)
    while shown and count_tokens(text) > SIGNATURE_MAX_TOKENS:
        shown.pop()
        text = render(shown, True)
    return text
