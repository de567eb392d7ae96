"""gatespec.ranking.fusion: pseudo-relevance feedback on hand-made vectors (no model).

Expected orders are worked out by hand from the formula in FusionParams' docstrings:
fused = w * bm25 / max(bm25) + (1 - w) * max(cosine, 0), and with feedback weight a the
cosine becomes (cosine + a * cos(tool, centroid of the best tools)) / (1 + a)."""

from __future__ import annotations

import numpy as np
import pytest

from gatespec.ranking import FusionParams
from gatespec.ranking.fusion import feedback, fuse
from gatespec.ranking.ranker import rank_scores

IDS = ["t0", "t1", "t2", "t3"]
# t1 points almost where t0 does (cos 0.96), t2 is orthogonal to t0, t3 is t0's twin.
VECTORS = np.array([[1.0, 0.0], [0.96, 0.28], [0.0, 1.0], [1.0, 0.0]], dtype=np.float32)
# The query's own cosines: t0 best, then t2, then t1; t3 below min_similarity (0.3).
COSINE = np.array([0.9, 0.5, 0.55, 0.1], dtype=np.float32)
LEXICAL = np.zeros(4, dtype=np.float32)  # no shared terms: the cosine decides


def _ranked(params: FusionParams, vectors: np.ndarray | None = VECTORS) -> tuple[list[str], int]:
    hits, matched = rank_scores(LEXICAL, COSINE, IDS, params, 10, vectors=vectors)
    return [h for h, _ in hits], matched


def test_without_feedback_the_query_cosine_orders() -> None:
    assert _ranked(FusionParams(feedback_weight=0.0)) == (["t0", "t2", "t1"], 3)


def test_feedback_lifts_the_neighbour_of_the_best_tool() -> None:
    # Best tool t0; a = 1: t1 -> (0.5 + 0.96) / 2 = 0.73, t2 -> (0.55 + 0) / 2 = 0.275.
    params = FusionParams(feedback_weight=1.0, feedback_tools=1)
    assert _ranked(params) == (["t0", "t1", "t2"], 3)


def test_feedback_never_adds_matches() -> None:
    # t3 is t0's twin: moved to (0.1 + 1) / 2 = 0.55, but the query itself never matched it.
    ids, matched = _ranked(FusionParams(feedback_weight=1.0, feedback_tools=1))
    assert "t3" not in ids and matched == 3


def test_feedback_needs_the_vectors() -> None:
    params = FusionParams(feedback_weight=1.0, feedback_tools=1)
    assert _ranked(params, vectors=None) == (["t0", "t2", "t1"], 3)


def test_feedback_scale_and_centroid() -> None:
    params = FusionParams(feedback_weight=0.5, feedback_tools=2)
    fused, matched = fuse(LEXICAL, COSINE, params)
    candidates = matched.nonzero()[0]
    moved = feedback(COSINE, fused, candidates, VECTORS, params)
    # Best two candidates: t0 and t2; centroid (0.5, 0.5). t3 is no candidate: not moved.
    centroid_cos = VECTORS @ np.array([0.5, 0.5], dtype=np.float32)
    expected = (COSINE + 0.5 * centroid_cos) / 1.5
    assert moved[:3] == pytest.approx(expected[:3], abs=1e-6)
    assert moved[3] == COSINE[3]


@pytest.mark.parametrize("share", [0.1, 0.4, 0.6, 1.0])
def test_feedback_reads_few_rows_with_the_same_result(share: float) -> None:
    # Few candidates: only their rows are read; many: the whole matrix. Either way each
    # candidate's moved cosine is bit for bit what the whole-matrix product gives, so rankings
    # (4-decimal scores, ties by id) cannot move.
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((2000, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    cosine = rng.uniform(-0.2, 0.9, 2000).astype(np.float32)
    candidates = np.sort(rng.choice(2000, int(share * 2000), replace=False))
    params = FusionParams()
    fused, _ = fuse(np.zeros(2000), cosine, params)
    moved = feedback(cosine, fused, candidates, vectors, params)
    values = fused[candidates]
    n = params.feedback_tools
    best = candidates[values.argpartition(len(values) - n)[len(values) - n :]]
    whole = np.einsum("td,d->t", vectors, vectors[best].mean(axis=0))
    a = params.feedback_weight
    assert np.array_equal(moved[candidates], ((cosine + a * whole) / (1.0 + a))[candidates])


def test_feedback_with_fewer_candidates_than_feedback_tools() -> None:
    params = FusionParams(feedback_weight=1.0, feedback_tools=10)
    hits, matched = rank_scores(LEXICAL, COSINE, IDS, params, 10, allowed=[1], vectors=VECTORS)
    assert [h for h, _ in hits] == ["t1"] and matched == 1


class _QueryEncoder:
    """Stands in for the model: every query encodes to one fixed unit vector."""

    model_id = "stub"

    def encode(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        return np.tile(np.array([0.8, 0.1, 0.59], dtype=np.float32), (len(texts), 1))


def test_the_ranker_applies_feedback_with_its_own_vectors() -> None:
    from gatespec.ranking import Document, Ranker
    from gatespec.ranking.semantic import SemanticIndex

    docs = [Document(f"ns:{n}", n, "") for n in ("alpha", "beta", "gamma")]
    # Cosines to the query: alpha 0.8, beta 0.56, gamma 0.59; beta is alpha's neighbour (0.6).
    vectors = np.array([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 0.0, 1.0]], dtype=np.float32)
    orders = []
    for weight in (0.0, 1.0):
        params = FusionParams(feedback_weight=weight, feedback_tools=1)
        ranker = Ranker(docs, semantic=False, params=params)
        ranker._semantic = SemanticIndex(_QueryEncoder(), vectors)  # type: ignore[arg-type]
        orders.append([doc_id for doc_id, _ in ranker.search_counted("zzzq", 10)[0]])
    # With feedback (a = 1): beta (0.56 + 0.6) / 2 = 0.58 passes gamma (0.59 + 0) / 2.
    assert orders == [["ns:alpha", "ns:gamma", "ns:beta"], ["ns:alpha", "ns:beta", "ns:gamma"]]
