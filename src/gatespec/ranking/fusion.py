"""Fusing the lexical and the semantic ranking.

``w * bm25 / max(bm25) + (1 - w) * max(cosine, 0)`` per tool, over every tool at once (numpy;
no Python loop over the tools). A tool is a match when it shares a term with the query or its
cosine reaches ``min_similarity`` (so a nonsense query still matches nothing). Linear fusion
of max-normalised BM25 beat reciprocal rank fusion on every dev set (and min-max normalised
cosines, which did no better).

:func:`feedback` then moves the query vector towards the vectors of its best few tools
(pseudo-relevance feedback, Rocchio's method on embeddings) and fuses again: a query worded
unlike the tool it wants often finds a sibling of it first. Which tools match stays decided by
the query itself.

Shared by the ranker and bench/retrieval.py's cross-validation, so the parameters chosen there
are the ones this code runs with. Splitting a long task into clauses (ranked one by one and
interleaved) and demoting near-duplicate tools were tried and dropped: neither helped on
held-out queries of any set, and both cost BFCL hit@5 (bench/results/retrieval_ablation.md).
Tried again by nested cross-validation on the dev data alone (issue 26; the code is at commit
a77722d): each sentence or clause ranked and fused with the whole query (max-score or reciprocal
rank fusion), a tool lifted by its best server-mate, other BM25F field weights, other fusion
weights. None beat these defaults (bench/results/retrieval_candidates.json).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = ["DEFAULT_PARAMS", "FusionParams", "feedback", "fuse"]


@dataclass(frozen=True)
class FusionParams:
    """How the two rankings combine. Both weights were chosen by cross-validation on the dev
    sets (bench/retrieval.py; every fold chose 0.2 and 0.3)."""

    lexical_weight: float = 0.2  # w above; 1 - w goes to the cosine similarity
    min_similarity: float = 0.3  # a tool with no shared term matches from this cosine on
    feedback_weight: float = 0.3  # how far the query moves towards its best tools; 0: off
    feedback_tools: int = 3  # how many of its best tools


DEFAULT_PARAMS = FusionParams()


def fuse(
    lexical: np.ndarray, cosine: np.ndarray | None, params: FusionParams
) -> tuple[np.ndarray, np.ndarray]:
    """(fused score of every tool, boolean mask of the tools that match), by position.

    `lexical` is every tool's BM25 score (0 where no term is shared), `cosine` its cosine
    similarity to the query, or None for the lexical ranking alone (then the BM25 order, on
    the same 0..1 scale)."""
    import numpy as np

    shares = lexical > 0
    top = float(lexical.max(initial=0.0))
    lex = lexical / top if top > 0 else lexical
    if cosine is None:
        return lex, shares
    w = params.lexical_weight
    fused = w * lex + (1.0 - w) * np.maximum(cosine, 0.0)
    return fused, shares | (cosine >= params.min_similarity)


def feedback(
    cosine: np.ndarray,
    fused: np.ndarray,
    candidates: np.ndarray,
    vectors: np.ndarray,
    params: FusionParams,
) -> np.ndarray:
    """The cosine of each of `candidates` (positions) to the query moved towards its best
    tools: ``(cosine + a * cos(tool, centroid of the best tools)) / (1 + a)``, `a` the feedback
    weight; the best tools are the `feedback_tools` of `candidates` with the highest `fused`
    score. The other tools keep their own cosine: only candidates are ranked, so only their
    rows of `vectors` are read when they are few (each row's product is the same either way).
    On the scale of `cosine`, so the same fusion weight applies."""
    import numpy as np

    n = min(params.feedback_tools, len(candidates))
    values = fused[candidates]
    top = candidates[values.argpartition(len(values) - n)[len(values) - n :]]
    centroid = vectors[top].mean(axis=0)
    a = params.feedback_weight
    # einsum, not @: see SemanticIndex.similarities (the BLAS threads cost more than they give).
    # Gathering the candidates' rows copies them (read, write, read again): measured at 10,000
    # tools, it beats one pass over every row below about a third of the catalog.
    if 3 * len(candidates) < len(vectors):
        towards = np.einsum("td,d->t", vectors[candidates], centroid)
    else:
        towards = np.einsum("td,d->t", vectors, centroid)[candidates]
    moved = cosine.copy()
    moved[candidates] = (cosine[candidates] + a * towards) / (1.0 + a)
    return moved
