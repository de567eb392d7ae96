"""Seed 000 §2 (ChoiceCards, budgets, truncation, ordering) and §5 ordering."""

import pytest

from tollbooth.surface import (
    CACHE_BREAKPOINT_ID,
    PERMITTED_FIELDS,
    CatalogError,
    ChoiceCard,
    browse_hard_cap,
    build_card,
    cache_stable_order,
    card_tokens,
    count_tokens,
    encode,
    order_cards,
    render_browse,
    render_card,
    truncate_description,
    validate_card_dict,
)

LONG = (
    "Create a new issue in a GitHub repository. Supports labels, assignees and milestones. "
    "Returns the created issue number and its URL! Also handles templates? Yes, and many other things "
    "that make the description far longer than any reasonable token budget would allow for a card."
)


def test_count_tokens_is_exact_cl100k():
    assert encode("hello world") == [15339, 1917]
    assert count_tokens("hello world") == 2
    assert count_tokens("<|endoftext|>") > 1  # special text treated as plain text
    assert count_tokens("") == 0


def test_truncate_within_budget_is_verbatim():
    assert truncate_description("Short. Text!", 50) == "Short. Text!"


def test_truncate_prefers_longest_sentence_prefix():
    text = "One two three. Four five six! Seven eight nine ten eleven twelve?"
    budget = count_tokens("One two three. Four five six!")
    assert truncate_description(text, budget) == "One two three. Four five six!"
    assert truncate_description(text, budget - 1) == "One two three."


def test_truncate_hard_cut_appends_ellipsis():
    text = "word " * 100
    out = truncate_description(text, 10)
    assert out.endswith("\u2026")
    head = out[:-1]
    toks = encode(text)
    # cut at the byte offset where the first budget-1 tokens end
    assert head == text.encode()[: len(b"".join(__import__("tollbooth.tokens", fromlist=["x"]).token_bytes(toks[:9])))].decode()
    assert count_tokens(out) <= 10
    assert truncate_description(text, 10) == out  # deterministic


def test_truncate_hard_cut_never_splits_utf8():
    text = "日本語のテキスト" * 40
    out = truncate_description(text, 7)
    assert out.endswith("\u2026")
    out.encode("utf-8")  # valid
    assert text.startswith(out[:-1])


def test_truncate_tiny_budget():
    assert truncate_description("abc def ghi jkl", 1) == "\u2026"


def test_build_card_truncates_only_description_and_meets_target():
    card = build_card("github:create_issue@1.4.0", "create_issue", LONG, tags=["destructive"], has_schema=True,
                      side_effects=True)
    assert card.name == "create_issue" and card.tags == ("destructive",) and card.has_schema
    assert card_tokens(card) <= 60
    assert LONG.startswith(card.description.rstrip("\u2026"))
    d = card.to_dict()
    assert set(d) <= set(PERMITTED_FIELDS)
    assert "score" not in d and d["namespace"] == "github"


def test_card_json_has_no_schema_and_score_only_in_json():
    card = build_card("mcp:x#00000000", "x", "Does x.", has_schema=True, score=0.75)
    assert card.to_dict()["score"] == 0.75
    assert "0.75" not in render_card(card)
    for banned in ("inputSchema", "args_schema", "output_schema", "outputSchema", "annotations", "_meta"):
        assert banned not in card.to_dict()


def test_render_conditional_fields():
    base = build_card("mcp:x#00000000", "x", "Does x.")
    assert "cost" not in render_card(base) and "side effects" not in render_card(base)
    rich = build_card("mcp:x#00000000", "x", "Does x.", cost_hint=0.5, side_effects=True)
    assert "cost: 0.5" in render_card(rich) and "side effects" in render_card(rich)


def test_description_flattened_to_single_line():
    card = build_card("mcp:x#00000000", "x", "line one\nline two\t end")
    assert card.description == "line one line two end"


@pytest.mark.parametrize(
    "extra",
    [{"inputSchema": {}}, {"args_schema": {}}, {"outputSchema": {}}, {"annotations": {}}, {"_meta": {}},
     {"examples": []}, {"url": "http://x"}],
)
def test_banned_fields_rejected(extra):
    d = {**build_card("mcp:x#00000000", "x", "d").to_dict(), **extra}
    with pytest.raises(CatalogError) as ei:
        validate_card_dict(d)
    assert ei.value.code == "CARD_INVALID"


@pytest.mark.parametrize(
    "tags",
    [["a", "b", "c", "d", "e", "f"], ["x" * 25], ["inputSchema"], ['{"type":"object"}'], ["http://srv"]],
)
def test_tag_rules(tags):
    with pytest.raises(CatalogError):
        build_card("mcp:x#00000000", "x", "d", tags=tags)


def test_tags_sorted_deduped():
    assert build_card("mcp:x#00000000", "x", "d", tags=["b", "a", "b"]).tags == ("a", "b")
    with pytest.raises(CatalogError):
        validate_card_dict({**build_card("mcp:x#00000000", "x", "d").to_dict(), "tags": ["b", "a"]})


def test_name_and_kind_bounds():
    with pytest.raises(CatalogError):
        build_card("mcp:x#00000000", "n" * 65, "d")
    with pytest.raises(CatalogError):
        build_card("mcp:x#00000000", "x", "d", kind="widget")
    with pytest.raises(CatalogError):
        build_card("mcp:x#00000000", "x", "d", namespace="other")


def test_card_over_hard_cap_raises():
    ns = "q" + "zx" * 31
    name = "Zq" + "xQz9" * 15
    tool_id = f"{ns}:{name}@" + "9Zq" * 10
    with pytest.raises(CatalogError) as ei:
        build_card(tool_id, name[:64], "Some description.", tags=["a1b2c3d4e5f6g7h8i9j0k1l2", "zz9yy8xx7ww6"],
                   cost_hint=1.2345, side_effects=True)
    assert ei.value.code == "CARD_OVER_BUDGET"


def _c(i, s=None):
    return ChoiceCard(id=i, name=i.split(":")[1], namespace=i.split(":")[0], score=s)


def test_order_by_score_desc_then_id_asc():
    cards = [_c("b:x", 0.5), _c("a:x", 0.5), _c("c:x", 0.9), _c("d:x", None)]
    assert [c.id for c in order_cards(cards)] == ["c:x", "a:x", "b:x", "d:x"]


def test_cache_stable_order_and_marker_rules():
    cards = [_c("c:x", 0.9), _c("a:x", 0.1), _c("b:x", 0.5)]
    # first browse: all new -> no marker, id ascending
    assert [c.id for c in cache_stable_order(cards, set())] == ["a:x", "b:x", "c:x"]
    # all seen -> no marker
    assert [c.id for c in cache_stable_order(cards, {"a:x", "b:x", "c:x"})] == ["a:x", "b:x", "c:x"]
    # mixed -> seen (asc), marker, new (asc)
    out = cache_stable_order(cards, {"c:x"})
    assert [c.id for c in out] == ["c:x", CACHE_BREAKPOINT_ID, "a:x", "b:x"]
    assert out[1].kind == "internal"


def test_browse_response_budget():
    cards = [build_card(f"mcp:t{i}#0000000{i}", f"t{i}", LONG, has_schema=True) for i in range(5)]
    text = render_browse(cards)
    assert count_tokens(text) <= browse_hard_cap(5) == 80 * 5 + 32
    assert count_tokens(text) <= 60 * 5 + 32
    assert count_tokens(render_browse([])) <= 32
