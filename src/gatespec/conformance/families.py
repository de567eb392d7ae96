"""Drawn case families of layer 1: one per emitted check id a pure function can evidence, each
a hypothesis strategy of inputs whose answers gatespec itself computes."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from hypothesis import strategies as st

from gatespec.conformance.adapter import reference_answer
from gatespec_surface import strategies as s
from gatespec_surface import vectors as v
from gatespec_surface.budgets import (
    BANNED_FIELDS,
    CARD_HARD_CAP_TOKENS,
    SENTENCE_TERMINATORS,
    TERMINATORS_NEEDING_SPACE,
)
from gatespec_surface.grammars import GRAMMARS

# ------------------------------------------------------------------ drawn families

Draw = st.SearchStrategy[tuple[str, dict[str, Any]]]  # (label, input); label "" for none


@dataclass(frozen=True)
class Family:
    path: str  # "<function>/<family>", the name prefix after "functions/"
    function: str
    check_ids: tuple[str, ...]
    draw: Callable[[], Draw]
    expect: Callable[[dict[str, Any]], dict[str, Any]] | None = None  # None: the reference
    # Labelled families draw `oversample` times more and keep a label-balanced subset:
    # hypothesis favours the first option of a sampled_from (about half the draws).
    oversample: int = 1


def _plain(strategy: st.SearchStrategy[dict[str, Any]]) -> Draw:
    return strategy.map(lambda inp: ("", inp))


_GRAMMAR_VALUES: Final[dict[str, Callable[[str], st.SearchStrategy[str] | None]]] = {
    "valid": s.valid,
    "invalid": s.invalid,
    "cap": s.over_cap,
}


def _grammar_draw(g: str, kind: str) -> Draw:
    values = _GRAMMAR_VALUES[kind](g)
    assert values is not None
    return _plain(values.map(lambda value: {"grammar": g, "value": value}))


def _constant(answer: dict[str, Any], _inp: dict[str, Any]) -> dict[str, Any]:
    return answer


def _grammar_families() -> list[Family]:
    """valid, invalid and (where the syntax can pass the length cap) cap, for every grammar:
    the strategy's own claim is the expected answer."""
    out: list[Family] = []
    for g, info in GRAMMARS.items():
        answers: dict[str, dict[str, Any]] = {
            "valid": {"ok": True},
            "invalid": {"error": info.error.value},
        }
        if s.over_cap(g) is not None:
            answers["cap"] = answers["invalid"]
        for kind, answer in answers.items():
            out.append(
                Family(
                    f"grammar_match/{g}/{kind}",
                    "grammar_match",
                    (f"grammar.{g}.{kind}",),
                    functools.partial(_grammar_draw, g, kind),
                    functools.partial(_constant, answer),
                )
            )
    return out


def _schema(props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required}


@st.composite
def _shape_schema(draw: st.DrawFn) -> dict[str, Any]:
    """An input schema whose prose and types vary: hash8 must see only its shape (§1.3)."""
    keys = draw(st.lists(st.text(max_size=8), max_size=4, unique=True))
    props = {
        k: {
            "type": draw(st.sampled_from(["string", "integer", "object", "array"])),
            "description": draw(st.text(max_size=30)),
        }
        for k in keys
    }
    required = draw(st.lists(st.sampled_from(keys), unique=True)) if keys else []
    return (
        _schema(props, required) if draw(st.booleans()) else {"type": "object", "properties": props}
    )


def _parts_of(tool_id: str) -> dict[str, Any]:
    return reference_answer("parse_tool_id", {"value": tool_id})["ok"]


def _wire_of(tool_id: str) -> str:
    return reference_answer("encode_wire_name", {"tool_id": tool_id})["ok"]


@st.composite
def _make_tool_id_input(draw: st.DrawFn) -> dict[str, Any]:
    inp = {
        "namespace": draw(s.valid("namespace")),
        "upstream_name": draw(s.valid("name")),
        "input_schema": draw(_shape_schema()),
    }
    if draw(st.integers(0, 3)) == 0:
        inp["version"] = draw(s.valid("version"))
    return inp


@st.composite
def _banned(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    card = draw(s.valid_choice_card())
    banned = draw(st.sampled_from(sorted(BANNED_FIELDS)))
    if draw(st.booleans()):
        return "field", {"card": {**card, banned: {"type": "object"}}}
    return "stringified", {"card": {**card, "description": banned + ': {"type": "object"}'}}


def _annotation_keys() -> list[str]:
    """The hint names the annotation vectors use: the kit invents none."""
    keys = {
        k
        for c in v.load_cases()
        if c["function"] == "annotation_fields"
        for k in c["input"]["annotations"]
    }
    return sorted(keys)


_JSON_SCALARS: Final = st.one_of(
    st.booleans(), st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=3), st.none()
)

# Text for the token functions: plain Unicode, prose with sentence ends (and abbreviations
# that are not sentence ends), CJK with full-width terminators, and special-token spellings
# that must count as plain text.
_WIDE: Final = tuple(t for t in SENTENCE_TERMINATORS if t not in TERMINATORS_NEEDING_SPACE)
_WORD: Final = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEF0123456789-'", min_size=1, max_size=12
)


@st.composite
def _sentences(draw: st.DrawFn) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 12))):
        words = draw(
            st.lists(
                st.one_of(_WORD, st.sampled_from(["e.g.", "file.txt", "v1.2"])),
                min_size=1,
                max_size=14,
            )
        )
        parts.append(" ".join(words) + draw(st.sampled_from(TERMINATORS_NEEDING_SPACE or ("",))))
    return draw(st.sampled_from([" ", "  ", "\n", "\t "])).join(parts)


@st.composite
def _cjk(draw: st.DrawFn) -> str:
    han = st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF)
    kana = st.characters(min_codepoint=0x3041, max_codepoint=0x30FF)
    parts = [
        draw(st.text(alphabet=st.one_of(han, kana), min_size=1, max_size=40))
        + draw(st.sampled_from(_WIDE or ("",)))
        for _ in range(draw(st.integers(1, 8)))
    ]
    return "".join(parts)


def _texts() -> dict[str, st.SearchStrategy[str]]:
    special = st.sampled_from(["<|endoftext|>", "<|fim_prefix|>", "<|im_start|>"])
    return {
        "plain": st.text(max_size=300),
        "sentences": _sentences(),
        "cjk": _cjk(),
        "special": st.tuples(st.text(max_size=20), special, st.text(max_size=20)).map("".join),
    }


def _labelled(
    options: dict[str, st.SearchStrategy[Any]], build: Callable[[Any], dict[str, Any]]
) -> Draw:
    """One strategy over all options, each example labelled with its option's name."""

    def tagged(label: str, strat: st.SearchStrategy[Any]) -> Draw:
        return strat.map(lambda x: (label, build(x)))

    return st.one_of(*[tagged(k, strat) for k, strat in options.items()])


def _budget() -> st.SearchStrategy[int]:
    return st.integers(1, CARD_HARD_CAP_TOKENS)


def _other_families() -> list[Family]:
    ann_keys = _annotation_keys()
    return [
        Family(
            "parse_tool_id/roundtrip",
            "parse_tool_id",
            ("grammar.tool_id.roundtrip",),
            lambda: _plain(s.valid("tool_id").map(lambda x: {"value": x})),
        ),
        Family(
            "format_tool_id/roundtrip",
            "format_tool_id",
            ("grammar.tool_id.roundtrip",),
            lambda: _plain(s.valid("tool_id").map(lambda x: {"parts": _parts_of(x)})),
        ),
        Family(
            "make_tool_id/emitted",
            "make_tool_id",
            ("hash8.emitted",),
            lambda: _plain(_make_tool_id_input()),
        ),
        Family(
            "hash8/shape",
            "hash8",
            ("hash8.shape_only",),
            lambda: _plain(
                st.fixed_dictionaries(
                    {"upstream_name": s.valid("name"), "input_schema": _shape_schema()}
                )
            ),
        ),
        Family(
            "parse_path/parse",
            "parse_path",
            ("grammar.path.parse",),
            lambda: _plain(s.valid("path").map(lambda x: {"value": x})),
        ),
        Family(
            "encode_wire_name/roundtrip",
            "encode_wire_name",
            ("wire_name.roundtrip",),
            lambda: _plain(s.valid("tool_id").map(lambda x: {"tool_id": x})),
        ),
        Family(
            "decode_wire_name/roundtrip",
            "decode_wire_name",
            ("wire_name.roundtrip",),
            lambda: _plain(s.valid("tool_id").map(lambda x: {"name": _wire_of(x)})),
        ),
        Family(
            "parse_aggregate_name/roundtrip",
            "parse_aggregate_name",
            ("grammar.aggregate_name.roundtrip",),
            lambda: _plain(s.valid("aggregate_name").map(lambda x: {"value": x})),
        ),
        Family(
            "parse_search_operation/roundtrip",
            "parse_search_operation",
            ("grammar.search_operation.roundtrip",),
            lambda: _plain(s.valid("search_operation").map(lambda x: {"value": x})),
        ),
        Family(
            "parse_view_selector/parse",
            "parse_view_selector",
            ("grammar.view_selector.parse",),
            lambda: _plain(s.valid("view_selector").map(lambda x: {"value": x})),
        ),
        Family(
            "server_key/normalise",
            "server_key",
            ("server_key.normalise",),
            lambda: _plain(st.text(max_size=40).map(lambda x: {"config_key": x})),
        ),
        Family(
            "annotation_fields/untrusted",
            "annotation_fields",
            ("annotations.untrusted",),
            lambda: _plain(
                st.dictionaries(st.sampled_from(ann_keys), _JSON_SCALARS).map(
                    lambda a: {"annotations": a}
                )
            ),
        ),
        Family(
            "validate_card/valid",
            "validate_card",
            ("model.ChoiceCard.valid",),
            lambda: _plain(s.valid_choice_card().map(lambda c: {"card": c})),
            lambda _i: {"ok": True},
        ),
        Family(
            "validate_card/invalid",
            "validate_card",
            ("model.ChoiceCard.invalid",),
            lambda: s.invalid_choice_card().map(lambda hc: (hc[0], {"card": hc[1]})),
            oversample=4,
        ),
        Family("validate_card/banned", "validate_card", ("model.ChoiceCard.banned",), _banned),
        Family(
            "render_card/render",
            "render_card",
            ("model.ChoiceCard.render",),
            lambda: _plain(s.valid_choice_card().map(lambda c: {"card": c})),
        ),
        # No requirement lists these check ids yet (TRUNC-*, BUDGET-EXACT-CL100K are pending):
        # the report says so, and names them once requirements.yaml does.
        Family(
            "truncate_description/budget",
            "truncate_description",
            ("truncate.description",),
            lambda: _labelled(
                {k: st.tuples(t, _budget()) for k, t in _texts().items()},
                lambda tb: {"text": tb[0], "budget_tokens": tb[1]},
            ),
            oversample=2,
        ),
        Family(
            "count_tokens/text",
            "count_tokens",
            ("tokens.count",),
            lambda: _labelled(_texts(), lambda t: {"text": t}),
            oversample=2,
        ),
    ]


def families() -> list[Family]:
    return [*_grammar_families(), *_other_families()]
