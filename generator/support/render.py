"""The prompt rendering of cards and browse responses (AM-CARD-RENDER): the exact text a
client receives, on which token budgets are measured (AM-BUDGET-TEXT).

A card renders as the concatenation of its parts, in order; each part is a field, a format
and `when` the part appears. Parts are compiled once into small functions (rendering is on
every browse's hot path)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Card = Mapping[str, Any]


@dataclass(frozen=True)
class CardPart:
    field: str
    format: str
    when: str = "always"
    join: str | None = None


def _shown(value: Any) -> Any:
    """Numbers in their shortest form ("2.5", "3"); everything else as it is."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{value:g}"
    return value


def _id_name(card_id: str) -> str:
    """The name an id already shows: a path's last segment, or a tool_id's name part."""
    if card_id.startswith("/"):
        return card_id.rstrip("/*").rsplit("/", 1)[-1]
    return card_id.split(":", 1)[-1].split("@", 1)[0].split("#", 1)[0]


def _compile(part: CardPart) -> Callable[[Card], str]:
    """One part as a function of the card: its text, or "" when it does not appear."""
    f, fmt, join = part.field, part.format, part.join

    def fill(card: Card) -> str:
        value = card[f]
        if join is not None:
            value = join.join(value)
        elif type(value) is not str:  # most values are strings: skip _shown's checks
            value = _shown(value)
        return fmt.format_map({f: value})

    when = part.when
    if when == "always":
        return fill
    if when == "kind_not_tool":
        return lambda card: fill(card) if card["kind"] != "tool" else ""
    if when == "name_differs_from_id":
        return lambda card: fill(card) if card[f] != _id_name(str(card["id"])) else ""
    if when == "non_empty":
        return lambda card: fill(card) if card.get(f) else ""
    if when == "positive":
        return lambda card: fill(card) if (card.get(f) or 0) > 0 else ""
    # A flag's format is its whole text.
    if when == "true":
        return lambda card: fmt if card.get(f) is True else ""
    if when == "false":
        return lambda card: fmt if card.get(f) is False else ""
    if when == "false_unless_internal":
        return lambda card: fmt if card.get(f) is False and card["kind"] != "internal" else ""
    raise ValueError(f"card part {f!r}: unknown `when` {when!r}")


class Renderer:
    def __init__(
        self, parts: Sequence[CardPart], separator: str, preamble_query: str, preamble_path: str
    ) -> None:
        self._parts = [_compile(p) for p in parts]
        self.separator = separator
        self.preamble_query = preamble_query
        self.preamble_path = preamble_path

    def render_card(self, card: Card) -> str:
        """One card as one line. score is never rendered (§2.1)."""
        return "".join([part(card) for part in self._parts])

    def render_preamble(self, count: int, total: int | None = None, path: str | None = None) -> str:
        """The first line of a tool_browse text result (counted in the preamble allowance)."""
        if path is not None:
            return self.preamble_path.format(count=count)
        return self.preamble_query.format(count=count, total=total if total is not None else count)

    def render_browse_text(self, preamble: str, cards: Sequence[Card]) -> str:
        """The whole text content of a tool_browse result: preamble line, then a line a card."""
        return self.separator.join([preamble, *(self.render_card(c) for c in cards)])
