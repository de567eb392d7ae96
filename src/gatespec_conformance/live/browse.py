"""Layer-2 families of the gateway's tool_browse: the path tree, path and argument errors,
query results, and the responses seen, measured on the exact text received (the cards:
cards.py; cache-stable sessions: cache_stable.py).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Any, Final

from gatespec_conformance.functions.run import same_json
from gatespec_conformance.live.checks import (
    Drawn,
    Emit,
    Family,
    allowed_codes,
    expect_error,
)
from gatespec_conformance.live.draws import (
    draw_cases,
    grammar_values,
    meta_args,
    vector_errors,
)
from gatespec_conformance.live.facts import Live
from gatespec_conformance.live.observations import BrowseObs
from gatespec_conformance.live.payloads import judge_rejection
from gatespec_conformance.oracle.render import render_line
from gatespec_conformance.rules import SPEC, Finding, Rule, recorded
from gatespec_conformance.tokens import count_tokens
from gatespec_surface import parsers
from gatespec_surface.budgets import (
    BROWSE_DEFAULT_TOP_K,
    BROWSE_PREAMBLE_TOKENS,
    CACHE_MARKER_ID,
    CLUSTER_THRESHOLD,
    DEFAULT_ORDER,
    browse_cap_tokens,
)
from gatespec_surface.errors import ErrorCode
from gatespec_surface.grammars import (
    NAMESPACE_PATTERN,
    PATH_SEGMENT_PATTERN,
    is_namespace,
    is_path,
    is_path_segment,
)
from gatespec_surface.schemas import META_TOOL_INPUT_SCHEMAS

__all__ = ["FAMILIES", "seed_path_valid"]

_PATH_INVALID: Final = ErrorCode.PATH_INVALID.value
_PATH_NOT_FOUND: Final = ErrorCode.PATH_NOT_FOUND.value
_ARGS_INVALID: Final = ErrorCode.ARGS_INVALID.value
_GATEWAY: Final = ("gateway",)
# The scripted cache-stable session: a first query, then a query overlapping it.
FIRST_QUERY: Final = "read file"
OVERLAPPING_QUERY: Final = "weather file"


# ------------------------------------------------------------------ helpers


def card_ids(cards: list[dict[str, Any]] | None) -> list[Any]:
    return [c.get("id") for c in cards or []]


def spec_order(cards: list[dict[str, Any]]) -> list[Any]:
    """The ids in §2.5 order (budgets.DEFAULT_ORDER; a missing value sorts lowest)."""
    out = list(cards)
    for key, descending in reversed(DEFAULT_ORDER):  # stable sorts, least significant first
        out.sort(key=functools.partial(_sort_value, key), reverse=descending)
    return card_ids(out)


def _sort_value(key: str, card: dict[str, Any]) -> tuple[int, Any]:
    value = card.get(key)
    return (0, 0) if value is None else (1, value)


def unique_labels(browses: list[BrowseObs]) -> Iterator[tuple[str, BrowseObs]]:
    seen: dict[str, int] = {}
    for obs in browses:
        n = seen[obs.label] = seen.get(obs.label, 0) + 1
        yield (obs.label if n == 1 else f"{obs.label}~{n}"), obs


async def all_browses(live: Live) -> list[BrowseObs]:
    """Every successful browse of the main session, after the walk and the queries ran."""
    await live.walk()
    await live.queries()
    return [b for b in live.browses if b.cards is not None and not b.call.is_error]


def _call_input(obs: BrowseObs) -> dict[str, Any]:
    return {"tool_browse": obs.args}


# ------------------------------------------------------------------ the tree


async def _root(live: Live, emit: Emit) -> None:
    walk = await live.walk()
    namespace = await live.namespace()
    cards = walk.nodes["/"].cards or []
    ids = card_ids(cards)
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
        problem = obs.problem or list(obs.findings)
        emit.judge(path, problem, input=_call_input(obs), got=obs.call.shown())
    if walk.truncated:
        emit.judge("limit", f"the tree has more than {len(walk.nodes)} nodes; walk stopped")


async def _clusters(live: Live, emit: Emit) -> None:
    walk = await live.walk()
    namespace = await live.namespace()
    node = walk.nodes.get(f"/{namespace}")
    admitted = sum(t.expect == "admit" for t in live.fixture)
    if node is None or node.cards is None:
        emit.judge("", f"/{namespace} was not browsable", got=node and node.call.shown())
        return
    tools = [c.get("id") for c in node.cards if c.get("kind") != "internal"]
    problem = None
    if tools and admitted > CLUSTER_THRESHOLD:
        problem = (
            f"/{namespace} holds over {CLUSTER_THRESHOLD} tools ({admitted} from the fixture) "
            f"but lists tool cards instead of clusters: {tools[:5]}"
        )
    emit.judge("", problem, input={"path": f"/{namespace}"}, got=card_ids(node.cards))


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
            expected=card_ids(obs.cards),
            got=card_ids(other.cards) if other.cards is not None else other.call.shown(),
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
        problem: Any = None
        if obs.cards is not None:
            ok = len(obs.cards) == 1 and obs.cards[0].get("id") == tool_id
            problem = None if ok else f"a leaf lists {len(obs.cards)} cards, not just {tool_id}"
        else:  # not the single card: then PATH_NOT_FOUND (leaf names are the IUT's choice)
            problem = expect_error(obs.call, {_PATH_NOT_FOUND})
        emit.judge(name, problem, input={"path": path}, expected=tool_id, got=obs.call.shown())


# ------------------------------------------------------------------ path and argument errors


@functools.cache  # drawn once per run, though run and named separately
def _draw_invalid_paths(seed: int, n: int) -> list[Drawn]:
    vectors = vector_errors("parse_path", _PATH_INVALID)
    vectors += vector_errors("grammar_match", _PATH_INVALID, grammar="path")
    return vectors + draw_cases("browse/path-invalid", grammar_values("path", False), seed, n)


_SEGMENT = re.compile(PATH_SEGMENT_PATTERN)
_ROOT = re.compile(NAMESPACE_PATTERN)


def seed_path_valid(path: str) -> bool:
    """§3.2 as written: "/" or "/" segments joined by "/", each a path segment or "*", the
    first also a namespace; no depth or length bound, "*" anywhere."""
    if path == "/":
        return True
    if not path.startswith("/"):
        return False
    segments = path[1:].split("/")
    for depth, seg in enumerate(segments):
        pattern = _ROOT if depth == 0 else _SEGMENT
        if seg != "*" and pattern.fullmatch(seg) is None:
            return False
    return True


async def _path_invalid(live: Live, emit: Emit) -> None:
    for case in _draw_invalid_paths(live.options.seed, live.options.max_examples):
        path = case.input["value"]
        if live.level == "seed" and isinstance(path, str) and seed_path_valid(path):
            emit.skip(case.case, "the seed's path grammar accepts it (AM-PATH-BOUNDS)")
            continue
        obs = await live.browse({"path": path}, f"path={path!r}")
        seed_valid = isinstance(path, str) and seed_path_valid(path)
        emit.judge(
            case.case,
            expect_error(obs.call, {_PATH_INVALID}),
            input={"path": path},
            expected={"error": _PATH_INVALID},
            got=obs.call.shown(),
            duration=obs.call.duration,
            amended=("AM-PATH-BOUNDS",) if seed_valid else (),
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


_QUERY_SCHEMA_MAX: Final[int] = META_TOOL_INPUT_SCHEMAS["tool_browse"]["properties"]["query"][
    "maxLength"
]


@functools.cache  # drawn once per run, though run and named separately
def _draw_browse_args(seed: int, n: int) -> list[Drawn]:
    fixed = [
        Drawn("both", {"query": "file", "path": "/"}),
        Drawn("neither", {}),
        Drawn("query-empty", {"query": ""}),
        # past the input schema's maxLength (a longer query under it is cut, not refused)
        Drawn("query-too-long", {"query": "x" * (_QUERY_SCHEMA_MAX + 1)}),
    ]
    return fixed + draw_cases("browse/args-invalid", meta_args("tool_browse"), seed, n)


def _browse_codes(case: Drawn) -> set[str]:
    if case.label == "invalid_value":
        value = case.input.get("path")
        return {_PATH_INVALID} if isinstance(value, str) else allowed_codes("tool_browse", "path")
    return {_ARGS_INVALID}


_SPEC_ARGS: Final = (
    "the meta-tools' argument rules of profiles.yaml (bounds, no other properties); the seeds "
    "name the arguments only"
)


def _seed_states(case: Drawn) -> bool:
    """Whether seed 000 makes these arguments invalid by itself: both or neither of query and
    path (§3.1), or a path string §3.2 rejects."""
    if case.label in ("both", "neither") or case.case in ("both", "neither"):
        return True
    path = case.input.get("path")
    return case.label == "invalid_value" and isinstance(path, str) and not seed_path_valid(path)


async def _args_invalid(live: Live, emit: Emit) -> None:
    for case in _draw_browse_args(live.options.seed, live.options.max_examples):
        codes = _browse_codes(case)
        breaks = await live.breaks_declared("tool_browse", case.input)
        if live.level == "seed" and not _seed_states(case) and not breaks:
            emit.skip(case.case, "the seeds do not make these arguments invalid")
            continue
        obs = await live.browse(dict(case.input), f"args={case.case}")
        emit.judge(
            case.case,
            judge_rejection(obs.call, codes, breaks and not _seed_states(case), live.level),
            input=case.input,
            expected={"error": sorted(codes)},
            got=obs.call.shown(),
            duration=obs.call.duration,
            spec_only="" if _seed_states(case) else _SPEC_ARGS,
        )


_MATCH: Final = Rule("the tool the query names is not among the matches", ())
_TOP_K: Final = Rule(
    f"more cards than the default top-k {BROWSE_DEFAULT_TOP_K}",
    levels=SPEC,
    spec_only="budgets.yaml browse.default_top_k; seed 000 §3.1 says only 'top-k'",
)
_QUERY_NODES: Final = Rule(
    "a query lists browse nodes",
    levels=SPEC,
    spec_only="gatespec's queries rank tools only; seed 000 §3.1 says 'the top-k cards'",
)
_UNSCORED: Final = Rule(
    "a query card without a score",
    levels=SPEC,
    spec_only="gatespec scores every query card; seed 000 §2.1 makes score optional",
)


async def _queries(live: Live, emit: Emit) -> None:
    ids = await live.fixture_ids()
    for (query, wanted), obs in zip(live.served_queries(), await live.queries(), strict=True):
        cards = obs.cards or []
        want = ids.get(wanted)
        problem: Any = obs.problem
        if problem is None:
            internal = [c.get("id") for c in cards if c.get("kind") == "internal"]
            # Under cache_stable a card first seen in a path browse (no score) stays frozen
            # that way (§5.1), so scores are only required without it.
            unscored = [
                c.get("id")
                for c in cards
                if not isinstance(c.get("score"), int | float) and not live.options.cache_stable
            ]
            problem = []
            if len(cards) > BROWSE_DEFAULT_TOP_K:
                problem.append(Finding(_TOP_K, f"{len(cards)} cards", len(cards)))
            if internal:
                problem.append(Finding(_QUERY_NODES, "", internal[:3]))
            if unscored:
                problem.append(Finding(_UNSCORED, "", unscored[:3]))
            if want not in card_ids(cards):
                problem.append(Finding(_MATCH, f"{want} ({wanted})", card_ids(cards)))
        emit.judge(query, problem, input={"query": query}, expected=want, got=card_ids(cards))


# ------------------------------------------------------------------ responses


async def _text(live: Live, emit: Emit) -> None:
    for label, obs in unique_labels(await all_browses(live)):
        cards = obs.cards or []
        problem = obs.problem
        want = [render_line(c) for c in cards] if problem is None else []
        if problem is None and obs.lines[1:] != want:
            problem = "the text is not the preamble line then the card line per card"
        emit.judge(
            label,
            problem,
            input=_call_input(obs),
            expected=["<preamble>", *want],
            got=obs.lines,
        )


async def _budget(live: Live, emit: Emit) -> None:
    """The whole response as the client reads it: its prompt text (one line per card), or
    the text content as sent when it has none."""
    for label, obs in unique_labels(await all_browses(live)):
        n = len(obs.cards or [])
        sent = obs.prompt if obs.prompt is not None else obs.text
        tokens = count_tokens(sent)
        cap = browse_cap_tokens(n)
        lines = sent.split("\n")
        preamble = count_tokens(lines[0]) if obs.prompt is not None and len(lines) > n else 0
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
            got={"tokens": tokens, "cards": n, "text": sent[:400]},
        )


async def _order(live: Live, emit: Emit) -> None:
    browses = await all_browses(live)
    for label, obs in unique_labels(browses):
        if live.options.cache_stable:
            emit.skip(label, "the IUT runs cache_stable: §5 ordering applies (cache-stable/*)")
            continue
        want = spec_order(obs.cards or [])
        got = card_ids(obs.cards)
        emit.judge(
            label,
            None if got == want else "cards are not in score-descending, id-ascending order",
            input=_call_input(obs),
            expected=want,
            got=[(c.get("id"), c.get("score")) for c in obs.cards or []],
        )


# ------------------------------------------------------------------ registry

_CARD_RULES: Final = ("model.ChoiceCard.invalid", "model.ChoiceCard.valid")
_TRUNC: Final = (
    "TRUNC-VERBATIM-WITHIN-BUDGET",
    "TRUNC-SENTENCE-PREFIX",
    "TRUNC-HARD-CUT-ELLIPSIS",
    "CARD-DESCRIPTION-SINGLE-LINE",
)


def gateway_family(key: str, run: Any, **kw: Any) -> Family:
    check_id = "server." + key.replace("/", ".").replace("-", "_")
    return Family(key, check_id, run, profiles=_GATEWAY, **kw)


# The cards' families (cards.py) and cache-stable's (cache_stable.py) run after these.
FAMILIES: Final[list[Family]] = [
    gateway_family(
        "browse/root", _root, via_requirements=("BROWSE-ROOT-ONE-PER-NAMESPACE",), sized=True
    ),
    gateway_family("browse/walk", _walk, via_requirements=("BROWSE-PATH-CHILDREN",), sized=True),
    gateway_family(
        "browse/clusters",
        _clusters,
        sized=True,
        summary="budgets.CLUSTER_THRESHOLD (no requirement)",
        seed="clusters are gatespec's (budgets.CLUSTER_THRESHOLD); no seed states them",
        amended_by=recorded("AM-BROWSE-TREE"),
    ),
    gateway_family("browse/star", _star, via_requirements=("PATH-STAR-LISTS-ALL",)),
    gateway_family("browse/leaf", _leaves, via_requirements=("BROWSE-LEAF-SINGLE-CARD",)),
    gateway_family(
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
    gateway_family(
        "browse/path-not-found",
        _path_not_found,
        via_requirements=("ERROR-PATH-NOT-FOUND", "ERROR-BROWSE-SHAPE"),
        draw=_draw_absent_paths,
    ),
    gateway_family(
        "browse/args-invalid",
        _args_invalid,
        via_checks=("descriptor.tool_browse.exactly_one",),
        via_requirements=("ERROR-BROWSE-SHAPE", "ERROR-PATH-INVALID"),
        draw=_draw_browse_args,
    ),
    gateway_family("browse/query", _queries, via_requirements=("BROWSE-QUERY-TOP-K",)),
    gateway_family(
        "browse/text",
        _text,
        via_checks=("model.ChoiceCard.render",),
        via_requirements=("BUDGET-PROMPT-FORM",),
        amended_by=("AM-CARD-RENDER",),
        seed="AM-CARD-RENDER: the seeds fix no prompt format",
    ),
    gateway_family(
        "browse/budget",
        _budget,
        via_requirements=("BUDGET-BROWSE-HARD-CAP", "BUDGET-PROMPT-FORM", "BUDGET-EXACT-CL100K"),
    ),
    gateway_family(
        "browse/order", _order, via_requirements=("ORDER-SCORE-DESC", "ORDER-TIE-ID-ASC")
    ),
]
