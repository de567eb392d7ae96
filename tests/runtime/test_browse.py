"""tool_browse (§3): query ranking, the path tree (every listed node browsable), errors."""

from __future__ import annotations

from collections import deque
from typing import Any

import pytest
from hypothesis import given, settings

from gatespec.browse import OTHER_CLUSTER, Browser, BrowseResponse, leaf_slug
from gatespec.cards import order_cards
from gatespec.catalog import Catalog
from gatespec.server.arguments import ArgumentChecker
from gatespec.tokens import count_tokens
from gatespec_surface import strategies
from gatespec_surface.budgets import (
    BROWSE_DEFAULT_TOP_K,
    CLUSTER_THRESHOLD,
    QUERY_MAX_CHARS,
    browse_cap_tokens,
)
from gatespec_surface.errors import ErrorCode, GatewayError
from gatespec_surface.grammars import is_path, is_path_segment
from gatespec_surface.models import BrowseResult
from gatespec_surface.render import render_browse_text, render_preamble
from gatespec_surface.validators import validate_choice_card

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}}}


@pytest.fixture(scope="module")
def browser(real_tools: dict[str, list[dict[str, Any]]]) -> Browser:
    return Browser(Catalog.build(real_tools))


def small_browser(names_by_server: dict[str, list[str]]) -> Browser:
    tools = {
        server: [{"name": n, "description": f"Does {n}.", "inputSchema": SCHEMA} for n in names]
        for server, names in names_by_server.items()
    }
    return Browser(Catalog.build(tools))


def check_response(resp: BrowseResponse) -> None:
    """Invariants of every response: valid cards, exact text, budget, structured form."""
    for card in resp.cards:
        validate_choice_card(card)
    preamble = resp.text.split("\n", 1)[0]
    assert resp.text == render_browse_text(preamble, resp.cards)
    assert count_tokens(resp.text) <= browse_cap_tokens(len(resp.cards))
    BrowseResult.model_validate(resp.structured)
    assert resp.structured["cards"] == resp.cards


def leaf_paths(browser: Browser) -> dict[str, str]:
    """tool_id -> the path of its leaf: the deepest tree node listing just that tool."""
    out: dict[str, str] = {}
    for key, node in browser.tree._nodes.items():
        if len(node.cards) == 1 and node.cards[0]["kind"] != "internal":
            tool_id = node.cards[0]["id"]
            if len(key) > out.get(tool_id, "").count("/"):
                out[tool_id] = "/" + "/".join(key)
    return out


def node_paths(browser: Browser) -> set[str]:
    """Every node of the tree, listed or not."""
    return {"/" + "/".join(key) for key in browser.tree._nodes}


def browse_with(browser: Browser, arguments: dict[str, Any]) -> BrowseResponse:
    """tool_browse as the server runs it: the arguments checked against the meta-tool's input
    schema (ArgumentChecker), then the browse."""
    args = ArgumentChecker("tool_browse").check(arguments)
    return browser.browse(args.get("query"), args.get("path"))


def error_code(call: Any) -> ErrorCode:
    with pytest.raises(GatewayError) as err:
        call()
    return err.value.code


# ---------------------------------------------------------------------- query


def test_query_browse_ranks_and_scores(browser: Browser) -> None:
    resp = browser.browse(query="create an issue on github")
    check_response(resp)
    assert 0 < len(resp.cards) <= BROWSE_DEFAULT_TOP_K
    assert resp.cards == order_cards(resp.cards)
    assert all(isinstance(c["score"], float) for c in resp.cards)
    assert resp.cards[0]["id"].startswith("github:create_issue#")
    assert resp.text.startswith(f"{len(resp.cards)} of ")
    assert "path" not in resp.structured


def test_query_browse_with_no_match_answers_the_namespaces(browser: Browser) -> None:
    # Never an empty list while the catalog has tools: the root of the tree, worded as the
    # path browse it is, so the model goes on browsing by path.
    resp = browser.browse(query="zzqxj")
    check_response(resp)
    assert resp.cards == browser.browse(path="/").cards != []
    assert resp.text.split("\n", 1)[0] == render_preamble(len(resp.cards), path="/")
    assert "browse a deeper path" in resp.text
    assert resp.structured["path"] == "/"


def test_query_browse_of_an_empty_catalog_points_at_path_browsing() -> None:
    resp = Browser(Catalog.build({})).browse(query="send a message")
    check_response(resp)
    assert resp.cards == [] and "path" in resp.text.split("\n", 1)[0]


def test_query_browse_handles_chinese(browser: Browser) -> None:
    resp = browser.browse(query="天气预报")
    check_response(resp)


def test_exactly_one_of_query_or_path(browser: Browser) -> None:
    assert error_code(lambda: browser.browse()) is ErrorCode.ARGS_INVALID
    assert error_code(lambda: browser.browse(query="x", path="/")) is ErrorCode.ARGS_INVALID
    for arguments in ({}, {"query": "x", "path": "/"}, {"query": "x", "k": 3}, {"path": None}):
        assert error_code(lambda a=arguments: browse_with(browser, a)) is ErrorCode.ARGS_INVALID
    assert error_code(lambda: browse_with(browser, {"query": None, "path": "/"})) is (
        ErrorCode.ARGS_INVALID
    )
    check_response(browse_with(browser, {"path": "/"}))


def test_bad_queries_are_args_invalid(browser: Browser) -> None:
    for query in ("", 5, ["x"]):
        assert error_code(lambda q=query: browser.browse(query=q)) is ErrorCode.ARGS_INVALID
    for k in (0, 10_000, True, "3"):
        assert error_code(lambda k=k: browser.browse(query="x", top_k=k)) is (
            ErrorCode.ARGS_INVALID
        )


def test_long_query_is_cut_not_refused(browser: Browser) -> None:
    # browse.query_max_chars is the length a query is cut to (issue 13: agents paste tasks).
    query = "create an issue on github"
    padded = query + " " + "x" * (QUERY_MAX_CHARS * 2)
    assert browser.browse(query=padded).cards == browser.browse(query=query).cards
    cut = browser.browse(query="x" * QUERY_MAX_CHARS + " github")  # "github" is cut off
    assert cut.structured.get("path") == "/"  # nothing matched: the namespaces instead


# ---------------------------------------------------------------------- paths


def test_root_lists_one_card_per_namespace(browser: Browser) -> None:
    resp = browser.browse(path="/")
    check_response(resp)
    assert [c["id"] for c in resp.cards] == [f"/{ns}" for ns in browser.catalog.namespaces()]
    assert all(c["kind"] == "internal" and not c["has_schema"] for c in resp.cards)
    assert browser.browse(path="/*").cards == resp.cards
    assert resp.structured["path"] == "/"


def test_large_namespaces_are_clustered(browser: Browser) -> None:
    for ns in browser.catalog.namespaces():
        cards = browser.browse(path=f"/{ns}").cards
        if len(browser.catalog.by_namespace(ns)) <= CLUSTER_THRESHOLD:
            assert all(c["kind"] == "tool" for c in cards)
        else:
            assert all(c["kind"] == "internal" for c in cards)
            assert all(is_path_segment(c["id"].rsplit("/", 1)[1]) for c in cards)
    github = [c["id"] for c in browser.browse(path="/github").cards]
    assert "/github/issue" in github
    assert len(github) <= CLUSTER_THRESHOLD


def test_walk_the_whole_tree(browser: Browser) -> None:
    """Every internal card's id is a browsable path; every tool is reached exactly once and
    its leaf path returns its single card."""
    reached: list[str] = []
    queue = deque(["/"])
    visited = set()
    leaf_of = leaf_paths(browser)
    while queue:
        path = queue.popleft()
        assert path not in visited
        visited.add(path)
        resp = browser.browse(path=path)
        check_response(resp)
        assert resp.cards, path
        assert browser.browse(path=path.rstrip("/") + "/*").cards == resp.cards
        for card in resp.cards:
            if card["kind"] == "internal":
                assert is_path(card["id"]) and card["id"].startswith(path.rstrip("/") + "/")
                queue.append(card["id"])
                continue
            reached.append(card["id"])
            leaf = leaf_of[card["id"]]
            assert leaf.rsplit("/", 1)[0] == path
            assert browser.browse(path=leaf).cards == [card]
            assert browser.browse(path=leaf + "/*").cards == [card]
    assert sorted(reached) == [i.id for i in browser.catalog.items()]
    leaves = {leaf_of[tool_id] for tool_id in reached}
    assert visited | leaves == node_paths(browser)  # the tree has no unlisted node


@settings(max_examples=200)
@given(strategies.invalid("path"))
def test_every_invalid_path_is_path_invalid(browser: Browser, path: str) -> None:
    assert error_code(lambda: browser.browse(path=path)) is ErrorCode.PATH_INVALID


@settings(max_examples=200)
@given(strategies.valid("path"))
def test_valid_paths_answer_or_name_the_nearest_node(browser: Browser, path: str) -> None:
    try:
        check_response(browser.browse(path=path))
    except GatewayError as err:
        assert err.code is ErrorCode.PATH_NOT_FOUND
        nearest = err.details["nearest"]
        assert path in err.message and repr(nearest) in err.message
        assert path.startswith(nearest)
        check_response(browser.browse(path=nearest))


def test_path_not_found_names_the_nearest_parent(browser: Browser) -> None:
    with pytest.raises(GatewayError) as err:
        browser.browse(path="/github/issue/nothing-here")
    assert err.value.code is ErrorCode.PATH_NOT_FOUND
    assert err.value.details == {"nearest": "/github/issue"}
    assert err.value.path == "/github/issue/nothing-here"
    with pytest.raises(GatewayError) as err:
        browser.browse(path="/no-such-namespace")
    assert err.value.details == {"nearest": "/"}


def test_non_string_path_is_path_invalid(browser: Browser) -> None:
    assert error_code(lambda: browser.browse(path=5)) is ErrorCode.PATH_INVALID


# ---------------------------------------------------------------------- leaves and clusters


def test_leaf_slugs() -> None:
    assert leaf_slug("getFile") == "getfile"
    assert leaf_slug("read.File-2") == "read-file-2"
    assert leaf_slug("_private") == "private"
    assert leaf_slug("__") == "tool"
    assert leaf_slug("a" * 128) == "a" * 64


def test_colliding_leaf_slugs_get_a_suffix() -> None:
    b = small_browser({"fs": ["get.file", "get-file", "Get_File", "get_file"]})
    cards = b.browse(path="/fs").cards
    leaf_of = leaf_paths(b)
    paths = [leaf_of[c["id"]] for c in cards]
    assert len(set(paths)) == 4
    for card, path in zip(cards, paths, strict=True):
        assert is_path(path)
        assert b.browse(path=path).cards == [card]


def test_clusters_group_by_name_words() -> None:
    names = [f"{verb}_{obj}" for verb in ("get", "list", "create", "delete") for obj in "abcdefg"]
    names += ["get_issue", "list_issues", "create_issue", "close_issue", "misc_tool"]
    b = small_browser({"big": names})
    assert len(names) > CLUSTER_THRESHOLD
    clusters = [c["id"] for c in b.browse(path="/big").cards]
    assert "/big/issue" in clusters
    assert all(is_path(c) for c in clusters)
    issue = {c["name"] for c in b.browse(path="/big/issue").cards}
    assert issue == {"get_issue", "list_issues", "create_issue", "close_issue"}
    other = {c["name"] for c in b.browse(path=f"/big/{OTHER_CLUSTER}").cards}
    assert other == {"misc_tool"}


def test_a_namespace_without_shared_words_stays_flat() -> None:
    names = [f"tool{chr(97 + i)}{chr(97 + j)}" for i in range(5) for j in range(6)]
    b = small_browser({"flat": names})
    cards = b.browse(path="/flat").cards
    assert len(cards) == len(names) and all(c["kind"] == "tool" for c in cards)


def test_tree_is_independent_of_input_order() -> None:
    names = [f"{verb}_{obj}" for verb in ("get", "list", "set") for obj in "abcdefghij"]
    a = small_browser({"x": names, "y": ["one", "two"]})
    b = small_browser({"y": ["two", "one"], "x": list(reversed(names))})
    assert node_paths(a) == node_paths(b)
    for path in sorted(node_paths(a)):
        assert a.browse(path=path).cards == b.browse(path=path).cards
