"""Drawn case families of layer 1: one per emitted check id a pure function can evidence.

Each family draws inputs from the generated hypothesis strategies and says what the answer must
be *without asking gatespec*: the strategy's own claim (a valid or invalid grammar value, a card
broken in a named way), the kit's oracle (`gatespec_conformance.oracle`: seed 000 §1.3's hash8,
§2.4 truncation by brute force, the card line of AM-CARD-RENDER, tiktoken's own counts), or a
property the answer must have (parse_tool_id's parts join back to the id).

A family also says which amendments its expected answers rest on (`amended_by`, besides those
of its requirements) and, for a labelled family, which requirement each label's cases evidence:
a card with a 70-character name evidences CARD-NAME-MAX-64 and nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

from hypothesis import strategies as st

from gatespec_conformance.functions.family import Draw, Family, Property, plain
from gatespec_conformance.functions.grammar_families import GRAMMAR_EXTENSIONS, grammar_families
from gatespec_conformance.oracle import (
    answers,
    render,
    seed_answers,
    seed_hash,
    tool_ids,
    truncation,
)
from gatespec_conformance.tokens import count_tokens
from gatespec_surface import strategies as s
from gatespec_surface import vectors as v
from gatespec_surface.budgets import (
    BANNED_FIELDS,
    CARD_HARD_CAP_TOKENS,
    SENTENCE_TERMINATORS,
    TERMINATORS_NEEDING_SPACE,
)
from gatespec_surface.errors import ErrorCode
from gatespec_surface.grammars import GRAMMARS, TOOL_ID_PATTERN

__all__ = ["Draw", "Family", "Property", "banned_field_requirement", "families"]


# ------------------------------------------------------------------ tool ids and hash8


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


def _parts_by_grammar(tool_id: str) -> dict[str, Any]:
    """The parts of a valid tool_id, read off the spec's own pattern (its named groups)."""
    m = re.fullmatch(TOOL_ID_PATTERN, tool_id)
    assert m is not None, tool_id
    return m.groupdict()


def _split_expected(inp: dict[str, Any]) -> Property:
    value = inp["value"]
    return Property(
        f"parts that join back to {value!r}, each matching its production",
        lambda got: tool_ids.split_tool_id(got, value),
    )


def _make_tool_id_expected(inp: dict[str, Any]) -> dict[str, Any]:
    made = tool_ids.make_tool_id(
        inp["namespace"], inp["upstream_name"], inp["input_schema"], inp.get("version")
    )
    return {"ok": made}


def _path_expected(inp: dict[str, Any]) -> dict[str, Any]:
    """§3.2: the segments below the root, and whether the last is the reserved "*"."""
    segments = [seg for seg in inp["value"].split("/") if seg]
    star = bool(segments) and segments[-1] == "*"
    return {"ok": {"segments": segments[:-1] if star else segments, "star": star}}


def _wire_expected(inp: dict[str, Any]) -> dict[str, Any]:
    return answers.wire_answer(inp["tool_id"])


def _decode_expected(inp: dict[str, Any]) -> dict[str, Any]:
    # A shortened name carries a digest, not the id: no pure function can give the id back.
    tool_id = answers.unwire(inp["name"])
    return {"ok": tool_id} if tool_id is not None else {"error": GRAMMARS["wire_name"].error.value}


def _split_input(sep: str, keys: tuple[str, str]) -> Callable[[str], dict[str, str]]:
    """A valid joined value as the two parts a format function takes (split at the first
    `sep`: neither a server key nor a server__ name's server part holds one)."""

    def split(value: str) -> dict[str, str]:
        first, _, rest = value.partition(sep)
        return {keys[0]: first, keys[1]: rest}

    return split


def _format_expected(sep: str, keys: tuple[str, str]) -> Callable[[dict], dict[str, Any]]:
    """A format function joins its two (valid) parts with `sep`."""
    return lambda inp: {"ok": inp[keys[0]] + sep + inp[keys[1]]}


def _joined(sep: str, keys: tuple[str, str], lead: str = "") -> Callable[[dict], Property]:
    """A split whose two parts, joined by `sep` (after `lead`), give the value back."""

    def expected(inp: dict[str, Any]) -> Property:
        value = inp["value"]

        def judge(got: Any) -> str | None:
            if not isinstance(got, dict) or set(got) != set(keys):
                return f"expected an object with exactly {', '.join(keys)}"
            if not all(isinstance(got[k], str) and got[k] for k in keys):
                return "every part is a non-empty string"
            joined = lead + got[keys[0]] + sep + got[keys[1]]
            return None if joined == value else f"the parts join to {joined!r}"

        return Property(f"{' and '.join(keys)} that join back to {value!r}", judge)

    return expected


# ------------------------------------------------------------------ cards


# A value of each §2.2 kind, stringified after its field's name: what seed 000 §2.2 bans "in any
# form (including stringified ...)" is a schema, an example or sample invocation, a metadata map
# and a server URL or transport identifier, so each field is given a value of its own kind (a
# "server_url" given a schema carries no URL).
_STRINGIFIED_VALUES: Final = {
    "CARD-NO-SCHEMAS": '{"type": "object"}',
    "CARD-NO-EXAMPLES": '[{"query": "weather in Paris"}]',
    "CARD-NO-METADATA-MAPS": '{"readOnlyHint": true}',
    "CARD-NO-TRANSPORT-IDENTIFIERS": '"http://127.0.0.1:8765/mcp"',
}


@st.composite
def _banned(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    card = draw(s.valid_choice_card())
    banned = draw(st.sampled_from(sorted(BANNED_FIELDS)))
    if draw(st.booleans()):
        return "field", {"card": {**card, banned: {"type": "object"}}}
    value = _STRINGIFIED_VALUES.get(banned_field_requirement(banned), '{"type": "object"}')
    return "stringified", {"card": {**card, "description": f"{banned}: {value}"}}


def _stringified_extension(label: str, inp: dict[str, Any]) -> str:
    """Why no seed states a stringified case ("" when seed 000 §2.2 bans what it carries)."""
    if label not in ("stringified", "stringified_schema"):
        return ""
    if seed_answers.seed_stringified(str(inp["card"].get("description", ""))) is not None:
        return ""
    return (
        "seed 000 §2.2 bans the named fields 'in any form (including stringified ...)'; text "
        'naming none of them with a value of its kind (a bare {"properties": ...}, '
        "'args_schema: x') is banned by budgets.yaml banned.stringified's wider reading"
    )


# Seed 000 §2.2 names four kinds of banned content; each has its own requirement.
_BANNED_KINDS: Final = (
    (("schema", "properties", "required"), "CARD-NO-SCHEMAS"),
    (("example",), "CARD-NO-EXAMPLES"),
    (("meta", "annotation", "metadata"), "CARD-NO-METADATA-MAPS"),
    (("url", "transport", "command"), "CARD-NO-TRANSPORT-IDENTIFIERS"),
)


def banned_field_requirement(field: str) -> str:
    """The §2.2 requirement a banned field name belongs to."""
    key = field.lower()
    for words, requirement in _BANNED_KINDS:
        if any(w in key for w in words):
            return requirement
    return "CARD-ALLOWED-FIELDS"


def _banned_requirements(label: str, inp: dict[str, Any]) -> tuple[str, ...]:
    card = inp["card"]
    if label == "stringified":
        return (banned_field_requirement(str(card["description"]).split(":", 1)[0]),)
    extra = [k for k in card if k in BANNED_FIELDS]
    return tuple(dict.fromkeys(banned_field_requirement(k) for k in extra))


# What each way of breaking a card (strategies.invalid_choice_card) breaks. A label without a
# requirement breaks a rule the spec states but no seed requirement holds (see the report).
_INVALID_CARD: Final[dict[str, tuple[str, ...]]] = {
    "extra_field": ("CARD-ALLOWED-FIELDS",),
    "too_many_tags": ("CARD-TAGS-MAX-5",),
    "long_tag": ("CARD-TAG-MAX-24-CHARS",),
    "unsorted_tags": ("CARD-TAGS-SORTED",),
    "long_name": ("CARD-NAME-MAX-64",),
    "multi_line": ("CARD-DESCRIPTION-SINGLE-LINE",),
    "bad_kind": ("CARD-KIND-ENUM",),
    "bad_id": ("CARD-ID-IS-TOOLID",),
    "stringified_schema": ("CARD-NO-SCHEMAS",),
    "negative_cost": (),
    "missing_field": (),
}
_INVALID_CARD_UNSTATED: Final = {
    "negative_cost": "seed 000 §2.1 says cost_hint is a float; its minimum 0 is gatespec's",
    "missing_field": "seed 000 §2.1 lists the fields a card may carry, not which it must",
}


def _internal_bad_id(label: str, inp: dict[str, Any]) -> bool:
    """A card broken by its id whose kind is internal: seed 000 §5.4 shows an internal card
    whose id (the cache marker's) is no tool_id, so only AM-BROWSE-TREE's convention (a
    browse path or the marker) rejects it."""
    return label == "bad_id" and inp["card"].get("kind") == "internal"


def _invalid_card_requirements(label: str, inp: dict[str, Any]) -> tuple[str, ...]:
    if label == "banned_field":
        return _banned_requirements("field", inp)
    if _internal_bad_id(label, inp):
        return ()
    return _INVALID_CARD[label]


def _invalid_card_amended(label: str, inp: dict[str, Any]) -> tuple[str, ...]:
    return ("AM-BROWSE-TREE",) if _internal_bad_id(label, inp) else ()


# ------------------------------------------------------------------ annotations and text


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


_CATALOG_ERROR: Final = {"error": ErrorCode.CATALOG_ERROR.value}


def _other_families() -> list[Family]:
    ann_keys = _annotation_keys()
    return [
        Family(
            "parse_tool_id/roundtrip",
            "parse_tool_id",
            ("grammar.tool_id.roundtrip",),
            lambda: plain(s.valid("tool_id").map(lambda x: {"value": x})),
            _split_expected,
        ),
        Family(
            "format_tool_id/roundtrip",
            "format_tool_id",
            ("grammar.tool_id.roundtrip",),
            lambda: plain(s.valid("tool_id").map(lambda x: {"parts": _parts_by_grammar(x)})),
            lambda inp: {"ok": tool_ids.join_tool_id(inp["parts"])},
        ),
        Family(
            "make_tool_id/emitted",
            "make_tool_id",
            ("hash8.emitted",),
            lambda: plain(_make_tool_id_input()),
            _make_tool_id_expected,
            # a given namespace and the name kept verbatim: §1.4 would strip a dotted prefix
            amended_by=("AM-NAMESPACE-FROM-CONFIG",),
        ),
        Family(
            "hash8/shape",
            "hash8",
            ("hash8.shape_only",),
            lambda: plain(
                st.fixed_dictionaries(
                    {"upstream_name": s.valid("name"), "input_schema": _shape_schema()}
                )
            ),
            lambda inp: {"ok": seed_hash.seed_hash8(inp["upstream_name"], inp["input_schema"])},
        ),
        Family(
            "parse_path/parse",
            "parse_path",
            ("grammar.path.parse",),
            lambda: plain(s.valid("path").map(lambda x: {"value": x})),
            _path_expected,
        ),
        Family(
            "encode_wire_name/roundtrip",
            "encode_wire_name",
            ("wire_name.roundtrip",),
            lambda: plain(s.valid("tool_id").map(lambda x: {"tool_id": x})),
            _wire_expected,
            amended_by=("AM-WIRE-NAME",),
        ),
        Family(
            "decode_wire_name/roundtrip",
            "decode_wire_name",
            ("wire_name.roundtrip",),
            lambda: plain(s.valid("tool_id").map(lambda x: {"name": answers.wire_name(x)[0]})),
            _decode_expected,
            amended_by=("AM-WIRE-NAME",),
        ),
        Family(
            "parse_aggregate_name/roundtrip",
            "parse_aggregate_name",
            ("grammar.aggregate_name.roundtrip",),
            lambda: plain(s.valid("aggregate_name").map(lambda x: {"value": x})),
            _joined("__", ("server", "tool")),
        ),
        Family(
            "format_aggregate_name/roundtrip",
            "format_aggregate_name",
            ("grammar.aggregate_name.roundtrip",),
            lambda: plain(s.valid("aggregate_name").map(_split_input("__", ("server", "name")))),
            _format_expected("__", ("server", "name")),
        ),
        Family(
            "parse_resource_uri/roundtrip",
            "parse_resource_uri",
            ("grammar.resource_uri.roundtrip",),
            lambda: plain(s.valid("resource_uri").map(lambda x: {"value": x})),
            _joined("+", ("server", "uri")),
            amended_by=("AM-RESOURCE-URI",),
        ),
        Family(
            "format_resource_uri/roundtrip",
            "format_resource_uri",
            ("grammar.resource_uri.roundtrip",),
            lambda: plain(s.valid("resource_uri").map(_split_input("+", ("server", "uri")))),
            _format_expected("+", ("server", "uri")),
            amended_by=("AM-RESOURCE-URI",),
        ),
        Family(
            "parse_search_operation/roundtrip",
            "parse_search_operation",
            ("grammar.search_operation.roundtrip",),
            lambda: plain(s.valid("search_operation").map(lambda x: {"value": x})),
            _joined("/", ("namespace", "name"), lead="/"),
        ),
        Family(
            "parse_view_selector/parse",
            "parse_view_selector",
            ("grammar.view_selector.parse",),
            lambda: plain(s.valid("view_selector").map(lambda x: {"value": x})),
            lambda inp: answers.selector_answer(inp["value"]),
            extension=GRAMMAR_EXTENSIONS["view_selector"],
        ),
        Family(
            "server_key/normalise",
            "server_key",
            ("server_key.normalise",),
            lambda: plain(st.text(max_size=40).map(lambda x: {"config_key": x})),
            lambda inp: tool_ids.server_key(inp["config_key"]),
            amended_by=("AM-NAMESPACE-FROM-CONFIG",),
        ),
        Family(
            "annotation_fields/untrusted",
            "annotation_fields",
            ("annotations.untrusted",),
            lambda: plain(
                st.dictionaries(st.sampled_from(ann_keys), _JSON_SCALARS).map(
                    lambda a: {"annotations": a}
                )
            ),
            lambda inp: {"ok": answers.annotation_answer(inp["annotations"])},
            amended_by=("AM-SIDE-EFFECTS-DEFAULT",),
            seed_prop=lambda inp: Property(*seed_answers.annotation_property(inp["annotations"])),
        ),
        Family(
            "validate_card/valid",
            "validate_card",
            ("model.ChoiceCard.valid",),
            lambda: plain(s.valid_choice_card().map(lambda c: {"card": c})),
            lambda _i: {"ok": True},
        ),
        Family(
            "validate_card/invalid",
            "validate_card",
            ("model.ChoiceCard.invalid",),
            lambda: s.invalid_choice_card().map(lambda hc: (hc[0], {"card": hc[1]})),
            lambda _i: _CATALOG_ERROR,
            oversample=4,
            requirements=_invalid_card_requirements,
            case_extension=lambda label, inp: (
                _INVALID_CARD_UNSTATED.get(label, "") or _stringified_extension(label, inp)
            ),
            case_amended=_invalid_card_amended,
        ),
        Family(
            "validate_card/banned",
            "validate_card",
            ("model.ChoiceCard.banned",),
            _banned,
            lambda _i: _CATALOG_ERROR,
            requirements=_banned_requirements,
            case_extension=_stringified_extension,
        ),
        Family(
            "render_card/render",
            "render_card",
            ("model.ChoiceCard.render",),
            lambda: plain(s.valid_choice_card().map(lambda c: {"card": c})),
            lambda inp: {"ok": render.render_line(inp["card"])},
            amended_by=("AM-CARD-RENDER",),
        ),
        Family(
            "truncate_description/budget",
            "truncate_description",
            ("truncate.description",),
            lambda: _labelled(
                {k: st.tuples(t, _budget()) for k, t in _texts().items()},
                lambda tb: {"text": tb[0], "budget_tokens": tb[1]},
            ),
            lambda inp: {"ok": truncation.truncate(inp["text"], inp["budget_tokens"])},
            oversample=2,
            amended_by=("AM-TRUNC-CHAR-BOUNDARY", "AM-SENTENCE-ENDS"),
            seed_prop=lambda inp: Property(
                *seed_answers.truncation_property(inp["text"], inp["budget_tokens"])
            ),
        ),
        Family(
            "count_tokens/text",
            "count_tokens",
            ("tokens.count",),
            lambda: _labelled(_texts(), lambda t: {"text": t}),
            lambda inp: {"ok": count_tokens(inp["text"])},
            oversample=2,
        ),
    ]


def families() -> list[Family]:
    return [*grammar_families(), *_other_families()]
