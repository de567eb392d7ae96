"""ChoiceCards: fields, bounds, truncation, rendering, ordering (seed 000 §2, §5).

The seed fixes the budgets on the *prompt-facing rendered form* but does not
define that form; this module defines it (see :func:`render_card`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .errors import BROWSE_OVER_BUDGET, CARD_INVALID, CARD_OVER_BUDGET, CatalogError
from .tokens import count_tokens, encode, token_bytes
from .toolid import parse_tool_id

# §2.3 budgets
CARD_TARGET_TOKENS = 60
CARD_HARD_CAP_TOKENS = 80
BROWSE_PREAMBLE_TOKENS = 32
# §2.1 bounds
NAME_MAX_CHARS = 64
TAGS_MAX = 5
TAG_MAX_CHARS = 24
KINDS = ("tool", "agent", "skill", "internal")
ELLIPSIS = "\u2026"
SENTENCE_TERMINATORS = ".!?"
# §5.1
CACHE_BREAKPOINT_ID = "__cache_breakpoint__"

PERMITTED_FIELDS = (
    "id",
    "name",
    "description",
    "tags",
    "kind",
    "namespace",
    "has_schema",
    "score",
    "cost_hint",
    "side_effects",
)
BANNED_FIELDS = (
    "args_schema",
    "inputSchema",
    "input_schema",
    "output_schema",
    "outputSchema",
    "examples",
    "example",
    "annotations",
    "_meta",
    "meta",
    "metadata",
    "url",
    "server_url",
    "transport",
)
# Substrings that betray a banned field smuggled into a tag (§2.2 "including
# stringified or nested inside tags"); compared case-insensitively.
_BANNED_TAG_MARKERS = (
    "args_schema",
    "inputschema",
    "input_schema",
    "outputschema",
    "output_schema",
    "annotations",
    "_meta",
    "://",
    "{",
    "}",
)


@dataclass(frozen=True, slots=True)
class ChoiceCard:
    """A schema-free tool card carrying only the §2.1 fields."""

    id: str
    name: str
    description: str = ""
    tags: tuple[str, ...] = field(default_factory=tuple)
    kind: str = "tool"
    namespace: str = ""
    has_schema: bool = False
    score: float | None = None
    cost_hint: float = 0.0
    side_effects: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (§2.1): every field; ``score`` only when set."""
        d: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "description": self.description,
            "tags": list(self.tags),
            "kind": self.kind,
            "namespace": self.namespace,
            "has_schema": self.has_schema,
        }
        if self.score is not None:
            d["score"] = self.score
        d["cost_hint"] = self.cost_hint
        d["side_effects"] = self.side_effects
        return d


# --- §2.4 truncation ----------------------------------------------------------


def single_line(text: str | None) -> str:
    """Collapse every whitespace run (including newlines) to one space and
    strip the ends, so a description is a single line (§2.1)."""
    return " ".join((text or "").split())


def truncate_description(text: str, budget: int) -> str:
    """Deterministic, sentence-boundary-aware truncation (seed 000 §2.4).

    1. encode with cl100k_base; 2. if ``<= budget`` tokens return verbatim;
    3. else return the longest prefix ending at ``.``, ``!`` or ``?`` whose own
    token count is ``<= budget``; 4. else hard-cut at the byte offset where the
    first ``budget - 1`` tokens end (backing off to a UTF-8 character
    boundary) and append ``…`` (U+2026).  ``budget <= 1`` with an over-budget
    text yields just ``…``.  Pure: no randomness, locale or external state.
    """
    tokens = encode(text)
    if len(tokens) <= budget:
        return text
    ends = [i + 1 for i, ch in enumerate(text) if ch in SENTENCE_TERMINATORS]
    for end in reversed(ends):
        prefix = text[:end]
        if count_tokens(prefix) <= budget:
            return prefix
    keep = max(budget - 1, 0)
    raw = b"".join(token_bytes(tokens[:keep]))
    while raw:
        try:
            head = raw.decode("utf-8")
            break
        except UnicodeDecodeError:
            raw = raw[:-1]
    else:
        head = ""
    return head + ELLIPSIS


# --- rendering (§2.3 "prompt-facing rendered form") ---------------------------


def _fmt_float(x: float) -> str:
    return format(float(x), "g")


def render_card(card: ChoiceCard) -> str:
    """The prompt-facing, single-line rendering of a card (no trailing newline).

    ``{id} ({kind}) {name}: {description} [ns: {namespace}; tags: a, b;
    schema: yes|no; cost: {cost_hint}; side effects]``

    ``score`` is never rendered (§2.1); ``tags`` only when non-empty;
    ``cost`` only when ``cost_hint > 0``; ``side effects`` only when true;
    ``: {description}`` only when the description is non-empty.
    """
    head = f"{card.id} ({card.kind}) {card.name}"
    if card.description:
        head += f": {card.description}"
    attrs = [f"ns: {card.namespace}"]
    if card.tags:
        attrs.append("tags: " + ", ".join(card.tags))
    attrs.append("schema: " + ("yes" if card.has_schema else "no"))
    if card.cost_hint > 0:
        attrs.append("cost: " + _fmt_float(card.cost_hint))
    if card.side_effects:
        attrs.append("side effects")
    return f"{head} [{'; '.join(attrs)}]"


def card_tokens(card: ChoiceCard) -> int:
    """Exact cl100k_base token count of :func:`render_card` (§2.3)."""
    return count_tokens(render_card(card))


# --- validation (§2.1, §2.2, §2.3) ---------------------------------------------


def _card_invalid(message: str, card_id: str = "", **details: Any) -> CatalogError:
    return CatalogError(CARD_INVALID, message, card_id=card_id, **details)


def validate_card_fields(card: ChoiceCard) -> None:
    """Check the §2.1 bounds and §2.2 bans on a card, except the token cap.

    Raises :class:`CatalogError` with code ``CARD_INVALID``.
    """
    cid = card.id
    if not isinstance(card.id, str) or not card.id:
        raise _card_invalid("id must be a non-empty string")
    if card.kind not in KINDS:
        raise _card_invalid(f"kind must be one of {KINDS}", cid, kind=card.kind)
    if card.kind != "internal":
        parts = parse_tool_id(card.id)  # raises CatalogError(TOOL_ID_INVALID)
        if card.namespace != parts.namespace:
            raise _card_invalid("namespace must copy the tool_id namespace", cid)
    if not isinstance(card.name, str) or len(card.name) > NAME_MAX_CHARS:
        raise _card_invalid(f"name must be a string of <= {NAME_MAX_CHARS} characters", cid)
    if not isinstance(card.description, str) or "\n" in card.description or "\r" in card.description:
        raise _card_invalid("description must be a single-line string", cid)
    tags = list(card.tags)
    if not all(isinstance(t, str) for t in tags):
        raise _card_invalid("tags must be strings", cid)
    if tags != sorted(set(tags)):
        raise _card_invalid("tags must be sorted and deduplicated", cid)
    if len(tags) > TAGS_MAX:
        raise _card_invalid(f"at most {TAGS_MAX} tags", cid, tags=tags)
    for t in tags:
        if len(t) > TAG_MAX_CHARS:
            raise _card_invalid(f"tag {t!r} longer than {TAG_MAX_CHARS} characters", cid)
        low = t.lower()
        if any(m in low for m in _BANNED_TAG_MARKERS):
            raise _card_invalid(f"tag {t!r} smuggles a banned field (§2.2)", cid)
    if not isinstance(card.has_schema, bool) or not isinstance(card.side_effects, bool):
        raise _card_invalid("has_schema and side_effects must be booleans", cid)
    if card.score is not None and (isinstance(card.score, bool) or not isinstance(card.score, (int, float))):
        raise _card_invalid("score must be a float or absent", cid)
    if isinstance(card.cost_hint, bool) or not isinstance(card.cost_hint, (int, float)):
        raise _card_invalid("cost_hint must be a float", cid)


def validate_card(card: ChoiceCard) -> int:
    """Full card check: fields (§2.1/§2.2) and the single-card hard cap (§2.3).

    Returns the card's token count.  Raises :class:`CatalogError`
    (``CARD_INVALID``, ``TOOL_ID_INVALID`` or ``CARD_OVER_BUDGET``).
    """
    validate_card_fields(card)
    n = card_tokens(card)
    if n > CARD_HARD_CAP_TOKENS:
        raise CatalogError(
            CARD_OVER_BUDGET,
            f"card {card.id!r} renders to {n} tokens (> {CARD_HARD_CAP_TOKENS})",
            card_id=card.id,
            tokens=n,
        )
    return n


def validate_card_dict(d: Mapping[str, Any]) -> ChoiceCard:
    """Validate a card's JSON form: only §2.1 keys (§2.2 bans everything else),
    then :func:`validate_card`.  Returns the parsed card."""
    extra = [k for k in d if k not in PERMITTED_FIELDS]
    if extra:
        banned = [k for k in extra if k in BANNED_FIELDS]
        raise _card_invalid(
            f"fields not permitted on a ChoiceCard: {sorted(extra)}", str(d.get("id", "")), banned=sorted(banned)
        )
    for req in ("id", "name", "kind", "namespace", "has_schema"):
        if req not in d:
            raise _card_invalid(f"missing field {req!r}", str(d.get("id", "")))
    tags = d.get("tags", [])
    if not isinstance(tags, (list, tuple)):
        raise _card_invalid("tags must be a list", str(d.get("id", "")))
    card = ChoiceCard(
        id=d["id"],
        name=d["name"],
        description=d.get("description", ""),
        tags=tuple(tags),
        kind=d["kind"],
        namespace=d["namespace"],
        has_schema=d["has_schema"],
        score=d.get("score"),
        cost_hint=d.get("cost_hint", 0.0),
        side_effects=d.get("side_effects", False),
    )
    validate_card(card)
    return card


# --- construction ---------------------------------------------------------------


def normalize_tags(tags: Iterable[str]) -> tuple[str, ...]:
    """Sorted, deduplicated tags (§2.1).  Does not drop any (no silent loss)."""
    return tuple(sorted(set(tags)))


def build_card(
    id: str,
    name: str,
    description: str | None = "",
    *,
    tags: Iterable[str] = (),
    kind: str = "tool",
    namespace: str | None = None,
    has_schema: bool = False,
    score: float | None = None,
    cost_hint: float = 0.0,
    side_effects: bool = False,
    target_tokens: int = CARD_TARGET_TOKENS,
) -> ChoiceCard:
    """Build a validated ChoiceCard (seed 000 §2.1-§2.4).

    The description is flattened to one line and truncated (§2.4) with a
    budget of ``target_tokens`` minus the tokens the rest of the card needs;
    if the rendered card still exceeds the target the budget is lowered by the
    overshoot and truncation repeated (deterministic).  Nothing but the
    description is ever shortened.  ``namespace`` defaults to the tool_id
    namespace (``""`` for ``internal`` cards whose id is not a tool_id).

    Raises :class:`CatalogError`: ``CARD_INVALID`` / ``TOOL_ID_INVALID`` for
    field violations, ``CARD_OVER_BUDGET`` if the card exceeds 80 tokens after
    truncation.
    """
    if namespace is None:
        if kind == "internal":
            try:
                namespace = parse_tool_id(id).namespace
            except CatalogError:
                namespace = ""
        else:
            namespace = parse_tool_id(id).namespace
    full = single_line(description)
    card = ChoiceCard(
        id=id,
        name=name,
        description="",
        tags=normalize_tags(tags),
        kind=kind,
        namespace=namespace,
        has_schema=has_schema,
        score=None if score is None else float(score),
        cost_hint=float(cost_hint),
        side_effects=side_effects,
    )
    validate_card_fields(card)
    if full:
        budget = max(1, target_tokens - card_tokens(card))
        while True:
            card = replace(card, description=truncate_description(full, budget))
            over = card_tokens(card) - target_tokens
            if over <= 0 or budget <= 1:
                break
            budget = max(1, budget - over)
    validate_card(card)
    return card


def make_breakpoint_card() -> ChoiceCard:
    """The §5.1 ``__cache_breakpoint__`` marker (``kind="internal"``)."""
    return ChoiceCard(
        id=CACHE_BREAKPOINT_ID,
        name=CACHE_BREAKPOINT_ID,
        description="cache breakpoint: cards above are a stable prefix",
        tags=(),
        kind="internal",
        namespace="",
        has_schema=False,
        score=None,
        cost_hint=0.0,
        side_effects=False,
    )


# --- ordering (§2.5, §5.1) -------------------------------------------------------


def _rank_key(card: ChoiceCard) -> tuple[int, float, str]:
    if card.score is None:
        return (1, 0.0, card.id)
    return (0, -card.score, card.id)


def order_cards(cards: Iterable[ChoiceCard]) -> list[ChoiceCard]:
    """§2.5: descending ``score``, ties by ``id`` ascending.  Cards without a
    score sort after all scored cards (then by id)."""
    return sorted(cards, key=_rank_key)


def cache_stable_order(cards: Iterable[ChoiceCard], seen: set[str] | frozenset[str]) -> list[ChoiceCard]:
    """§5.1 ordering: already-seen cards first (id ascending), then the
    ``__cache_breakpoint__`` marker iff both groups are non-empty (§5.3), then
    new cards (id ascending).  Pure: does not update *seen*."""
    cards = list(cards)
    old = sorted((c for c in cards if c.id in seen), key=lambda c: c.id)
    new = sorted((c for c in cards if c.id not in seen), key=lambda c: c.id)
    if old and new:
        return [*old, make_breakpoint_card(), *new]
    return [*old, *new]


# --- tool_browse response rendering (§2.3) --------------------------------------


def browse_preamble(n: int) -> str:
    """The fixed one-line preamble of a rendered tool_browse response."""
    return f"tool_browse: {n} card(s)"


def render_browse(cards: Iterable[ChoiceCard]) -> str:
    """Prompt-facing tool_browse response: preamble line, then one line per card."""
    lines = [render_card(c) for c in cards]
    return "\n".join([browse_preamble(len(lines)), *lines])


def browse_hard_cap(n: int) -> int:
    """§2.3 hard cap for an n-card tool_browse response: ``80*n + 32``."""
    return CARD_HARD_CAP_TOKENS * n + BROWSE_PREAMBLE_TOKENS


def check_browse_budget(cards: list[ChoiceCard]) -> int:
    """Count the rendered response and enforce the §2.3 hard cap.

    Returns the token count; raises :class:`CatalogError`
    (``BROWSE_OVER_BUDGET``) if it exceeds ``80*n + 32``."""
    n = count_tokens(render_browse(cards))
    if n > browse_hard_cap(len(cards)):
        raise CatalogError(BROWSE_OVER_BUDGET, f"browse response of {len(cards)} cards is {n} tokens", tokens=n)
    return n
