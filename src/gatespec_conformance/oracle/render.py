"""A card's prompt line as AM-CARD-RENDER decides it (budgets.yaml `render` gives the same parts
and conditions): "{id}", " [kind]" unless kind is tool, " {name}" when it differs from the name
the id shows, ": {description}" when there is one, " #tag" per tag, " cost=N" when cost_hint > 0,
" side-effects" when side_effects is true, " no-schema" when has_schema is false on a card that
is not internal. score never appears.

N is written as Python's general format ("2.5", "12", "1e+06"): the spec fixes no number format
beyond that of its examples, and this is the generated renderer's choice (see docs/conformance.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["id_shows_name", "render_line"]


def id_shows_name(card_id: str) -> str:
    """The name an id already shows: a path's last segment (a final "*" aside), or the name
    part of a tool_id (the whole id when it has no ":")."""
    if card_id.startswith("/"):
        segments = [s for s in card_id.split("/") if s and s != "*"]
        return segments[-1] if segments else ""
    name = card_id.split(":", 1)[-1]
    for mark in ("@", "#"):
        name = name.split(mark, 1)[0]
    return name


def render_line(card: Mapping[str, Any]) -> str:
    out = [str(card["id"])]
    if card["kind"] != "tool":
        out.append(f" [{card['kind']}]")
    if card["name"] != id_shows_name(str(card["id"])):
        out.append(f" {card['name']}")
    if card.get("description"):
        out.append(f": {card['description']}")
    out.extend(f" #{tag}" for tag in card.get("tags") or ())
    cost = card.get("cost_hint") or 0
    if cost > 0:
        out.append(f" cost={cost:g}")
    if card.get("side_effects") is True:
        out.append(" side-effects")
    if card.get("has_schema") is False and card["kind"] != "internal":
        out.append(" no-schema")
    return "".join(out)
