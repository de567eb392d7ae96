"""Issue 26 item 6: browse by query never answers an empty list while the catalog has tools.

A new user's everyday queries on a real 10-tool catalog (tools of the real catalog fixture:
github, time, fetch, filesystem). Where the empty list came from: the ranker keeps only the
tools that match (a shared term, or a cosine of at least FusionParams.min_similarity), so a
query that shares no word with any tool matched nothing -- always while the model is still
loading (the ranking is lexical until then), and with the model for queries far from every
tool. Such an answer is the root of the tree worded as the path browse it is, so the model
goes on by path (gatespec.browse.Browser.select)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gatespec.browse import Browser
from gatespec.cards import admit_cards
from gatespec.catalog import Catalog
from gatespec.ranking import semantic as semantic_module
from gatespec.ranking.loading import reset_encoder
from gatespec_surface.render import render_preamble

TEN = {
    "github": ["create_pull_request", "merge_pull_request", "create_issue", "list_issues"],
    "time": ["get_current_time", "convert_time"],
    "fetch": ["fetch"],
    "filesystem": ["read_file", "write_file", "list_directory"],
}
EVERYDAY = [
    "tell the team in #general that the deploy finished",
    "ship the PR #42",
    "what time is it in Tokyo",
    "open a bug about the login page",
    "save my notes to a file",
    "grab the homepage of example.com",
    "merge the pull request",
]


def ten_tools(real_tools: dict[str, list[dict[str, Any]]]) -> Catalog:
    chosen = {
        server: [t for t in real_tools[server] if t["name"] in names]
        for server, names in TEN.items()
    }
    assert sum(map(len, chosen.values())) == 10
    return Catalog.build(chosen)


def browser_of(catalog: Catalog) -> Browser:
    catalog, cards = admit_cards(catalog)
    return Browser(catalog, cards, background=False)


def check_never_empty(browser: Browser) -> list[str]:
    """Every everyday query answers cards; those that matched nothing answer the root of the
    tree as a path browse. The queries answered that way."""
    root = browser.browse(path="/")
    fell_back = []
    for query in EVERYDAY:
        resp = browser.browse(query=query, top_k=5)
        assert resp.cards, query
        if resp.structured.get("path") == "/":
            assert resp.cards == root.cards
            assert resp.text.split("\n", 1)[0] == render_preamble(len(root.cards), path="/")
            fell_back.append(query)
    return fell_back


def test_lexical_ranking_answers_every_everyday_query(
    real_tools: dict[str, list[dict[str, Any]]],
) -> None:
    # What a gateway answers before its model is ready (tests run with semantics off).
    browser = browser_of(ten_tools(real_tools))
    assert not browser.ranker.hybrid
    fell_back = check_never_empty(browser)
    assert fell_back  # some everyday words name none of the ten tools: the fallback ran
    top = browser.browse(query="what time is it in Tokyo", top_k=1).cards[0]
    assert top["id"].startswith("time:")


@pytest.fixture
def semantic_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv("GATESPEC_SEMANTIC", "on")
    monkeypatch.setenv("GATESPEC_CACHE_DIR", str(tmp_path))
    reset_encoder()
    semantic_module.forget_recent()
    yield
    reset_encoder()


def test_hybrid_ranking_answers_every_everyday_query_with_tools(
    real_tools: dict[str, list[dict[str, Any]]], semantic_on: None
) -> None:
    browser = browser_of(ten_tools(real_tools))
    assert browser.ranker.hybrid, browser.ranker.status
    check_never_empty(browser)
    shipped = browser.browse(query="merge the pull request", top_k=1).cards[0]
    assert shipped["id"].startswith("github:merge_pull_request")


def test_gatespec_rank_reports_no_tools_for_a_query_that_matches_none() -> None:
    # The browse answers the namespaces as a path browse; `gatespec rank` ranked no tool
    # (it used to fail looking the namespace card up as a tool).
    from gatespec.rank_cli import rank

    catalog = [{"server": "time", "name": "get_current_time", "description": "Current time"}]
    results, _status = rank(catalog, [{"id": 1, "query": "zzqxj"}, {"id": 2, "query": "time"}])
    assert results == [
        {"id": 1, "ranked": []},
        {"id": 2, "ranked": ["time/get_current_time"]},
    ]
