"""Cache-stable browsing (§5): seen prefix, marker, frozen content, hydration, the store."""

from __future__ import annotations

import json
from typing import Any

import pytest

from gatespec.browse import Browser
from gatespec.cards import card_tokens
from gatespec.catalog import Catalog
from gatespec.seen_cards import SeenCards, SeenCardStore, marker_card
from gatespec_surface import budgets
from gatespec_surface.errors import ErrorCode, GatewayError
from gatespec_surface.validators import validate_choice_card

MARKER = budgets.CACHE_MARKER_ID


def card(card_id: str, score: float | None = 1.0, description: str = "A tool.") -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": card_id,
        "name": card_id.split(":", 1)[1].split("#")[0],
        "description": description,
        "tags": [],
        "kind": "tool",
        "namespace": card_id.split(":", 1)[0],
        "has_schema": True,
        "cost_hint": 0.0,
        "side_effects": False,
    }
    if score is not None:
        out["score"] = score
    return out


def ids(cards: list[dict[str, Any]]) -> list[str]:
    return [c["id"] for c in cards]


def test_marker_card_is_a_valid_internal_card() -> None:
    marker = marker_card()
    validate_choice_card(marker)
    assert (marker["id"], marker["kind"], marker["namespace"], marker["tags"]) == (
        budgets.CACHE_MARKER_ID,
        budgets.CACHE_MARKER_KIND,
        "",
        [],
    )
    assert (marker["name"], marker["description"]) == (
        budgets.CACHE_MARKER_NAME,
        budgets.CACHE_MARKER_DESCRIPTION,
    )
    assert card_tokens(marker) <= budgets.CARD_TARGET_TOKENS


def test_first_browse_has_no_marker_and_is_sorted_by_id() -> None:
    s = SeenCards()
    out = s.arrange([card("a:z"), card("a:b", 9.0), card("a:m", 5.0)])
    assert ids(out) == ["a:b", "a:m", "a:z"]  # §5.3 case 1: all new


def test_all_seen_has_no_marker() -> None:
    s = SeenCards()
    s.arrange([card("a:b"), card("a:c")])
    assert ids(s.arrange([card("a:c"), card("a:b")])) == ["a:b", "a:c"]  # §5.3 case 2


def test_all_new_after_earlier_browses_has_no_marker() -> None:
    s = SeenCards()
    s.arrange([card("a:b")])
    assert ids(s.arrange([card("a:y"), card("a:x")])) == ["a:x", "a:y"]  # §5.3 case 3


def test_mixed_browse_has_seen_then_marker_then_new() -> None:
    s = SeenCards()
    s.arrange([card("a:q"), card("a:c")])
    out = s.arrange([card("a:z"), card("a:q"), card("a:a"), card("a:c")])
    assert ids(out) == ["a:c", "a:q", MARKER, "a:a", "a:z"]
    assert out[2] == marker_card()
    assert {"a:a", "a:z"} <= s.seen


def test_seen_content_is_frozen_at_first_sighting() -> None:
    s = SeenCards()
    first = s.arrange([card("a:b", 0.9, "First words.")])
    later = s.arrange([card("a:b", 0.1, "Changed words."), card("a:n", 0.5)])
    assert json.dumps(later[0]) == json.dumps(first[0])
    assert later[0]["score"] == 0.9


def test_emitted_cards_cannot_change_frozen_content() -> None:
    s = SeenCards()
    out = s.arrange([card("a:b")])
    out[0]["tags"].append("x")
    out[0]["description"] = "tampered"
    assert s.arrange([card("a:b")])[0] == card("a:b")


def test_hydrated_tools_count_as_seen() -> None:
    s = SeenCards()
    s.record_hydrated("a:h")
    out = s.arrange([card("a:n"), card("a:h", 0.3)])
    assert ids(out) == ["a:h", MARKER, "a:n"]
    # its content is frozen from this first sighting on
    assert s.arrange([card("a:h", 0.7)])[0]["score"] == 0.3


def test_failed_hydration_is_not_recorded() -> None:
    s = SeenCards()

    def fails(tool_id: str) -> dict[str, Any]:
        raise GatewayError(ErrorCode.HYDRATE_FAILED, f"cannot hydrate {tool_id}")

    with pytest.raises(GatewayError):
        s.hydrate(fails, "a:h")
    assert "a:h" not in s
    assert s.hydrate(lambda tool_id: {"tool_id": tool_id}, "a:h") == {"tool_id": "a:h"}
    assert "a:h" in s
    # called with a wire name, the canonical id the result names is what becomes seen
    s.hydrate(lambda wire: {"tool_id": "a:w"}, "a-nw")
    assert "a:w" in s and "a-nw" not in s


def test_frozen_content_survives_a_different_query() -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    tools = [
        ("read_file", "Read a file from disk."),
        ("write_file", "Write a file to disk."),
        ("list_directory", "List the files in a directory."),
        ("search_files", "Search files by name."),
    ]
    browser = Browser(
        Catalog.build(
            {"fs": [{"name": n, "description": d, "inputSchema": schema} for n, d in tools]}
        )
    )
    s = SeenCards()
    first = browser.browse(query="read file", seen=s, top_k=2)
    second = browser.browse(query="list files in a directory", seen=s)
    fresh = {c["id"]: c["score"] for c in browser.browse(query="list files in a directory").cards}
    before = {c["id"]: c for c in first.cards}
    prefix = second.cards[: second.cards.index(marker_card())]
    assert prefix and ids(prefix) == sorted(ids(prefix))
    assert all(json.dumps(c) == json.dumps(before[c["id"]]) for c in prefix)
    # the second query ranks the seen tools differently; the session re-emits the first scores
    assert any(fresh[c["id"]] != c["score"] for c in prefix)
    # the text a client caches: the seen lines repeat byte for byte
    first_lines = set(first.text.split("\n")[1:])
    assert all(line in first_lines for line in second.text.split("\n")[1 : 1 + len(prefix)])
    assert second.structured["cards"] == second.cards


def test_store_is_a_bounded_lru() -> None:
    store = SeenCardStore(max_sessions=2)
    a = store.get("a")
    store.get("b")
    assert store.get("a") is a  # a is now the most recent
    store.get("c")
    assert "b" not in store and "a" in store and len(store) == 2
    store.drop("a")
    assert "a" not in store
    with pytest.raises(ValueError):
        SeenCardStore(max_sessions=0)
