"""Layer-2 families of the gateway's tool_browse: the path tree, path and argument errors,
query results, and every card and response seen, measured on the exact text received.

Cards are judged with the generated validators (`choice_card_violations`), renderer
(`render_card`) and budgets, and with the kit's own exact cl100k_base counts (tokens.py).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from gatespec_conformance.fixture_upstream import FIXTURE_TOOLS
from gatespec_conformance.functions import same_json
from gatespec_conformance.server_checks import (
    Drawn,
    Emit,
    Family,
    allowed_codes,
    expect_error,
)
from gatespec_conformance.server_draws import (
    draw_cases,
    grammar_values,
    meta_args,
    vector_errors,
)
from gatespec_conformance.server_facts import QUERIES, BrowseObs, Live, NoFact
from gatespec_conformance.tokens import count_tokens
from gatespec_surface import parsers
from gatespec_surface.budgets import (
    BROWSE_DEFAULT_TOP_K,
    BROWSE_PREAMBLE_TOKENS,
    CACHE_MARKER_ID,
    CACHE_MARKER_KIND,
    CARD_HARD_CAP_TOKENS,
    CARD_TARGET_TOKENS,
    CLUSTER_THRESHOLD,
    DEFAULT_ORDER,
    ELLIPSIS,
    QUERY_MAX_CHARS,
    SENTENCE_TERMINATORS,
    TERMINATORS_NEEDING_SPACE,
    browse_cap_tokens,
)
from gatespec_surface.errors import ErrorCode, GatewayError
from gatespec_surface.grammars import is_namespace, is_path, is_path_segment
from gatespec_surface.render import render_card
from gatespec_surface.validators import LINE_BREAKS, choice_card_violations

__all__ = ["FAMILIES", "truncation_problem"]

_PATH_INVALID: Final = ErrorCode.PATH_INVALID.value
_PATH_NOT_FOUND: Final = ErrorCode.PATH_NOT_FOUND.value
_ARGS_INVALID: Final = ErrorCode.ARGS_INVALID.value
_GATEWAY: Final = ("gateway",)
# The scripted cache-stable session: a first query, then a query overlapping it.
_FIRST_QUERY: Final = "read file"
_OVERLAPPING_QUERY: Final = "weather file"


# ------------------------------------------------------------------ helpers


def _ids(cards: list[dict[str, Any]] | None) -> list[Any]:
    return [c.get("id") for c in cards or []]


def spec_order(cards: list[dict[str, Any]]) -> list[Any]:
    """The ids in §2.5 order (budgets.DEFAULT_ORDER; a missing value sorts lowest)."""
    out = list(cards)
    for key, descending in reversed(DEFAULT_ORDER):  # stable sorts, least significant first
        out.sort(key=functools.partial(_sort_value, key), reverse=descending)
    return _ids(out)


def _sort_value(key: str, card: dict[str, Any]) -> tuple[int, Any]:
    value = card.get(key)
    return (0, 0) if value is None else (1, value)


def _sentence_ends(text: str) -> Iterator[int]:
    """Lengths of the prefixes of `text` that end a sentence (AM-SENTENCE-ENDS)."""
    for i, ch in enumerate(text, start=1):
        if ch in SENTENCE_TERMINATORS and (
            ch not in TERMINATORS_NEEDING_SPACE or i == len(text) or text[i].isspace()
        ):
            yield i


def truncation_problem(full: str | None, shown: Any) -> str | None:
    """Whether `shown` is `full` truncated per §2.4: verbatim, its longest fitting sentence
    prefix, or a hard cut ending in the ellipsis when no sentence prefix fits. White space
    is compared collapsed (budgets.COLLAPSE_WHITESPACE)."""
    if not isinstance(shown, str):
        return f"the description is {type(shown).__name__}, not a string"
    if any(b in shown for b in LINE_BREAKS):
        return "the description holds a line break"
    text = " ".join((full or "").split())
    got = " ".join(shown.split())
    if got == text:
        return None
    if not got and text:
        return "the description was dropped entirely"
    tokens = count_tokens(got)
    if got.endswith(ELLIPSIS) and text.startswith(got[: -len(ELLIPSIS)].rstrip()):
        fits = [i for i in _sentence_ends(text) if count_tokens(text[:i]) <= tokens]
        if fits:
            return f"hard cut although the sentence prefix {text[: max(fits)]!r} fits"
        return None
    if text.startswith(got) and len(got) in set(_sentence_ends(text)):
        longer = [
            i for i in _sentence_ends(text) if i > len(got) and count_tokens(text[:i]) <= tokens
        ]
        if longer:
            return f"a longer sentence prefix fits: {text[: max(longer)]!r}"
        return None
    return "neither verbatim, a sentence prefix, nor a hard cut ending in " + repr(ELLIPSIS)


def _unique_labels(browses: list[BrowseObs]) -> Iterator[tuple[str, BrowseObs]]:
    seen: dict[str, int] = {}
    for obs in browses:
        n = seen[obs.label] = seen.get(obs.label, 0) + 1
        yield (obs.label if n == 1 else f"{obs.label}~{n}"), obs


async def _all_browses(live: Live) -> list[BrowseObs]:
    """Every successful browse of the main session, after the walk and the queries ran."""
    await live.walk()
    await live.queries()
    return [b for b in live.browses if b.cards is not None and not b.call.is_error]


@dataclass
class _Sighting:
    card: dict[str, Any]
    line: str | None  # the text line rendering it, when the text lines up with the cards
    label: str
    tokens: int  # the most tokens any of its lines took


async def _sightings(live: Live) -> dict[str, _Sighting]:
    """Each card (by id, first sighting) with its worst line across every browse."""
    out: dict[str, _Sighting] = {}
    for label, obs in _unique_labels(await _all_browses(live)):
        cards = obs.cards or []
        lines = obs.lines[1:] if len(obs.lines) == len(cards) + 1 else None
        for i, card in enumerate(cards):
            key = str(card.get("id"))
            line = lines[i] if lines is not None else None
            tokens = count_tokens(line) if line is not None else 0
            seen = out.get(key)
            if seen is None:
                out[key] = _Sighting(card, line, label, tokens)
            elif tokens > seen.tokens:
                seen.line, seen.tokens, seen.label = line, tokens, label
    return out


def _call_input(obs: BrowseObs) -> dict[str, Any]:
    return {"tool_browse": obs.args}


# ------------------------------------------------------------------ the tree


async def _root(live: Live, emit: Emit) -> None:
    walk = await live.walk()
    namespace = await live.namespace()
    cards = walk.nodes["/"].cards or []
    ids = _ids(cards)
    problem = None
    bad = [c.get("id") for c in cards if c.get("kind") != "internal"]
    odd = [i for i in ids if not (isinstance(i, str) and is_namespace(i[1:]) and i[:1] == "/")]
    if bad:
        problem = f"root lists non-internal cards: {bad[:5]}"
    elif odd:
        problem = f"root card ids are not /<namespace>: {odd[:5]}"
    elif len(set(ids)) != len(ids):
        problem = "root lists a namespace more than once"
    elif f"/{namespace}" not in ids:
        problem = f"root does not list the fixture's namespace /{namespace}"
    emit.judge("", problem, input={"path": "/"}, expected=f"/{namespace} among them", got=ids)


async def _walk(live: Live, emit: Emit) -> None:
    walk = await live.walk()
    for path, obs in walk.nodes.items():
        emit.judge(path, obs.problem, input=_call_input(obs), got=obs.call.shown())
    if walk.truncated:
        emit.judge("limit", f"the tree has more than {len(walk.nodes)} nodes; walk stopped")


async def _clusters(live: Live, emit: Emit) -> None:
    walk = await live.walk()
    namespace = await live.namespace()
    node = walk.nodes.get(f"/{namespace}")
    admitted = sum(t.expect == "admit" for t in FIXTURE_TOOLS)
    if node is None or node.cards is None:
        emit.judge("", f"/{namespace} was not browsable", got=node and node.call.shown())
        return
    tools = [c.get("id") for c in node.cards if c.get("kind") != "internal"]
    problem = None
    if tools:
        problem = (
            f"/{namespace} holds over {CLUSTER_THRESHOLD} tools ({admitted} from the fixture) "
            f"but lists tool cards instead of clusters: {tools[:5]}"
        )
    emit.judge("", problem, input={"path": f"/{namespace}"}, got=_ids(node.cards))


async def _star(live: Live, emit: Emit) -> None:
    walk = await live.walk()
    for path, obs in list(walk.nodes.items()):
        if obs.cards is None:
            continue
        star = "/*" if path == "/" else f"{path}/*"
        other = await live.browse({"path": star}, f"path={star}")
        problem = other.problem
        if problem is None and not _same_cards(other.cards, obs.cards, live.options.cache_stable):
            problem = f"{star} lists other cards than {path}"
        emit.judge(
            path,
            problem,
            input={"path": star},
            expected=_ids(obs.cards),
            got=_ids(other.cards) if other.cards is not None else other.call.shown(),
        )


def _same_cards(a: Any, b: Any, cache_stable: bool) -> bool:
    """Equal listings; under cache_stable the same cards in any arrangement (§5 orders a
    listing by what the session saw before, and marks the boundary)."""
    if not cache_stable:
        return same_json(a, b)

    def by_id(cards: Any) -> dict[Any, Any]:
        return {c.get("id"): c for c in cards or [] if c.get("id") != CACHE_MARKER_ID}

    return same_json(by_id(a), by_id(b))


async def _leaves(live: Live, emit: Emit) -> None:
    walk = await live.walk()
    for name, tool_id in sorted((await live.fixture_ids()).items()):
        parent = walk.parent.get(tool_id)
        if parent is None or not is_path_segment(name):
            continue
        path = f"{parent}/{name}" if parent != "/" else f"/{name}"
        if not is_path(path):
            continue
        obs = await live.browse({"path": path}, f"path={path}")
        if obs.cards is not None:
            ok = len(obs.cards) == 1 and obs.cards[0].get("id") == tool_id
            problem = None if ok else f"a leaf lists {len(obs.cards)} cards, not just {tool_id}"
        else:
            problem = expect_error(obs.call, {_PATH_NOT_FOUND})
            if problem:
                problem = f"neither the single card nor PATH_NOT_FOUND: {problem}"
        emit.judge(name, problem, input={"path": path}, expected=tool_id, got=obs.call.shown())


# ------------------------------------------------------------------ path and argument errors


@functools.cache  # drawn once per run, though run and named separately
def _draw_invalid_paths(seed: int, n: int) -> list[Drawn]:
    vectors = vector_errors("parse_path", _PATH_INVALID)
    vectors += vector_errors("grammar_match", _PATH_INVALID, grammar="path")
    return vectors + draw_cases("browse/path-invalid", grammar_values("path", False), seed, n)


async def _path_invalid(live: Live, emit: Emit) -> None:
    for case in _draw_invalid_paths(live.options.seed, live.options.max_examples):
        path = case.input["value"]
        obs = await live.browse({"path": path}, f"path={path!r}")
        emit.judge(
            case.case,
            expect_error(obs.call, {_PATH_INVALID}),
            input={"path": path},
            expected={"error": _PATH_INVALID},
            got=obs.call.shown(),
            duration=obs.call.duration,
        )


@functools.cache  # drawn once per run, though run and named separately
def _draw_absent_paths(seed: int, n: int) -> list[Drawn]:
    return draw_cases("browse/path-not-found", grammar_values("path", True), seed, n)


def _node_of(path: str) -> str:
    parts = parsers.parse_path(path)
    return "/" + "/".join(parts.segments)


async def _path_not_found(live: Live, emit: Emit) -> None:
    walk = await live.walk()
    namespace = await live.namespace()
    cluster = next((p for p in walk.nodes if p.count("/") == 2), f"/{namespace}/x")
    cases = [
        Drawn("no-such-namespace", {"value": "/zz-no-such-namespace"}),
        Drawn("no-such-child", {"value": f"/{namespace}/zz-no-such-child"}),
        Drawn("no-such-leaf", {"value": f"{cluster}/zz-no-such-leaf"}),
        Drawn("deepest", {"value": f"/{namespace}/a/b/c/d/e/f"}),
        *_draw_absent_paths(live.options.seed, live.options.max_examples),
    ]
    for case in cases:
        path = case.input["value"]
        node = _node_of(path)
        if node in walk.nodes:
            continue  # the drawn path exists: a listing, judged by browse/star
        obs = await live.browse({"path": path}, f"path={path}")
        parent = node.rsplit("/", 1)[0] or "/"
        if obs.cards is not None and len(obs.cards) == 1 and parent in walk.nodes:
            continue  # a tool leaf under a known node (leaf names are the IUT's choice)
        emit.judge(
            case.case,
            expect_error(obs.call, {_PATH_NOT_FOUND}),
            input={"path": path},
            expected={"error": _PATH_NOT_FOUND},
            got=obs.call.shown(),
            duration=obs.call.duration,
        )


@functools.cache  # drawn once per run, though run and named separately
def _draw_browse_args(seed: int, n: int) -> list[Drawn]:
    fixed = [
        Drawn("both", {"query": "file", "path": "/"}),
        Drawn("neither", {}),
        Drawn("query-empty", {"query": ""}),
        Drawn("query-too-long", {"query": "x" * (QUERY_MAX_CHARS + 1)}),
    ]
    return fixed + draw_cases("browse/args-invalid", meta_args("tool_browse"), seed, n)


def _browse_codes(case: Drawn) -> set[str]:
    if case.label == "invalid_value":
        value = case.input.get("path")
        return {_PATH_INVALID} if isinstance(value, str) else allowed_codes("tool_browse", "path")
    return {_ARGS_INVALID}


async def _args_invalid(live: Live, emit: Emit) -> None:
    for case in _draw_browse_args(live.options.seed, live.options.max_examples):
        codes = _browse_codes(case)
        obs = await live.browse(dict(case.input), f"args={case.case}")
        emit.judge(
            case.case,
            expect_error(obs.call, codes),
            input=case.input,
            expected={"error": sorted(codes)},
            got=obs.call.shown(),
            duration=obs.call.duration,
        )


async def _queries(live: Live, emit: Emit) -> None:
    ids = await live.fixture_ids()
    for (query, wanted), obs in zip(QUERIES, await live.queries(), strict=True):
        cards = obs.cards or []
        want = ids.get(wanted)
        problem = obs.problem
        if problem is None:
            internal = [c.get("id") for c in cards if c.get("kind") == "internal"]
            # Under cache_stable a card first seen in a path browse (no score) stays frozen
            # that way (§5.1), so scores are only required without it.
            unscored = [
                c.get("id")
                for c in cards
                if not isinstance(c.get("score"), int | float) and not live.options.cache_stable
            ]
            if len(cards) > BROWSE_DEFAULT_TOP_K:
                problem = f"{len(cards)} cards, more than the default top-k {BROWSE_DEFAULT_TOP_K}"
            elif internal:
                problem = f"a query lists browse nodes: {internal[:3]}"
            elif unscored:
                problem = f"cards without a score: {unscored[:3]}"
            elif want not in _ids(cards):
                problem = f"{want} ({wanted}) is not among the matches"
        emit.judge(query, problem, input={"query": query}, expected=want, got=_ids(cards))


# ------------------------------------------------------------------ responses


async def _text(live: Live, emit: Emit) -> None:
    for label, obs in _unique_labels(await _all_browses(live)):
        cards = obs.cards or []
        problem = obs.problem
        want = [render_card(c) for c in cards] if problem is None else []
        if problem is None and obs.lines[1:] != want:
            problem = "the text is not the preamble line then render_card(card) per card"
        emit.judge(
            label,
            problem,
            input=_call_input(obs),
            expected=["<preamble>", *want],
            got=obs.lines,
        )


async def _budget(live: Live, emit: Emit) -> None:
    for label, obs in _unique_labels(await _all_browses(live)):
        n = len(obs.cards or [])
        tokens = count_tokens(obs.text)
        cap = browse_cap_tokens(n)
        preamble = count_tokens(obs.lines[0]) if obs.lines else 0
        problem = None
        if tokens > cap:
            problem = f"{tokens} tokens for {n} cards; the cap is {cap}"
        elif preamble > BROWSE_PREAMBLE_TOKENS:
            problem = (
                f"the preamble is {preamble} tokens; its allowance is {BROWSE_PREAMBLE_TOKENS}"
            )
        emit.judge(
            label,
            problem,
            input=_call_input(obs),
            expected={"max_tokens": cap},
            got={"tokens": tokens, "cards": n, "text": obs.text[:400]},
        )


async def _order(live: Live, emit: Emit) -> None:
    browses = await _all_browses(live)
    for label, obs in _unique_labels(browses):
        if live.options.cache_stable:
            emit.skip(label, "the IUT runs cache_stable: §5 ordering applies (cache-stable/*)")
            continue
        want = spec_order(obs.cards or [])
        got = _ids(obs.cards)
        emit.judge(
            label,
            None if got == want else "cards are not in score-descending, id-ascending order",
            input=_call_input(obs),
            expected=want,
            got=[(c.get("id"), c.get("score")) for c in obs.cards or []],
        )


# ------------------------------------------------------------------ cards


def _split(card: dict[str, Any]) -> tuple[list[str], list[str]]:
    problems = choice_card_violations(card)
    banned = [p for p in problems if p.startswith("no_banned_content")]
    return [p for p in problems if p not in banned], banned


async def _card_fields(live: Live, emit: Emit) -> None:
    for key, seen in (await _sightings(live)).items():
        fields, _ = _split(seen.card)
        emit.judge(key, "; ".join(fields) or None, input=seen.label, got=seen.card)


async def _card_banned(live: Live, emit: Emit) -> None:
    for key, seen in (await _sightings(live)).items():
        _, banned = _split(seen.card)
        emit.judge(key, "; ".join(banned) or None, input=seen.label, got=seen.card)


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
    for key, seen in (await _sightings(live)).items():
        if seen.line is None:
            emit.skip(key, "the browse text does not line up with its cards (browse/text)")
            continue
        problem = None
        if seen.tokens > CARD_HARD_CAP_TOKENS:
            problem = f"its line is {seen.tokens} tokens; the hard cap is {CARD_HARD_CAP_TOKENS}"
        emit.judge(key, problem, input=seen.label, expected=CARD_HARD_CAP_TOKENS, got=seen.line)


async def _card_target(live: Live, emit: Emit) -> None:
    for key, seen in (await _sightings(live)).items():
        if seen.line is None:
            continue
        problem = None
        if seen.tokens > CARD_TARGET_TOKENS:
            problem = f"its line is {seen.tokens} tokens; the target is {CARD_TARGET_TOKENS}"
        emit.judge(key, problem, input=seen.label, expected=CARD_TARGET_TOKENS, got=seen.line)


async def _card_truncation(live: Live, emit: Emit) -> None:
    ids = await live.fixture_ids()
    by_id = {ids[t.name]: t for t in FIXTURE_TOOLS if t.name in ids}
    for key, seen in (await _sightings(live)).items():
        tool = by_id.get(key)
        if tool is None:
            continue
        shown = seen.card.get("description")
        emit.judge(
            key,
            truncation_problem(tool.description, shown),
            input={"upstream_description": tool.description},
            got=shown,
        )


def annotation_problem(annotations: Any, got: dict[str, Any]) -> str | None:
    """Whether side_effects, tags and cost_hint follow the generated annotation mapping."""
    side_effects, tags, cost = parsers.annotation_fields(annotations)
    if got.get("side_effects", False) is not side_effects:
        return f"side_effects is {got.get('side_effects')!r}, expected {side_effects}"
    missing = [t for t in tags if t not in (got.get("tags") or [])]
    if missing:
        return f"tags lack {missing}"
    if float(got.get("cost_hint") or 0) != cost:
        return f"cost_hint is {got.get('cost_hint')!r}, expected {cost:g}"
    return None


async def _card_annotations(live: Live, emit: Emit) -> None:
    ids = await live.fixture_ids()
    cards = (await live.walk()).tool_cards
    for tool in FIXTURE_TOOLS:
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
            annotation_problem(tool.annotations, card),
            input={"annotations": tool.annotations},
            expected=dict(
                zip(
                    ("side_effects", "tags", "cost_hint"),
                    parsers.annotation_fields(tool.annotations),
                    strict=True,
                )
            ),
            got=card,
        )


# ------------------------------------------------------------------ cache-stable (§5)


async def _cache_script(live: Live) -> dict[str, BrowseObs]:
    """A fresh session: a first query, the root (all new), an overlapping query (seen and
    new), then the first query again (all seen)."""

    async def run() -> dict[str, BrowseObs]:
        async with live.fresh() as fresh:
            steps = {"first": await fresh.browse({"query": _FIRST_QUERY})}
            steps["all-new"] = await fresh.browse({"path": "/"})
            steps["mixed"] = await fresh.browse({"query": _OVERLAPPING_QUERY})
            steps["all-seen"] = await fresh.browse({"query": _FIRST_QUERY})
        for step, obs in steps.items():
            if obs.cards is None:
                raise NoFact(f"the {step} browse of the session failed: {obs.problem}")
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
    ids = _ids(cards)
    return None if ids == sorted(ids) else "cards are not sorted by id"


async def _cache_first(live: Live, emit: Emit) -> None:
    steps = await _cache_steps(live, emit)
    if steps is not None:
        obs = steps["first"]
        emit.judge("", _no_marker_sorted(obs), input=obs.args, got=_ids(obs.cards))


async def _cache_all_new(live: Live, emit: Emit) -> None:
    steps = await _cache_steps(live, emit)
    if steps is not None:
        obs = steps["all-new"]
        emit.judge("", _no_marker_sorted(obs), input=obs.args, got=_ids(obs.cards))


async def _cache_all_seen(live: Live, emit: Emit) -> None:
    steps = await _cache_steps(live, emit)
    if steps is not None:
        obs = steps["all-seen"]
        problem = _no_marker_sorted(obs)
        if problem is None and set(_ids(obs.cards)) - set(_ids(steps["first"].cards)):
            problem = "the repeated query shows cards its first run did not"
        emit.judge("", problem, input=obs.args, got=_ids(obs.cards))


async def _cache_mixed(live: Live, emit: Emit) -> None:
    steps = await _cache_steps(live, emit)
    if steps is None:
        return
    seen = set(_ids(steps["first"].cards)) | set(_ids(steps["all-new"].cards))
    cards = steps["mixed"].cards or []
    ids = [i for i in _ids(cards) if i != CACHE_MARKER_ID]
    old = sorted(i for i in ids if i in seen)
    new = sorted(i for i in ids if i not in seen)
    if not old or not new:
        emit.skip("", "the IUT's ranking gave no browse with both seen and new cards")
        return
    want = [*old, CACHE_MARKER_ID, *new]
    problem = None if _ids(cards) == want else "not seen cards by id, the marker, new cards by id"
    marks = _markers(cards)
    if problem is None:
        marker = cards[marks[0]]
        violations = choice_card_violations(marker)
        if marker.get("kind") != CACHE_MARKER_KIND or violations:
            problem = f"the marker is not a valid {CACHE_MARKER_KIND} card: {violations}"
    emit.judge("", problem, input=steps["mixed"].args, expected=want, got=_ids(cards))


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
    obs = await live.browse({"query": _OVERLAPPING_QUERY})
    cards = obs.cards or []
    problem = obs.problem
    if problem is None and _markers(cards):
        problem = "a cache marker appears although cache_stable is off"
    elif problem is None and _ids(cards) != spec_order(cards):
        problem = "cards are not in §2.5 order"
    emit.judge("", problem, input=obs.args, expected=spec_order(cards), got=_ids(cards))


# ------------------------------------------------------------------ registry

_CARD_RULES: Final = ("model.ChoiceCard.invalid", "model.ChoiceCard.valid")
_TRUNC: Final = (
    "TRUNC-VERBATIM-WITHIN-BUDGET",
    "TRUNC-SENTENCE-PREFIX",
    "TRUNC-HARD-CUT-ELLIPSIS",
    "CARD-DESCRIPTION-SINGLE-LINE",
)


def _family(key: str, run: Any, **kw: Any) -> Family:
    check_id = "server." + key.replace("/", ".").replace("-", "_")
    return Family(key, check_id, run, profiles=_GATEWAY, **kw)


FAMILIES: Final[list[Family]] = [
    _family("browse/root", _root, via_requirements=("BROWSE-ROOT-ONE-PER-NAMESPACE",)),
    _family("browse/walk", _walk, via_requirements=("BROWSE-PATH-CHILDREN",)),
    _family("browse/clusters", _clusters, summary="budgets.CLUSTER_THRESHOLD (no requirement)"),
    _family("browse/star", _star, via_requirements=("PATH-STAR-LISTS-ALL",)),
    _family("browse/leaf", _leaves, via_requirements=("BROWSE-LEAF-SINGLE-CARD",)),
    _family(
        "browse/path-invalid",
        _path_invalid,
        via_checks=("grammar.path.invalid", "grammar.path.cap"),
        via_requirements=(
            "ERROR-PATH-INVALID",
            "PATH-NO-TRAILING-SLASH",
            "PATH-NO-EMPTY-SEGMENTS",
            "PATH-ROOT-SEGMENT-NAMESPACE",
            "ERROR-BROWSE-SHAPE",
        ),
        draw=_draw_invalid_paths,
    ),
    _family(
        "browse/path-not-found",
        _path_not_found,
        via_requirements=("ERROR-PATH-NOT-FOUND", "ERROR-BROWSE-SHAPE"),
        draw=_draw_absent_paths,
    ),
    _family(
        "browse/args-invalid",
        _args_invalid,
        via_checks=("descriptor.tool_browse.exactly_one",),
        via_requirements=("ERROR-BROWSE-SHAPE", "ERROR-PATH-INVALID"),
        draw=_draw_browse_args,
    ),
    _family("browse/query", _queries, via_requirements=("BROWSE-QUERY-TOP-K",)),
    _family(
        "browse/text",
        _text,
        via_checks=("model.ChoiceCard.render",),
        via_requirements=("BUDGET-PROMPT-FORM",),
    ),
    _family(
        "browse/budget",
        _budget,
        via_requirements=("BUDGET-BROWSE-HARD-CAP", "BUDGET-PROMPT-FORM", "BUDGET-EXACT-CL100K"),
    ),
    _family("browse/order", _order, via_requirements=("ORDER-SCORE-DESC", "ORDER-TIE-ID-ASC")),
    _family(
        "cards/fields",
        _card_fields,
        via_checks=_CARD_RULES,
        via_requirements=("CARD-NAMESPACE-MATCHES-ID",),
    ),
    _family("cards/banned", _card_banned, via_checks=("model.ChoiceCard.banned",)),
    _family(
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
    _family(
        "cards/budget",
        _card_budget,
        via_requirements=("BUDGET-CARD-HARD-CAP", "BUDGET-PROMPT-FORM", "BUDGET-EXACT-CL100K"),
    ),
    _family("cards/target", _card_target, via_requirements=("BUDGET-TARGETS",)),
    _family("cards/truncation", _card_truncation, via_requirements=_TRUNC),
    _family(
        "cards/annotations",
        _card_annotations,
        via_requirements=("ANNOT-READ-ONLY", "ANNOT-DESTRUCTIVE-TAG", "ANNOT-COST-HINT"),
    ),
    _family(
        "cache-stable/first-browse",
        _cache_first,
        via_requirements=("CACHE-MARKER-FIRST-BROWSE", "CACHE-NEW-SUFFIX-ID-ASC"),
    ),
    _family("cache-stable/all-new", _cache_all_new, via_requirements=("CACHE-MARKER-ALL-NEW",)),
    _family(
        "cache-stable/mixed",
        _cache_mixed,
        via_requirements=(
            "CACHE-SEEN-SET",
            "CACHE-SEEN-PREFIX-ID-ASC",
            "CACHE-MARKER-CARD",
            "CACHE-NEW-SUFFIX-ID-ASC",
        ),
    ),
    _family(
        "cache-stable/frozen",
        _cache_frozen,
        via_requirements=("CACHE-PREFIX-CONTENT-FROZEN", "CACHE-SCORE-PRESERVED"),
    ),
    _family("cache-stable/all-seen", _cache_all_seen, via_requirements=("CACHE-MARKER-ALL-SEEN",)),
    _family("cache-stable/off", _cache_off, via_requirements=("CACHE-STABLE-OPT-IN",)),
]
