"""ChoiceCards (§2.1-§2.5): built once per catalog item, measured on their exact prompt line.

A card's budget is counted on render.render_card(card), the line the client receives
(AM-BUDGET-TEXT). Only the description is shortened to meet the per-card target (§2.3); a card
that is still over the hard cap after that raises CatalogError. The JSON form (a dict) is what
the structured browse result carries; `score` is added per browse with `with_score`.

A catalog's cards (admit_cards) are fitted when first asked for: fitting counts tokens a few
times per card, and a first query browse of 10,000 tools shows ten of them. Which tools are
admitted is still decided at once, exactly (see admit_cards).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Final

from gatespec.catalog import Catalog, Item
from gatespec.tokens import count_tokens
from gatespec.truncate import PROBE_CHARS_PER_TOKEN, collapse_whitespace, truncate_description
from gatespec_surface.budgets import (
    BROWSE_PREAMBLE_TOKENS,
    CARD_HARD_CAP_TOKENS,
    CARD_TARGET_TOKENS,
    DEFAULT_ORDER,
    ELLIPSIS,
    browse_cap_tokens,
)
from gatespec_surface.errors import CatalogError
from gatespec_surface.grammars import match_tag
from gatespec_surface.render import render_browse_text, render_card
from gatespec_surface.schemas import MODEL_SCHEMAS
from gatespec_surface.validators import banned_content_at

__all__ = [
    "CARD_DESCRIPTION_MAX_CHARS",
    "CARD_NAME_MAX_CHARS",
    "CARD_TAGS_MAX",
    "Card",
    "LazyCards",
    "browse_text",
    "build_card",
    "build_cards",
    "card_tokens",
    "fit_card",
    "internal_card",
    "order_cards",
    "restrict_cards",
    "with_score",
]

Card = dict[str, Any]  # the JSON form of a ChoiceCard

_CARD_FIELDS: Final = MODEL_SCHEMAS["ChoiceCard"]["properties"]
CARD_NAME_MAX_CHARS: Final[int] = _CARD_FIELDS["name"]["maxLength"]
CARD_TAGS_MAX: Final[int] = _CARD_FIELDS["tags"]["maxItems"]
CARD_DESCRIPTION_MAX_CHARS: Final[int] = _CARD_FIELDS["description"]["maxLength"]


def card_tokens(card: Mapping[str, Any]) -> int:
    """Tokens of the card's prompt line: the exact text its budget bounds."""
    return count_tokens(render_card(card))


def _short_name(name: str) -> str:
    # The id carries the full name; the display name only has to be recognisable.
    if len(name) <= CARD_NAME_MAX_CHARS:
        return name
    return name[: CARD_NAME_MAX_CHARS - len(ELLIPSIS)] + ELLIPSIS


def _card_tags(tags: Iterable[str]) -> list[str]:
    """Sorted and deduplicated (§2.1). Tags come only from the annotation mapping, whose tags
    match the tag grammar (AM-TAG-GRAMMAR): one that does not is a broken invariant, raised,
    never filtered out silently."""
    out = sorted(set(tags))
    for tag in out:
        match_tag(tag)
    return out[:CARD_TAGS_MAX]


def fit_card(card: Card, description: str) -> Card:
    """`card` with `description` shortened (§2.4) until the card's line fits the per-card
    target. Raises CatalogError when the line is still over the hard cap (§2.3)."""
    text = collapse_whitespace(description)
    fitted = {**card, "description": text}
    # Verbatim when the whole line fits. A description far longer than a card can hold skips
    # that count: truncation keeps it verbatim anyway if it fits its budget.
    plausible = len(text) <= min(
        CARD_TARGET_TOKENS * PROBE_CHARS_PER_TOKEN, CARD_DESCRIPTION_MAX_CHARS
    )
    tokens = card_tokens(fitted) if plausible else CARD_TARGET_TOKENS + 1
    if tokens > CARD_TARGET_TOKENS:
        fitted["description"] = ""
        tokens = base = card_tokens(fitted)
        # ": " joins the description to the line: one token in cl100k, checked by the count
        budget = CARD_TARGET_TOKENS - base - 1
        while budget > 0:
            text = truncate_description(description, budget)
            if len(text) > CARD_DESCRIPTION_MAX_CHARS:  # very long tokens: cut by characters
                text = text[: CARD_DESCRIPTION_MAX_CHARS - len(ELLIPSIS)] + ELLIPSIS
            fitted["description"] = text
            tokens = card_tokens(fitted)
            if tokens <= CARD_TARGET_TOKENS:
                break
            budget -= tokens - CARD_TARGET_TOKENS  # merges across the join: settles fast
        else:
            fitted["description"] = ""
            tokens = base
    if tokens > CARD_HARD_CAP_TOKENS:
        raise CatalogError(
            message=(
                f"card {fitted['id']!r} renders in {tokens} tokens even with its description "
                f"truncated; the hard cap is {CARD_HARD_CAP_TOKENS}"
            ),
            path=str(fitted["id"]),
            details={"tokens": tokens, "hard_cap": CARD_HARD_CAP_TOKENS},
        )
    return fitted


def build_card(item: Item) -> Card:
    """The card of one catalog item, without a score (§2.1; schemas never appear)."""
    return fit_card(_bare_card(item), _without_banned(item.description))


def _bare_card(item: Item) -> Card:
    """The card of `item` with an empty description: every field but the one fit_card sets."""
    props = item.input_schema.get("properties")
    return {
        "id": item.id,
        "name": _short_name(item.name),
        "description": "",
        "tags": _card_tags(item.tags),
        "kind": item.kind,
        "namespace": item.namespace,
        "has_schema": isinstance(props, Mapping) and len(props) > 0,
        "cost_hint": item.cost_hint,
        "side_effects": item.side_effects,
    }


def _within_cap(bare: Card) -> bool:
    """Can fit_card never raise for this card, whatever its description? fit_card ends with
    the line within the target (<= the hard cap) or with the description emptied, so only the
    bare line can be over the cap; and a cl100k token is at least one UTF-8 byte, so a line of
    at most CARD_HARD_CAP_TOKENS bytes needs no count."""
    line = render_card(bare)
    return (
        len(line.encode("utf-8")) <= CARD_HARD_CAP_TOKENS
        or count_tokens(line) <= CARD_HARD_CAP_TOKENS
    )


def _without_banned(description: str) -> str:
    """The description cut before a stringified banned field (AM-BANNED-IN-DESCRIPTION)."""
    at = banned_content_at(description)
    if at is None:
        return description
    return description[:at].rstrip() + ELLIPSIS


def internal_card(path: str, name: str, namespace: str, description: str) -> Card:
    """A browse-tree node (§3.3): kind internal, id = its path, no schema."""
    card: Card = {
        "id": path,
        "name": _short_name(name),
        "description": "",
        "tags": [],
        "kind": "internal",
        "namespace": namespace,
        "has_schema": False,
        "cost_hint": 0.0,
        "side_effects": False,
    }
    return fit_card(card, description)


class LazyCards(Mapping[str, Card]):
    """tool_id -> card of the admitted tools, in catalog order, each card fitted on first
    access and kept: the card build_card gives, whenever and from whichever thread it is
    first asked for (two threads asking at once may both fit it; one result is kept).
    Read-only; take copies with `with_score` before handing cards out."""

    __slots__ = ("_ids", "_pending", "_built")

    def __init__(
        self,
        ids: Iterable[str],
        pending: Mapping[str, tuple[Card, str]],
        built: dict[str, Card],
    ) -> None:
        self._ids = dict.fromkeys(ids)  # ordered, with O(1) membership
        self._pending = pending  # tool_id -> (bare card, upstream description), not fitted
        self._built = built  # tool_id -> fitted card (shared with restricted views)

    def __getitem__(self, tool_id: str) -> Card:
        if tool_id not in self._ids:
            raise KeyError(tool_id)
        card = self._built.get(tool_id)
        if card is None:
            bare, description = self._pending[tool_id]
            card = self._built.setdefault(tool_id, fit_card(bare, _without_banned(description)))
        return card

    def __contains__(self, tool_id: object) -> bool:
        return tool_id in self._ids

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)

    def restricted(self, ids: Collection[str]) -> LazyCards:
        """The cards of `ids` only (in this mapping's order), sharing what is fitted."""
        return LazyCards((i for i in self._ids if i in ids), self._pending, self._built)


def admit_cards(catalog: Catalog) -> tuple[Catalog, LazyCards]:
    """The admitted catalog and its cards (fitted lazily, LazyCards). An item whose card cannot
    fit the hard cap raises CatalogError in build_card (§2.3) and is excluded with that reason
    instead of failing the whole build (AM-CARD-OVER-CAP). Admission is exact without fitting
    most cards: a card whose bare line is within the cap cannot raise (_within_cap); any other
    is built now, and dropped if it raises."""
    pending: dict[str, tuple[Card, str]] = {}
    built: dict[str, Card] = {}
    dropped: dict[str, str] = {}
    for item in catalog.items():
        bare = _bare_card(item)
        if _within_cap(bare):
            pending[item.id] = (bare, item.description)
            continue
        try:
            built[item.id] = fit_card(bare, _without_banned(item.description))
        except CatalogError as exc:
            dropped[item.id] = exc.message
    if dropped:
        catalog = catalog.without(dropped)
    return catalog, LazyCards((item.id for item in catalog.items()), pending, built)


def build_cards(catalog: Catalog) -> Mapping[str, Card]:
    """tool_id -> card for every item, built once per catalog snapshot (read-only view; take
    copies with `with_score` before handing cards out)."""
    return MappingProxyType({item.id: build_card(item) for item in catalog.items()})


def restrict_cards(cards: Mapping[str, Card], ids: Collection[str]) -> Mapping[str, Card]:
    """The cards of `ids` only; lazy cards stay lazy (what is fitted is shared)."""
    if isinstance(cards, LazyCards):
        return cards.restricted(ids)
    return MappingProxyType({tool_id: card for tool_id, card in cards.items() if tool_id in ids})


def with_score(card: Mapping[str, Any], score: float | None) -> Card:
    """A fresh copy of `card` carrying `score` (JSON form only; never rendered)."""
    out = {**card, "tags": list(card["tags"])}
    if score is None:
        out.pop("score", None)
    else:
        out["score"] = score
    return out


def _sort_key(key: str) -> Any:
    def value(card: Mapping[str, Any]) -> tuple[int, Any]:
        v = card.get(key)
        return (0, 0) if v is None else (1, v)  # a missing value sorts as the lowest

    return value


def order_cards(
    cards: Iterable[Mapping[str, Any]], order: Sequence[tuple[str, bool]] = DEFAULT_ORDER
) -> list[Any]:
    """Cards sorted by `order`, (key, descending?) pairs most significant first: by default
    §2.5's score descending, then id ascending."""
    out = list(cards)
    for key, descending in reversed(order):  # stable sorts, least significant first
        out.sort(key=_sort_key(key), reverse=descending)
    return out


def browse_text(preamble: str, cards: Sequence[Mapping[str, Any]]) -> str:
    """The exact text content of a browse result, checked against its hard cap (§2.3).

    Holds by construction (each card is within its cap and the preamble within its
    allowance); the check turns a broken invariant into a loud CatalogError."""
    preamble_tokens = count_tokens(preamble)
    if preamble_tokens > BROWSE_PREAMBLE_TOKENS:
        raise CatalogError(
            message=f"browse preamble is {preamble_tokens} tokens; the allowance is "
            f"{BROWSE_PREAMBLE_TOKENS}",
        )
    text = render_browse_text(preamble, cards)
    tokens = count_tokens(text)
    cap = browse_cap_tokens(len(cards))
    if tokens > cap:
        raise CatalogError(
            message=f"browse text of {len(cards)} cards is {tokens} tokens; the cap is {cap}",
            details={"tokens": tokens, "cap": cap},
        )
    return text
