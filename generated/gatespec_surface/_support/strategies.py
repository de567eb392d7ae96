# Copied from generator/support/strategies.py by `make generate`; do not edit.
"""Hypothesis strategies for valid AND invalid values of grammars, ChoiceCards and meta-tool
arguments (for the emitted tests and the conformance kit). The only module of this library
that imports hypothesis.

Valid values are built from each grammar's tree (trees.build, choices drawn by hypothesis),
with repetition counts drawn towards their extremes so that minimum and maximum lengths are
reached. Invalid values are the spec's own counter-examples, values over a length cap, and
mutations of valid values (trailing line break, look-alike Unicode, stray delimiters,
deletions, case flips) that a reference full match rejects.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from hypothesis import strategies as st

from .grammar import GrammarInfo
from .trees import Build, Tree, build

# Characters mutations insert: delimiters of every grammar, white space, and look-alikes.
HOSTILE: Final = (
    " ", "\n", "\t", ":", "/", "@", "#", "_", "-", ".", "*", "~", "%", "A", "0",
    "\u0430",  # CYRILLIC SMALL LETTER A, looks like "a"
    "\uff1a",  # FULLWIDTH COLON
    "\u00a0",  # NO-BREAK SPACE
    "\u2028",  # LINE SEPARATOR
    "\u0131",  # DOTLESS I
    "\x00",
    "é",
)  # fmt: skip
UNBOUNDED_EXTRA: Final = 6  # how far past its minimum an unbounded repetition may run
_MUTATIONS: Final = ("append_newline", "insert", "delete", "replace", "flip_case", "double")


def _count(lo: int, hi: int | None, extra: int, longest: bool) -> st.SearchStrategy[int]:
    """Repetition counts, drawn at their extremes: that is where length bugs live."""
    top = lo + extra if hi is None else hi
    if longest or top == lo:
        return st.just(top)
    return st.sampled_from([lo, top, (lo + top) // 2])


class _Drawn:
    """A trees.Chooser whose every choice hypothesis draws."""

    def __init__(self, draw: st.DrawFn, extra: int, longest: bool) -> None:
        self.draw = draw
        self.extra = extra
        self.longest = longest

    def chars(self, alphabet: str, lo: int, hi: int | None) -> str:
        n = self.draw(_count(lo, hi, self.extra, self.longest))
        return self.draw(st.text(alphabet=alphabet, min_size=n, max_size=n))

    def repeat(self, build: Build, lo: int, hi: int | None) -> str:
        n = self.draw(_count(lo, hi, self.extra, self.longest))
        if self.longest:  # one instance repeated: as long, and far cheaper to draw
            return build() * n
        return "".join(build() for _ in range(n))

    def branch(self, options: Sequence[Build]) -> str:
        return options[self.draw(st.integers(0, len(options) - 1))]()


@st.composite
def from_tree(
    draw: st.DrawFn, tree: Tree, extra: int = UNBOUNDED_EXTRA, longest: bool = False
) -> str:
    """Strings the tree admits (every count at its maximum when `longest`)."""
    return build(tree, _Drawn(draw, extra, longest))


class GrammarStrategies:
    """valid / invalid / over_cap values of each grammar, judged by a reference full match
    compiled from the pattern text (independently of the parsers' compiled objects)."""

    def __init__(
        self,
        grammars: Mapping[str, GrammarInfo],
        trees: Mapping[str, Tree],
        spec_valid: Mapping[str, Sequence[str]],
        spec_invalid: Mapping[str, Sequence[str]],
        natural_max: Mapping[str, int | None],
    ) -> None:
        self.grammars = grammars
        self.trees = trees
        self.spec_valid = spec_valid
        self.spec_invalid = spec_invalid
        self.natural_max = natural_max  # longest match before any length cap (None: unbounded)
        self._reference = {name: re.compile(g.pattern) for name, g in grammars.items()}

    def reference_accepts(self, name: str, value: str) -> bool:
        """The reference decision: a full match within the length cap."""
        cap = self.grammars[name].max_length
        if cap is not None and len(value) > cap:
            return False
        return self._reference[name].fullmatch(value) is not None

    def valid(self, name: str) -> st.SearchStrategy[str]:
        """Values the grammar accepts: the spec's examples, boundary-length values built from
        the grammar's tree, and values hypothesis draws from its regular expression."""
        info = self.grammars[name]
        cap = info.max_length
        parts: list[st.SearchStrategy[str]] = [
            from_tree(self.trees[name]),
            st.from_regex(info.pattern, fullmatch=True),
        ]
        if self.spec_valid[name]:
            parts.insert(0, st.sampled_from(self.spec_valid[name]))
        built = st.one_of(*parts)
        if cap is not None and self.natural_max[name] != cap:
            built = built.filter(lambda s: len(s) <= cap)
        return built

    def over_cap(self, name: str) -> st.SearchStrategy[str] | None:
        """Values the grammar's syntax admits but its length cap rejects (None if impossible)."""
        cap = self.grammars[name].max_length
        natural = self.natural_max[name]
        if cap is None or (natural is not None and natural <= cap):
            return None
        # Every repetition at its longest; unbounded ones run far enough that, nested or not,
        # they pass the cap.
        extra = math.isqrt(cap) + 2
        return from_tree(self.trees[name], extra, longest=True).filter(lambda s: len(s) > cap)

    def mutated(self, name: str) -> st.SearchStrategy[str]:
        """A valid value with one mutation (which may or may not leave it valid)."""
        return _mutated(self.valid(name))

    def invalid(self, name: str) -> st.SearchStrategy[str]:
        """Values the grammar rejects: spec counter-examples, over-cap values, mutations."""
        parts: list[st.SearchStrategy[str]] = [
            self.mutated(name).filter(lambda s: not self.reference_accepts(name, s)),
            st.just(""),
        ]
        if self.spec_invalid[name]:
            parts.insert(0, st.sampled_from(self.spec_invalid[name]))
        extra = self.over_cap(name)
        if extra is not None:
            parts.append(extra)
        return st.one_of(*parts).filter(lambda s: not self.reference_accepts(name, s))


@st.composite
def _mutated(draw: st.DrawFn, valid: st.SearchStrategy[str]) -> str:
    base = draw(valid)
    how = draw(st.sampled_from(_MUTATIONS))
    if how == "append_newline" or not base:
        return base + "\n"
    i = draw(st.integers(0, len(base) - 1))
    if how == "insert":
        return base[:i] + draw(st.sampled_from(HOSTILE)) + base[i:]
    if how == "delete":
        return base[:i] + base[i + 1 :]
    if how == "replace":
        return base[:i] + draw(st.sampled_from(HOSTILE)) + base[i + 1 :]
    if how == "flip_case":
        return base[:i] + base[i].swapcase() + base[i + 1 :]
    return base[:i] + base[i] + base[i:]


# ------------------------------------------------------------------ ChoiceCard


@dataclass(frozen=True)
class CardBounds:
    """The ChoiceCard bounds the card strategies respect (or break on purpose)."""

    tags_max: int
    name_max: int
    kinds: tuple[str, ...]
    banned_fields: Collection[str]
    tag_max_length: int  # a tag's cap (its syntax's longest when it has no cap of its own)


_SAFE_TEXT: Final = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=200
).filter(lambda s: '"' not in s and ":" not in s and "=" not in s)
_BREAKS: Final = (
    "banned_field", "extra_field", "too_many_tags", "long_tag", "unsorted_tags", "long_name",
    "multi_line", "bad_kind", "bad_id", "stringified_schema", "negative_cost", "missing_field",
)  # fmt: skip
_STRINGIFIED: Final = (
    'inputSchema: {"type": "object"}', '"input_schema"={...}', "args_schema: x",
    '{"properties": {}}',
)  # fmt: skip
_REQUIRED: Final = ("id", "name", "description", "tags", "kind", "namespace", "has_schema")


class CardStrategies:
    """Valid ChoiceCards (§2.1-§2.2) and cards broken in exactly one way."""

    def __init__(self, grammars: GrammarStrategies, bounds: CardBounds) -> None:
        self.g = grammars
        self.bounds = bounds

    def valid_choice_card(self) -> st.SearchStrategy[dict[str, Any]]:
        """A card that satisfies every bound and rule of §2.1-§2.2."""
        return _valid_card(self)

    def invalid_choice_card(self) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
        """(what was broken, a card broken in exactly that way)."""
        return _invalid_card(self)

    def over_tag(self) -> st.SearchStrategy[str]:
        """A tag one or more characters over its cap (otherwise well formed)."""
        cap = self.bounds.tag_max_length
        return st.integers(cap + 1, cap + 8).map(lambda n: "t" * n)

    def tag_sets(self, lo: int, hi: int) -> st.SearchStrategy[list[str]]:
        return st.sets(self.g.valid("tag"), min_size=lo, max_size=hi).map(sorted)


@st.composite
def _valid_card(draw: st.DrawFn, cards: CardStrategies) -> dict[str, Any]:
    g, bounds = cards.g, cards.bounds
    if draw(st.booleans()):
        card_id = draw(st.one_of(g.valid("path"), g.valid("cache_marker_id")))
        kind, namespace = "internal", ""
    else:
        card_id = draw(g.valid("tool_id"))
        kind = draw(st.sampled_from([k for k in bounds.kinds if k != "internal"]))
        namespace = card_id.split(":", 1)[0]
    name = st.text(
        alphabet=st.characters(blacklist_categories=("Cc", "Cs")),
        min_size=1,
        max_size=bounds.name_max,
    )
    card: dict[str, Any] = {
        "id": card_id,
        "name": draw(name),
        "description": draw(_SAFE_TEXT),
        "tags": draw(cards.tag_sets(0, bounds.tags_max)),
        "kind": kind,
        "namespace": namespace,
        "has_schema": draw(st.booleans()),
        "cost_hint": draw(st.floats(min_value=0, max_value=1e6, allow_nan=False)),
        "side_effects": draw(st.booleans()),
    }
    if draw(st.booleans()):
        score = st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False))
        card["score"] = draw(score)
    return card


@st.composite
def _invalid_card(draw: st.DrawFn, cards: CardStrategies) -> tuple[str, dict[str, Any]]:
    g, bounds = cards.g, cards.bounds
    card = draw(cards.valid_choice_card())
    how = draw(st.sampled_from(_BREAKS))
    if how == "banned_field":
        card[draw(st.sampled_from(sorted(bounds.banned_fields)))] = {"type": "object"}
    elif how == "extra_field":
        card["x_extra"] = 1
    elif how == "too_many_tags":
        card["tags"] = draw(cards.tag_sets(bounds.tags_max + 1, bounds.tags_max + 3))
    elif how == "long_tag":
        card["tags"] = [draw(cards.over_tag())]
    elif how == "unsorted_tags":
        card["tags"] = list(reversed(draw(cards.tag_sets(2, bounds.tags_max))))
    elif how == "long_name":
        card["name"] = "n" * (bounds.name_max + draw(st.integers(1, 10)))
    elif how == "multi_line":
        brk = draw(st.sampled_from(["\n", "\r", "\u2028"]))
        card["description"] = draw(_SAFE_TEXT) + brk + "x"
    elif how == "bad_kind":
        card["kind"] = draw(st.sampled_from(["function", "", "TOOL", "resource"]))
    elif how == "bad_id":
        card["id"] = draw(
            g.invalid("tool_id").filter(
                lambda s: (
                    not g.reference_accepts("path", s)
                    and not g.reference_accepts("cache_marker_id", s)
                )
            )
        )
    elif how == "stringified_schema":
        card["description"] = draw(st.sampled_from(_STRINGIFIED))
    elif how == "negative_cost":
        card["cost_hint"] = -draw(st.floats(min_value=0.001, max_value=1e6))
    else:
        del card[draw(st.sampled_from(_REQUIRED))]
    return how, card


# ------------------------------------------------------------------ meta-tool arguments


class ArgumentStrategies:
    """Arguments a meta-tool's input schema accepts, and arguments it rejects."""

    def __init__(
        self,
        grammars: GrammarStrategies,
        arg_grammars: Mapping[str, Mapping[str, Sequence[str]]],
        required: Mapping[str, Sequence[str]],
        exactly_one: Mapping[str, Sequence[str]],
    ) -> None:
        self.g = grammars
        self.arg_grammars = arg_grammars  # tool -> property -> grammars (empty: not bound)
        self.required = required
        self.exactly_one = exactly_one

    def value(self, tool: str, prop: str, default: Any) -> st.SearchStrategy[Any]:
        """A value of the property's first grammar, or `default` for a property none binds."""
        names = self.arg_grammars[tool].get(prop)
        return self.g.valid(names[0]) if names else st.just(default).map(copy.deepcopy)

    def valid_args(self, tool: str) -> st.SearchStrategy[dict[str, Any]]:
        """Arguments whose grammar-bound values are valid and whose required and exactly-one
        properties are in place (other properties free text or empty objects)."""
        return _valid_args(self, tool)

    def invalid_args(self, tool: str) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
        """(what was broken, arguments for `tool` that its input schema rejects)."""
        return _invalid_args(self, tool)


@st.composite
def _valid_args(draw: st.DrawFn, a: ArgumentStrategies, tool: str) -> dict[str, Any]:
    one = a.exactly_one[tool]
    chosen = draw(st.sampled_from(one)) if one else None
    args: dict[str, Any] = {}
    for prop, names in a.arg_grammars[tool].items():
        if one and prop in one and prop != chosen:
            continue
        if prop not in a.required[tool] and prop != chosen and draw(st.booleans()):
            continue
        if names:
            args[prop] = draw(st.one_of(*[a.g.valid(n) for n in names]))
    for prop in a.required[tool]:
        args.setdefault(prop, {})
    if chosen is not None and chosen not in args:
        args[chosen] = "what can list files"
    return args


@st.composite
def _invalid_args(draw: st.DrawFn, a: ArgumentStrategies, tool: str) -> tuple[str, dict[str, Any]]:
    bound = {p: g for p, g in a.arg_grammars[tool].items() if g}
    one = a.exactly_one[tool]
    options = ["unknown_property"]
    if bound:
        options.append("invalid_value")
    if a.required[tool]:
        options.append("missing_required")
    if one:
        options += ["both", "neither"]
    how = draw(st.sampled_from(options))
    args: dict[str, Any] = {prop: draw(a.value(tool, prop, {})) for prop in a.required[tool]}
    if how == "unknown_property":
        args["unexpected"] = 1
        if one:
            args[one[0]] = draw(a.value(tool, one[0], "x"))
    elif how == "invalid_value":
        prop = draw(st.sampled_from(sorted(bound)))
        names = bound[prop]
        bad = a.g.invalid(names[0]).filter(
            lambda s: not any(a.g.reference_accepts(n, s) for n in names)
        )
        args[prop] = draw(st.one_of(bad, st.integers(), st.none()))
    elif how == "missing_required":
        args.pop(draw(st.sampled_from(sorted(a.required[tool]))))
    elif how == "both":
        for prop in one:
            args[prop] = draw(a.value(tool, prop, "x"))
    # "neither": no exactly-one property at all
    return how, args
