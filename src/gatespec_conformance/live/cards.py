"""Layer-2 families of the cards the gateway's tool_browse answers: each card's fields,
banned content, id, budget and target as sent (the exact text received), description
truncation and annotations, judged over every browse the run made.

Cards are judged with the generated validators (`choice_card_violations`), renderer
(`render_card`) and budgets, and with the kit's own exact cl100k_base counts (tokens.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from gatespec_conformance.functions.card_rules import RULES as CARD_RULES
from gatespec_conformance.functions.card_rules import card_findings
from gatespec_conformance.live.browse import (
    all_browses,
    gateway_family,
    unique_labels,
)
from gatespec_conformance.live.checks import (
    Emit,
    Family,
)
from gatespec_conformance.live.facts import Live
from gatespec_conformance.live.truncation_judge import truncation_findings
from gatespec_conformance.oracle.answers import annotation_answer
from gatespec_conformance.rules import SPEC, Finding, Rule
from gatespec_conformance.tokens import count_tokens
from gatespec_surface import parsers
from gatespec_surface.budgets import (
    CACHE_MARKER_ID,
    CARD_HARD_CAP_TOKENS,
    CARD_TARGET_TOKENS,
)
from gatespec_surface.errors import GatewayError
from gatespec_surface.grammars import (
    is_path,
)

__all__ = ["FAMILIES", "annotation_findings"]

_CARD_RULES: Final = ("model.ChoiceCard.invalid", "model.ChoiceCard.valid")
_TRUNC: Final = (
    "TRUNC-VERBATIM-WITHIN-BUDGET",
    "TRUNC-SENTENCE-PREFIX",
    "TRUNC-HARD-CUT-ELLIPSIS",
    "CARD-DESCRIPTION-SINGLE-LINE",
)


@dataclass
class _Sighting:
    card: dict[str, Any]
    line: str | None  # the card as the answer carries it (prompt line, else JSON text)
    label: str
    tokens: int  # the most tokens any of its lines took


async def _sightings(live: Live) -> dict[str, _Sighting]:
    """Each card (by id, first sighting) with the most tokens it took as sent, across every
    browse: its line of the prompt text, or its JSON text when the answer has no such line."""
    out: dict[str, _Sighting] = {}
    for label, obs in unique_labels(await all_browses(live)):
        cards = obs.cards or []
        for i, card in enumerate(cards):
            key = str(card.get("id"))
            line = obs.card_texts[i] if i < len(obs.card_texts) else None
            tokens = count_tokens(line) if line is not None else 0
            seen = out.get(key)
            if seen is None:
                out[key] = _Sighting(card, line, label, tokens)
            elif tokens > seen.tokens:
                seen.line, seen.tokens, seen.label = line, tokens, label
    return out


_BANNED_REQUIREMENTS: Final = frozenset(
    {
        "CARD-NO-SCHEMAS",
        "CARD-NO-EXAMPLES",
        "CARD-NO-METADATA-MAPS",
        "CARD-NO-TRANSPORT-IDENTIFIERS",
    }
)


def _banned(finding: Finding) -> bool:
    return bool(set(finding.rule.requirements) & _BANNED_REQUIREMENTS) and (
        finding.rule is not CARD_RULES["has_schema"]
    )


async def _card_fields(live: Live, emit: Emit) -> None:
    for key, seen in (await _sightings(live)).items():
        found = [f for f in card_findings(seen.card) if not _banned(f)]
        emit.judge(key, found, input=seen.label, got=seen.card)


async def _card_banned(live: Live, emit: Emit) -> None:
    for key, seen in (await _sightings(live)).items():
        found = [f for f in card_findings(seen.card) if _banned(f)]
        emit.judge(key, found, input=seen.label, got=seen.card)


def _id_problem(card: dict[str, Any]) -> str | None:
    card_id = card.get("id")
    if card.get("kind") == "internal":
        ok = is_path(card_id) or card_id == CACHE_MARKER_ID
        return None if ok else f"an internal card's id is not a path: {card_id!r}"
    try:
        parts = parsers.parse_tool_id(card_id)
    except GatewayError as exc:
        return f"not a tool_id: {exc.message}"
    if parts.version is None and parts.hash8 is None:
        return "a tool_id without a version carries no hash8"
    if parsers.format_tool_id(parts) != card_id:
        return "the id does not round-trip through parse_tool_id/format_tool_id"
    return None


async def _card_ids(live: Live, emit: Emit) -> None:
    for key, seen in (await _sightings(live)).items():
        emit.judge(key, _id_problem(seen.card), input=seen.label, got=seen.card.get("id"))


async def _card_budget(live: Live, emit: Emit) -> None:
    """Each card on what the client received for it: its line of the prompt text, or its
    JSON text as sent when the answer has no line per card (AM-BUDGET-TEXT)."""
    for key, seen in (await _sightings(live)).items():
        problem = None
        if seen.tokens > CARD_HARD_CAP_TOKENS:
            problem = f"as sent it is {seen.tokens} tokens; the hard cap is {CARD_HARD_CAP_TOKENS}"
        emit.judge(key, problem, input=seen.label, expected=CARD_HARD_CAP_TOKENS, got=seen.line)


async def _card_target(live: Live, emit: Emit) -> None:
    for key, seen in (await _sightings(live)).items():
        problem = None
        if seen.tokens > CARD_TARGET_TOKENS:
            problem = f"as sent it is {seen.tokens} tokens; the target is {CARD_TARGET_TOKENS}"
        emit.judge(key, problem, input=seen.label, expected=CARD_TARGET_TOKENS, got=seen.line)


async def _card_truncation(live: Live, emit: Emit) -> None:
    ids = await live.fixture_ids()
    by_id = {ids[t.name]: t for t in live.fixture if t.name in ids}
    for key, seen in (await _sightings(live)).items():
        tool = by_id.get(key)
        if tool is None:
            continue
        shown = seen.card.get("description")
        room = CARD_TARGET_TOKENS - seen.tokens if seen.line is not None else None
        emit.judge(
            key,
            truncation_findings(tool.description, shown, live.level, room),
            input={"upstream_description": tool.description},
            got=shown,
        )


_ANNOTATION_RULES: Final = {
    "read-only": Rule("readOnlyHint true is not side_effects false", ("ANNOT-READ-ONLY",)),
    "default": Rule(
        "a tool without readOnlyHint true does not have side_effects true",
        ("ANNOT-READ-ONLY",),
        SPEC,
        amended_by=("AM-SIDE-EFFECTS-DEFAULT",),
    ),
    "tags": Rule("a hint's tag is missing", ("ANNOT-READ-ONLY", "ANNOT-DESTRUCTIVE-TAG")),
    "cost": Rule("cost_hint is not the costHint", ("ANNOT-COST-HINT",)),
}


def annotation_findings(annotations: Any, got: dict[str, Any]) -> list[Finding]:
    """Seed 002's annotation table on a card or a hydration (oracle.answers)."""
    want = annotation_answer(annotations if isinstance(annotations, dict) else {})
    out = []
    if got.get("side_effects", False) is not want["side_effects"]:
        key = "read-only" if not want["side_effects"] else "default"
        out.append(
            Finding(_ANNOTATION_RULES[key], f"{got.get('side_effects')!r}", got.get("side_effects"))
        )
    missing = [t for t in want["tags"] if t not in (got.get("tags") or [])]
    if missing:
        out.append(Finding(_ANNOTATION_RULES["tags"], f"{missing}", got.get("tags")))
    if float(got.get("cost_hint") or 0) != want["cost_hint"]:
        detail = f"{got.get('cost_hint')!r}, expected {want['cost_hint']:g}"
        out.append(Finding(_ANNOTATION_RULES["cost"], detail, got.get("cost_hint")))
    return out


async def _card_annotations(live: Live, emit: Emit) -> None:
    ids = await live.fixture_ids()
    cards = (await live.walk()).tool_cards
    for tool in live.fixture:
        tool_id = ids.get(tool.name)
        if tool.expect != "admit" or tool_id is None:
            continue
        if tool.annotations is None and tool.name != "echo":
            continue  # one tool without annotations checks the defaults
        card = cards.get(tool_id)
        if card is None:
            emit.skip(tool.name, f"{tool_id} was not found in the tree (catalog/tool-id)")
            continue
        emit.judge(
            tool.name,
            annotation_findings(tool.annotations, card),
            input={"annotations": tool.annotations},
            expected=annotation_answer(tool.annotations or {}),
            got=card,
        )


FAMILIES: Final[list[Family]] = [
    gateway_family(
        "cards/fields",
        _card_fields,
        via_checks=_CARD_RULES,
        via_requirements=("CARD-NAMESPACE-MATCHES-ID",),
    ),
    gateway_family("cards/banned", _card_banned, via_checks=("model.ChoiceCard.banned",)),
    gateway_family(
        "cards/id",
        _card_ids,
        via_requirements=(
            "CARD-ID-IS-TOOLID",
            "TOOLID-GRAMMAR",
            "TOOLID-MAX-LENGTH",
            "TOOLID-HASH8-WHEN-NO-VERSION",
            "TOOLID-ROUNDTRIP",
        ),
    ),
    gateway_family(
        "cards/budget",
        _card_budget,
        via_requirements=("BUDGET-CARD-HARD-CAP", "BUDGET-PROMPT-FORM", "BUDGET-EXACT-CL100K"),
    ),
    gateway_family("cards/target", _card_target, via_requirements=("BUDGET-TARGETS",)),
    gateway_family("cards/truncation", _card_truncation, via_requirements=_TRUNC),
    gateway_family(
        "cards/annotations",
        _card_annotations,
        via_requirements=("ANNOT-READ-ONLY", "ANNOT-DESTRUCTIVE-TAG", "ANNOT-COST-HINT"),
    ),
]
