"""Cards fitted when first shown, the tree built on the first path browse, the stripped list on
first use: each answer is exactly the one an eager build gives, and within its budget (§2.3)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import gatespec.browse as browse_module
import gatespec.cards as cards_module
from gatespec.browse import Browser
from gatespec.cards import admit_cards, build_card, card_tokens
from gatespec.catalog import Catalog
from gatespec.snapshot import build_snapshot, restricted_snapshot
from gatespec.tokens import count_tokens
from gatespec_surface.budgets import CARD_HARD_CAP_TOKENS, CARD_TARGET_TOKENS, browse_cap_tokens
from gatespec_surface.errors import CatalogError

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text gatespec.cards counts tokens of, from now on."""
    counted: list[str] = []

    def count(text: str) -> int:
        counted.append(text)
        return count_tokens(text)

    monkeypatch.setattr(cards_module, "count_tokens", count)
    return counted


def test_admission_counts_no_card_and_a_card_is_exact_when_first_asked_for(
    real_tools: dict[str, list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = Catalog.build(real_tools)
    counted = _counting(monkeypatch)
    admitted, cards = admit_cards(catalog)
    # Only a card whose bare line is longer in bytes than the cap is counted at admission.
    assert len(counted) < len(catalog) // 10
    counted.clear()
    tool_id = admitted.items()[0].id
    card = cards[tool_id]
    assert counted  # fitted now, on first access
    assert card == build_card(admitted.items()[0])
    assert card_tokens(card) <= CARD_TARGET_TOKENS
    counted.clear()
    assert cards[tool_id] is card and not counted  # kept, not fitted again


def test_lazy_cards_equal_the_eager_build_and_admit_the_same_tools(
    real_tools: dict[str, list[dict[str, Any]]],
) -> None:
    over = "x" + "-1" * 63  # a legal name whose card is over the cap on its own (AM-CARD-OVER-CAP)
    # A bare line of more bytes than the cap but fewer tokens: admitted after one count.
    wide = "search_repositories_and_list_every_pull_request_for_an_owner_now"
    catalog = Catalog.build(
        {
            **real_tools,
            "edge": [
                {"name": over, "inputSchema": {"type": "object"}},
                {"name": wide, "description": "Wide.", "inputSchema": {"type": "object"}},
            ],
        }
    )
    eager: dict[str, Any] = {}
    for it in catalog.items():
        try:
            eager[it.id] = build_card(it)
        except CatalogError:
            pass
    admitted, cards = admit_cards(catalog)
    assert [i.id for i in admitted.items()] == list(eager) == list(cards)
    assert {e.name for e in admitted.excluded} >= {over} and over not in {
        i.name for i in admitted.items()
    }
    assert any(i.name == wide for i in admitted.items())
    assert {k: cards[k] for k in cards} == eager
    for card in cards.values():
        assert card_tokens(card) <= CARD_HARD_CAP_TOKENS


@given(st.text(max_size=200))
def test_a_token_is_at_least_one_byte(text: str) -> None:
    # What admission relies on to skip counting a short line (cards._within_cap).
    assert count_tokens(text) <= len(text.encode("utf-8"))


def test_a_query_browse_fits_only_the_cards_it_shows_and_stays_within_budget(
    real_tools: dict[str, list[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog, cards = admit_cards(Catalog.build(real_tools))
    browser = Browser(catalog, cards, semantic=False)
    trees: list[int] = []
    real_tree = browse_module.BrowseTree

    def counting_tree(*args: Any) -> Any:
        trees.append(1)
        return real_tree(*args)

    monkeypatch.setattr(browse_module, "BrowseTree", counting_tree)
    counted = _counting(monkeypatch)
    resp = browser.browse("create an issue in a github repository")
    assert 0 < len(resp.cards) <= 10
    assert not trees  # the tree waits for a path browse
    assert len(counted) < len(catalog) // 5  # a few counts per card shown, not per tool
    assert count_tokens(resp.text) <= browse_cap_tokens(len(resp.cards))
    for card in resp.cards:
        item = catalog.get(card["id"])
        assert item is not None
        assert card == {**build_card(item), "score": card["score"]}
    namespace = catalog.namespaces()[0]
    path = browser.browse(path=f"/{namespace}")
    assert trees == [1]
    assert count_tokens(path.text) <= browse_cap_tokens(len(path.cards))
    browser.browse(path="/")
    assert trees == [1]  # built once


def test_restricted_and_stripped_views_are_lazy_and_equal_to_filtering(
    real_tools: dict[str, list[dict[str, Any]]],
) -> None:
    snapshot = build_snapshot(Catalog.build(real_tools))
    visible = frozenset(i.id for i in snapshot.catalog.items()[::3])
    view = restricted_snapshot(snapshot, visible)
    assert list(view.browser.cards) == [i for i in snapshot.browser.cards if i in visible]
    pairs = zip(snapshot.catalog.items(), snapshot.stripped, strict=True)
    assert view.stripped == tuple(t for i, t in pairs if i.id in visible)
    some = next(iter(visible))
    assert view.browser.cards[some] is snapshot.browser.cards[some]  # fitted once, shared
