"""gatespec.ranking.int8_queries: the shipped model in int8 arithmetic, for queries only
(GATESPEC_QUERY_INT8=on). Building the quantised file takes several seconds of CPU: slow."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gatespec.ranking import int8_queries, learned
from gatespec.ranking.encoder import OFF_ENV, MiniLmEncoder, _model_file
from gatespec.ranking.loading import load_encoder, reset_encoder

QUERIES = [
    "what time is it in Tokyo",
    "create a new issue in my github repository",
    "send an email to my manager about the meeting",
    "convert this pdf to text",
]


def test_off_unless_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(int8_queries.ON_ENV, raising=False)
    assert not int8_queries.switched_on()
    monkeypatch.setenv(int8_queries.ON_ENV, "on")
    assert int8_queries.switched_on()


def test_without_onnx_queries_stay_with_the_shipped_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing(*args: object, **kwargs: object) -> MiniLmEncoder:
        raise ImportError("No module named 'onnx'", name="onnx")

    monkeypatch.setenv(OFF_ENV, "on")  # the tests' default is off (tests/conftest.py)
    monkeypatch.setenv(int8_queries.ON_ENV, "on")
    monkeypatch.setenv(learned.OFF_ENV, "off")
    monkeypatch.setattr("gatespec.ranking.loading.int8_query_encoder", missing)
    reset_encoder()
    try:
        encoder, status = load_encoder()
    finally:
        reset_encoder()
    assert encoder is not None and not isinstance(encoder, learned.LearnedQueries)
    assert encoder.query_model_id == MiniLmEncoder.id_for(_model_file()[1])  # the shipped model
    assert status.on and f"{int8_queries.ON_ENV}: onnx is not installed" in status.detail


@pytest.mark.slow
def test_int8_queries_land_near_the_shipped_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("onnx")
    path, sha = _model_file()
    shipped = MiniLmEncoder(path, sha)
    int8 = int8_queries.int8_query_encoder(path, sha, tmp_path)
    built = int8_queries.quantized_file(path, sha, tmp_path)
    stamp = built.stat().st_mtime_ns
    # Cached: a second encoder reuses the file instead of quantising again.
    assert int8_queries.quantized_file(path, sha, tmp_path) == built
    assert built.stat().st_mtime_ns == stamp
    assert int8.model_id != shipped.model_id
    a = shipped.encode(QUERIES, query=True)
    b = int8.encode(QUERIES, query=True)
    cosines = (a * b).sum(axis=1)
    assert np.all(cosines > 0.97) and np.all(cosines < 1.0 - 1e-6)  # near, not the same model
    # Each query's nearest of the others' shipped vectors is the same under both encoders.
    assert np.array_equal((b @ a.T).argmax(axis=1), (a @ a.T).argmax(axis=1))

    # Through the process's loader: tools by the shipped model, queries by the int8 copy.
    monkeypatch.setenv(OFF_ENV, "on")
    monkeypatch.setenv(int8_queries.ON_ENV, "on")
    monkeypatch.setenv(learned.OFF_ENV, "off")
    monkeypatch.setenv("GATESPEC_CACHE_DIR", str(tmp_path))
    reset_encoder()
    try:
        encoder, status = load_encoder()
    finally:
        reset_encoder()
    assert isinstance(encoder, learned.LearnedQueries)
    assert encoder.model_id == shipped.model_id and encoder.query_model_id == int8.model_id
    assert "int8 arithmetic" in status.detail


def test_the_tool_model_loads_only_for_an_uncached_tool(tmp_path: Path) -> None:
    from gatespec.ranking import semantic
    from gatespec.ranking.vector_cache import VectorCache

    path, sha = _model_file()
    cache = VectorCache(tmp_path)
    texts = ["git: git status: Shows the working tree status", "time: get current time"]
    shipped = semantic.build_index(texts, MiniLmEncoder(path, sha), cache)
    assert shipped is not None
    semantic.forget_recent()  # as after a restart: only the disk cache is left
    lazy = int8_queries.LazyToolEncoder(path, sha)
    assert lazy.model_id == MiniLmEncoder(path, sha).model_id  # the same cached vectors
    cached = semantic.build_index(texts, lazy, cache)
    assert cached is not None and not lazy.loaded
    assert np.array_equal(cached.vectors, shipped.vectors)
    semantic.forget_recent()
    grown = semantic.build_index([*texts, "mail: send an email"], lazy, cache)
    assert grown is not None and lazy.loaded
    assert np.array_equal(grown.vectors[:2], shipped.vectors)
