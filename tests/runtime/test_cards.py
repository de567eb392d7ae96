"""ChoiceCards (§2.1-§2.5): fields, budgets on the exact rendered line, ordering."""

from __future__ import annotations

import random
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatespec.cards import (
    CARD_NAME_MAX_CHARS,
    CARD_TAGS_MAX,
    admit_cards,
    browse_text,
    build_card,
    build_cards,
    card_tokens,
    fit_card,
    internal_card,
    order_cards,
    with_score,
)
from gatespec.catalog import Catalog, Item
from gatespec.tokens import count_tokens
from gatespec_surface import strategies
from gatespec_surface.budgets import (
    BROWSE_PREAMBLE_TOKENS,
    CARD_HARD_CAP_TOKENS,
    CARD_TARGET_TOKENS,
    ELLIPSIS,
    browse_cap_tokens,
)
from gatespec_surface.errors import CatalogError
from gatespec_surface.parsers import make_tool_id
from gatespec_surface.render import render_browse_text, render_card, render_preamble
from gatespec_surface.validators import LINE_BREAKS, choice_card_violations, validate_choice_card

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}


def item(name: str = "search", description: str = "Search things.", **kw: Any) -> Item:
    fields: dict[str, Any] = {
        "id": make_tool_id("web", name, kw.get("input_schema", SCHEMA)),
        "kind": "tool",
        "name": name,
        "description": description,
        "namespace": "web",
        "tags": (),
        "input_schema": SCHEMA,
        "output_schema": None,
        "side_effects": False,
        "cost_hint": 0.0,
        "metadata": MappingProxyType({"server": "web", "upstream_name": name, "title": None}),
    }
    fields.update(kw)
    return Item(**fields)


def test_a_plain_card() -> None:
    card = build_card(item())
    assert card == {
        "id": item().id,
        "name": "search",
        "description": "Search things.",
        "tags": [],
        "kind": "tool",
        "namespace": "web",
        "has_schema": True,
        "cost_hint": 0.0,
        "side_effects": False,
    }
    validate_choice_card(card)
    assert render_card(card) == f"{item().id}: Search things."


def test_schema_flag_side_effects_cost_and_tags() -> None:
    card = build_card(
        item(
            input_schema={"type": "object"},
            side_effects=True,
            cost_hint=2.5,
            tags=("read-only", "destructive", "read-only"),
        )
    )
    assert card["has_schema"] is False
    assert card["tags"] == ["destructive", "read-only"]  # sorted, deduped
    assert render_card(card).endswith(" #destructive #read-only cost=2.5 side-effects no-schema")
    validate_choice_card(card)


def test_a_tag_outside_the_grammar_is_an_error_not_dropped() -> None:
    with pytest.raises(CatalogError, match="Not A Tag"):
        build_card(item(tags=("read-only", "Not A Tag")))


def test_extra_tags_are_dropped_deterministically() -> None:
    tags = tuple(f"t{i}" for i in range(9, -1, -1))
    card = build_card(item(tags=tags))
    assert card["tags"] == sorted(tags)[:CARD_TAGS_MAX]
    assert build_card(item(tags=tuple(reversed(tags))))["tags"] == card["tags"]


def test_long_names_are_cut_on_the_card_only() -> None:
    name = "get_" + "really_" * 12 + "long_name"
    card = build_card(item(name=name))
    assert len(card["name"]) == CARD_NAME_MAX_CHARS and card["name"].endswith(ELLIPSIS)
    assert name in card["id"]  # the id keeps the full name
    validate_choice_card(card)


def test_long_descriptions_are_truncated_to_the_target() -> None:
    sentence = "This tool searches the entire web index for matching documents. "
    card = build_card(item(description=sentence * 20))
    assert card_tokens(card) <= CARD_TARGET_TOKENS
    assert card["description"].endswith(".")
    assert (sentence * 20).startswith(card["description"])


def test_line_breaks_never_reach_a_card() -> None:
    card = build_card(item(description="Line one.\nLine two.\u2028Line three."))
    assert card["description"] == "Line one. Line two. Line three."
    assert not any(b in card["description"] for b in LINE_BREAKS)


def test_a_card_over_the_hard_cap_raises() -> None:
    name = "x" + "-1" * 63  # a legal name whose id alone is far over the cap
    with pytest.raises(CatalogError, match="hard cap"):
        build_card(item(name=name))


def test_internal_cards() -> None:
    card = internal_card("/github", "github", "github", "117 tools: " + "name, " * 200)
    validate_choice_card(card)
    assert card["kind"] == "internal" and card["has_schema"] is False
    assert card_tokens(card) <= CARD_TARGET_TOKENS


@settings(max_examples=150)
@given(strategies.valid_choice_card())
def test_generated_cards_fit_or_raise(card: dict[str, Any]) -> None:
    base = {k: v for k, v in card.items() if k != "score"}
    try:
        fitted = fit_card(base, card["description"] * 5)
    except CatalogError:
        assert card_tokens({**base, "description": ""}) > CARD_HARD_CAP_TOKENS
        return
    assert choice_card_violations(fitted) == []
    tokens = card_tokens(fitted)
    assert tokens <= CARD_HARD_CAP_TOKENS
    if fitted["description"]:
        assert tokens <= CARD_TARGET_TOKENS


def test_with_score_copies() -> None:
    card = build_card(item())
    scored = with_score(card, 1.5)
    assert scored["score"] == 1.5 and "score" not in card
    scored["tags"].append("x")
    assert card["tags"] == []
    assert "score" not in with_score(scored, None)


@settings(max_examples=100)
@given(
    st.lists(
        st.tuples(strategies.valid("tool_id"), st.one_of(st.none(), st.sampled_from([0.5, 1.0]))),
        max_size=12,
        unique_by=lambda t: t[0],
    ),
    st.randoms(use_true_random=False),
)
def test_order_is_score_desc_then_id_asc(pairs: list[Any], rnd: random.Random) -> None:
    cards = [{"id": i, **({"score": s} if s is not None else {})} for i, s in pairs]
    ordered = order_cards(cards)
    shuffled = list(cards)
    rnd.shuffle(shuffled)
    assert order_cards(shuffled) == ordered
    keys = [(-(c["score"]) if "score" in c else float("inf"), c["id"]) for c in ordered]
    assert keys == sorted(keys)  # missing scores last, as the lowest


def test_browse_text_is_checked_against_the_cap() -> None:
    cards = [with_score(build_card(item(name=f"t{i}")), 1.0) for i in range(3)]
    preamble = render_preamble(3, total=9)
    text = browse_text(preamble, cards)
    assert text == render_browse_text(preamble, cards)
    assert count_tokens(text) <= browse_cap_tokens(3)
    huge = {**cards[0], "description": "word " * 400}
    with pytest.raises(CatalogError, match="cap"):
        browse_text(preamble, [huge])
    with pytest.raises(CatalogError, match="preamble"):
        browse_text("word " * 100, cards)


def test_real_catalog_cards_all_validate_and_fit(
    real_tools: dict[str, list[dict[str, Any]]],
) -> None:
    catalog = Catalog.build(real_tools)
    cards = build_cards(catalog)
    assert set(cards) == {i.id for i in catalog.items()}
    truncated = 0
    for tool in catalog.items():
        card = cards[tool.id]
        validate_choice_card(card)
        assert card_tokens(card) <= CARD_TARGET_TOKENS <= CARD_HARD_CAP_TOKENS
        truncated += card["description"] != " ".join(tool.description.split())
    assert truncated > 0  # the real catalog has long descriptions
    ordered = order_cards(cards.values())
    text = render_browse_text(render_preamble(len(ordered)), ordered)
    assert count_tokens(render_preamble(len(ordered))) <= BROWSE_PREAMBLE_TOKENS
    assert count_tokens(text) <= browse_cap_tokens(len(ordered))


def test_a_card_over_the_hard_cap_excludes_only_that_tool() -> None:
    # A legal 127-character name of short hyphenated parts is far over the 80-token cap on its
    # own (AM-CARD-OVER-CAP): that tool leaves the catalog with the reason, the others stay.
    long_name = "x" + "-1" * 63
    catalog = Catalog.build(
        {
            "srv": [
                {"name": long_name, "inputSchema": {"type": "object"}},
                {"name": "ok", "inputSchema": {"type": "object"}},
            ]
        }
    )
    [long_item] = [i for i in catalog.items() if i.name == long_name]
    with pytest.raises(CatalogError):
        build_card(long_item)
    admitted, cards = admit_cards(catalog)
    assert [i.name for i in admitted.items()] == ["ok"]
    assert list(cards) == [admitted.items()[0].id]
    [excluded] = admitted.excluded
    assert excluded.name == long_name and "hard cap" in excluded.reason


def test_a_schema_pasted_into_a_description_is_cut_before_it() -> None:
    # AM-BANNED-IN-DESCRIPTION: §2.2 forbids banned fields on a card in any form.
    described = item(description='Searches the web. Takes inputSchema: {"properties": {"q": {}}}.')
    card = build_card(described)
    assert card["description"] == "Searches the web. Takes" + ELLIPSIS
    assert choice_card_violations(card) == []
