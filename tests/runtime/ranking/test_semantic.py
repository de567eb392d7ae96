"""The semantic half of the ranker on small catalogs: the real model (all-MiniLM-L6-v2 int8 on
onnxruntime) loaded on the first query and not before, the disk cache, the lexical ranking
until the model is ready, and the `gatespec rank` command. Quality on real data is measured by
bench/retrieval.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gatespec import cli
from gatespec.rank_cli import ranking_status
from gatespec.ranking import Document, Ranker, embedding_text
from gatespec.ranking import encoder as encoder_module
from gatespec.ranking import ranker as ranker_module
from gatespec.ranking import semantic as semantic_module
from gatespec.ranking.encoder import OFF_ENV
from gatespec.ranking.loading import load_encoder, reset_encoder
from gatespec.ranking.vector_cache import VectorCache

CATALOG = [
    Document.of_tool(
        "fs/list_directory",
        "list_directory",
        "List the entries of a directory on disk.",
        "fs",
        {"type": "object", "properties": {"path": {"type": "string"}}},
    ),
    Document.of_tool(
        "fs/write_file", "write_file", "Write text to a file, replacing it.", "fs", {}
    ),
    Document.of_tool(
        "time/get_current_time", "get_current_time", "Current time in a timezone.", "time", {}
    ),
    Document.of_tool(
        "news/get_headlines", "get_headlines", "Latest headlines from news outlets.", "news", {}
    ),
    Document.of_tool("math/add", "add", "Add two numbers.", "math", {}),
]


@pytest.fixture
def semantic_on(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    monkeypatch.setenv("GATESPEC_SEMANTIC", "on")
    monkeypatch.setenv("GATESPEC_CACHE_DIR", str(tmp_path))
    reset_encoder()
    semantic_module.forget_recent()  # vectors an earlier test left in memory
    yield tmp_path
    reset_encoder()


def top(ranker: Ranker, query: str) -> str | None:
    hits, _ = ranker.search_counted(query, 3)
    return hits[0][0] if hits else None


def test_vectors_are_unit_length_and_related_texts_are_closer(semantic_on: Path) -> None:
    encoder, status = load_encoder()
    assert encoder is not None and status.on, status.detail
    v = encoder.encode(["show what is inside a folder", "list a directory", "bake a cake"])
    assert abs(float(v[0] @ v[0]) - 1.0) < 1e-4
    assert float(v[0] @ v[1]) > float(v[0] @ v[2]) + 0.2


def test_a_long_query_is_cut_as_the_tokenizer_itself_cuts() -> None:
    from tokenizers import Tokenizer

    reference = Tokenizer.from_file(
        str(Path(encoder_module.__file__).parent.parent / "data" / encoder_module._TOKENIZER_FILE)
    )
    reference.enable_truncation(max_length=encoder_module.QUERY_MAX_TOKENS)
    reference.enable_padding(pad_id=0, pad_token="[PAD]")
    texts = ["list a directory", "find the weather, then book a flight. " * 40, "x"]
    ids, mask = encoder_module.WordPieces().batch(texts, encoder_module.QUERY_MAX_TOKENS)
    expected = reference.encode_batch(texts)
    assert ids.tolist() == [e.ids for e in expected]
    assert mask.tolist() == [e.attention_mask for e in expected]
    assert ids.shape[1] == encoder_module.QUERY_MAX_TOKENS


_HEAVY_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from gatespec.browse import Browser
    from gatespec.catalog import Catalog
    from gatespec.rank_cli import ranking_status

    def loaded():
        return [m for m in ("numpy", "onnxruntime", "tokenizers") if m in sys.modules]

    status = ranking_status()
    Browser(Catalog.build({}))  # the gateway's snapshot before any upstream has listed
    idle = loaded()
    tool = {"name": "list_directory", "description": "List a directory.",
            "inputSchema": {"type": "object"}}
    browser = Browser(Catalog.build({"fs": [tool]}))
    browser.browse(path="/fs")
    by_path = loaded()
    browser.browse(query="what is inside this folder")
    assert browser.ranker.wait(60)
    print(json.dumps([status, idle, by_path, loaded(), browser.ranker.status]))
    """
)


def test_nothing_heavy_loads_before_a_query_ranking() -> None:
    # A fresh process: what gatespec serve's start-up line and a path browse import.
    env = {**os.environ, "GATESPEC_SEMANTIC": "on"}  # the cache dir stays the test one
    run = subprocess.run(
        [sys.executable, "-c", _HEAVY_SCRIPT], env=env, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    status, idle, by_path, after_query, ranker_status = json.loads(run.stdout)
    assert status.startswith("hybrid ranking available") and "first query" in status
    assert idle == []
    assert by_path == []  # no lexical index (numpy) nor model until the first query
    assert after_query == ["numpy", "onnxruntime", "tokenizers"]
    assert ranker_status.startswith("hybrid ranking: BM25")


def test_the_model_loads_on_the_first_query_not_before(
    semantic_on: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loads: list[int] = []
    real = ranker_module.load_encoder

    def counted() -> Any:
        loads.append(1)
        return real()

    monkeypatch.setattr(ranker_module, "load_encoder", counted)
    assert "available" in ranking_status() and "first query" in ranking_status()
    ranker = Ranker(CATALOG)
    assert loads == [] and not ranker.hybrid and "first query" in ranker.status
    # "folder" never appears in the catalog; "directory" does (issue 13's vocabulary gap).
    query = "what is inside this folder"
    assert top(Ranker(CATALOG, semantic=False), query) != "fs/list_directory"
    ranker.search_counted(query, 3)  # answered lexically; starts the model's load
    assert ranker.wait(60) and loads == [1]
    assert ranker.hybrid and ranker.status.startswith("hybrid ranking: BM25")
    assert top(ranker, query) == "fs/list_directory"
    assert ranker.search_counted("zzqxj", 5) == ([], 0)  # a query that means nothing
    assert ranking_status().startswith("hybrid ranking: BM25")  # the load's own verdict


def test_embeddings_are_cached_by_content(
    semantic_on: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Ranker(CATALOG, background=False)  # fills the (empty, per-test) disk cache
    encoder, _ = load_encoder()
    assert encoder is not None
    encoded: list[str] = []
    rows_read: list[int] = []
    real = encoder.encode
    real_get_many = VectorCache.get_many

    def spy(texts: Any, *, query: bool = False) -> Any:
        if not query:
            encoded.extend(texts)
        return real(texts, query=query)

    def get_many(self: VectorCache, model: str, keys: Any) -> Any:
        rows_read.append(len(keys))
        return real_get_many(self, model, keys)

    monkeypatch.setattr(encoder, "encode", spy)
    monkeypatch.setattr(VectorCache, "get_many", get_many)
    semantic_module.forget_recent()  # as after a restart: only the disk cache is left
    again = Ranker(CATALOG, background=False)
    assert encoded == [] and rows_read == []  # the whole catalog's matrix, in one read
    assert again.hybrid and top(again, "what is inside this folder") == "fs/list_directory"
    semantic_module.forget_recent()
    changed = [*CATALOG[:-1], Document.of_tool("math/add", "add", "Add up numbers.", "math", {})]
    Ranker(changed, background=False)
    assert encoded == [embedding_text(changed[-1])]  # only the changed tool
    assert rows_read == [len(CATALOG)]  # a new catalog: its tools come one by one


def test_a_catalog_replaced_while_encoding_stops_its_encode(
    semantic_on: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    encoder, _ = load_encoder()
    assert encoder is not None
    entered, gate = threading.Event(), threading.Event()
    chunks: list[int] = []
    real = encoder.encode

    def held(texts: Any, *, query: bool = False) -> Any:
        if not query:
            chunks.append(len(texts))
            entered.set()
            gate.wait(30)
        return real(texts, query=query)

    monkeypatch.setattr(encoder, "encode", held)
    monkeypatch.setattr(semantic_module, "_CHUNK", 2)
    ranker = Ranker(CATALOG)
    ranker.search_counted("folder", 3)
    assert entered.wait(30)  # the worker encodes its first chunk of two tools
    assert not ranker.hybrid and "while the semantic index is built" in ranker.status
    del ranker  # a refresh replaced the catalog
    gate.set()
    replacement = Ranker(CATALOG[:2], background=False)  # waits for the old build to stop
    assert replacement.hybrid
    # The old build stopped after its first chunk, which the replacement found cached.
    assert chunks == [2]


def test_running_without_the_model_is_stated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATESPEC_SEMANTIC", "off")
    reset_encoder()
    try:
        ranker = Ranker(CATALOG)
        ranker.search_counted("folder", 3)
        assert ranker.wait(1) and ranker.semantic is None and not ranker.hybrid
        assert ranker.status.startswith("lexical ranking only")
        assert ranking_status() == f"lexical ranking only ({OFF_ENV}=off)"
    finally:
        reset_encoder()


def test_rank_command_writes_rankings_and_prints_metrics(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GATESPEC_SEMANTIC", "off")
    reset_encoder()
    catalog = [
        {
            "server": "fs",
            "name": "list_directory",
            "description": "List a directory.",
            "inputSchema": {"type": "object", "properties": {}},
        },
        {
            "server": "time",
            "name": "get_current_time",
            "description": "Current time.",
            "inputSchema": {"type": "object", "properties": {}},
        },
    ]
    queries = [
        {"id": "a", "query": "list directory", "gold": ["fs/list_directory"]},
        {"id": "b", "query": "current time", "gold": ["fs/list_directory"]},
    ]
    (tmp_path / "c.json").write_text(json.dumps(catalog))
    (tmp_path / "q.json").write_text(json.dumps(queries))
    out = tmp_path / "out.json"
    argv = ["rank", "--catalog", str(tmp_path / "c.json"), "--queries", str(tmp_path / "q.json")]
    try:
        assert cli.main([*argv, "--k", "1", "--out", str(out)]) == 0
        assert json.loads(out.read_text()) == [
            {"id": "a", "ranked": ["fs/list_directory"]},
            {"id": "b", "ranked": ["time/get_current_time"]},
        ]
        err = capsys.readouterr().err
        assert "lexical ranking only" in err
        assert "hit@1 0.5, hit@5 0.5, mrr 0.5, coverage@5 0.5" in err
        assert cli.main([*argv, "--k", "0"]) == 2
    finally:
        reset_encoder()


def test_a_restricted_ranker_ranks_as_one_built_from_its_tools(semantic_on: Path) -> None:
    """An identity's view (AM-ACCESS-NO-LEAK) shares the catalog's vectors, encodes nothing
    again, and ranks exactly as a ranker built from only the visible tools."""
    whole = Ranker(CATALOG, background=False)
    visible = {"fs/write_file", "news/get_headlines", "math/add"}
    view = whole.restricted(visible)
    alone = Ranker([d for d in CATALOG if d.id in visible], background=False)
    assert view.hybrid and alone.hybrid
    for query in ("what is inside this folder", "latest news", "sum", "time in Tokyo"):
        assert view.search_counted(query, 5) == alone.search_counted(query, 5)
    hits, _ = whole.search_counted("latest news", 5, only={"news/get_headlines", "math/add"})
    assert {tool for tool, _ in hits} <= {"news/get_headlines", "math/add"}
