"""Behaviour of gatespec.ranking (tool_browse ranking). No timing assertions here: speed is
measured by bench/retrieval.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from gatespec.ranking import (
    DEFAULT_FIELD_WEIGHTS,
    Bm25Index,
    Document,
    Ranker,
    schema_fields,
    tokenize,
)
from gatespec.ranking.text import exact_name_keys, index_stem, stem
from gatespec_surface.budgets import QUERY_MAX_CHARS

CATALOG = [
    Document(
        "github:create_issue#3a91c7d2",
        "create_issue",
        "Create a new issue in a GitHub repository.",
        ("owner", "repo", "title", "body", "assignees", "labels"),
        "github",
    ),
    Document(
        "github:add_issue_comment#11",
        "add_issue_comment",
        "Add a comment to a specific issue in a GitHub repository.",
        ("owner", "repo", "issue_number", "body"),
        "github",
    ),
    Document(
        "github:list_issues#12",
        "list_issues",
        "List issues in a GitHub repository. Filter by state and labels.",
        ("owner", "repo", "state", "labels"),
        "github",
    ),
    Document(
        "github:update_issue#13",
        "update_issue",
        "Update an existing issue: title, body, state, labels.",
        ("owner", "repo", "issue_number", "title", "body", "state"),
        "github",
    ),
    Document(
        "github:create_pull_request#14",
        "create_pull_request",
        "Create a new pull request in a GitHub repository.",
        ("owner", "repo", "title", "head", "base"),
        "github",
    ),
    Document(
        "filesystem:read_text_file#21",
        "read_text_file",
        "Read the complete contents of a file from the file system as text.",
        ("path", "head", "tail"),
        "filesystem",
    ),
    Document(
        "filesystem:write_file#22",
        "write_file",
        "Create a new file or completely overwrite an existing file with new content.",
        ("path", "content"),
        "filesystem",
    ),
    Document(
        "bing-cn-mcp:bing_search#31",
        "bing_search",
        "使用必应搜索指定的关键词，并返回搜索结果列表，包括标题、链接、摘要和ID",
        ("query", "num_results"),
        "bing-cn-mcp",
    ),
    Document(
        "12306-mcp:get-tickets#32",
        "get-tickets",
        "查询12306余票信息。",
        ("date", "fromStation", "toStation"),
        "12306-mcp",
    ),
    Document("weather:getForecast#41", "getForecast", "", ("latitude", "longitude"), "weather"),
    Document("misc:noop#51", "noop", ""),
]


@pytest.fixture(scope="module")
def index() -> Bm25Index:
    return Bm25Index(CATALOG)


def ids(results: list[tuple[str, float]]) -> list[str]:
    return [doc_id for doc_id, _ in results]


# --------------------------------------------------------------------------- tokenizer


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("create_issue", ["create", "issue"]),
        ("readTextFile", ["read", "text", "file"]),
        ("read-text-file", ["read", "text", "file"]),
        ("fs.read_file", ["fs", "read", "file"]),
        ("github/create_issue", ["github", "create", "issue"]),
        ("server:tool_name", ["server", "tool", "name"]),
        ("getHTTPResponse", ["get", "http", "response"]),
        ("calculate_BMI", ["calculate", "bmi"]),
        ("base64 getS3Object ipv4", ["base64", "get", "s3", "object", "ipv4"]),
        ("12306-mcp", ["12306", "mcp"]),
        ("UPPER_CASE_NAME", ["upper", "case", "name"]),
    ],
)
def test_tokenizer_splits_identifiers(text: str, expected: list[str]) -> None:
    # The words are the oracle; their stems are whatever Snowball makes of them.
    assert tokenize(text) == [index_stem(w) for w in expected]
    assert tokenize(text, stemming=False) == expected


def test_tokenizer_lowercases_and_drops_stop_words() -> None:
    assert tokenize("Read THE contents of a File", stemming=False) == ["read", "contents", "file"]
    assert tokenize("the of and to") == []
    assert tokenize("") == []
    assert tokenize("  \t\n ") == []


def test_index_stemming_keeps_distinct_words_apart() -> None:
    # Issue 13: "news" stemmed to "new" matched every tool that creates something new.
    assert index_stem("news") != index_stem("new")
    assert tokenize("latest news") == ["latest", "news"]
    assert index_stem("creating") == index_stem("created") == index_stem("creates")
    assert index_stem("issues") == index_stem("issue")
    assert index_stem("base64") == "base64"  # not letters only: unchanged


def test_tree_stemming_is_optional() -> None:
    assert stem("issues") == stem("issue")
    assert stem("queries") == "query"
    assert stem("creating") == stem("created") == stem("creates") == stem("create")
    assert stem("status") == "status"
    assert stem("run") == "run"
    assert tokenize("listing issues", stemming=False) == ["listing", "issues"]


def test_tokenizer_cjk_unigrams_and_bigrams() -> None:
    assert tokenize("必应搜索") == ["必", "应", "搜", "索", "必应", "应搜", "搜索"]
    # Mixed scripts: CJK runs are n-grammed, identifiers are still split.
    terms = tokenize("查询12306余票 get_tickets")
    assert {"查询", "余票", "12306", "get", "ticket"} <= set(terms)


def test_tokenizer_other_scripts_and_fullwidth() -> None:
    assert tokenize("Café résumé naïve_mode") == ["café", "résumé", "naïve", "mode"]
    assert tokenize("ｆｕｌｌ－ｗｉｄｔｈ") == ["full", "width"]  # NFKC
    assert tokenize("😀 «quoted»", stemming=False) == ["quoted"]


def test_exact_name_keys() -> None:
    assert exact_name_keys("create_issue") == ["=create_issue"]
    assert exact_name_keys("github/create_issue") == ["=github/create_issue", "=create_issue"]
    assert exact_name_keys("use `read_text_file` please") == ["=read_text_file"]
    # Plain words in a longer query are not taken as tool names.
    assert exact_name_keys("read a file") == []
    assert exact_name_keys("noop") == ["=noop"]


def test_schema_fields() -> None:
    schema = {"type": "object", "properties": {"owner": {}, "repo": {}}, "required": ["owner"]}
    assert schema_fields(schema) == ("owner", "repo")
    assert schema_fields({"type": "object"}) == ()
    assert schema_fields(None) == ()


# --------------------------------------------------------------------------- search


@pytest.mark.parametrize(
    "doc",
    CATALOG,
    ids=[d.name for d in CATALOG],
)
def test_exact_name_query_ranks_that_tool_first(index: Bm25Index, doc: Document) -> None:
    assert ids(index.search(doc.name, 3))[0] == doc.id
    assert ids(index.search(f"{doc.namespace}/{doc.name}", 3))[0] == doc.id


def test_exact_name_beats_longer_names_sharing_its_words(index: Bm25Index) -> None:
    results = index.search("create_issue")
    assert ids(results)[0] == "github:create_issue#3a91c7d2"
    assert results[0][1] > results[1][1]


def test_natural_language_query(index: Bm25Index) -> None:
    assert ids(index.search("open a pull request", 1)) == ["github:create_pull_request#14"]
    assert ids(index.search("read the contents of a text file", 1)) == [
        "filesystem:read_text_file#21"
    ]
    assert ids(index.search("comment on an issue", 1)) == ["github:add_issue_comment#11"]


def test_schema_property_names_are_searchable(index: Bm25Index) -> None:
    assert ids(index.search("latitude longitude", 1)) == ["weather:getForecast#41"]


def test_namespace_is_searchable_and_weight_zero_disables_it() -> None:
    assert set(ids(Bm25Index(CATALOG).search("filesystem"))) == {
        "filesystem:read_text_file#21",
        "filesystem:write_file#22",
    }
    no_ns = Bm25Index(CATALOG, field_weights={"namespace": 0.0})
    assert no_ns.search("filesystem") == []


def test_cjk_query_matches_chinese_description(index: Bm25Index) -> None:
    assert ids(index.search("搜索", 1)) == ["bing-cn-mcp:bing_search#31"]
    assert ids(index.search("必应搜索关键词", 1)) == ["bing-cn-mcp:bing_search#31"]
    assert ids(index.search("余票查询", 1)) == ["12306-mcp:get-tickets#32"]
    assert ids(index.search("搜", 1)) == ["bing-cn-mcp:bing_search#31"]  # single character


def test_empty_and_unmatched_queries(index: Bm25Index) -> None:
    assert index.search("") == []
    assert index.search("   \n\t") == []
    assert index.search("the of and") == []  # only stop words
    assert index.search("zzzunknownzzz") == []
    assert index.search("create_issue", k=0) == []
    assert index.search("create_issue", k=-1) == []


def test_k_limits_results(index: Bm25Index) -> None:
    everything = index.search("github issue file repository", k=100)
    assert 5 <= len(everything) < len(CATALOG)
    assert index.search("github issue file repository", k=2) == everything[:2]
    assert len(index.search("github issue file repository")) == min(10, len(everything))


def test_scores_are_rounded_sorted_and_positive(index: Bm25Index) -> None:
    results = index.search("create a new issue in a repository", k=100)
    assert results
    for _, score in results:
        assert isinstance(score, float)
        assert score > 0
        assert round(score, 4) == score
    keys = [(-score, doc_id) for doc_id, score in results]
    assert keys == sorted(keys)


def test_ties_are_broken_by_id_ascending() -> None:
    def twin(doc_id: str) -> Document:
        return Document(doc_id, "send_message", "Send a chat message.", ("text",), "chat")

    docs = [
        twin("z-server:send_message"),
        twin("a-server:send_message"),
        twin("m-server:send_message"),
        Document("other:ping", "ping", "Check that the chat server is alive."),
    ]
    for order in (docs, list(reversed(docs))):
        results = Bm25Index(order).search("send a message")
        assert ids(results) == [
            "a-server:send_message",
            "m-server:send_message",
            "z-server:send_message",
        ]
        assert len({score for _, score in results}) == 1


def test_tie_at_the_cut_is_broken_by_id() -> None:
    docs = [
        Document(f"ns{i:02d}:echo", "echo", "Echo the input back.", namespace=f"ns{i:02d}")
        for i in reversed(range(30))
    ]
    assert ids(Bm25Index(docs).search("echo", k=3)) == ["ns00:echo", "ns01:echo", "ns02:echo"]


def test_same_results_across_builds(index: Bm25Index) -> None:
    again = Bm25Index(list(CATALOG))
    for query in ("create issue", "file", "搜索", "github/list_issues", "labels state"):
        assert again.search(query, 50) == index.search(query, 50)


_DETERMINISM_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from gatespec.ranking import Bm25Index, Document
    docs = [Document(**d) for d in json.loads(sys.stdin.read())]
    index = Bm25Index(docs)
    queries = ["create issue", "new file content", "搜索结果", "repository labels state",
               "github/create_issue", "read_text_file", "owner repo title body"]
    print(json.dumps([index.search(q, 20) for q in queries]))
    """
)


def test_deterministic_across_hash_seeds() -> None:
    payload = json.dumps(
        [
            {
                "id": d.id,
                "name": d.name,
                "description": d.description,
                "fields": list(d.fields),
                "namespace": d.namespace,
            }
            for d in CATALOG
        ]
    )
    outputs = set()
    for seed in ("0", "1", "12345", "random"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [sys.executable, "-c", _DETERMINISM_SCRIPT],
            input=payload,
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        outputs.add(proc.stdout)
    assert len(outputs) == 1
    assert json.loads(outputs.pop())[0]  # and it found something


def test_len_and_empty_index() -> None:
    assert len(Bm25Index(CATALOG)) == len(CATALOG)
    empty = Bm25Index([])
    assert len(empty) == 0
    assert empty.search("anything") == []


def test_documents_without_description_or_fields(index: Bm25Index) -> None:
    assert ids(index.search("noop", 1)) == ["misc:noop#51"]
    assert ids(index.search("forecast", 1)) == ["weather:getForecast#41"]


def test_fields_may_be_any_sequence() -> None:
    doc = Document("x:t", "t", "", fields=["alpha_beta"], namespace="x")  # type: ignore[arg-type]
    assert ids(Bm25Index([doc]).search("beta")) == ["x:t"]


def test_invalid_arguments() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        Bm25Index([CATALOG[0], CATALOG[0]])
    with pytest.raises(ValueError, match="unknown field"):
        Bm25Index(CATALOG, field_weights={"title": 1.0})
    with pytest.raises(ValueError):
        Bm25Index(CATALOG, field_weights={"name": -1.0})
    with pytest.raises(ValueError):
        Bm25Index(CATALOG, b=1.5)
    with pytest.raises(ValueError):
        Bm25Index(CATALOG, k1=-0.1)


def test_extreme_parameters_do_not_break(index: Bm25Index) -> None:
    for kwargs in ({"b": 0.0}, {"b": 1.0}, {"k1": 0.0}):
        results = Bm25Index(CATALOG, **kwargs).search("create issue", 3)  # type: ignore[arg-type]
        assert results and all(s >= 0 for _, s in results)


def test_field_weights_are_read_only(index: Bm25Index) -> None:
    assert dict(index.field_weights) == dict(DEFAULT_FIELD_WEIGHTS)
    with pytest.raises(TypeError):
        index.field_weights["name"] = 9.0  # type: ignore[index]


def test_overlong_query_is_cut_not_rejected() -> None:
    ranker = Ranker(CATALOG, semantic=False)
    query = "create issue " + "x" * (QUERY_MAX_CHARS * 3)
    assert ids(ranker.search_counted(query, 1)[0]) == ["github:create_issue#3a91c7d2"]
    # Words past the cut are not read.
    assert ranker.search_counted("x" * QUERY_MAX_CHARS + " create issue", 1) == ([], 0)


def test_only_ranks_among_those_ids(index: Bm25Index) -> None:
    # A namespace filter: the hits and the count are those of the listed ids alone, in the
    # unfiltered order; an id the ranker does not hold is ignored.
    ranker = Ranker(CATALOG, semantic=False)
    everything, _ = ranker.search_counted("issue", 10)
    only = {"github:list_issues#12", "github:update_issue#13", "nowhere:gone#1"}
    hits, total = ranker.search_counted("issue", 10, only)
    assert [h for h, _ in hits] == [h for h, _ in everything if h in only]
    assert total == len(hits) == 2
