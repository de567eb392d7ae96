"""The semantic half of the ranker on small catalogs: the real model (all-MiniLM-L6-v2 int8 on
onnxruntime), the disk cache, the lexical fallback while a large catalog is encoded, and the
`gatespec rank` command. Quality on real data is measured by bench/retrieval.py."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gatespec import cli
from gatespec.ranking import Document, Ranker, embedding_text
from gatespec.ranking import semantic as semantic_module
from gatespec.ranking.encoder import load_encoder, reset_encoder
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
    semantic_module._recent.clear()  # vectors an earlier test left in memory
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


def test_hybrid_ranking_finds_a_tool_the_words_never_name(semantic_on: Path) -> None:
    # "folder" never appears in the catalog; "directory" does (issue 13's vocabulary gap).
    query = "what is inside this folder"
    assert top(Ranker(CATALOG, semantic=False), query) != "fs/list_directory"
    ranker = Ranker(CATALOG)
    assert ranker.hybrid and "hybrid" in ranker.status
    assert top(ranker, query) == "fs/list_directory"
    # A query that means nothing still matches nothing.
    assert ranker.search_counted("zzqxj", 5) == ([], 0)


def test_embeddings_are_cached_by_content(
    semantic_on: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Ranker(CATALOG)  # fills the (empty, per-test) disk cache
    encoder, _ = load_encoder()
    assert encoder is not None
    encoded: list[str] = []
    real = encoder.encode

    def spy(texts: Any, *, query: bool = False) -> Any:
        if not query:
            encoded.extend(texts)
        return real(texts, query=query)

    monkeypatch.setattr(encoder, "encode", spy)
    semantic_module._recent.clear()  # as after a restart: only the disk cache is left
    Ranker(CATALOG)
    assert encoded == []
    changed = [*CATALOG[:-1], Document.of_tool("math/add", "add", "Add up numbers.", "math", {})]
    Ranker(changed)
    assert encoded == [embedding_text(changed[-1])]
    assert len(VectorCache(semantic_on).get_many(encoder.model_id, [b"x" * 32])) == 0


def test_large_first_encode_serves_lexically_until_ready(
    semantic_on: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(semantic_module, "SYNC_LIMIT", 1)
    encoder, _ = load_encoder()
    assert encoder is not None
    gate = threading.Event()
    real = encoder.encode

    def held(texts: Any, *, query: bool = False) -> Any:
        if not query:
            gate.wait(30)
        return real(texts, query=query)

    monkeypatch.setattr(encoder, "encode", held)
    ranker = Ranker(CATALOG)
    assert not ranker.hybrid and "lexical" in ranker.status
    assert top(ranker, "what is inside this folder") != "fs/list_directory"
    gate.set()
    assert ranker.semantic is not None and ranker.semantic.wait(60)
    assert top(ranker, "what is inside this folder") == "fs/list_directory"


def test_running_without_the_model_is_stated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GATESPEC_SEMANTIC", "off")
    reset_encoder()
    try:
        ranker = Ranker(CATALOG)
        assert ranker.semantic is None and not ranker.hybrid
        assert ranker.status.startswith("lexical ranking only")
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
