"""Layer-2 families of cache-stable browsing (seed 000 §5): a scripted session of a query
and an overlapping one, judged for the seen prefix, the marker card, the new suffix and
frozen content; and the option off."""

from __future__ import annotations

from typing import Any, Final

from gatespec_conformance.functions.card_rules import card_findings
from gatespec_conformance.functions.run import same_json
from gatespec_conformance.live.browse import (
    FIRST_QUERY,
    OVERLAPPING_QUERY,
    card_ids,
    gateway_family,
    spec_order,
)
from gatespec_conformance.live.checks import (
    Emit,
    Family,
)
from gatespec_conformance.live.facts import Live, NoFact
from gatespec_conformance.live.observations import BrowseObs
from gatespec_surface.budgets import (
    CACHE_MARKER_ID,
    CACHE_MARKER_KIND,
)

__all__ = ["FAMILIES"]


async def _cache_script(live: Live) -> dict[str, BrowseObs]:
    """A fresh session: a first query, the root (all new), an overlapping query (seen and
    new), then the first query again (all seen)."""

    async def run() -> dict[str, BrowseObs]:
        async with live.fresh() as fresh:
            steps = {"first": await fresh.browse({"query": FIRST_QUERY})}
            steps["all-new"] = await fresh.browse({"path": "/"})
            steps["mixed"] = await fresh.browse({"query": OVERLAPPING_QUERY})
            steps["all-seen"] = await fresh.browse({"query": FIRST_QUERY})
        for step, obs in steps.items():
            if obs.cards is None:
                raise NoFact(f"the {step} browse of the session failed: {obs.problem}", obs.call)
        return steps

    return await live.once("cache-script", run)


def _markers(cards: list[dict[str, Any]]) -> list[int]:
    return [i for i, c in enumerate(cards) if c.get("id") == CACHE_MARKER_ID]


async def _cache_steps(live: Live, emit: Emit) -> dict[str, BrowseObs] | None:
    if not live.options.cache_stable:
        emit.skip("", "the IUT was not started with cache_stable (pass --cache-stable if it was)")
        return None
    return await _cache_script(live)


def _no_marker_sorted(obs: BrowseObs) -> str | None:
    cards = obs.cards or []
    if _markers(cards):
        return f"a marker appears at position {_markers(cards)[0]}"
    ids = card_ids(cards)
    return None if ids == sorted(ids) else "cards are not sorted by id"


async def _cache_first(live: Live, emit: Emit) -> None:
    steps = await _cache_steps(live, emit)
    if steps is not None:
        obs = steps["first"]
        emit.judge("", _no_marker_sorted(obs), input=obs.args, got=card_ids(obs.cards))


async def _cache_all_new(live: Live, emit: Emit) -> None:
    steps = await _cache_steps(live, emit)
    if steps is not None:
        obs = steps["all-new"]
        emit.judge("", _no_marker_sorted(obs), input=obs.args, got=card_ids(obs.cards))


async def _cache_all_seen(live: Live, emit: Emit) -> None:
    steps = await _cache_steps(live, emit)
    if steps is not None:
        obs = steps["all-seen"]
        problem = _no_marker_sorted(obs)
        if problem is None and set(card_ids(obs.cards)) - set(card_ids(steps["first"].cards)):
            problem = "the repeated query shows cards its first run did not"
        emit.judge("", problem, input=obs.args, got=card_ids(obs.cards))


async def _cache_mixed(live: Live, emit: Emit) -> None:
    steps = await _cache_steps(live, emit)
    if steps is None:
        return
    seen = set(card_ids(steps["first"].cards)) | set(card_ids(steps["all-new"].cards))
    cards = steps["mixed"].cards or []
    ids = [i for i in card_ids(cards) if i != CACHE_MARKER_ID]
    old = sorted(i for i in ids if i in seen)
    new = sorted(i for i in ids if i not in seen)
    if not old or not new:
        emit.skip("", "the IUT's ranking gave no browse with both seen and new cards")
        return
    want = [*old, CACHE_MARKER_ID, *new]
    problem = (
        None if card_ids(cards) == want else "not seen cards by id, the marker, new cards by id"
    )
    marks = _markers(cards)
    if problem is None:
        marker = cards[marks[0]]
        violations = [f.rule.cause for f in card_findings(marker) if live.level in f.rule.levels]
        if marker.get("kind") != CACHE_MARKER_KIND or violations:
            problem = f"the marker is not a valid {CACHE_MARKER_KIND} card: {violations}"
    emit.judge("", problem, input=steps["mixed"].args, expected=want, got=card_ids(cards))


async def _cache_frozen(live: Live, emit: Emit) -> None:
    steps = await _cache_steps(live, emit)
    if steps is None:
        return
    first = {c["id"]: c for c in steps["first"].cards or []}
    for step in ("mixed", "all-seen"):
        for card in steps[step].cards or []:
            before = first.get(card.get("id"))
            if before is None:
                continue
            problem = None if same_json(card, before) else "a seen card changed"
            if problem is None and not isinstance(card.get("score"), int | float):
                problem = "a seen card lost its score"
            emit.judge(f"{step}/{card['id']}", problem, expected=before, got=card)


async def _cache_off(live: Live, emit: Emit) -> None:
    if live.options.cache_stable:
        emit.skip("", "the IUT runs cache_stable")
        return
    await live.queries()
    obs = await live.browse({"query": OVERLAPPING_QUERY})
    cards = obs.cards or []
    problem = obs.problem
    if problem is None and _markers(cards):
        problem = "a cache marker appears although cache_stable is off"
    elif problem is None and card_ids(cards) != spec_order(cards):
        problem = "cards are not in §2.5 order"
    emit.judge("", problem, input=obs.args, expected=spec_order(cards), got=card_ids(cards))


FAMILIES: Final[list[Family]] = [
    gateway_family(
        "cache-stable/first-browse",
        _cache_first,
        via_requirements=("CACHE-MARKER-FIRST-BROWSE", "CACHE-NEW-SUFFIX-ID-ASC"),
    ),
    gateway_family(
        "cache-stable/all-new", _cache_all_new, via_requirements=("CACHE-MARKER-ALL-NEW",)
    ),
    gateway_family(
        "cache-stable/mixed",
        _cache_mixed,
        via_requirements=(
            "CACHE-SEEN-SET",
            "CACHE-SEEN-PREFIX-ID-ASC",
            "CACHE-MARKER-CARD",
            "CACHE-NEW-SUFFIX-ID-ASC",
        ),
    ),
    gateway_family(
        "cache-stable/frozen",
        _cache_frozen,
        via_requirements=("CACHE-PREFIX-CONTENT-FROZEN", "CACHE-SCORE-PRESERVED"),
    ),
    gateway_family(
        "cache-stable/all-seen", _cache_all_seen, via_requirements=("CACHE-MARKER-ALL-SEEN",)
    ),
    gateway_family("cache-stable/off", _cache_off, via_requirements=("CACHE-STABLE-OPT-IN",)),
]
