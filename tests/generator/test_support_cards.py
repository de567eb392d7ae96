"""generator.support card rules, rendering and the annotation mapping, bound to the real spec
(ChoiceCard, §2.1-§2.2; AM-CARD-RENDER; seed 002's mapping table)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.generator.bound import ANNOTATIONS, BANNED_FIELDS, CARD_RULES, CARDS, RENDERER, CardError

# §2.2's banned fields that also have a stringified form (cards.yaml banned.stringified).
STRINGIFIABLE = ("inputSchema", "input_schema", "args_schema", "output_schema", "outputSchema",
                 "_meta", "annotations")  # fmt: skip


@given(CARDS.valid_choice_card())
def test_card_valid(card: dict) -> None:
    """check model.ChoiceCard.valid: cards within every bound validate."""
    assert CARD_RULES.violations(card) == []
    CARD_RULES.validate(card)


@given(CARDS.invalid_choice_card())
def test_card_invalid(case: tuple[str, dict]) -> None:
    """check model.ChoiceCard.invalid: a card broken in any one way is rejected with the card
    error, which lists every violation."""
    how, card = case
    problems = CARD_RULES.violations(card)
    assert problems, how
    with pytest.raises(CardError) as exc:
        CARD_RULES.validate(card)
    assert exc.value.details == {"violations": problems}


@given(CARDS.valid_choice_card(), st.sampled_from(sorted(BANNED_FIELDS)))
def test_card_banned_any_form(card: dict, banned: str) -> None:
    """check model.ChoiceCard.banned: a banned field is refused as a field, stringified in the
    description, or nested in tags (§2.2)."""
    as_field = {**card, banned: {"type": "object"}}
    assert any("banned" in v for v in CARD_RULES.violations(as_field))
    if banned in STRINGIFIABLE:
        stringified = {**card, "description": banned + ': {"type": "object"}'}
        assert CARD_RULES.violations(stringified)
        in_tags = {**card, "tags": sorted({*card["tags"][:4], banned + ":{}"})}
        assert CARD_RULES.violations(in_tags)


def test_a_banned_field_in_another_spelling_is_refused() -> None:
    card = {"id": "a:b", "name": "b", "description": "", "tags": [], "kind": "tool",
            "namespace": "a", "has_schema": False, "Input-Schema": {}}  # fmt: skip
    assert CARD_RULES.violations(card) == ["no_banned_content: banned field 'Input-Schema'"]


def test_banned_content_at_finds_the_first_stringified_field() -> None:
    text = "Reads a file. inputSchema: {...} and _meta= more"
    assert CARD_RULES.banned_content_at(text) == text.index("inputSchema")
    assert CARD_RULES.banned_content_at("Reads a file.") is None


_BANNED_BITS = st.sampled_from(
    [*STRINGIFIABLE, '"properties"', '"required"', "url", "command", "transport", "metadata",
     ":", "=", " ", "\t", "\x1c", "'", '"', "{", "[", "İ", "ſ", "K", "é", "Reads a file. "]
)  # fmt: skip


@given(
    st.lists(st.tuples(_BANNED_BITS, st.booleans()), max_size=12),
    st.sampled_from(["", *(f + ": {" for f in STRINGIFIABLE)]),
)
def test_banned_content_at_is_the_first_case_insensitive_match(bits: list, last: str) -> None:
    """banned_content_at searches ASCII text lower-cased (a faster path): it must still find
    where the first of the spec's case-insensitive patterns matches the text itself (lower-
    casing "İ" adds a character: only ASCII text may take that path)."""
    text = "".join(b.upper() if up else b for b, up in bits) + last
    starts = [m.start() for p in CARD_RULES.stringified if (m := p.search(text))]
    assert CARD_RULES.banned_content_at(text) == (min(starts) if starts else None)


@given(CARDS.valid_choice_card())
def test_card_render(card: dict) -> None:
    """check model.ChoiceCard.render: one line starting with the id; score never rendered;
    cost shown only when positive, side effects only when true (§2.1, AM-CARD-RENDER)."""
    text = RENDERER.render_card(card)
    assert "\n" not in text
    assert text.startswith(card["id"])
    assert RENDERER.render_card({**card, "score": 12345.678}) == RENDERER.render_card(
        {**card, "score": None}
    )
    assert RENDERER.render_card({**card, "cost_hint": 0}) != RENDERER.render_card(
        {**card, "cost_hint": 2.5}
    )
    quiet = RENDERER.render_card({**card, "side_effects": False})
    loud = RENDERER.render_card({**card, "side_effects": True})
    assert quiet != loud and len(quiet) < len(loud)


def test_render_follows_the_parts_in_order() -> None:
    """cards.yaml render.card: id, [kind] unless a tool, the name unless the id shows it,
    ": description", " #tag #tag", " cost=N", " side-effects", " no-schema"."""
    card = {"id": "gh:create_issue@1", "name": "Create issue", "description": "Opens one.",
            "tags": ["a", "b"], "kind": "skill", "namespace": "gh", "has_schema": False,
            "cost_hint": 2.5, "side_effects": True}  # fmt: skip
    assert RENDERER.render_card(card) == (
        "gh:create_issue@1 [skill] Create issue: Opens one. #a #b cost=2.5 side-effects no-schema"
    )
    plain = {**card, "name": "create_issue", "kind": "tool", "description": "", "tags": [],
             "cost_hint": 0, "side_effects": False, "has_schema": True}  # fmt: skip
    assert RENDERER.render_card(plain) == "gh:create_issue@1"


def test_browse_text_is_the_preamble_then_a_line_a_card() -> None:
    card = {"id": "/gh", "name": "gh", "description": "", "tags": [], "kind": "internal",
            "namespace": "", "has_schema": False}  # fmt: skip
    preamble = RENDERER.render_preamble(1, path="/")
    assert preamble.startswith("1 ")
    assert (
        RENDERER.render_browse_text(preamble, [card, card])
        == f"{preamble}\n/gh [internal]\n/gh [internal]"
    )
    assert RENDERER.render_preamble(2, 7).startswith("2 of 7 ")


@given(
    st.dictionaries(
        st.sampled_from(["readOnlyHint", "destructiveHint", "costHint", "idempotentHint"]),
        st.one_of(st.booleans(), st.floats(), st.text(max_size=3), st.none()),
    )
)
def test_annotation_mapping_untrusted(annotations: dict) -> None:
    """check annotations.untrusted: odd hint values never break the mapping."""
    side_effects, tags, cost = ANNOTATIONS.fields(annotations)
    assert isinstance(side_effects, bool) and tags == sorted(tags) and cost >= 0


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        (None, (True, [], 0.0)),
        ({"readOnlyHint": True}, (False, ["read-only"], 0.0)),
        ({"readOnlyHint": 1, "destructiveHint": True}, (True, ["destructive"], 0.0)),
        ({"costHint": 3}, (True, [], 3.0)),
        ({"costHint": True}, (True, [], 0.0)),
        ({"costHint": float("inf")}, (True, [], 0.0)),
    ],
)
def test_annotation_mapping_table(annotations: dict | None, expected: tuple) -> None:
    """Seed 002's table (cards.yaml annotations): readOnlyHint=true means no side effects and a
    read-only tag, destructiveHint=true a destructive tag, costHint a finite positive number;
    MCP's default is that a tool may have side effects; anything else is ignored."""
    assert ANNOTATIONS.fields(annotations) == expected
