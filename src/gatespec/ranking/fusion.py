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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "DEFAULT_PARAMS",
    "RRF_K",
    "FusionParams",
    "feedback",
    "fuse",
    "fuse_parts",
    "server_boost",
]


@dataclass(frozen=True)
class FusionParams:
    """How the two rankings combine. Both weights were chosen by cross-validation on the dev
    sets (bench/retrieval.py; every fold chose 0.2 and 0.3)."""

    lexical_weight: float = 0.2  # w above; 1 - w goes to the cosine similarity
    min_similarity: float = 0.3  # a tool with no shared term matches from this cosine on
    feedback_weight: float = 0.3  # how far the query moves towards its best tools; 0: off
    feedback_tools: int = 3  # how many of its best tools
    # Query decomposition (gatespec.ranking.decompose): how a query is cut into parts,
    # from how many parts on, and how each part's ranking joins the whole query's.
    split: str = "none"  # "none", "sentences" or "clauses"
    split_min_parts: int = 2
    part_fusion: str = "max"  # "max": max(whole, w * part); "rrf": reciprocal rank fusion
    part_weight: float = 0.7  # w: a part's weight next to the whole query's 1
    server_weight: float = 0.0  # s in server_boost: how much a tool's server-mates lift it


DEFAULT_PARAMS = FusionParams()
RRF_K = 60  # reciprocal rank fusion's constant (Cormack et al. 2009)


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
    """The cosine of every tool to the query moved towards its best tools:
    ``(cosine + a * cos(tool, centroid of the best tools)) / (1 + a)``, `a` the feedback
    weight; the best tools are the `feedback_tools` of `candidates` (positions) with the
    highest `fused` score. On the scale of `cosine`, so the same fusion weight applies."""
    import numpy as np

    n = min(params.feedback_tools, len(candidates))
    values = fused[candidates]
    top = candidates[values.argpartition(len(values) - n)[len(values) - n :]]
    centroid = vectors[top].mean(axis=0)
    a = params.feedback_weight
    # einsum, not @: see SemanticIndex.similarities (the BLAS threads cost more than they give)
    moved: np.ndarray = (cosine + a * np.einsum("td,d->t", vectors, centroid)) / (1.0 + a)
    return moved


def fuse_parts(
    whole: np.ndarray, parts: list[np.ndarray], candidates: np.ndarray, params: FusionParams
) -> np.ndarray:
    """The whole query's fused scores joined with its parts' (each by position, each already
    fused): ``max(whole, w * max(parts))``, or reciprocal rank fusion over `candidates`
    (``1 / (K + rank in whole) + w * sum of 1 / (K + rank in part)``, scaled so a tool first
    everywhere scores 1)."""
    import numpy as np

    w = params.part_weight
    if params.part_fusion == "max":
        return np.maximum(whole, w * np.max(parts, axis=0))
    out = np.zeros_like(whole)
    for n, scores in enumerate([whole, *parts]):
        order = candidates[np.argsort(-scores[candidates], kind="stable")]
        ranks = np.empty(len(order))
        ranks[:] = np.arange(1, len(order) + 1)
        out[order] += (1.0 if n == 0 else w) / (RRF_K + ranks)
    top: np.ndarray = out * (RRF_K + 1) / (1.0 + w * len(parts))
    return top


def server_boost(
    fused: np.ndarray, candidates: np.ndarray, groups: np.ndarray, params: FusionParams
) -> np.ndarray:
    """``(fused + s * best other) / (1 + s)`` for the `candidates`, `best other` the highest
    fused score among the other candidates of the same server (`groups`: a server number per
    position): a task's steps are often tools of one server, so a tool whose server-mates
    also fit the task is likelier to be wanted. A catalog of one server is left as it is."""
    import numpy as np

    s = params.server_weight
    order = candidates[np.argsort(-fused[candidates], kind="stable")]
    g = groups[order]
    _, first = np.unique(g, return_index=True)
    rest = np.ones(len(order), dtype=bool)
    rest[first] = False
    _, second = np.unique(g[rest], return_index=True)
    top1 = np.zeros(int(groups.max()) + 1)
    top2 = np.zeros_like(top1)
    top1[g[first]] = fused[order[first]]
    top2[g[rest][second]] = fused[order[rest][second]]
    other = np.where(fused[order] >= top1[g], top2[g], top1[g])
    out = fused.copy()
    out[order] = (fused[order] + s * other) / (1.0 + s)
    return out
